// DeepLabCut-style YAML emission and YAML 1.2 scalar typing.
#include "projects/yaml_text.hpp"

#include <algorithm>
#include <array>
#include <cctype>

#include "projects/number_text.hpp"

namespace labpose::projects::yaml_text {
namespace {

// YAML 1.2 core-schema number forms, matched by hand: std::regex recurses once per character and
// overflowed the stack on a long scalar (a 2 MB number in config.yaml crashed labpose).
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// Removes the leading run of `is` characters from `text` and returns how many there were.
std::size_t take(std::string_view& text, bool (*is)(char)) {
  std::size_t count = 0;
  while (count < text.size() && is(text[count])) ++count;
  text.remove_prefix(count);
  return count;
}

void take_sign(std::string_view& text) {
  if (!text.empty() && (text.front() == '-' || text.front() == '+')) text.remove_prefix(1);
}

// [-+]?[0-9]+
bool is_decimal_integer(std::string_view text) {
  take_sign(text);
  return take(text, is_digit) > 0 && text.empty();
}

// [-+]?[0-9]+ | 0o[0-7]+ | 0x[0-9a-fA-F]+
bool is_integer(std::string_view text) {
  if (is_decimal_integer(text)) return true;
  const auto prefixed = [&](std::string_view prefix, bool (*is)(char)) {
    if (text.substr(0, 2) != prefix) return false;
    std::string_view rest = text.substr(2);
    return take(rest, is) > 0 && rest.empty();
  };
  return prefixed("0o", [](char c) { return c >= '0' && c <= '7'; }) ||
         prefixed("0x", [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; });
}

// [-+]? ( \.[0-9]+ | [0-9]+ (\.[0-9]*)? ) ([eE][-+]?[0-9]+)?  |  [-+]?\.(inf|Inf|INF)  |
// \.(nan|NaN|NAN)
bool is_float(std::string_view text) {
  if (text == ".nan" || text == ".NaN" || text == ".NAN") return true;
  take_sign(text);
  if (text == ".inf" || text == ".Inf" || text == ".INF") return true;
  if (!text.empty() && text.front() == '.') {
    text.remove_prefix(1);
    if (take(text, is_digit) == 0) return false;
  } else {
    if (take(text, is_digit) == 0) return false;
    if (!text.empty() && text.front() == '.') {
      text.remove_prefix(1);
      take(text, is_digit);
    }
  }
  if (!text.empty() && (text.front() == 'e' || text.front() == 'E')) {
    text.remove_prefix(1);
    take_sign(text);
    if (take(text, is_digit) == 0) return false;
  }
  return text.empty();
}

bool safe_plain(std::string_view text) {
  if (text.empty()) return false;
  if (text.front() == ' ' || text.back() == ' ') return false;
  constexpr std::string_view kBadFirst = "!&*|>'\"%@`{}[],#";
  if (kBadFirst.find(text.front()) != std::string_view::npos) return false;
  if ((text.front() == '-' || text.front() == '?' || text.front() == ':') &&
      (text.size() == 1 || text[1] == ' ')) {
    return false;
  }
  if (text.back() == ':') return false;
  if (text.find(": ") != std::string_view::npos || text.find(" #") != std::string_view::npos)
    return false;
  if (text.substr(0, 3) == "---" || text.substr(0, 3) == "...") return false;
  return std::none_of(text.begin(), text.end(),
                      [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
}

std::string spaces(int count) {
  return std::string(static_cast<std::size_t>(count), ' ');
}

void emit_value(std::string& out, const YAML::Node& value, int indent);
void emit_in_sequence(std::string& out, const YAML::Node& item, int indent);

// `key:` (the indentation is written already). YAML reads a key written that way only up to 1024
// characters, so a longer one (a very long video path) gets the explicit form `? key` + `:` line.
void emit_key(std::string& out, const std::string& key_text, int indent) {
  constexpr std::size_t kMaxImplicitKey = 1000;  // YAML's limit is 1024, quotes included
  if (key_text.size() <= kMaxImplicitKey) {
    out += key_text + ":";
  } else {
    out += "? " + key_text + "\n" + spaces(indent) + ":";
  }
}

void emit_mapping_entries(std::string& out, const YAML::Node& mapping, int indent,
                          bool first_inline,
                          const std::function<std::string(const std::string&)>& comment_before) {
  bool first = true;
  for (const auto& entry : mapping) {
    const std::string key = entry.first.Scalar();
    if (comment_before) out += comment_before(key);
    if (!(first && first_inline)) out += spaces(indent);
    first = false;
    emit_key(out, scalar_for_file(entry.first), indent);
    emit_value(out, entry.second, indent);
  }
}

// The value after "key:" (the key is at `indent`).
void emit_value(std::string& out, const YAML::Node& value, int indent) {
  switch (value.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null:
      out += "\n";
      return;
    case YAML::NodeType::Scalar:
      out += " " + scalar_for_file(value) + "\n";
      return;
    case YAML::NodeType::Sequence:
      if (value.size() == 0) {
        out += " []\n";
        return;
      }
      out += "\n";
      for (const auto& item : value) {
        out += spaces(indent) + "- ";
        emit_in_sequence(out, item, indent);
      }
      return;
    case YAML::NodeType::Map:
      if (value.size() == 0) {
        out += " {}\n";
        return;
      }
      out += "\n";
      emit_mapping_entries(out, value, indent + 2, false, {});
      return;
  }
}

// An item whose "- " is already written at `indent`; its content starts at indent + 2.
void emit_in_sequence(std::string& out, const YAML::Node& item, int indent) {
  switch (item.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null:
      out += "\n";
      return;
    case YAML::NodeType::Scalar:
      out += scalar_for_file(item) + "\n";
      return;
    case YAML::NodeType::Sequence: {
      if (item.size() == 0) {
        out += "[]\n";
        return;
      }
      bool first = true;
      for (const auto& sub : item) {
        if (!first) out += spaces(indent + 2);
        first = false;
        out += "- ";
        emit_in_sequence(out, sub, indent + 2);
      }
      return;
    }
    case YAML::NodeType::Map:
      if (item.size() == 0) {
        out += "{}\n";
        return;
      }
      emit_mapping_entries(out, item, indent + 2, true, {});
      return;
  }
}

}  // namespace

PlainType plain_type(std::string_view text) {
  if (text.empty() || text == "~" || text == "null" || text == "Null" || text == "NULL") {
    return PlainType::null;
  }
  static constexpr std::array<std::string_view, 22> kBooleans = {
      "true", "True", "TRUE", "false", "False", "FALSE", "yes", "Yes", "YES", "no", "No",
      "NO",   "on",   "On",   "ON",    "off",   "Off",   "OFF", "y",   "Y",   "n",  "N"};
  if (std::find(kBooleans.begin(), kBooleans.end(), text) != kBooleans.end())
    return PlainType::boolean;
  if (is_integer(text)) return PlainType::integer;
  if (is_float(text)) return PlainType::floating;
  return PlainType::string;
}

std::string quote_string(std::string_view text) {
  if (safe_plain(text) && plain_type(text) == PlainType::string) return std::string(text);
  const bool needs_escapes = std::any_of(text.begin(), text.end(), [](char c) {
    return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
  });
  if (!needs_escapes) {
    std::string out = "'";
    for (char c : text) {
      if (c == '\'') out += '\'';
      out += c;
    }
    return out + "'";
  }
  std::string out = "\"";
  for (char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
          static constexpr char kHex[] = "0123456789abcdef";
          out += "\\x";
          out += kHex[(static_cast<unsigned char>(c) >> 4) & 0xf];
          out += kHex[static_cast<unsigned char>(c) & 0xf];
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string quoted_list(const std::vector<std::string>& names) {
  std::string out = "[";
  for (std::size_t i = 0; i < names.size(); ++i) out += (i ? ", " : "") + quote_string(names[i]);
  return out + "]";
}

std::string all_joints_text(std::size_t count) {
  std::string out = "[";
  for (std::size_t j = 0; j < count; ++j) out += (j ? ", [" : "[") + std::to_string(j) + "]";
  return out + "]";
}

std::string scalar_for_file(const YAML::Node& scalar) {
  const std::string& text = scalar.Scalar();
  const std::string& tag = scalar.Tag();
  const bool plain = tag == "?" || tag.empty();
  if (plain && safe_plain(text)) return text;
  if (plain || tag == "!") return quote_string(text);
  // An explicit tag (`!!str yes`, `!!python/none`, `!local x`) is written back as it was read, so
  // every YAML reader, DeepLabCut's included, sees the same value. An empty value after it is
  // written '': a key's `:` right after a tag would read as part of the tag.
  const std::string written = " " + (safe_plain(text) ? text : quote_string(text));
  constexpr std::string_view kCoreSchema = "tag:yaml.org,2002:";
  if (tag.compare(0, kCoreSchema.size(), kCoreSchema) == 0) {
    // yaml-cpp reads a lone `!` at the very end of a file as this prefix with nothing after it:
    // a non-specific tag, that is a string.
    const std::string suffix = tag.substr(kCoreSchema.size());
    return "!!" + (suffix.empty() ? std::string("str") : suffix) + written;
  }
  if (tag.front() == '!') return tag + written;
  return "!<" + tag + ">" + written;
}

void emit_entry(std::string& out, const std::string& key, const YAML::Node& value, int indent) {
  out += spaces(indent);
  emit_key(out, quote_string(key), indent);
  emit_value(out, value, indent);
}

void emit_mapping(std::string& out, const YAML::Node& mapping, int indent,
                  const std::function<std::string(const std::string&)>& comment_before) {
  emit_mapping_entries(out, mapping, indent, false, comment_before);
}

YAML::Node string_node(std::string_view text) {
  YAML::Node node{std::string(text)};
  node.SetTag("!");
  return node;
}

YAML::Node plain_node(std::string_view text) {
  YAML::Node node{std::string(text)};
  node.SetTag("?");
  return node;
}

std::string float_text(double value) {
  return python_float_repr(value);
}

std::string yaml_float_text(double value) {
  std::string text = python_float_repr(value);
  const std::size_t e = text.find('e');
  if (e != std::string::npos && text.find('.') == std::string::npos) text.insert(e, ".0");
  return text;
}

std::optional<bool> parse_bool(std::string_view text) {
  std::string lower(text);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "true" || lower == "yes" || lower == "on" || lower == "y") return true;
  if (lower == "false" || lower == "no" || lower == "off" || lower == "n") return false;
  return std::nullopt;
}

std::optional<long long> parse_int(std::string_view text) {
  if (!is_decimal_integer(text)) return std::nullopt;
  try {
    return std::stoll(std::string(text));
  } catch (const std::out_of_range&) {
    return std::nullopt;
  }
}

std::optional<double> parse_float(std::string_view text) {
  if (!is_float(text) && !is_integer(text)) return std::nullopt;
  return parse_double(text);
}

}  // namespace labpose::projects::yaml_text
