// YAML parsing with located errors: a first pass over yaml-cpp's events checks the limits (and what
// a written-back file must be) before any node is built, so yaml-cpp never recurses deeper than
// kMaxYamlDepth and never allocates more than kMaxYamlValues nodes.
#include "projects/yaml_reader.hpp"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>

#include <sstream>
#include <vector>

namespace labpose::projects {
namespace {

std::string line_excerpt(std::string_view text, int line) {
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

// "file:line:col: " for a mark, and the line itself under the message.
struct Place {
  const std::string& text;
  const std::filesystem::path& file;

  std::string at(const YAML::Mark& mark) const {
    if (mark.line < 0) return file.string() + ": ";
    return fmt::format("{}:{}:{}: ", file.string(), mark.line + 1, mark.column + 1);
  }
  std::string excerpt(const YAML::Mark& mark) const {
    if (mark.line < 0) return {};
    const std::string line = line_excerpt(text, mark.line);
    if (line.empty()) return {};
    return fmt::format("\n  {:>4} | {}", mark.line + 1, printable(line, 120));
  }
};

// yaml-cpp's events of the first document, checked against the limits as they come: an Error
// thrown here unwinds yaml-cpp's parser before it goes deeper or reads further.
class LimitCheck : public YAML::EventHandler {
 public:
  LimitCheck(const Place& place, const std::string& what, YamlUse use)
      : place_(place), what_(what), use_(use) {}

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t) override { value(mark, Kind::null); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override {
    if (use_ == YamlUse::written_back) refuse_alias(mark);
    value(mark, Kind::scalar);
  }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                const std::string&) override {
    value(mark, Kind::scalar);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    value(mark, Kind::collection);
    open_.push_back({false, 0});
  }
  void OnSequenceEnd() override { open_.pop_back(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    value(mark, Kind::collection);
    open_.push_back({true, 0});
  }
  void OnMapEnd() override { open_.pop_back(); }

 private:
  enum class Kind { null, scalar, collection };
  struct Open {
    bool mapping;
    std::size_t items;  // keys and values so far
  };

  void value(const YAML::Mark& mark, Kind kind) {
    if (++values_ > kMaxYamlValues) {
      throw Error(place_.at(mark) +
                      fmt::format("{} holds more than {} values (names, numbers, lists and "
                                  "mappings) by this line; a {} of a project has a few hundred",
                                  what_, kMaxYamlValues, what_) +
                      place_.excerpt(mark),
                  "is this really a " + what_ + "? compare it with one labpose or DeepLabCut made");
    }
    if (!open_.empty() && open_.back().mapping && open_.back().items % 2 == 0 &&
        kind != Kind::scalar && use_ == YamlUse::written_back) {
      throw Error(place_.at(mark) +
                      fmt::format("a key in {} must be a single value, not a list or a mapping "
                                  "(or nothing)",
                                  what_) +
                      place_.excerpt(mark),
                  "write keys as `name: value`; a line starting with `? ` makes a complex key");
    }
    if (!open_.empty()) ++open_.back().items;
    if (kind == Kind::collection && open_.size() >= static_cast<std::size_t>(kMaxYamlDepth)) {
      throw Error(place_.at(mark) +
                      fmt::format("{} is nested more than {} levels deep here (lists or mappings "
                                  "inside each other); DeepLabCut's files use at most 4",
                                  what_, kMaxYamlDepth) +
                      place_.excerpt(mark),
                  "look for a run of '[' or '{', or for indentation that grows on every line, "
                  "around this line; compare with a " +
                      what_ + " made by labpose or DeepLabCut");
    }
  }

  [[noreturn]] void refuse_alias(const YAML::Mark& mark) const {
    // The alias's name as written: '*' and what follows up to a space, comma or bracket.
    std::string name = "*";
    if (mark.pos >= 0) {
      const std::size_t start = static_cast<std::size_t>(mark.pos);
      const std::size_t end = place_.text.find_first_of(" \t\r\n,]}", start);
      if (start < place_.text.size() && place_.text[start] == '*') {
        name = place_.text.substr(start, std::min<std::size_t>(end, place_.text.size()) - start);
      }
    }
    throw Error(place_.at(mark) +
                    fmt::format("{} uses the YAML alias {}; labpose does not accept aliases in "
                                "a file it writes back",
                                what_, printable(name, 60)) +
                    place_.excerpt(mark),
                fmt::format("DeepLabCut never writes anchors (&name) and aliases (*name); replace "
                            "{} with a copy of the value marked &{}",
                            printable(name, 60), printable(name.substr(1), 60)));
  }

  const Place& place_;
  const std::string& what_;
  YamlUse use_;
  std::vector<Open> open_;
  std::size_t values_ = 0;
};

// Refuses any second document (a rewrite would drop it).
class SecondDocument : public YAML::EventHandler {
 public:
  SecondDocument(const Place& place, const std::string& what) : place_(place), what_(what) {}
  void OnDocumentStart(const YAML::Mark& mark) override {
    throw Error(place_.at(mark) +
                    fmt::format("{} holds a second YAML document (after a line `---`)", what_) +
                    place_.excerpt(mark),
                "DeepLabCut reads one document only; remove the `---` line and what follows, or "
                "merge it into the settings above");
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}

 private:
  const Place& place_;
  const std::string& what_;
};

}  // namespace

std::string describe(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null:
      return "nothing";
    case YAML::NodeType::Scalar:
      return "\"" + printable(node.Scalar(), 80) + "\"";
    case YAML::NodeType::Sequence:
      return fmt::format("a list of {} items", node.size());
    case YAML::NodeType::Map:
      return "a mapping";
  }
  return "?";
}

void check_yaml_size(std::uintmax_t bytes, const std::filesystem::path& file,
                     const std::string& what) {
  if (bytes <= kMaxYamlBytes) return;
  throw Error(fmt::format("{}: {} is {:.1f} MB; a {} is a few KB, and labpose reads at most {} MB",
                          file.string(), what, static_cast<double>(bytes) / (1 << 20), what,
                          kMaxYamlBytes >> 20),
              "is this really a " + what + "? compare it with one labpose or DeepLabCut made");
}

YAML::Node parse_yaml(const std::string& text, const std::filesystem::path& file,
                      const std::string& what, YamlUse use) {
  check_yaml_size(text.size(), file, what);
  const Place place{text, file};
  try {
    {
      std::istringstream input(text);
      YAML::Parser parser(input);
      LimitCheck check(place, what, use);
      parser.HandleNextDocument(check);
      if (use == YamlUse::written_back) {
        SecondDocument second(place, what);
        parser.HandleNextDocument(second);
      }
    }
    return YAML::Load(text);
  } catch (const YAML::Exception& error) {
    throw Error(place.at(error.mark) +
                    fmt::format("{} is not valid YAML: {}", what, printable(error.msg, 200)) +
                    place.excerpt(error.mark),
                "check the indentation and the colons on that line and the one above it; "
                "lists are written as `- item` lines under their key");
  }
}

}  // namespace labpose::projects
