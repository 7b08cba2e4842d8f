// Setting and reading one top-level line of a pose_cfg.yaml.
#include "pipeline/pose/pose_cfg_line.hpp"

#include <fmt/core.h>

#include <sstream>

#include "core/atomic_file.hpp"

namespace labpose::pipeline {

void set_pose_cfg_line(const std::filesystem::path& file, const std::string& key,
                       const std::string& value) {
  std::istringstream in(read_file(file));
  std::string out, line;
  const std::string prefix = key + ":";
  bool in_old_list = false;  // DeepLabCut writes a list as a block: "key:" then "- i" lines
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
  out += fmt::format("{}: {}\n", key, value);
  write_file_atomically(file, out);
}

std::optional<std::string> pose_cfg_line(const std::string& contents, const std::string& key) {
  std::istringstream in(contents);
  std::string line;
  const std::string prefix = key + ":";
  while (std::getline(in, line)) {
    if (line.rfind(prefix, 0) == 0) return line;
  }
  return std::nullopt;
}

}  // namespace labpose::pipeline
