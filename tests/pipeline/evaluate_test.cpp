// evaluate on a demo project with snapshots whose predictions are known (a network with zero
// weights outputs its head biases everywhere, so the first score-map cell wins and the biases set
// where each bodypart is predicted and how sure): numbers against summarize_errors and against
// DeepLabCut's own computation in pandas, the CSV layouts, the plots, snapshot choice and errors.
// Also the colormaps against matplotlib's values.
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <cmath>
#include <opencv2/core.hpp>

#include "core/error.hpp"
#include "nets/models/models.hpp"
#include "nets/ref/backend.hpp"
#include "pipeline/dataset/create_dataset.hpp"
#include "pipeline/evaluation/evaluate.hpp"
#include "pipeline/evaluation/result_files.hpp"
#include "pipeline/images/image_files.hpp"
#include "pipeline/plots/colormap.hpp"
#include "pipeline/training/snapshot.hpp"
#include "projects/layout.hpp"
#include "projects/number_text.hpp"
#include "tests/support/media_support.hpp"
#include "tests/support/test_support.hpp"

namespace labpose::pipeline {
namespace {
namespace fs = std::filesystem;
using testing::read_text;
using testing::TempDir;
using testing::write_text;

using testing::contains;

// Where a snapshot predicts each bodypart, on every image.
struct KnownHead {
  std::vector<double> x, y, likelihood;
};

// The predictions the decoder makes from those biases (float32 parameters, stride 8,
// locref 7.2801).
std::vector<KeypointPrediction> predictions_of(const KnownHead& head) {
  std::vector<KeypointPrediction> out;
  for (std::size_t j = 0; j < head.x.size(); ++j) {
    const auto dx = static_cast<float>((head.x[j] - 4.0) / 7.2801);
    const auto dy = static_cast<float>((head.y[j] - 4.0) / 7.2801);
    const auto logit = static_cast<float>(std::log(head.likelihood[j] / (1 - head.likelihood[j])));
    out.push_back({4.0 + static_cast<double>(dx) * 7.2801, 4.0 + static_cast<double>(dy) * 7.2801,
                   1.0 / (1.0 + std::exp(-static_cast<double>(logit)))});
  }
  return out;
}

void write_known_snapshot(const fs::path& file, const KnownHead& head,
                          const std::vector<std::string>& bodyparts, std::int64_t iteration) {
  nets::ref::RefBackend backend;
  const auto joints = static_cast<int>(bodyparts.size());
  auto net = nets::build_pose_net(backend, {"mobilenet_v2_0.35", joints, true});  // all zero
  std::vector<float> score, locref;
  for (const auto& p : predictions_of(head)) {
    score.push_back(static_cast<float>(std::log(p.likelihood / (1 - p.likelihood))));
    locref.push_back(static_cast<float>((p.x - 4.0) / 7.2801));
    locref.push_back(static_cast<float>((p.y - 4.0) / 7.2801));
  }
  backend.copy_from_host(score.data(), net->find_parameter("head.score.bias")->value);
  backend.copy_from_host(locref.data(), net->find_parameter("head.locref.bias")->value);
  SnapshotMetadata metadata;
  metadata.iteration = iteration;
  metadata.architecture = "mobilenet_v2_0.35";
  metadata.bodyparts = bodyparts;
  metadata.training_fraction = 0.95;
  write_snapshot(file, *net, {}, metadata);
}

class Evaluate : public ::testing::Test {
 protected:
  void SetUp() override {
    project_ = testing::copy_demo_project(dir_.path()).parent_path();
    CreateDatasetOptions options;
    options.net_type = "mobilenet_v2_0.35";
    create_training_dataset(config(), merge_labeled_data(config(), nullptr), options);
    const projects::ProjectConfig loaded = config();
    const auto& v = loaded.values();
    const projects::ProjectLayout layout(project_);
    train_dir_ = layout.model_dir(0, v.task, v.date, 0.95, 1) / "train";
    eval_dir_ = layout.evaluation_dir(0, v.task, v.date, 0.95, 1);
    set_dir_ = layout.training_set_dir(0, v.task, v.date);
    dataset_ = read_dataset(set_dir_ / "CollectedData_labpose.h5", project_);
    const Split split = read_split(set_dir_ / "labpose-split-95shuffle1.json");
    train_ = indices_of(dataset_, split.train, "split");
    test_ = indices_of(dataset_, split.test, "split");
  }

  projects::ProjectConfig config() const {
    return projects::ProjectConfig::load(project_ / "config.yaml");
  }
  std::string scorer(std::int64_t iterations) const {
    return projects::scorer_name("mobilenet_v2_0.35", config().values().task,
                                 config().values().date, 1, iterations);
  }
  ErrorSummary expected(const KnownHead& head, const std::vector<std::size_t>& indices) const {
    return summarize_errors(
        dataset_, indices,
        std::vector<std::vector<KeypointPrediction>>(indices.size(), predictions_of(head)), 0.6);
  }

