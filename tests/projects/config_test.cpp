// config.yaml: DeepLabCut's dialects read as they are, errors with file:line:col, round trips.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "projects/config.hpp"
#include "tests/support/test_support.hpp"

namespace labpose::projects {
namespace {
namespace fs = std::filesystem;
using testing::read_text;
using testing::TempDir;
using testing::write_text;

// A 2.2-style single-animal config as DeepLabCut writes it.
const char* kDlc22 = R"(# Project definitions (do not edit)
Task: reaching
scorer: Mackenzie
date: Aug30
multianimalproject: false
identity:

# Project path (change when moving around)
project_path: /home/mackenzie/reaching-Mackenzie-2018-08-30

# Annotation data set configuration (and individual video cropping parameters)
video_sets:
  /home/mackenzie/reaching-Mackenzie-2018-08-30/videos/reachingvideo1.avi:
    crop: 0, 832, 0, 747
bodyparts:
- Hand
- Finger1
- Finger2
- Joystick
start: 0
stop: 1
numframes2pick: 20

# Plotting configuration
skeleton: [[Hand, Finger1], [Finger1, Finger2]]
skeleton_color: black
pcutoff: 0.4
dotsize: 12
alphavalue: 0.7
colormap: plasma

# Training,Evaluation and Analysis configuration
TrainingFraction:
- 0.95
- 0.8
iteration: 0
default_net_type: resnet_50
default_augmenter: default
snapshotindex: -1
batch_size: 8

# Cropping Parameters (for analysis and outlier frame detection)
cropping: false
#if cropping is true for analysis, then set the values here:
x1: 0
x2: 640
y1: 277
y2: 624

# Refinement configuration (parameters from annotation dataset configuration also relevant in this stage)
corner2move2: !!python/tuple
- 50
- 50
move2corner: true
)";

const char* kMultiAnimal = R"(Task: trimice
scorer: me
date: Jan5
multianimalproject: true
identity: false
project_path: /somewhere/else
engine: pytorch
video_sets:
  /data/v1.mp4:
    crop: 0, 640, 0, 480
individuals:
- mus1
- mus2
uniquebodyparts: []
multianimalbodyparts:
- snout
- tail
bodyparts: MULTI!
skeleton:
- - snout
  - tail
TrainingFraction:
- 0.95
iteration: 2
snapshotindex: all
)";

ProjectConfig parse(const std::string& text, const fs::path& file = "/p/config.yaml") {
  return ProjectConfig::parse(text, file);
}

