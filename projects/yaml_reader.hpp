// Reading a YAML mapping of settings (config.yaml, pose_cfg.yaml) with errors a biologist can act
// on: every failure names file:line:col, the key, what was expected and what was found, with file
// text shown escaped. Reading is bounded in time and memory for any bytes (size, depth and value
// count limits). Parsing only; writing is yaml_text's.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/core.h>

#include "core/error.hpp"
#include "core/printable.hpp"
#include "projects/yaml_text.hpp"

namespace labpose::projects {

/// "nothing", "\"text\"", "a list of 3 items", "a mapping"; a scalar is escaped (core/printable)
/// and cut after 80 bytes, so a message can quote any file.
std::string describe(const YAML::Node& node);

/// Limits of parse_yaml for every file. DeepLabCut's files are a few KB, nested 4 deep and hold
/// hundreds of values (a project with 10000 videos: 1.5 MB, 30000 values); yaml-cpp needs about
/// 460 bytes of memory per value and recurses once per level (it stops at 500 with "bad file").
constexpr std::size_t kMaxYamlBytes = 8u << 20;
constexpr int kMaxYamlDepth = 32;
constexpr std::size_t kMaxYamlValues = 250'000;

/// What a file that labpose writes back must also be: a tree the writer reproduces. YAML aliases
/// (`*name`) are refused because a rewrite would expand each one in full (an "alias bomb" of 2 KB
/// becomes gigabytes) and an edit through one would change every place that shares it; keys that
/// are lists or mappings and a second document (`---`) are refused because the writer cannot keep
/// them (DeepLabCut's own readers refuse a second document too).
enum class YamlUse { read_only, written_back };

/// Throws an Error naming `file` when `bytes` is over kMaxYamlBytes (checked before reading a
/// file, so a huge one is never read whole).
void check_yaml_size(std::uintmax_t bytes, const std::filesystem::path& file,
                     const std::string& what);

/// Parses YAML text; a syntax error, a file over the limits above or (written_back) one the writer
/// cannot reproduce becomes an Error naming file:line:col and showing the line. `what` names the
/// file kind in the message ("config.yaml", "pose_cfg.yaml").
YAML::Node parse_yaml(const std::string& text, const std::filesystem::path& file,
                      const std::string& what, YamlUse use = YamlUse::read_only);

/// Typed values of a top-level mapping; every failure names file:line:col and the key.
class YamlMapReader {
 public:
  YamlMapReader(const std::filesystem::path& file, const YAML::Node& root)
      : file_(file), root_(root) {
    for (const auto& entry : root_) {
      const std::string key = entry.first.Scalar();
      keys_[key] = entry.first;
    }
  }

  bool has(const std::string& key) const { return keys_.count(key) != 0; }
  YAML::Node value(const std::string& key) const { return has(key) ? root_[key] : YAML::Node(); }
  bool is_null(const std::string& key) const {
    const YAML::Node node = value(key);
    return !node.IsDefined() || node.IsNull() ||
           (node.IsScalar() && yaml_text::plain_type(node.Scalar()) == yaml_text::PlainType::null &&
            node.Tag() != "!");
  }

  std::string place(const std::string& key, const YAML::Node& node = YAML::Node()) const {
    YAML::Mark mark = node.IsDefined() ? node.Mark() : YAML::Mark::null_mark();
    if (mark.is_null() || mark.line < 0) {
      const auto found = keys_.find(key);
      if (found != keys_.end()) mark = found->second.Mark();
    }
    if (mark.is_null() || mark.line < 0) return file_.string();
    return fmt::format("{}:{}:{}", file_.string(), mark.line + 1, mark.column + 1);
  }

  [[noreturn]] void fail(const std::string& key, const YAML::Node& node, const std::string& message,
                         const std::string& hint = {}) const {
    throw Error(fmt::format("{}: {}", place(key, node), message), hint);
  }

  std::string text(const std::string& key, bool required, const std::string& fallback = {}) const {
    if (is_null(key)) {
      if (required) {
        throw Error(
            fmt::format("{}: the key '{}' is missing or empty", place(key), key),
            fmt::format("DeepLabCut writes it near the top of config.yaml, e.g. `{}: <value>`; "
                        "compare with a config.yaml made by `labpose create`",
                        key));
      }
      return fallback;
    }
    const YAML::Node node = value(key);
    if (!node.IsScalar())
      fail(key, node, fmt::format("{} must be a single value (found {})", key, describe(node)));
    return node.Scalar();
  }

