// Reading and writing test/pose_cfg.yaml's paf_best.
#include "pipeline/pose/paf_best.hpp"

#include <fmt/core.h>
#include <fmt/format.h>

#include <set>
#include <sstream>
#include <string>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "projects/yaml_reader.hpp"

namespace labpose::pipeline {
namespace fs = std::filesystem;

namespace {
constexpr const char* kKey = "paf_best";
}  // namespace

std::optional<std::vector<int>> read_paf_best(const fs::path& file, int graph_edges) {
  const YAML::Node root = projects::parse_yaml(read_file(file), file, "pose_cfg.yaml");
  const projects::YamlMapReader reader(file, root);
  if (reader.is_null(kKey)) return std::nullopt;
  const YAML::Node list = reader.value(kKey);
  const std::string hint =
      "evaluate the shuffle again (labpose evaluate) to choose the graph afresh, or delete the "
      "paf_best line to link through every edge";
  if (!list.IsSequence()) reader.fail(kKey, list, "paf_best must be a list of edge indices", hint);
  std::vector<int> edges;
  std::set<int> seen;
  for (const auto& item : list) {
    const int edge = reader.int_of(kKey, item, 0, graph_edges - 1,
                                   fmt::format("an edge of the {}-edge graph", graph_edges));
    if (!seen.insert(edge).second)
      reader.fail(kKey, item, fmt::format("edge {} is listed twice", edge), hint);
    edges.push_back(edge);
  }
  return edges;
}

void write_paf_best(const fs::path& file, const std::vector<int>& edges) {
  std::istringstream in(read_file(file));
  std::string out, line;
  const std::string prefix = std::string(kKey) + ":";
  bool in_old_list = false;  // DeepLabCut writes the list as a block: "paf_best:" then "- i" lines
  while (std::getline(in, line)) {
    if (line.rfind(prefix, 0) == 0) {  // the old value, replaced below
      in_old_list = line.find_first_not_of(" \t", prefix.size()) == std::string::npos;
      continue;
    }
    const std::size_t first = line.find_first_not_of(' ');
    if (in_old_list && first != std::string::npos && line[first] == '-') continue;
    in_old_list = false;
    out += line + "\n";
  }
  out += fmt::format("{}: [{}]\n", kKey, fmt::join(edges, ", "));
  write_file_atomically(file, out);
}

}  // namespace labpose::pipeline
