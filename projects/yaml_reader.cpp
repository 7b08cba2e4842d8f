// YAML parsing with located errors.
#include "projects/yaml_reader.hpp"

namespace labpose::projects {
namespace {

std::string first_line_excerpt(std::string_view text, int line) {
  int current = 0;
  std::size_t start = 0;
  while (current < line && start < text.size()) {
    const std::size_t next = text.find('\n', start);
    if (next == std::string_view::npos) return {};
    start = next + 1;
    ++current;
  }
  const std::size_t end = text.find('\n', start);
  return std::string(
      text.substr(start, end == std::string_view::npos ? text.size() - start : end - start));
}

}  // namespace

std::string describe(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null:
      return "nothing";
    case YAML::NodeType::Scalar:
      return "\"" + node.Scalar() + "\"";
    case YAML::NodeType::Sequence:
      return fmt::format("a list of {} items", node.size());
    case YAML::NodeType::Map:
      return "a mapping";
  }
  return "?";
}

YAML::Node parse_yaml(const std::string& text, const std::filesystem::path& file,
                      const std::string& what) {
  try {
    return YAML::Load(text);
  } catch (const YAML::ParserException& error) {
    const std::string excerpt = first_line_excerpt(text, error.mark.line);
    throw Error(
        fmt::format(
            "{}:{}:{}: {} is not valid YAML: {}{}", file.string(), error.mark.line + 1,
            error.mark.column + 1, what, error.msg,
            excerpt.empty() ? "" : fmt::format("\n  {:>4} | {}", error.mark.line + 1, excerpt)),
        "check the indentation and the colons on that line and the one above it; "
        "lists are written as `- item` lines under their key");
  }
}

}  // namespace labpose::projects
