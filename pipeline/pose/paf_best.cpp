// Reading and writing test/pose_cfg.yaml's paf_best.
#include "pipeline/pose/paf_best.hpp"

#include <fmt/core.h>
#include <fmt/format.h>

#include <set>
#include <string>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "pipeline/pose/pose_cfg_line.hpp"
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
  set_pose_cfg_line(file, kKey, fmt::format("[{}]", fmt::join(edges, ", ")));
}

}  // namespace labpose::pipeline
