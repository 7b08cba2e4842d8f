// YAML text in the style DeepLabCut's ruamel writer produces (block lists at the key's indentation,
// `- - a` for nested lists, blank values for null, single quotes only where needed), plus helpers
// to read scalars with YAML 1.2 rules. Not a general YAML library: comments come from the caller.
#pragma once

#include <yaml-cpp/yaml.h>

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace labpose::projects::yaml_text {

/// A scalar as a YAML 1.2 reader would see it when written plain; used to decide on quoting.
enum class PlainType { null, boolean, integer, floating, string };
PlainType plain_type(std::string_view text);

/// `text` as it must appear in a YAML file so that it reads back as the string `text`.
std::string quote_string(std::string_view text);

/// A flow list of quoted strings: `[nose, 'left ear']`.
std::string quoted_list(const std::vector<std::string>& names);

/// pose_cfg.yaml's `all_joints` for `count` bodyparts, each its own joint: `[[0], [1], [2]]`.
std::string all_joints_text(std::size_t count);

/// A scalar node's text for the file: plain when it was plain (tag "?") and is safe, quoted
/// otherwise; an explicit tag (`!!str`, `!local`) is written before it as it was read.
std::string scalar_for_file(const YAML::Node& scalar);

/// Appends `key: value` (value indented under it if a collection) at `indent` spaces.
void emit_entry(std::string& out, const std::string& key, const YAML::Node& value, int indent);

/// Appends a whole mapping; `comment_before(key)` may return lines (with '\n') to put before a key.
void emit_mapping(std::string& out, const YAML::Node& mapping, int indent,
                  const std::function<std::string(const std::string&)>& comment_before = {});

/// A string scalar node that is emitted quoted when it would otherwise read as another type.
YAML::Node string_node(std::string_view text);
/// A plain scalar node (numbers, booleans) whose text is written as is.
YAML::Node plain_node(std::string_view text);
/// Text for a double the way Python's repr writes it: shortest round trip, always with a '.' or
/// 'e'.
std::string float_text(double value);
/// The same with a '.' in the mantissa ("1.0e-05"): YAML 1.1 readers (PyYAML, which reads
/// DeepLabCut's pose_cfg.yaml) take "1e-05" for a string.
std::string yaml_float_text(double value);

/// Parses YAML 1.2 booleans plus the YAML 1.1/pydantic words (yes/no/on/off) DeepLabCut users
/// write.
std::optional<bool> parse_bool(std::string_view text);
std::optional<long long> parse_int(std::string_view text);
std::optional<double> parse_float(std::string_view text);

}  // namespace labpose::projects::yaml_text