// The error message of parsing `text`, or "" when it parses.
std::string parse_error(const std::string& text) {
  try {
    parse(text);
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

std::string with(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  text.replace(at, from.size(), to);
  return text;
}

TEST(Config, ReadsDeepLabCut22SingleAnimalConfig) {
  const ProjectConfig config = parse(kDlc22, "/data/reaching-Mackenzie-2018-08-30/config.yaml");
  const ConfigValues& values = config.values();
  EXPECT_EQ(values.task, "reaching");
  EXPECT_EQ(values.scorer, "Mackenzie");
  EXPECT_EQ(values.date, "Aug30");
  EXPECT_FALSE(values.multi_animal);
  EXPECT_FALSE(values.identity.has_value());
  EXPECT_EQ(values.engine, "") << "2.x configs have no engine key";
  EXPECT_EQ(values.bodyparts, (std::vector<std::string>{"Hand", "Finger1", "Finger2", "Joystick"}));
  ASSERT_EQ(values.video_sets.size(), 1u);
  EXPECT_EQ(values.video_sets[0].crop, (CropBox{0, 832, 0, 747}));
  ASSERT_EQ(values.skeleton.size(), 2u);
  EXPECT_EQ(values.skeleton[1].to, "Finger2");
  EXPECT_DOUBLE_EQ(values.pcutoff, 0.4);
  EXPECT_EQ(values.colormap, "plasma");
  EXPECT_EQ(values.training_fraction, (std::vector<double>{0.95, 0.8}));
  EXPECT_EQ(values.snapshot_index.kind, SnapshotIndex::Kind::index);
  EXPECT_EQ(values.snapshot_index.index, -1);
  EXPECT_EQ(values.corner2move2, (std::pair<int, int>{50, 50}))
      << "the !!python/tuple tag is accepted";
  EXPECT_EQ(values.crop, (CropBox{0, 640, 277, 624}));
  EXPECT_TRUE(config.warnings().empty());
}

TEST(Config, ReadsMultiAnimalConfig) {
  const ProjectConfig config = parse(kMultiAnimal);
  const ConfigValues& values = config.values();
  EXPECT_TRUE(values.multi_animal);
  EXPECT_EQ(values.individuals, (std::vector<std::string>{"mus1", "mus2"}));
  EXPECT_EQ(config.keypoint_names(), (std::vector<std::string>{"snout", "tail"}));
  EXPECT_EQ(values.iteration, 2);
  EXPECT_EQ(values.snapshot_index.kind, SnapshotIndex::Kind::all);
  EXPECT_DOUBLE_EQ(values.pcutoff, 0.6) << "missing keys take DeepLabCut's defaults";
  EXPECT_EQ(values.batch_size, 8);
}

TEST(Config, ReadsTheReferenceProject) {
  LABPOSE_REQUIRE_OPENFIELD(project);
  const ProjectConfig config = ProjectConfig::load(project / "config.yaml");
  const ConfigValues& values = config.values();
  EXPECT_EQ(values.task, "openfield");
  EXPECT_EQ(values.scorer, "Pranav");
  EXPECT_EQ(values.date, "Oct30");
  EXPECT_EQ(values.engine, "pytorch");
  EXPECT_EQ(values.bodyparts,
            (std::vector<std::string>{"snout", "leftear", "rightear", "tailbase"}));
  EXPECT_DOUBLE_EQ(values.pcutoff, 0.4);
  EXPECT_EQ(values.colormap, "jet");
  EXPECT_EQ(values.batch_size, 4);
  ASSERT_TRUE(config.project_path_corrected().has_value())
      << "the shipped project_path is a placeholder";
  EXPECT_EQ(values.project_path, fs::absolute(project).lexically_normal().string());
}

TEST(Config, ProjectPathIsCorrectedAndOnlyThatLineChanges) {
  const TempDir dir;
  const fs::path file = dir / "config.yaml";
  write_text(file, kDlc22);
  ProjectConfig config = ProjectConfig::load(file);
  ASSERT_EQ(config.project_path_corrected(), "/home/mackenzie/reaching-Mackenzie-2018-08-30");
  config.save();
  const std::string expected =
      with(kDlc22, "project_path: /home/mackenzie/reaching-Mackenzie-2018-08-30",
           "project_path: " + dir.path().string());
  EXPECT_EQ(read_text(file), expected)
      << "comments, flow lists and the python tuple tag stay as they were";
  EXPECT_FALSE(ProjectConfig::load(file).project_path_corrected().has_value());
}

TEST(Config, NewProjectWritesEveryKeyInDeepLabCutsOrder) {
  NewProjectSettings settings{
      "openfield",
      "Pranav",
      "Oct30",
      "/data/openfield-Pranav-2018-10-30",
      {{"/data/openfield-Pranav-2018-10-30/videos/m3v1mp4.mp4", CropBox{0, 640, 0, 480}}},
      false,
      {}};
  const ProjectConfig config =
      ProjectConfig::new_project(settings, "/data/openfield-Pranav-2018-10-30/config.yaml");
  const std::string text = config.to_yaml();
  const std::string video_sets =
      "video_sets:\n  /data/openfield-Pranav-2018-10-30/videos/m3v1mp4.mp4:\n    crop: 0, 640, 0, "
      "480\n";
  const std::vector<std::string> order = {
      "# Project definitions (do not edit)\nTask: openfield\n",
      "scorer: Pranav\n",
      "date: Oct30\n",
      "multianimalproject: false\n",
      "identity:\n",
      "\n\n# Project path (change when moving around)\nproject_path: ",
      "engine: pytorch\n",
      video_sets,
      "bodyparts:\n- bodypart1\n- bodypart2\n- bodypart3\n- objectA\n",
      "start: 0\n",
      "stop: 1\n",
      "numframes2pick: 20\n",
      "skeleton:\n- - bodypart1\n  - bodypart2\n- - objectA\n  - bodypart3\n",
      "skeleton_color: black\n",
      "pcutoff: 0.6\n",
      "dotsize: 12\n",
      "alphavalue: 0.7\n",
      "colormap: rainbow\n",
      "TrainingFraction:\n- 0.95\n",
      "iteration: 0\n",
      "default_net_type: efficientnet_lite0\n",  // labpose's one departure (pretrained by default)
      "default_augmenter: default\n",
      "snapshotindex: -1\n",
      "detector_snapshotindex: -1\n",
      "batch_size: 8\n",
      "detector_batch_size: 1\n",
      "cropping: false\n#if cropping is true for analysis, then set the values here:\nx1: 0\n",
      "x2: 640\n",
      "y1: 277\n",
      "y2: 624\n",
      "corner2move2:\n- 50\n- 50\n",
      "move2corner: true\n",
      "SuperAnimalConversionTables:\n"};
  std::size_t at = 0;
  for (const auto& piece : order) {
    const std::size_t found = text.find(piece, at);
    ASSERT_NE(found, std::string::npos) << "missing or out of order: " << piece << "\nin:\n"
                                        << text;
    at = found + piece.size();
  }
  const ProjectConfig reread = parse(text, "/data/openfield-Pranav-2018-10-30/config.yaml");
  EXPECT_EQ(reread.to_yaml(), text);
  EXPECT_FALSE(reread.project_path_corrected().has_value());
}

TEST(Config, AddingAVideoRewritesInDeepLabCutsLayoutAndReadsBack) {
  ProjectConfig config = parse(kDlc22, "/data/reaching-Mackenzie-2018-08-30/config.yaml");
  config.add_video_set(
      {"/data/reaching-Mackenzie-2018-08-30/videos/reach 2: left.avi", CropBox{0, 100, 0, 50}});
  const std::string text = config.to_yaml();
  EXPECT_NE(text.find("  '/data/reaching-Mackenzie-2018-08-30/videos/reach 2: left.avi':\n    "
                      "crop: 0, 100, 0, 50\n"),
            std::string::npos)
      << "a key with ': ' must be quoted:\n"
      << text;
  EXPECT_NE(text.find("skeleton:\n- - Hand\n  - Finger1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("corner2move2:\n- 50\n- 50\n"), std::string::npos)
      << "the python tag is dropped:\n"
      << text;
  const ProjectConfig reread = parse(text, "/data/reaching-Mackenzie-2018-08-30/config.yaml");
  ASSERT_EQ(reread.values().video_sets.size(), 2u);
  EXPECT_EQ(reread.values().video_sets[1].key,
            "/data/reaching-Mackenzie-2018-08-30/videos/reach 2: left.avi");
  EXPECT_EQ(reread.values().bodyparts, config.values().bodyparts);
  EXPECT_EQ(reread.values().training_fraction, config.values().training_fraction);
  EXPECT_EQ(reread.to_yaml(), text);
}

TEST(Config, SettingBodypartsSkeletonAndFramesToPick) {
  ProjectConfig config = parse(kDlc22, "/data/reaching-Mackenzie-2018-08-30/config.yaml");
  config.set_bodyparts({"snout", "leftear", "rightear", "tailbase"});
  config.set_skeleton({{"snout", "leftear"}, {"snout", "rightear"}});
  config.set_numframes2pick(7);
  const std::string text = config.to_yaml();
  EXPECT_NE(text.find("bodyparts:\n- snout\n- leftear\n- rightear\n- tailbase\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("skeleton:\n- - snout\n  - leftear\n- - snout\n  - rightear\n"),
            std::string::npos)
      << text;
  const ProjectConfig reread = parse(text, "/data/reaching-Mackenzie-2018-08-30/config.yaml");
  EXPECT_EQ(reread.values().bodyparts,
            (std::vector<std::string>{"snout", "leftear", "rightear", "tailbase"}));
  ASSERT_EQ(reread.values().skeleton.size(), 2u);
  EXPECT_EQ(reread.values().skeleton[1].to, "rightear");
  EXPECT_EQ(reread.values().numframes2pick, 7);
  EXPECT_TRUE(reread.warnings().empty());

  // Refused changes leave the config as it was.
  EXPECT_THROW(config.set_bodyparts({"snout", "snout"}), Error);
  EXPECT_THROW(config.set_bodyparts({}), Error);
  EXPECT_THROW(config.set_skeleton({{"snout", "snout"}}), Error);
  EXPECT_THROW(config.set_numframes2pick(-1), Error);
  EXPECT_EQ(config.to_yaml(), text);
  EXPECT_EQ(config.values().bodyparts.size(), 4u);
}

TEST(Config, StringsThatLookLikeOtherTypesStayStrings) {
  std::string text = with(kDlc22, "- Joystick\n", "- 'yes'\n- '1.5'\n- 'null'\n");
  ProjectConfig config = parse(text);
  EXPECT_EQ(config.values().bodyparts.back(), "null");
  config.add_video_set({"/v/x.avi", CropBox{0, 1, 0, 1}});  // forces a full rewrite
  const ProjectConfig reread = parse(config.to_yaml());
  EXPECT_EQ(reread.values().bodyparts, config.values().bodyparts);
  EXPECT_NE(config.to_yaml().find("- 'yes'\n- '1.5'\n- 'null'\n"), std::string::npos)
      << config.to_yaml();
}

TEST(ConfigErrors, BrokenYamlNamesLineAndColumnAndShowsTheLine) {
  const std::string message =
      parse_error(with(kDlc22, "- Finger2\n", "- Finger2\n  bad: [unclosed\n"));
  EXPECT_NE(message.find("/p/config.yaml:"), std::string::npos) << message;
  EXPECT_NE(message.find("is not valid YAML"), std::string::npos) << message;
}

TEST(ConfigErrors, MissingTaskIsNamed) {
  const std::string message = parse_error(with(kDlc22, "Task: reaching\n", ""));
  EXPECT_NE(message.find("the key 'Task' is missing"), std::string::npos) << message;
}

TEST(ConfigErrors, DuplicateBodypartNamesFileLineColumn) {
  const std::string message = parse_error(with(kDlc22, "- Joystick\n", "- Finger1\n"));
  EXPECT_EQ(
      message,
      "/p/config.yaml:19:3: bodyparts must be a list of distinct names (found \"Finger1\" twice)");
}

TEST(ConfigErrors, WrongTypesAndRangesNameTheKey) {
  EXPECT_EQ(parse_error(with(kDlc22, "pcutoff: 0.4", "pcutoff: 1.4")),
            "/p/config.yaml:27:10: pcutoff must be a number between 0 and 1 (found \"1.4\")");
  EXPECT_EQ(parse_error(with(kDlc22, "pcutoff: 0.4", "pcutoff: high")),
            "/p/config.yaml:27:10: pcutoff must be a number between 0 and 1 (found \"high\")");
  EXPECT_NE(parse_error(with(kDlc22, "numframes2pick: 20", "numframes2pick: 2.5"))
                .find("numframes2pick must be a whole number"),
            std::string::npos);
  EXPECT_NE(parse_error(with(kDlc22, "bodyparts:\n- Hand\n- Finger1\n- Finger2\n- Joystick\n",
                             "bodyparts: Hand\n"))
                .find("bodyparts must be a list of distinct names (found \"Hand\")"),
            std::string::npos);
  EXPECT_NE(parse_error(with(kDlc22, "bodyparts:\n- Hand\n- Finger1\n- Finger2\n- Joystick\n",
                             "bodyparts: []\n"))
                .find("bodyparts must be a non-empty list"),
            std::string::npos);
  EXPECT_NE(parse_error(with(kDlc22, "start: 0\nstop: 1", "start: 0.6\nstop: 0.5"))
                .find("start (0.6) must be smaller than stop (0.5)"),
            std::string::npos);
  EXPECT_NE(parse_error(with(kDlc22, "cropping: false", "cropping: maybe"))
                .find("cropping must be true or false"),
            std::string::npos);
  EXPECT_NE(parse_error(with(kDlc22, "- 0.8\n", "- 0.805\n"))
                .find("TrainingFraction 0.805 has more than two decimals"),
            std::string::npos);
  EXPECT_NE(parse_error(std::string(kDlc22) + "engine: torch\n")
                .find("engine must be pytorch or tensorflow"),
            std::string::npos);
  EXPECT_NE(parse_error(with(kDlc22, "x2: 640", "x2: 0")).find("the crop box must have x1 < x2"),
            std::string::npos);
}

TEST(ConfigErrors, BadCropStringNamesTheVideo) {
  const std::string message =
      parse_error(with(kDlc22, "crop: 0, 832, 0, 747", "crop: 0, 832, 747"));
  EXPECT_NE(message.find("/p/config.yaml:14:11: the crop of video "
                         "/home/mackenzie/reaching-Mackenzie-2018-08-30/videos/reachingvideo1.avi "
                         "must be four whole "
                         "numbers"),
            std::string::npos)
      << message;
}

TEST(ConfigErrors, DuplicateTopLevelKey) {
  const std::string message = parse_error(std::string(kDlc22) + "pcutoff: 0.9\n");
  EXPECT_NE(message.find("the key 'pcutoff' appears twice"), std::string::npos) << message;
}

TEST(ConfigErrors, MultiAnimalMismatches) {
  EXPECT_NE(parse_error(with(kMultiAnimal, "bodyparts: MULTI!", "bodyparts: [a, b]"))
                .find("must be the word MULTI!"),
            std::string::npos);
  EXPECT_NE(parse_error(with(kMultiAnimal, "multianimalproject: true", "multianimalproject: false"))
                .find("bodyparts is MULTI! but multianimalproject is not true"),
            std::string::npos);
}

TEST(ConfigErrors, NotAMappingAndEmptyFile) {
  EXPECT_NE(parse_error("- a\n- b\n").find("must be a mapping"), std::string::npos);
  EXPECT_NE(parse_error("").find("must be a mapping"), std::string::npos);
}

TEST(ConfigWarnings, UnknownKeysAndSkeletonNamesAreWarnedNotRefused) {
  const ProjectConfig config =
      parse(with(std::string(kDlc22) + "bodypart: [x]\n", "[[Hand, Finger1], [Finger1, Finger2]]",
                 "[[Hand, Finger1], [Finger1, Thumb]]"));
  ASSERT_EQ(config.warnings().size(), 2u);
  EXPECT_NE(config.warnings()[0].find("unknown key 'bodypart' (did you mean 'bodyparts'?)"),
            std::string::npos)
      << config.warnings()[0];
  EXPECT_NE(config.warnings()[1].find("the skeleton names \"Thumb\", which is not a bodypart"),
            std::string::npos)
      << config.warnings()[1];
}

TEST(ConfigErrors, MissingFileAndFolderArgument) {
  const TempDir dir;
  EXPECT_THROW(ProjectConfig::load(dir / "config.yaml"), Error);
  write_text(dir / "config.yaml", kDlc22);
  EXPECT_EQ(ProjectConfig::load(dir.path()).values().task, "reaching")
      << "a project folder is accepted too";
}

TEST(ConfigInterop, DeepLabCutsYamlReaderSeesTheSameValues) {
  LABPOSE_REQUIRE_INTEROP_PYTHON(python);
  const TempDir dir;
  ProjectConfig config = parse(kDlc22, dir / "config.yaml");
  config.add_video_set({"/data/it's here: a.avi", CropBox{0, 10, 0, 20}});
  config.save();
  // ruamel.yaml in safe mode is how DeepLabCut 3 reads config.yaml.
  const auto result = testing::run(
      testing::shell_quote(python) + " " +
      testing::shell_quote((testing::python_scripts_dir() / "read_config.py").string()) + " " +
      testing::shell_quote((dir / "config.yaml").string()));
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("Task=reaching"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("bodyparts=['Hand', 'Finger1', 'Finger2', 'Joystick']"),
            std::string::npos)
      << result.output;
  EXPECT_NE(result.output.find("video=/data/it's here: a.avi crop=0, 10, 0, 20"), std::string::npos)
      << result.output;
  EXPECT_NE(result.output.find("TrainingFraction=[0.95, 0.8]"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("corner2move2=[50, 50]"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("identity=None"), std::string::npos) << result.output;
}

}  // namespace
}  // namespace labpose::projects