  std::optional<bool> optional_bool(const std::string& key) const {
    if (is_null(key)) return std::nullopt;
    const YAML::Node node = value(key);
    const auto parsed = node.IsScalar() ? yaml_text::parse_bool(node.Scalar()) : std::nullopt;
    if (!parsed)
      fail(key, node, fmt::format("{} must be true or false (found {})", key, describe(node)));
    return parsed;
  }

  /// A whole number from `minimum` to `maximum` (inclusive): what every int setting needs, so a
  /// value beyond int is refused instead of wrapped.
  int int_of(const std::string& key, const YAML::Node& node, int minimum, int maximum,
             const std::string& what) const {
    const auto parsed = node.IsScalar() ? yaml_text::parse_int(node.Scalar()) : std::nullopt;
    if (!parsed || *parsed < minimum || *parsed > maximum) {
      fail(key, node,
           fmt::format("{} must be a whole number from {} to {} (found {})", what, minimum, maximum,
                       describe(node)));
    }
    return static_cast<int>(*parsed);
  }

  std::optional<int> optional_int(const std::string& key, int minimum, int maximum) const {
    if (is_null(key)) return std::nullopt;
    return int_of(key, value(key), minimum, maximum, key);
  }

  /// A whole number >= `minimum` and at most 10^12 (for 64-bit settings; ints use int_of).
  long long integer_of(const std::string& key, const YAML::Node& node, long long minimum,
                       const std::string& what) const {
    const auto parsed = node.IsScalar() ? yaml_text::parse_int(node.Scalar()) : std::nullopt;
    if (!parsed || *parsed < minimum || *parsed > 1'000'000'000'000LL) {
      fail(
          key, node,
          fmt::format("{} must be a whole number >= {} (found {})", what, minimum, describe(node)));
    }
    return *parsed;
  }

  std::optional<long long> optional_integer(const std::string& key, long long minimum) const {
    if (is_null(key)) return std::nullopt;
    return integer_of(key, value(key), minimum, key);
  }

  double number_of(const std::string& key, const YAML::Node& node, double minimum, double maximum,
                   const std::string& what) const {
    const auto parsed = node.IsScalar() ? yaml_text::parse_float(node.Scalar()) : std::nullopt;
    if (!parsed || !std::isfinite(*parsed) || *parsed < minimum || *parsed > maximum) {
      fail(key, node,
           fmt::format("{} must be a number between {} and {} (found {})", what, minimum, maximum,
                       describe(node)));
    }
    return *parsed;
  }

  std::optional<double> optional_number(const std::string& key, double minimum,
                                        double maximum) const {
    if (is_null(key)) return std::nullopt;
    return number_of(key, value(key), minimum, maximum, key);
  }

  // A list of distinct, non-empty names; null or missing is an empty list.
  std::vector<std::string> names(const std::string& key) const {
    std::vector<std::string> out;
    if (is_null(key)) return out;
    const YAML::Node node = value(key);
    if (!node.IsSequence()) {
      fail(key, node,
           fmt::format("{} must be a list of distinct names (found {})", key, describe(node)),
           fmt::format("write one name per line:\n{}:\n- snout\n- tailbase", key));
    }
    std::set<std::string> seen;  // a list can be long: no quadratic search
    for (const auto& item : node) {
      if (!item.IsScalar() || item.Scalar().empty()) {
        fail(key, item,
             fmt::format("{} must be a list of distinct names (found {} as an item)", key,
                         describe(item)));
      }
      if (!seen.insert(item.Scalar()).second) {
        fail(key, item,
             fmt::format("{} must be a list of distinct names (found {} twice)", key,
                         describe(item)),
             "every keypoint needs its own name; rename or remove the second one");
      }
      out.push_back(item.Scalar());
    }
    return out;
  }

  const std::map<std::string, YAML::Node>& keys() const { return keys_; }

 private:
  std::filesystem::path file_;
  YAML::Node root_;
  std::map<std::string, YAML::Node> keys_;
};

}  // namespace labpose::projects
