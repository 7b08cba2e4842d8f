// config.yaml from a careless or hostile hand: numbers out of range, YAML aliases, deep nesting,
// huge files and terminal escape bytes get a message naming file:line:col, in bounded time, and a
// rewrite never grows the file. The DeepLabCut dialects themselves are config_test.cpp's.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "core/error.hpp"
#include "projects/config.hpp"
#include "tests/support/test_support.hpp"

namespace labpose::projects {
namespace {
namespace fs = std::filesystem;
using testing::contains;
using testing::read_text;
using testing::TempDir;
using testing::write_text;

// A small single-animal config; line numbers below refer to it.
const char* kConfig = R"(Task: reach
scorer: me
date: Aug30
multianimalproject: false
project_path: /p
video_sets:
  /p/videos/a.avi:
    crop: 0, 640, 0, 480
bodyparts:
- Hand
- Finger
start: 0
stop: 1
numframes2pick: 20
skeleton:
- - Hand
  - Finger
pcutoff: 0.6
dotsize: 12
alphavalue: 0.7
TrainingFraction:
- 0.95
iteration: 0
snapshotindex: -1
detector_snapshotindex: -1
batch_size: 8
detector_batch_size: 1
cropping: false
x1: 0
x2: 640
y1: 0
y2: 480
corner2move2:
- 50
- 50
)";

std::string with(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

// The error message of parsing `text`, or "" when it parses.
std::string parse_error(const std::string& text) {
  try {
    ProjectConfig::parse(text, "/p/config.yaml");
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

// Each (from, to) replacement in kConfig is refused with a located message that says `expected`.
void expect_refused(const std::vector<std::pair<std::string, std::string>>& cases,
                    const std::string& expected) {
  for (const auto& [from, to] : cases) {
    const std::string message = parse_error(with(kConfig, from, to));
    EXPECT_TRUE(contains(message, "/p/config.yaml:")) << to << " -> " << message;
    EXPECT_TRUE(contains(message, expected)) << to << " -> " << message;
  }
}

bool has_control_bytes(const std::string& text) {
  return std::any_of(text.begin(), text.end(), [](char c) {
    const auto byte = static_cast<unsigned char>(c);
    return (byte < 0x20 && c != '\n') || byte == 0x7f;
  });
}

TEST(ConfigLimits, TheBaseConfigParses) {
  EXPECT_EQ(parse_error(kConfig), "");
}

TEST(ConfigLimits, IntegersBeyondIntAreRefusedNotWrapped) {
  // 4294967298 = 2^32 + 2 used to become 2 frames; 2147483648 became iteration -2147483648.
  EXPECT_EQ(parse_error(with(kConfig, "numframes2pick: 20", "numframes2pick: 4294967298")),
            "/p/config.yaml:14:17: numframes2pick must be a whole number from 0 to 100000 "
            "(found \"4294967298\")");
  EXPECT_EQ(parse_error(with(kConfig, "iteration: 0", "iteration: 2147483648")),
            "/p/config.yaml:23:12: iteration must be a whole number from 0 to 100000 "
            "(found \"2147483648\")");
  EXPECT_EQ(parse_error(with(kConfig, "iteration: 0", "iteration: -1")),
            "/p/config.yaml:23:12: iteration must be a whole number from 0 to 100000 "
            "(found \"-1\")");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"dotsize: 12", "dotsize: 4294967308"},
      {"batch_size: 8", "batch_size: 4294967304"},
      {"detector_batch_size: 1", "detector_batch_size: 4294967297"},
      {"snapshotindex: -1", "snapshotindex: 4294967295"},
      {"detector_snapshotindex: -1", "detector_snapshotindex: 4294967295"},
      {"x2: 640", "x2: 4294967936"},
      {"y2: 480", "y2: 2147483648"},
      {"- 50\n- 50\n", "- 50\n- 4294967346\n"},
      {"numframes2pick: 20", "numframes2pick: 99999999999999999999999"},
  };
  expect_refused(cases, "must be a whole number from");
  EXPECT_EQ(parse_error(with(kConfig, "batch_size: 8", "batch_size: 100000")), "");
}

TEST(ConfigLimits, CropNumbersInVideoSetsAreRangeChecked) {
  // Any crop up to 2147483647 pixels was accepted; beyond it the message did not say why.
  const std::string message =
      parse_error(with(kConfig, "crop: 0, 640, 0, 480", "crop: 0, 4294967936, 0, 480"));
  EXPECT_TRUE(contains(message,
                       "/p/config.yaml:8:11: the crop of video /p/videos/a.avi must be "
                       "four whole numbers from 0 to 100000"))
      << message;
  EXPECT_FALSE(parse_crop("0, 4294967936, 0, 480").has_value());
  EXPECT_FALSE(parse_crop("0, 2147483647, 0, 480").has_value());
  EXPECT_EQ(parse_crop("0, 100000, 0, 480"), (CropBox{0, 100000, 0, 480}));
}

TEST(ConfigLimits, FloatsMustBeFiniteAndInRange) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"pcutoff: 0.6", "pcutoff: .nan"},
      {"pcutoff: 0.6", "pcutoff: .inf"},
      {"alphavalue: 0.7", "alphavalue: -.inf"},
      {"alphavalue: 0.7", "alphavalue: 1e999"},
      {"start: 0", "start: .NaN"},
      {"stop: 1", "stop: 1.5"},
      {"- 0.95", "- .nan"},
      {"- 0.95", "- .inf"},
      {"- 0.95", "- 0"},
      {"- 0.95", "- 1.01"},
  };
  expect_refused(cases, "must be a number");
}

