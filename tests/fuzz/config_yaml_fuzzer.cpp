// Fuzz harness for config.yaml through ProjectConfig::parse, the entry every command uses: any
// bytes give a config or an Error, in bounded time and memory (no deep recursion, no alias
// expansion). A config that was read is written back twice, as a command would (the project_path
// fix-up, then a structural edit through the full writer); each text must read back to the same
// values and the same YAML tree, and grow at most linearly. Not a check of the messages' wording.
#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "projects/config.hpp"
#include "projects/yaml_reader.hpp"

namespace {
namespace projects = labpose::projects;

// Structural equality of two YAML trees (scalars by their text, tags aside: the writer keeps what
// a value reads as, not yaml-cpp's tag).
bool same_tree(const YAML::Node& a, const YAML::Node& b) {
  if (a.Type() != b.Type()) return false;
  switch (a.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null:
      return true;
    case YAML::NodeType::Scalar:
      return a.Scalar() == b.Scalar();
    case YAML::NodeType::Sequence: {
      if (a.size() != b.size()) return false;
      for (std::size_t i = 0; i < a.size(); ++i) {
        if (!same_tree(a[i], b[i])) return false;
      }
      return true;
    }
    case YAML::NodeType::Map: {
      if (a.size() != b.size()) return false;
      for (auto left = a.begin(), right = b.begin(); left != a.end(); ++left, ++right) {
        if (!same_tree(left->first, right->first) || !same_tree(left->second, right->second))
          return false;
      }
      return true;
    }
  }
  return false;
}

// The full writer adds DeepLabCut's section comments (about 1 KB) and the corrected project_path,
// and indents every line by at most two spaces per level: linear in the input, never more.
bool size_is_bounded(const std::string& written, std::size_t input_size) {
  const std::size_t per_input_byte = 2 * static_cast<std::size_t>(projects::kMaxYamlDepth) + 8;
  return written.size() <= 4096 + per_input_byte * input_size;
}

void check_round_trip(const projects::ProjectConfig& config, const std::string& written,
                      const YAML::Node& original, std::size_t input_size, const char* changed) {
  if (!size_is_bounded(written, input_size)) __builtin_trap();
  // Throws (and so crashes the harness) when the writer made a file its own reader refuses.
  const projects::ProjectConfig again =
      projects::ProjectConfig::parse(written, "/fuzz/project/config.yaml");
  if (!(again.values() == config.values())) __builtin_trap();
  if (again.project_path_corrected().has_value()) __builtin_trap();
  // The same tree as the input, but for the keys changed on purpose (taken from the output).
  const YAML::Node reread = YAML::Load(written);
  YAML::Node expected = YAML::Clone(original);
  expected["project_path"] = reread["project_path"];
  if (changed != nullptr) expected[changed] = reread[changed];
  if (!same_tree(expected, reread)) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::optional<projects::ProjectConfig> config;
  try {
    config.emplace(projects::ProjectConfig::parse(text, "/fuzz/project/config.yaml"));
  } catch (const labpose::Error&) {
    return 0;  // refused with a message: what a bad file must get
  }
  const YAML::Node original = YAML::Load(text);

  // As load_project_config saves it: project_path corrected, the rest as it was.
  check_round_trip(*config, config->to_yaml(), original, size, nullptr);

  // A structural edit that keeps the values: the whole file goes through the full writer.
  config->set_skeleton(config->values().skeleton);
  check_round_trip(*config, config->to_yaml(), original, size, "skeleton");
  return 0;
}