  TempDir dir_;
  fs::path project_, train_dir_, eval_dir_, set_dir_;
  Dataset dataset_;
  std::vector<std::size_t> train_, test_;
  // Bodypart 1 is always below pcutoff; the others above it.
  const KnownHead first_{{150, 120, 170, 100}, {110, 90, 130, 120}, {0.9, 0.3, 0.7, 0.65}};
  const KnownHead second_{{160, 125, 175, 105}, {115, 95, 120, 125}, {0.95, 0.2, 0.8, 0.9}};
};

void expect_same(const ErrorSummary& got, const ErrorSummary& want) {
  const auto same = [](double a, double b) {
    return (std::isnan(a) && std::isnan(b)) || std::abs(a - b) < 1e-6;
  };
  EXPECT_TRUE(same(got.mean, want.mean)) << got.mean << " vs " << want.mean;
  EXPECT_TRUE(same(got.mean_pcutoff, want.mean_pcutoff)) << got.mean_pcutoff;
  ASSERT_EQ(got.per_bodypart.size(), want.per_bodypart.size());
  for (std::size_t j = 0; j < got.per_bodypart.size(); ++j) {
    EXPECT_TRUE(same(got.per_bodypart[j], want.per_bodypart[j])) << j;
    EXPECT_TRUE(same(got.per_bodypart_pcutoff[j], want.per_bodypart_pcutoff[j])) << j;
  }
  EXPECT_EQ(got.points, want.points);
  EXPECT_EQ(got.points_pcutoff, want.points_pcutoff);
}

TEST_F(Evaluate, ErrorsOfKnownPredictionsAndDeepLabCutsFiles) {
  write_known_snapshot(train_dir_ / "snapshot-100.safetensors", first_, dataset_.bodyparts, 100);
  write_known_snapshot(train_dir_ / "snapshot-200.safetensors", second_, dataset_.bodyparts, 200);
  EvaluateOptions options;
  options.snapshots = projects::SnapshotIndex{projects::SnapshotIndex::Kind::all, -1};
  const auto results = evaluate_network(config(), options);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].iterations, 100);
  EXPECT_EQ(results[0].scorer, scorer(100));
  EXPECT_EQ(results[0].snapshot, "snapshot-100");
  EXPECT_EQ(results[0].train_images, train_.size());
  expect_same(results[0].train, expected(first_, train_));
  expect_same(results[0].test, expected(first_, test_));
  expect_same(results[1].train, expected(second_, train_));
  expect_same(results[1].test, expected(second_, test_));
  EXPECT_TRUE(std::isnan(results[0].train.per_bodypart_pcutoff[1])) << "always below pcutoff";

  // <scorer>-results.csv: DeepLabCut's header and the rounded errors.
  const ErrorSummary train = expected(first_, train_), test = expected(first_, test_);
  const auto rounded = [](double value) {
    return std::isnan(value) ? std::string()
                             : projects::python_float_repr(round_to_hundredths(value));
  };
  EXPECT_EQ(read_text(eval_dir_ / (scorer(100) + "-results.csv")),
            ",Training iterations:,%Training dataset,Shuffle number, Train error(px), Test "
            "error(px),p-cutoff used,Train error with p-cutoff,Test error with p-cutoff\n"
            "0,100,95,1," +
                rounded(train.mean) + "," + rounded(test.mean) + ",0.6," +
                rounded(train.mean_pcutoff) + "," + rounded(test.mean_pcutoff) + "\n");
  const std::string combined =
      read_text(eval_dir_.parent_path() / "CombinedEvaluation-results.csv");
  EXPECT_TRUE(contains(combined, "\n0,100,95,1,")) << combined;
  EXPECT_TRUE(contains(combined, "\n1,200,95,1,")) << combined;
  const std::string keypoints = read_text(eval_dir_ / (scorer(100) + "-keypoint-results.csv"));
  EXPECT_TRUE(
      keypoints.starts_with("Error Type,snout,leftear,rightear,tailbase\nTrain error (px),"))
      << keypoints;
  EXPECT_TRUE(contains(keypoints, "\nTest error (px) with p-cutoff,")) << keypoints;
  EXPECT_TRUE(fs::is_regular_file(eval_dir_ / (scorer(200) + "-snapshot-200.h5")));
  EXPECT_FALSE(fs::exists(eval_dir_ / ("LabeledImages_" + scorer(100) + "_snapshot-100")))
      << "plots only with --plot";