// 7 anchors, each a list of 8 aliases of the one before: 8^6 (262144) names when expanded.
std::string alias_bomb() {
  std::string text = with(kConfig, "pcutoff: 0.6", "pcutoff: 0.6\nlol0: &a0 [lol]");
  for (int level = 1; level < 7; ++level) {
    std::string line = "\nlol" + std::to_string(level) + ": &a" + std::to_string(level) + " [";
    for (int i = 0; i < 8; ++i) line += (i ? ", *a" : "*a") + std::to_string(level - 1);
    text = with(text, "alphavalue: 0.7", line.substr(1) + "]\nalphavalue: 0.7");
  }
  return text;
}

TEST(ConfigAliases, AnAliasIsRefusedWithFileLineAndName) {
  const std::string message = parse_error(
      with(kConfig, "- Hand\n- Finger\n", "- &hand Hand\n- Finger\n") + "extra: *hand\n");
  EXPECT_TRUE(contains(message, "/p/config.yaml:36:8: config.yaml uses the YAML alias *hand"))
      << message;
}

TEST(ConfigAliases, AnAnchorWithoutAliasIsAccepted) {
  const ProjectConfig config =
      ProjectConfig::parse(with(kConfig, "Task: reach", "Task: &t reach"), "/p/config.yaml");
  EXPECT_EQ(config.values().task, "reach");
}

TEST(ConfigAliases, AnAliasBombIsNeverWrittenOutExpanded) {
  // The bomb was read, and add-videos then wrote every alias out in full (2 KB became 17.5 MB).
  const TempDir dir;
  const fs::path file = dir / "config.yaml";
  const std::string bomb = alias_bomb();
  write_text(file, bomb);
  try {
    ProjectConfig config = ProjectConfig::load(file);
    config.add_video_set({(dir / "videos" / "b.avi").string(), CropBox{0, 64, 0, 48}});
    config.save();
  } catch (const Error& error) {
    EXPECT_TRUE(contains(error.what(), "uses the YAML alias *a0")) << error.what();
  }
  EXPECT_LT(read_text(file).size(), bomb.size() + 1024);
}

TEST(ConfigNesting, DeepNestingNamesTheLineInsteadOfBadFile) {
  // yaml-cpp stops at 500 levels with "bad file"; we stop far earlier, with a sentence.
  for (const int depth : {40, 600, 100000}) {
    const std::string message = parse_error(
        std::string(kConfig) + "deep: " + std::string(static_cast<std::size_t>(depth), '[') +
        std::string(static_cast<std::size_t>(depth), ']'));
    EXPECT_TRUE(contains(message, "/p/config.yaml:36:")) << depth << ": " << message.substr(0, 300);
    EXPECT_TRUE(contains(message, "nested more than 32 levels deep")) << message.substr(0, 300);
    EXPECT_FALSE(contains(message, "bad file")) << message.substr(0, 300);
  }
  std::string block = kConfig;
  for (int level = 0; level < 600; ++level) {
    block += std::string(static_cast<std::size_t>(2 * level), ' ') + "k:\n";
  }
  const std::string message = parse_error(block);
  EXPECT_TRUE(contains(message, "nested more than 32 levels deep")) << message.substr(0, 300);
  EXPECT_TRUE(contains(message, "/p/config.yaml:")) << message.substr(0, 300);
}

