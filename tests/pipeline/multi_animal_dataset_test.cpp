// Multi-animal training sets on DeepLabCut's own example project (tests/data, with blank frames):
// the merged labels hold every individual's points, create-dataset writes DeepLabCut's training
// set pickle, Documentation pickle, pose_cfg keys and inference_cfg.yaml, DeepLabCut's Python reads
// them as its own (format_multianimal_training_data's entries, exactly).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "core/error.hpp"
#include "pipeline/dataset/create_dataset.hpp"
#include "pipeline/dataset/dataset.hpp"
#include "pipeline/dataset/paf_graph_choice.hpp"
#include "pipeline/training/pose_config.hpp"
#include "projects/layout.hpp"
#include "tests/pipeline/multi_animal_fixture.hpp"
#include "tests/support/test_support.hpp"

namespace labpose::pipeline {
namespace {
namespace fs = std::filesystem;
using testing::contains;

TEST(MultiAnimalDataset, MergedLabelsHoldEveryIndividual) {
  const testing::TempDir dir;
  const auto config = projects::ProjectConfig::load(multi_animal_example_project(dir.path()));
  MergeReport report;
  const Dataset dataset = merge_labeled_data(config, &report);
  EXPECT_TRUE(dataset.multi_animal());
  EXPECT_EQ(dataset.individuals,
            (std::vector<std::string>{"individual1", "individual2", "individual3", "single"}));
  EXPECT_EQ(dataset.multi_bodyparts, 3u);
  EXPECT_EQ(dataset.slots(), 20u) << "4 individuals x 5 keypoints";
  ASSERT_EQ(dataset.images.size(), 10u);
  // m3v1mp4short/img26: individual2's bodypart1 at (125.572, 471.208), single's corner1.
  const auto img26 = std::find_if(dataset.images.begin(), dataset.images.end(),
                                  [](const auto& image) { return contains(image.path, "img26"); });
  ASSERT_NE(img26, dataset.images.end());
  EXPECT_EQ(img26->x[1 * 5 + 0], 125.572);
  EXPECT_EQ(img26->y[1 * 5 + 0], 471.208);
  EXPECT_EQ(img26->x[3 * 5 + 3], 116.579);
  EXPECT_TRUE(std::isnan(img26->x[3 * 5 + 0])) << "single has no per-animal bodypart";
  EXPECT_EQ(dataset.slot_name(3 * 5 + 3), "single corner1");
  // Points outside their frame are reported with the individual's name, and left out.
  ASSERT_FALSE(report.dropped.empty());
  EXPECT_TRUE(contains(report.dropped.front(), " at (")) << report.dropped.front();
  EXPECT_TRUE(std::any_of(report.dropped.begin(), report.dropped.end(), [](const auto& line) {
    return contains(line, "individual2 bodypart2 at (211.715, 484.489)");
  }));
  // The merged table: four header rows, DeepLabCut's column order, and read back the same.
  const projects::Table table = dataset_table(dataset, "dlc_team");
  EXPECT_EQ(table.column_level_names,
            (std::vector<std::string>{"scorer", "individuals", "bodyparts", "coords"}));
  ASSERT_EQ(table.column_count(), 22u);
  EXPECT_EQ(table.columns[6],
            (std::vector<std::string>{"dlc_team", "individual2", "bodypart1", "x"}));
  EXPECT_EQ(table.columns[18], (std::vector<std::string>{"dlc_team", "single", "corner1", "x"}));
  projects::write_table_hdf5(table, dir.path() / "merged.h5");
  const Dataset back = read_dataset(dir.path() / "merged.h5", config.project_dir());
  EXPECT_EQ(back.individuals, dataset.individuals);
  EXPECT_EQ(back.bodyparts, dataset.bodyparts);
  EXPECT_EQ(back.multi_bodyparts, 3u);
  ASSERT_EQ(back.images.size(), dataset.images.size());
  for (std::size_t i = 0; i < back.images.size(); ++i) {
    for (std::size_t s = 0; s < dataset.slots(); ++s) {
      const double a = back.images[i].x[s], b = dataset.images[i].x[s];
      EXPECT_TRUE(a == b || (std::isnan(a) && std::isnan(b))) << i << " " << s;
    }
  }
}

TEST(MultiAnimalDataset, LabelsThatDoNotFitTheIndividualsAreRefused) {
  const testing::TempDir dir;
  const fs::path config_file = multi_animal_example_project(dir.path());
  const fs::path csv =
      config_file.parent_path() / "labeled-data" / "m3v1mp4" / "CollectedData_dlc_team.csv";
  const std::string original = testing::read_text(csv);
  const auto refused = [&](const std::string& from, const std::string& to) {
    std::string text = original;
    text.replace(text.find(from), from.size(), to);
    testing::write_text(csv, text);
    try {
      merge_labeled_data(projects::ProjectConfig::load(config_file), nullptr);
    } catch (const Error& error) {
      return std::string(error.what());
    }
    return std::string("no error");
  };
  EXPECT_TRUE(contains(refused("individual3,individual3,individual3", "mouse9,mouse9,individual3"),
                       "the individual \"mouse9\", which config.yaml does not list"));
  EXPECT_TRUE(
      contains(refused("single,single,single,single", "individual1,individual1,single,single"),
               "a unique bodypart belongs to the individual \"single\""));
}

TEST(MultiAnimalDataset, CreateDatasetWritesDeepLabCutsMultiAnimalTrainingSet) {
  const testing::TempDir dir;
  const auto config = projects::ProjectConfig::load(multi_animal_example_project(dir.path()));
  CreateDatasetOptions options;
  options.net_type = "resnet_50";  // the example names dlcrnet_ms5, which labpose does not train
  const CreatedDataset made =
      create_training_dataset(config, merge_labeled_data(config, nullptr), options);
  ASSERT_EQ(made.shuffles.size(), 1u);
  const fs::path set_dir = made.training_set_dir;
  const fs::path training_set = set_dir / "multi_mouse_dlc_team80shuffle1.pickle";
  EXPECT_TRUE(fs::is_regular_file(training_set));
  EXPECT_EQ(testing::read_text(training_set).substr(0, 2), "\x80\x03");
  const fs::path model_dir = made.shuffles[0].model_dir;
  const fs::path inference = model_dir / "test" / "inference_cfg.yaml";
  ASSERT_TRUE(fs::is_regular_file(inference));
  const std::string inference_text = testing::read_text(inference);
  for (const char* line : {"minimalnumberofconnections: 1\n", "topktoretain: 3\n", "withid: true\n",
                           "pafthreshold: 0.1\n"})
    EXPECT_TRUE(contains(inference_text, line)) << line << "\nnot in\n" << inference_text;

  const fs::path train_config = model_dir / "train" / "pose_cfg.yaml";
  const PoseConfig pose = read_pose_config(train_config);
  EXPECT_TRUE(pose.multi_animal());
  EXPECT_EQ(pose.individuals, config.values().individuals);
  EXPECT_EQ(pose.unique_bodyparts, (std::vector<std::string>{"corner1", "corner2"}));
  EXPECT_EQ(pose.bodyparts, config.keypoint_names());
  EXPECT_EQ(pose.paf_graph, (std::vector<std::pair<int, int>>{{0, 1}, {0, 2}, {1, 2}}));
  EXPECT_EQ(pose.num_idchannel, 3) << "identity: true";
  EXPECT_EQ(pose.pafwidth, 20.0);
  EXPECT_TRUE(contains(testing::read_text(model_dir / "test" / "pose_cfg.yaml"),
                       "partaffinityfield_graph: [[0, 1], [0, 2], [1, 2]]\nnum_limbs: 3\n"));
  EXPECT_NO_THROW(check_pose_config(pose, train_config)) << "labpose trains it";
}

// The example's config.yaml with its skeleton replaced by `skeleton` (YAML lines).
fs::path with_skeleton(const testing::TempDir& dir, const std::string& skeleton) {
  const fs::path config = multi_animal_example_project(dir.path());
  std::string text = testing::read_text(config);
  const std::size_t from = text.find("skeleton:\n");
  const std::size_t to = text.find("skeleton_color:");
  text.replace(from, to - from, "skeleton:\n" + skeleton);
  testing::write_text(config, text);
  return config;
}

TEST(MultiAnimalDataset, PafGraphFromTheSkeletonOrTheUsersEdges) {
  const testing::TempDir dir;
  const auto config = projects::ProjectConfig::load(multi_animal_example_project(dir.path()));
  const auto made = [&](const std::string& choice, int shuffle) {
    CreateDatasetOptions options;
    options.net_type = "resnet_50";
    options.shuffle = shuffle;
    options.paf_graph = parse_paf_graph_choice(choice);
    const CreatedDataset created =
        create_training_dataset(config, merge_labeled_data(config, nullptr), options);
    return read_pose_config(created.shuffles[0].model_dir / "train" / "pose_cfg.yaml").paf_graph;
  };
  using Graph = std::vector<std::pair<int, int>>;
  // The example's skeleton: bodypart1-2, 2-3, 3-1, in its order.
  EXPECT_EQ(made("skeleton", 1), (Graph{{0, 1}, {1, 2}, {0, 2}})) << "config.yaml's skeleton";
  EXPECT_EQ(made("config", 2), (Graph{{0, 1}, {1, 2}, {0, 2}})) << "DeepLabCut's name for it";
  EXPECT_EQ(made("2-0,1-2", 3), (Graph{{0, 2}, {1, 2}}));
  EXPECT_EQ(made("full", 4), (Graph{{0, 1}, {0, 2}, {1, 2}}));
}

TEST(MultiAnimalDataset, BadSkeletonGraphsNameTheLineAndWriteNothing) {
  const auto expect_refused = [](const std::string& skeleton, const std::string& choice,
                                 const std::string& part) {
    const testing::TempDir dir;
    const fs::path file = with_skeleton(dir, skeleton);
    const auto config = projects::ProjectConfig::load(file);
    CreateDatasetOptions options;
    options.net_type = "resnet_50";
    try {
      options.paf_graph = parse_paf_graph_choice(choice);
      create_training_dataset(config, merge_labeled_data(config, nullptr), options);
      FAIL() << "accepted: " << skeleton << " with --paf-graph " << choice;
    } catch (const Error& e) {
      EXPECT_THAT(e.what(), ::testing::HasSubstr(part)) << e.what();
    }
    EXPECT_FALSE(fs::exists(file.parent_path() / "training-datasets")) << "nothing is written";
    EXPECT_FALSE(fs::exists(file.parent_path() / "labpose-models"));
  };
  // The skeleton starts on line 36 of the example's config.yaml.
  expect_refused("- - bodypart1\n  - tail\n", "skeleton",
                 "config.yaml:37:3: the skeleton names \"tail\", which is not a multi-animal");
  expect_refused("- - bodypart1\n  - bodypart2\n- - corner1\n  - bodypart3\n", "skeleton",
                 "config.yaml:39:3: the skeleton names \"corner1\", which is a unique bodypart");
  expect_refused("- - bodypart1\n  - bodypart2\n", "skeleton", "leaves bodypart3 unconnected");
  expect_refused("- - bodypart1\n  - bodypart2\n- - bodypart2\n  - bodypart1\n", "skeleton",
                 "is given twice");
  expect_refused("[]\n", "skeleton", "config.yaml has no skeleton");
  expect_refused("", "0-1", "leaves bodypart3 unconnected");
  expect_refused("", "0-5,1-2", "beyond the 3 multi-animal bodyparts");
  expect_refused("", "0-1,0-1,1-2", "is given twice");
  expect_refused("", "0-0", "is not a pair of two different bodypart indices");
  expect_refused("", "0:1", "is not a pair");
}

TEST(MultiAnimalDataset, LargeGraphsArePrunedToDegreeSixAndStayConnected) {
  const PafGraph full = complete_graph(15);
  ASSERT_EQ(full.size(), 105u) << "DeepLabCut prunes from 105 edges";
  const PafGraph pruned = prune_graph(full, 15, kPrunedAverageDegree, 7);
  EXPECT_EQ(pruned.size(), 45u) << "ceil(15 x 6 / 2)";
  std::vector<int> degree(15, 0);
  for (const GraphEdge& edge : pruned) {
    EXPECT_NE(std::find(full.begin(), full.end(), edge), full.end());
    ++degree[static_cast<std::size_t>(edge.source)];
    ++degree[static_cast<std::size_t>(edge.target)];
  }
  EXPECT_EQ(std::count(degree.begin(), degree.end(), 0), 0) << "every bodypart linked";
  EXPECT_EQ(prune_graph(full, 15, kPrunedAverageDegree, 7), pruned) << "the seed decides";
  EXPECT_NE(prune_graph(full, 15, kPrunedAverageDegree, 8), pruned);
  EXPECT_EQ(prune_graph(complete_graph(5), 5, kPrunedAverageDegree, 7), complete_graph(5))
      << "10 edges, fewer than ceil(5 x 6 / 2): nothing to prune";
}

TEST(MultiAnimalDatasetInterop, DeepLabCutReadsTheTrainingSetAsItsOwn) {
  LABPOSE_REQUIRE_INTEROP_PYTHON(python);
  const testing::TempDir dir;
  const auto config = projects::ProjectConfig::load(multi_animal_example_project(dir.path()));
  CreateDatasetOptions options;
  options.net_type = "resnet_50";
  options.new_shuffles = 2;
  const CreatedDataset made =
      create_training_dataset(config, merge_labeled_data(config, nullptr), options);
  const auto result = testing::run(
      testing::shell_quote(python) + " " +
      testing::shell_quote((testing::python_scripts_dir() / "dlc_training_files.py").string()) +
      " dataset " + testing::shell_quote(made.training_set_dir.string()) + " dlc_team");
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_TRUE(contains(result.output, "ok 2 shuffles, 10 images")) << result.output;
}

}  // namespace
}  // namespace labpose::pipeline