  // Evaluating one of them again replaces its row in CombinedEvaluation, never appends it.
  options.snapshots = projects::SnapshotIndex{projects::SnapshotIndex::Kind::index, 0};
  ASSERT_EQ(evaluate_network(config(), options).size(), 1u);
  EXPECT_EQ(read_text(eval_dir_.parent_path() / "CombinedEvaluation-results.csv"), combined);

  // DeepLabCut's evaluation code, run on our files, finds the same numbers.
  LABPOSE_REQUIRE_INTEROP_PYTHON(python);
  for (const std::int64_t iterations : {100, 200}) {
    const auto result = testing::run(
        testing::shell_quote(python) + " " +
        testing::shell_quote((testing::python_scripts_dir() / "dlc_training_files.py").string()) +
        " evaluation " + testing::shell_quote(eval_dir_.string()) + " " +
        testing::shell_quote(set_dir_.string()) + " labpose " + scorer(iterations) +
        fmt::format(" snapshot-{} 0.95 1 0.6", iterations));
    EXPECT_EQ(result.exit_code, 0) << result.output;
    EXPECT_TRUE(result.output.starts_with("ok ")) << result.output;
  }
}

TEST_F(Evaluate, PlotsTheTestAndTrainingFrames) {
  write_known_snapshot(train_dir_ / "snapshot-100.safetensors", first_, dataset_.bodyparts, 100);
  EvaluateOptions options;
  options.plot = true;
  const auto results = evaluate_network(config(), options);  // snapshotindex -1
  ASSERT_EQ(results.size(), 1u);
  const fs::path folder = eval_dir_ / ("LabeledImages_" + scorer(100) + "_snapshot-100");
  ASSERT_TRUE(fs::is_directory(folder));
  std::size_t training = 0, test_plots = 0;
  for (const auto& entry : fs::directory_iterator(folder)) {
    const std::string name = entry.path().filename().string();
    training += name.starts_with("Training-synthetic_mouse-img") ? 1u : 0u;
    test_plots += name.starts_with("Test-synthetic_mouse-img") ? 1u : 0u;
  }
  EXPECT_EQ(training, train_.size());
  EXPECT_EQ(test_plots, test_.size());

  // The confident prediction of bodypart 0 is a dot of rainbow's first colour over the frame.
  const LabeledImage& image = dataset_.images[test_[0]];
  const std::string name = image.path.substr(image.path.rfind('/') + 1);
  const cv::Mat plot = read_image(folder / ("Test-synthetic_mouse-" + name), ChannelOrder::bgr);
  const cv::Mat frame = read_image(project_ / image.path, ChannelOrder::bgr);
  ASSERT_FALSE(plot.empty());
  ASSERT_EQ(plot.size(), frame.size());
  const Rgb color = colormap_colors("rainbow", 4)[0];
  const double alpha = config().values().alphavalue;
  const auto x = static_cast<int>(predictions_of(first_)[0].x),
             y = static_cast<int>(predictions_of(first_)[0].y);
  const cv::Vec3b got = plot.at<cv::Vec3b>(y, x), under = frame.at<cv::Vec3b>(y, x);
  const double want_red = alpha * 255.0 * color.r + (1 - alpha) * under[2];
  const double want_blue = alpha * 255.0 * color.b + (1 - alpha) * under[0];
  EXPECT_NEAR(got[2], want_red, 2.0);
  EXPECT_NEAR(got[0], want_blue, 2.0);
}

TEST_F(Evaluate, ExplainsWhatIsMissing) {
  const auto message_of = [&](const EvaluateOptions& options) -> std::string {
    try {
      evaluate_network(config(), options);
    } catch (const Error& error) {
      return std::string(error.what()) + "\nhint: " + error.hint();
    }
    return "";
  };
  EvaluateOptions options;
  std::string message = message_of(options);
  EXPECT_TRUE(contains(message, "no snapshots in " + train_dir_.string())) << message;
  EXPECT_TRUE(contains(message, "hint: train the network first: labpose train")) << message;

  options.shuffle = 2;
  message = message_of(options);
  EXPECT_TRUE(contains(message, "shuffle 2 of trainset95 was never made")) << message;
  EXPECT_TRUE(contains(message, "labpose create-dataset")) << message;

  options.shuffle = 1;
  write_known_snapshot(train_dir_ / "snapshot-100.safetensors", first_, dataset_.bodyparts, 100);
  options.snapshots = projects::SnapshotIndex{projects::SnapshotIndex::Kind::index, 3};
  EXPECT_THROW(evaluate_network(config(), options), UsageError);
  options.snapshots = projects::SnapshotIndex{projects::SnapshotIndex::Kind::best, -1};
  EXPECT_TRUE(contains(message_of(options), "holds no best snapshot"));
  EXPECT_FALSE(fs::exists(eval_dir_)) << "nothing evaluated, nothing written";

  const fs::path combined = eval_dir_.parent_path() / "CombinedEvaluation-results.csv";
  fs::create_directories(combined.parent_path());
  write_text(combined, "my own notes\n");
  options.snapshots.reset();
  message = message_of(options);
  EXPECT_TRUE(contains(message, "the first line is not DeepLabCut's evaluation header")) << message;
  EXPECT_FALSE(fs::exists(eval_dir_)) << "checked before any work";
  EXPECT_EQ(read_text(combined), "my own notes\n");
  fs::remove(combined);

  write_known_snapshot(train_dir_ / "snapshot-300.safetensors", first_,
                       {"nose", "ear1", "ear2", "tail"}, 300);
  message = message_of(options);
  EXPECT_TRUE(contains(message, "predicts the bodyparts nose, ear1, ear2, tail")) << message;
}