TEST(ConfigLimits, HugeFilesAndHugeListsAreRefusedQuickly) {
  const std::string padded =
      std::string(kConfig) + "# " + std::string(9u << 20, 'x') + "\n";  // a 9 MiB comment
  EXPECT_TRUE(contains(parse_error(padded), "config.yaml is 9.0 MB")) << parse_error(padded);
  std::string many = std::string(kConfig) + "many: [";
  for (int i = 0; i < 300000; ++i) many += "a,";
  many += "a]\n";
  const std::string message = parse_error(many);
  EXPECT_TRUE(contains(message, "/p/config.yaml:36:")) << message;
  EXPECT_TRUE(contains(message, "more than 250000 values")) << message;
}

TEST(ConfigLimits, MegabyteNumbersGetAMessageNotAStackOverflow) {
  // std::regex recursed once per character: a 2 MB number crashed labpose with SIGSEGV.
  const std::string digits(2'000'000, '9');
  EXPECT_TRUE(
      contains(parse_error(with(kConfig, "numframes2pick: 20", "numframes2pick: " + digits)),
               "/p/config.yaml:14:17: numframes2pick must be a whole number from 0 to "
               "100000 (found \"99999"));
  EXPECT_TRUE(contains(parse_error(with(kConfig, "crop: 0, 640, 0, 480", "crop: 0, " + digits)),
                       "/p/config.yaml:8:11: the crop of video /p/videos/a.avi must be"));
  EXPECT_TRUE(contains(parse_error(with(kConfig, "pcutoff: 0.6", "pcutoff: 0." + digits + "e")),
                       "/p/config.yaml:18:10: pcutoff must be a number between 0 and 1"));
  const ProjectConfig config = ProjectConfig::parse(
      with(kConfig, "- Finger\n", "- Finger\n- '" + digits + "'\n"), "/p/config.yaml");
  EXPECT_EQ(config.values().bodyparts.back(), digits);
  EXPECT_NE(config.to_yaml().find("- '" + digits + "'\n"), std::string::npos)
      << "a name of digits stays quoted";
}

TEST(ConfigLimits, OnlyRegularFilesOfBoundedSizeAreRead) {
  // /dev/zero as the config used to be read until memory ran out.
  try {
    ProjectConfig::load("/dev/zero");
    ADD_FAILURE() << "/dev/zero was accepted as a config.yaml";
  } catch (const Error& error) {
    EXPECT_EQ(std::string(error.what()), "/dev/zero is not a regular file");
  }
  const TempDir dir;
  write_text(dir / "config.yaml", std::string(kConfig) + "# " + std::string(9u << 20, 'x') + "\n");
  try {
    ProjectConfig::load(dir.path());
    ADD_FAILURE() << "a 9 MB config.yaml was accepted";
  } catch (const Error& error) {
    EXPECT_TRUE(contains(error.what(), "config.yaml: config.yaml is 9.0 MB")) << error.what();
  }
}

TEST(ConfigStructure, KeysLongerThanYamlsImplicitKeyLimitSurviveARewrite) {
  // YAML reads a `key:` line only up to 1024 characters; the full writer wrote longer keys that
  // way, and the rewritten file could not be read again (found by the config_yaml fuzzer).
  const std::string key(1100, 'k');
  const std::string video = "/p/videos/" + std::string(1100, 'v') + ".avi";
  ProjectConfig config = ProjectConfig::parse(
      std::string(kConfig) + "? " + key + "\n: [1, 2]\nafter: 3\n", "/p/config.yaml");
  config.add_video_set({video, CropBox{0, 64, 0, 48}});
  const std::string text = config.to_yaml();
  const ProjectConfig again = ProjectConfig::parse(text, "/p/config.yaml");
  EXPECT_EQ(again.values(), config.values());
  EXPECT_EQ(again.values().video_sets.back().key, video);
  EXPECT_TRUE(contains(text, "? " + key + "\n:\n- 1\n- 2\nafter: 3\n")) << text.substr(0, 3000);
}

