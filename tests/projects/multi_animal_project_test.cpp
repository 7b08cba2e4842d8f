// Multi-animal projects as DeepLabCut writes them: its own example project (tests/data, labels
// only) opens and its label files round-trip, pandas reads what labpose writes, and a new project
// made with --multi-animal has DeepLabCut's multi-animal keys, which can be set afterwards.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/error.hpp"
#include "projects/config.hpp"
#include "projects/labels.hpp"
#include "projects/project.hpp"
#include "projects/table.hpp"
#include "tests/support/test_support.hpp"

namespace labpose::projects {
namespace {
namespace fs = std::filesystem;
using testing::TempDir;

const char* kExample = "multi_mouse-dlc_team-2022-04-12";

fs::path example_source() {
  return fs::path(LABPOSE_SOURCE_DIR) / "tests" / "data" / kExample;
}

// The example copied into `dir` (its config.yaml names another machine's folder).
fs::path copy_example(const fs::path& dir) {
  fs::copy(example_source(), dir / kExample, fs::copy_options::recursive);
  return dir / kExample / "config.yaml";
}

TEST(MultiAnimalProject, DeepLabCutsExampleOpens) {
  const TempDir dir;
  const fs::path file = copy_example(dir.path());
  const ProjectConfig config = ProjectConfig::load(file);
  const ConfigValues& values = config.values();
  EXPECT_TRUE(values.multi_animal);
  EXPECT_EQ(values.identity, true);
  EXPECT_EQ(values.individuals,
            (std::vector<std::string>{"individual1", "individual2", "individual3"}));
  EXPECT_EQ(values.multianimal_bodyparts,
            (std::vector<std::string>{"bodypart1", "bodypart2", "bodypart3"}));
  EXPECT_EQ(values.unique_bodyparts, (std::vector<std::string>{"corner1", "corner2"}));
  EXPECT_TRUE(values.bodyparts.empty()) << "bodyparts: MULTI!";
  EXPECT_EQ(config.keypoint_names(), (std::vector<std::string>{"bodypart1", "bodypart2",
                                                               "bodypart3", "corner1", "corner2"}));
  EXPECT_EQ(values.skeleton.size(), 3u);
  ASSERT_TRUE(config.project_path_corrected().has_value()) << "made on another machine";
  // Saved again, only project_path changes.
  const std::string original = testing::read_text(file);
  const std::string saved = config.to_yaml();
  const auto without_project_path = [](const std::string& text) {
    std::string out;
    std::size_t start = 0;
    for (std::size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1) {
      const std::string line = text.substr(start, end - start);
      if (line.rfind("project_path:", 0) != 0) out += line + "\n";
    }
    return out;
  };
  EXPECT_EQ(without_project_path(saved), without_project_path(original));
  EXPECT_NE(saved.find("project_path: " + file.parent_path().string() + "\n"), std::string::npos);
}

TEST(MultiAnimalProject, DeepLabCutsExampleLabelsRoundTrip) {
  const TempDir dir;
  const fs::path file = copy_example(dir.path());
  const ProjectConfig config = ProjectConfig::load(file);
  for (const char* video : {"m3v1mp4", "m3v1mp4short"}) {
    SCOPED_TRACE(video);
    const fs::path folder = file.parent_path() / "labeled-data" / video;
    const LabelFiles files = label_files(folder, "dlc_team");
    const fs::path original = example_source() / "labeled-data" / video / files.csv.filename();
    const LoadedLabels loaded = read_labels(files);
    const Table& table = loaded.table;
    EXPECT_EQ(table.column_level_names,
              (std::vector<std::string>{"scorer", "individuals", "bodyparts", "coords"}));
    EXPECT_EQ(table.row_count(), 5u);
    const auto keypoints = keypoint_columns(table, files.csv);
    ASSERT_EQ(keypoints.size(), 11u) << "3 individuals x 3 bodyparts, and single's 2 corners";
    EXPECT_EQ(keypoints[3].individual, "individual2");
    EXPECT_EQ(keypoints[3].bodypart, "bodypart1");
    EXPECT_EQ(keypoints[10].individual, "single");
    EXPECT_EQ(keypoints[10].bodypart, "corner2");
    for (const Finding& finding : check_label_columns(table, config, files.csv, "dlc_team"))
      EXPECT_NE(finding.severity, Finding::Severity::error) << finding.message;

    // Written again and read back: the same table, in CSV and in HDF5.
    write_labels(table, files);
    EXPECT_TRUE(same_table(read_table_csv(files.csv), table));
    EXPECT_TRUE(same_table(read_table_hdf5(files.h5), table));
    const std::string written = testing::read_text(files.csv);
    if (std::string(video) == "m3v1mp4short") {
      EXPECT_EQ(written, testing::read_text(original)) << "floats and NaN as the file had them";
    } else {
      // Integers in the file; pandas writes float64 columns as 50.0, and so does labpose.
      EXPECT_NE(written.find("labeled-data/m3v1mp4/img1029.png,50.0,50.0,100.0,"),
                std::string::npos)
          << written;
    }
  }
}

TEST(MultiAnimalProjectInterop, PandasReadsTheFourHeaderRowsLabposeWrites) {
  LABPOSE_REQUIRE_INTEROP_PYTHON(python);
  const TempDir dir;
  const fs::path file = copy_example(dir.path());
  const fs::path folder = file.parent_path() / "labeled-data" / "m3v1mp4short";
  const LabelFiles files = label_files(folder, "dlc_team");
  const Table table = read_labels(files).table;
  write_labels(table, files);
  const std::string script =
      testing::shell_quote((testing::python_scripts_dir() / "pandas_tables.py").string());
  const auto to_csv = testing::run(testing::shell_quote(python) + " " + script + " to-csv " +
                                   testing::shell_quote(files.h5.string()) + " " +
                                   testing::shell_quote((dir.path() / "pandas.csv").string()));
  ASSERT_EQ(to_csv.exit_code, 0) << to_csv.output;
  EXPECT_EQ(testing::read_text(dir.path() / "pandas.csv"), table_to_csv(table));
  const auto describe = testing::run(testing::shell_quote(python) + " " + script + " describe " +
                                     testing::shell_quote(files.h5.string()));
  ASSERT_EQ(describe.exit_code, 0) << describe.output;
  EXPECT_NE(describe.output.find("columns.names ['scorer', 'individuals', 'bodyparts', 'coords']"),
            std::string::npos)
      << describe.output;
  EXPECT_NE(describe.output.find("index.nlevels 3"), std::string::npos) << describe.output;
}

TEST(MultiAnimalProject, ANewProjectHasDeepLabCutsMultiAnimalKeys) {
  NewProjectSettings settings{
      "mice", "Ana", "Nov29", "/data/mice-Ana-2026-11-29", {}, true, {"mother", "pup{1}"}};
  const ProjectConfig config =
      ProjectConfig::new_project(settings, "/data/mice-Ana-2026-11-29/config.yaml");
  const std::string text = config.to_yaml();
  std::size_t at = 0;
  for (const std::string& part :
       {std::string("multianimalproject: true\nidentity: false\n"), std::string("video_sets:"),
        std::string("individuals:\n- mother\n- pup{1}\nuniquebodyparts: []\n"
                    "multianimalbodyparts:\n- bodypart1\n- bodypart2\n- bodypart3\n"
                    "bodyparts: MULTI!\n"),
        std::string("skeleton:\n- - bodypart1\n  - bodypart2\n- - bodypart2\n  - bodypart3\n- - "
                    "bodypart1\n  - bodypart3\n"),
        std::string("default_augmenter: multi-animal-imgaug\ndefault_track_method: ellipse\n")}) {
    const std::size_t found = text.find(part, at);
    ASSERT_NE(found, std::string::npos) << "missing or out of order: " << part << "\nin\n" << text;
    at = found + part.size();
  }
  EXPECT_TRUE(config.values().multi_animal);
  EXPECT_EQ(config.values().identity, false);
  EXPECT_EQ(config.values().default_track_method, "ellipse");
  EXPECT_EQ(config.values().individuals, settings.individuals);
  EXPECT_EQ(config.keypoint_names(),
            (std::vector<std::string>{"bodypart1", "bodypart2", "bodypart3"}));
  settings.individuals.clear();
  EXPECT_EQ(ProjectConfig::new_project(settings, "/data/mice-Ana-2026-11-29/config.yaml")
                .values()
                .individuals,
            default_individuals());
}

TEST(MultiAnimalProject, ItsBodypartsAreSetTogetherOrNotAtAll) {
  NewProjectSettings settings{"mice", "Ana", "Nov29",          "/data/mice-Ana-2026-11-29",
                              {},     true,  {"mother", "pup"}};
  ProjectConfig config =
      ProjectConfig::new_project(settings, "/data/mice-Ana-2026-11-29/config.yaml");
  config.set_multi_animal_bodyparts({"snout", "tailbase"}, {"nest"});
  EXPECT_EQ(config.values().multianimal_bodyparts, (std::vector<std::string>{"snout", "tailbase"}));
  EXPECT_EQ(config.values().unique_bodyparts, std::vector<std::string>{"nest"});
  EXPECT_TRUE(testing::contains(config.to_yaml(),
                                "uniquebodyparts:\n- nest\nmultianimalbodyparts:\n- snout\n"))
      << config.to_yaml();
  // A name in both lists, or one twice: an error, and the keypoints stay as they were.
  EXPECT_THROW(config.set_multi_animal_bodyparts({"snout", "nest"}, {"nest"}), Error);
  EXPECT_THROW(config.set_multi_animal_bodyparts({"snout", "snout"}, {}), Error);
  EXPECT_EQ(config.keypoint_names(), (std::vector<std::string>{"snout", "tailbase", "nest"}));
  config.set_multi_animal_bodyparts({"snout"}, {});
  EXPECT_TRUE(testing::contains(config.to_yaml(), "uniquebodyparts: []\n")) << config.to_yaml();
  EXPECT_THROW(config.set_bodyparts({"snout"}), Error) << "bodyparts stays MULTI!";

  // identity: in place, the rest of the text unchanged.
  const std::string before = config.to_yaml();
  config.set_identity(true);
  EXPECT_EQ(config.values().identity, true);
  std::string expected = before;
  expected.replace(expected.find("identity: false"), 15, "identity: true");
  EXPECT_EQ(config.to_yaml(), expected);

  settings.multi_animal = false;
  ProjectConfig single =
      ProjectConfig::new_project(settings, "/data/mice-Ana-2026-11-29/config.yaml");
  EXPECT_THROW(single.set_multi_animal_bodyparts({"snout"}, {}), Error);
  EXPECT_THROW(single.set_identity(true), Error);
}

TEST(MultiAnimalProject, IndividualsAreCheckedBeforeAnythingIsMade) {
  EXPECT_NO_THROW(check_individuals({"mouse1", "mouse2"}));
  const auto message = [](const std::vector<std::string>& names) {
    try {
      check_individuals(names);
    } catch (const UsageError& error) {
      return std::string(error.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message({"a", "single"}).find("\"single\" cannot name an individual"),
            std::string::npos);
  EXPECT_NE(message({"a", "b", "a"}).find("\"a\" is named twice"), std::string::npos);
  EXPECT_NE(message({"a", ""}).find("individual name"), std::string::npos) << message({"a", ""});
}

}  // namespace
}  // namespace labpose::projects