TEST(EvaluationFiles, CombinedResultsAreMergedByKeyAndSorted) {
  const TempDir dir;
  const fs::path file = dir / "CombinedEvaluation-results.csv";
  merge_combined_evaluation(file, {{500, 95, 2, 3.456, 4.0, 0.6, 3.0, std::nan("")},
                                   {100, 95, 1, 10.0, 12.345, 0.6, 9.5, 11.0}});
  merge_combined_evaluation(
      file, {{100, 80, 1, 1.0, 2.0, 0.6, 1.0, 2.0}, {500, 95, 2, 2.0, 3.0, 0.6, 2.0, 3.0}});
  EXPECT_EQ(read_text(file),
            ",Training iterations:,%Training dataset,Shuffle number, Train error(px), Test "
            "error(px),p-cutoff used,Train error with p-cutoff,Test error with p-cutoff\n"
            "0,100,80,1,1.0,2.0,0.6,1.0,2.0\n"
            "1,100,95,1,10.0,12.34,0.6,9.5,11.0\n"
            "2,500,95,2,2.0,3.0,0.6,2.0,3.0\n");
  write_text(file, "Training iterations,error\n100,2\n");
  EXPECT_THROW(merge_combined_evaluation(file, {{1, 95, 1, 1, 1, 0.6, 1, 1}}), Error);
  EXPECT_EQ(read_text(file), "Training iterations,error\n100,2\n") << "left as it was";
  EXPECT_EQ(round_to_hundredths(0.125), 0.12) << "numpy rounds half to even";
  EXPECT_EQ(round_to_hundredths(2.675), 2.68) << "as numpy: 2.675 * 100 is 267.5 in doubles";
}

TEST(Colormaps, MatchMatplotlib) {
  // matplotlib 3.6: matplotlib.colormaps[name].resampled(n)(i)[:3]
  const auto expect_colors = [](const std::string& name, const std::vector<Rgb>& want) {
    const auto got = colormap_colors(name, want.size());
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < want.size(); ++i) {
      EXPECT_NEAR(got[i].r, want[i].r, 1e-6) << name << " " << i;
      EXPECT_NEAR(got[i].g, want[i].g, 1e-6) << name << " " << i;
      EXPECT_NEAR(got[i].b, want[i].b, 1e-6) << name << " " << i;
    }
  };
  expect_colors("rainbow", {{0.5, 0.0, 1.0},
                            {0.0, 0.707107, 0.92388},
                            {0.5, 1.0, 0.707107},
                            {1.0, 0.707107, 0.382683},
                            {1.0, 0.0, 0.0}});
  expect_colors("rainbow", {{0.5, 0.0, 1.0}});
  expect_colors("jet", {{0.0, 0.0, 0.5},
                        {0.0, 0.5, 1.0},
                        {0.483871, 1.0, 0.483871},
                        {1.0, 0.592593, 0.0},
                        {0.5, 0.0, 0.0}});
  expect_colors("jet", {{0.0, 0.0, 0.5}, {0.0, 0.833333, 1.0}, {1.0, 0.901235, 0.0}, {0.5, 0, 0}});
  expect_colors("jet", {{0.5, 0.0, 0.0}});  // matplotlib's one-colour table is the end of the map
  expect_colors("viridis", {{0.267004, 0.004874, 0.329415},
                            {0.229739, 0.322361, 0.545706},
                            {0.127568, 0.566949, 0.550556},
                            {0.369214, 0.788888, 0.382914},
                            {0.993248, 0.906157, 0.143936}});
  expect_colors("viridis", {{0.267004, 0.004874, 0.329415},
                            {0.190631, 0.407061, 0.556089},
                            {0.20803, 0.718701, 0.472873},
                            {0.993248, 0.906157, 0.143936}});
  const auto fallback = colormap_colors("no-such-map", 5), rainbow = colormap_colors("rainbow", 5);
  for (std::size_t i = 0; i < 5; ++i) EXPECT_EQ(fallback[i].g, rainbow[i].g);
}

}  // namespace
}  // namespace labpose::pipeline