TEST(ConfigStructure, ExplicitTagsSurviveARewrite) {
  // The full writer quoted a tagged empty value: `corner2move2: !!python/none` became
  // `corner2move2: ''`, which the reader then refused; `!!str yes` lost its tag, so DeepLabCut
  // would read a boolean; and an empty tagged key came out as `!!str:`, which reads as the tag
  // "str:" (all found by the config_yaml fuzzer).
  ProjectConfig config = ProjectConfig::parse(
      with(kConfig, "corner2move2:\n- 50\n- 50\n",
           "corner2move2: !!python/none\nanswer: !!str yes\nlocal: !mine 1\n? !!str\n: 2\n"),
      "/p/config.yaml");
  EXPECT_FALSE(config.values().corner2move2.has_value());
  config.add_video_set({"/p/videos/b.avi", CropBox{0, 64, 0, 48}});
  const std::string text = config.to_yaml();
  EXPECT_TRUE(contains(text,
                       "corner2move2: !!python/none ''\nanswer: !!str yes\nlocal: !mine 1\n"
                       "!!str '': 2\n"))
      << text;
  EXPECT_EQ(ProjectConfig::parse(text, "/p/config.yaml").values(), config.values());
}

TEST(ConfigStructure, KeysThatAreListsOrMappingsAreRefused) {
  // yaml-cpp reads `? [a, b]` as a key whose text is empty; the rewrite turned it into ''.
  const std::string message = parse_error(std::string(kConfig) + "? [a, b]\n: c\n");
  EXPECT_TRUE(contains(message,
                       "/p/config.yaml:36:3: a key in config.yaml must be a single "
                       "value, not a list or a mapping"))
      << message;
  EXPECT_TRUE(contains(parse_error(std::string(kConfig) + "other:\n  ? {a: 1}\n  : c\n"),
                       "not a list or a mapping"));
}

TEST(ConfigStructure, ASecondDocumentIsRefused) {
  // yaml-cpp reads the first document only; a rewrite dropped everything after `---`.
  const std::string message = parse_error(std::string(kConfig) + "---\nTask: other\n");
  EXPECT_TRUE(contains(message, "/p/config.yaml:36:1: config.yaml holds a second YAML document"))
      << message;
}

TEST(ConfigEscapes, TerminalEscapesFromTheFileAreShownEscaped) {
  // ESC [ 2 J clears the screen; ESC ] 0 ; sets the window title.
  const std::string clear = "\x1b[2J";
  const std::string engine =
      parse_error(with(kConfig, "Task: reach", "Task: reach\nengine: \"" + clear + "torch\""));
  EXPECT_TRUE(contains(engine, "engine must be pytorch or tensorflow (found \"\\x1b[2Jtorch\")"))
      << engine;
  EXPECT_FALSE(has_control_bytes(engine)) << engine;

  const std::string duplicate = parse_error(
      with(kConfig, "- Hand\n- Finger\n", "- \"\x1b]0;pwned\x07\"\n- \"\x1b]0;pwned\x07\"\n"));
  EXPECT_TRUE(contains(duplicate, "\\x1b]0;pwned\\x07")) << duplicate;
  EXPECT_FALSE(has_control_bytes(duplicate)) << duplicate;

  const std::string syntax =
      parse_error(with(kConfig, "- Finger\n", "- Finger\n  bad: [" + clear + "unclosed\n"));
  EXPECT_TRUE(contains(syntax, "is not valid YAML")) << syntax;
  EXPECT_FALSE(has_control_bytes(syntax)) << syntax;

  const std::string crop = parse_error(with(kConfig, "/p/videos/a.avi:\n    crop: 0, 640, 0, 480",
                                            "\"/p/videos/\\e[31ma.avi\":\n    crop: 0, 640, 0"));
  EXPECT_TRUE(contains(crop, "/p/videos/\\x1b[31ma.avi")) << crop;
  EXPECT_FALSE(has_control_bytes(crop)) << crop;

  const ProjectConfig config = ProjectConfig::parse(
      std::string(kConfig) + "\"bodypart\\e[8m\": [x]\nskeleton_color: black\n", "/p/config.yaml");
  ASSERT_FALSE(config.warnings().empty());
  for (const auto& warning : config.warnings()) EXPECT_FALSE(has_control_bytes(warning)) << warning;
}

TEST(ConfigEscapes, LongValuesAreCutInMessages) {
  const std::string message =
      parse_error(with(kConfig, "numframes2pick: 20", "numframes2pick: " + std::string(300, '9')));
  EXPECT_TRUE(contains(message, "numframes2pick must be a whole number from 0 to 100000"))
      << message;
  EXPECT_LT(message.size(), 250u) << message;
}

}  // namespace
}  // namespace labpose::projects
