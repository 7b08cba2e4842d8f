// labpose analyze on a multi-animal project, end to end: the three-mice demo project trained for a
// few steps, its video analyzed into DeepLabCut's _full.pickle, _assemblies.pickle, _el.pickle and
// _el.h5/.csv (read by Python's pickle and pandas), a finished video skipped, an interrupted one
// resumed to the same files, and bad input named; with identity: true, the identity head's votes in
// the files and the identity tracker linking by them. Training quality is not tested here.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <memory>

#include "core/error.hpp"
#include "core/interrupt.hpp"
#include "nets/cpu/backend.hpp"
#include "pipeline/analysis/multi_animal_analysis.hpp"
#include "pipeline/analysis/multi_animal_files.hpp"
#include "pipeline/analysis/multi_animal_tracking.hpp"
#include "pipeline/analysis/tracklet_files.hpp"
#include "pipeline/dataset/create_dataset.hpp"
#include "pipeline/pose/paf_best.hpp"
#include "pipeline/synthetic/demo_project.hpp"
#include "pipeline/training/pose_config.hpp"
#include "pipeline/training/trainer.hpp"
#include "projects/table.hpp"
#include "tests/pipeline/training_fixture.hpp"
#include "tests/support/test_support.hpp"

namespace labpose::pipeline {
namespace {
namespace fs = std::filesystem;
using testing::contains;
using testing::shell_quote;

constexpr int kFrames = 40;

// The demo's three mice, trained for 6 steps once for every test of the suite; with `identity`, as
// a project with identity: true (an identity channel per mouse).
struct TrainedMice {
  testing::TempDir dir;
  fs::path config, video, model_dir;

  explicit TrainedMice(bool identity = false) {
    DemoProjectOptions options;
    options.dir = dir.path();
    options.video = {256, 192, kFrames, 30.0, 3};
    options.labeled_frames = 8;
    options.animals = 3;
    const DemoProject demo = create_demo_project(options);
    config = demo.config;
    video = demo.video;
    if (identity) testing::set_yaml_values(config, {{"identity", "true"}});
    const auto project = projects::ProjectConfig::load(config);
    CreateDatasetOptions create;
    create.net_type = "mobilenet_v2_0.35";
    create.from_scratch = true;
    const CreatedDataset made =
        create_training_dataset(project, merge_labeled_data(project, nullptr), create);
    model_dir = made.shuffles.at(0).model_dir;
    PoseConfig pose = read_pose_config(model_dir / "train" / "pose_cfg.yaml");
    use_tiny_recipe(pose, 64);
    write_pose_config(pose, model_dir / "train" / "pose_cfg.yaml");
    train(cpu_training_options(project.project_dir(), model_dir / "train"));
    // A network trained for 6 steps links nothing at DeepLabCut's thresholds: accept every link,
    // so that there are animals to track (and inference_cfg.yaml is seen to be read).
    testing::set_yaml_values(model_dir / "test" / "inference_cfg.yaml",
                             {{"pafthreshold", "0.0"}, {"minimalnumberofconnections", "1"}});
  }
};

class MultiAnimalAnalysis : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { mice_ = std::make_unique<TrainedMice>(); }
  static void TearDownTestSuite() { mice_.reset(); }

  static std::vector<VideoAnalysis> analyze(const fs::path& dest, AnalyzeOptions options = {},
                                            MultiAnimalOptions multi = {}) {
    options.dest = dest;
    options.csv = true;
    const auto config = projects::ProjectConfig::load(mice_->config);
    return analyze_multi_animal_videos(config, {mice_->video}, options, multi);
  }

  static std::unique_ptr<TrainedMice> mice_;
};

std::unique_ptr<TrainedMice> MultiAnimalAnalysis::mice_;

// The scorer of a result (its _meta.json is <stem><scorer>_meta.json).
std::string scorer_of(const VideoAnalysis& result) {
  const std::string name = result.files.meta_json.filename().string();
  const std::size_t stem = std::string("synthetic_mice").size();
  return name.substr(stem, name.size() - stem - std::string("_meta.json").size());
}

MultiAnimalFiles files_of(const VideoAnalysis& result, TrackMethod tracker = TrackMethod::ellipse) {
  return multi_animal_files(result.files.meta_json.parent_path(), "synthetic_mice",
                            scorer_of(result), tracker);
}

// The files of `result` as the Python check reads them.
testing::CommandResult python_check(const std::string& python, const VideoAnalysis& result,
                                    bool tracked, TrackMethod tracker = TrackMethod::ellipse) {
  const MultiAnimalFiles files = files_of(result, tracker);
  const std::string scorer_name = scorer_of(result);
  std::string command =
      shell_quote(python) + " " +
      shell_quote((testing::python_scripts_dir() / "dlc_multi_animal_files.py").string()) +
      " --full " + shell_quote(files.full_pickle.string()) + " --assemblies " +
      shell_quote(files.assemblies_pickle.string()) + " --frames " + std::to_string(kFrames) +
      " --scorer " + scorer_name +
      " --individuals mouse1,mouse2,mouse3 --multi snout,leftear,rightear,tailbase";
  if (tracked) {
    command += " --tracklets " + shell_quote(files.tracklets_pickle.string()) + " --h5 " +
               shell_quote(files.tracks_h5.string()) + " --csv " +
               shell_quote(files.tracks_csv.string());
  }
  if (tracker == TrackMethod::identity) command += " --identity";
  return testing::run(command);
}

TEST_F(MultiAnimalAnalysis, WritesDeepLabCutsFilesThatPythonReadsThenSkipsTheFinishedVideo) {
  const testing::TempDir dir;
  const std::vector<VideoAnalysis> results = analyze(dir.path());
  ASSERT_EQ(results.size(), 1u);
  const VideoAnalysis& result = results.front();
  ASSERT_EQ(result.outcome, VideoAnalysis::Outcome::analyzed) << result.error;
  EXPECT_EQ(result.frames, kFrames);
  EXPECT_TRUE(result.files.h5.string().ends_with("_el.h5")) << result.files.h5;
  for (const fs::path& file :
       {result.files.h5, result.files.csv, result.files.meta_pickle, result.files.meta_json}) {
    EXPECT_TRUE(fs::exists(file)) << file;
  }
  EXPECT_FALSE(fs::exists(result.files.checkpoint)) << "the journal is removed when done";
  const projects::Table tracks = projects::read_table_hdf5(result.files.h5, "tracks");
  EXPECT_EQ(tracks.column_level_names,
            (std::vector<std::string>{"scorer", "individuals", "bodyparts", "coords"}));
  EXPECT_EQ(tracks.row_count(), static_cast<std::size_t>(kFrames));
  EXPECT_EQ(tracks.column_count(), 3u * 4u * 3u);
  EXPECT_EQ(tracks.columns[12][1], "mouse2");

  const std::vector<VideoAnalysis> again = analyze(dir.path());
  EXPECT_EQ(again.front().outcome, VideoAnalysis::Outcome::skipped);

  LABPOSE_REQUIRE_INTEROP_PYTHON(python);
  const testing::CommandResult checked = python_check(python, result, true);
  EXPECT_EQ(checked.exit_code, 0) << checked.output;
  EXPECT_TRUE(contains(checked.output, "ok 40 frame entries")) << checked.output;
  EXPECT_FALSE(contains(checked.output, " 0 animals")) << checked.output;
  EXPECT_FALSE(contains(checked.output, " 0 tracklets")) << checked.output;
}

TEST_F(MultiAnimalAnalysis, NoTrackWritesDetectionsAndAssembliesOnly) {
  const testing::TempDir dir;
  MultiAnimalOptions multi;
  multi.track = false;
  const VideoAnalysis result = analyze(dir.path(), {}, multi).front();
  ASSERT_EQ(result.outcome, VideoAnalysis::Outcome::analyzed) << result.error;
  EXPECT_TRUE(result.files.h5.string().ends_with("_assemblies.pickle")) << result.files.h5;
  EXPECT_TRUE(fs::exists(result.files.h5));
  EXPECT_FALSE(fs::exists(result.files.csv)) << "no tracks without tracking";
  LABPOSE_REQUIRE_INTEROP_PYTHON(python);
  const testing::CommandResult checked = python_check(python, result, false);
  EXPECT_EQ(checked.exit_code, 0) << checked.output;
}

TEST_F(MultiAnimalAnalysis, AGraphOfSomeOfTheEdgesIsAssembledWithThePriorToo) {
  // evaluate keeps the best edges (paf_best), and the journal the costs of those only; the
  // temporal prior must weaken those and leave the others, whose costs it has not.
  const fs::path test_config = mice_->model_dir / "test" / "pose_cfg.yaml";
  const std::string kept = testing::read_text(test_config);
  write_paf_best(test_config, {0, 1, 2, 3, 4});
  const testing::TempDir dir;
  const std::vector<VideoAnalysis> results = analyze(dir.path());
  testing::write_text(test_config, kept);
  ASSERT_EQ(results.size(), 1u);
  ASSERT_EQ(results.front().outcome, VideoAnalysis::Outcome::analyzed) << results.front().error;
  const projects::Table tracks = projects::read_table_hdf5(results.front().files.h5, "tracks");
  EXPECT_EQ(tracks.row_count(), static_cast<std::size_t>(kFrames));
}

// Runs `analyze` with options that stop it, as Ctrl-C does, after frame 15.
void stop_at_frame_15(const std::function<void(const AnalyzeOptions&)>& analyze) {
  AnalyzeOptions stopping;
  stopping.on_batch = [](std::int64_t rows) {
    if (rows == 15) request_interrupt();
  };
  const InterruptHandler handler;
  const std::string message = testing::error_text([&] { analyze(stopping); });
  EXPECT_TRUE(contains(message, "it resumes from")) << message;
}

TEST_F(MultiAnimalAnalysis, InterruptedThenResumedGivesTheSameFiles) {
  const testing::TempDir dir;
  const VideoAnalysis whole = analyze(dir.path() / "whole").front();
  ASSERT_EQ(whole.outcome, VideoAnalysis::Outcome::analyzed) << whole.error;

  const fs::path resumed_dir = dir.path() / "resumed";
  stop_at_frame_15([&](const AnalyzeOptions& stopping) { analyze(resumed_dir, stopping); });
  const VideoAnalysis resumed = analyze(resumed_dir).front();
  ASSERT_EQ(resumed.outcome, VideoAnalysis::Outcome::analyzed) << resumed.error;
  EXPECT_EQ(resumed.resumed_from, 15);
  const MultiAnimalFiles first = files_of(whole), second = files_of(resumed);
  EXPECT_TRUE(projects::same_table(projects::read_table_hdf5(first.tracks_h5, "tracks"),
                                   projects::read_table_hdf5(second.tracks_h5, "tracks")));
  EXPECT_EQ(testing::read_text(first.tracks_csv), testing::read_text(second.tracks_csv));
  EXPECT_EQ(testing::read_text(first.full_pickle), testing::read_text(second.full_pickle));
  EXPECT_EQ(testing::read_text(first.assemblies_pickle),
            testing::read_text(second.assemblies_pickle));
  EXPECT_EQ(testing::read_text(first.tracklets_pickle),
            testing::read_text(second.tracklets_pickle));
}

// An interrupted --overwrite keeps the old files, which no longer look finished: the next run
// without --overwrite resumes the new analysis instead of skipping the video.
TEST_F(MultiAnimalAnalysis, AnInterruptedOverwriteResumesInsteadOfLookingFinished) {
  const testing::TempDir dir;
  const VideoAnalysis whole = analyze(dir.path()).front();
  ASSERT_EQ(whole.outcome, VideoAnalysis::Outcome::analyzed) << whole.error;
  const std::string tracks = testing::read_text(files_of(whole).tracks_h5);
  const projects::Table table = projects::read_table_hdf5(files_of(whole).tracks_h5, "tracks");
  stop_at_frame_15([&](const AnalyzeOptions& stopping) {
    AnalyzeOptions again = stopping;
    again.overwrite = true;
    analyze(dir.path(), again);
  });
  EXPECT_EQ(testing::read_text(files_of(whole).tracks_h5), tracks);
  EXPECT_FALSE(fs::exists(whole.files.meta_json));
  const VideoAnalysis resumed = analyze(dir.path()).front();
  ASSERT_EQ(resumed.outcome, VideoAnalysis::Outcome::analyzed) << resumed.error;
  EXPECT_EQ(resumed.resumed_from, 15);
  EXPECT_TRUE(
      projects::same_table(table, projects::read_table_hdf5(files_of(resumed).tracks_h5, "tracks")))
      << "the same video again";
}

// bf16 on a CPU with bf16 units: the _meta.json says so, a journal of fp32 is not resumed in bf16
// (it starts over), and an interrupted bf16 run resumes to the files of a whole one.
TEST_F(MultiAnimalAnalysis, Bf16RunsAreTheirOwnAndResumeToTheSameFiles) {
  if (!nets::cpu::cpu_has_bf16()) {
    GTEST_SKIP() << "this CPU has no bf16 units (oneDNN uses " << nets::cpu::cpu_instructions()
                 << ")";
  }
  AnalyzeOptions bf16;
  bf16.precision = nets::PlanPrecision::bf16;
  const testing::TempDir dir;
  const VideoAnalysis whole = analyze(dir.path() / "whole", bf16).front();
  ASSERT_EQ(whole.outcome, VideoAnalysis::Outcome::analyzed) << whole.error;
  EXPECT_TRUE(contains(testing::read_text(whole.files.meta_json), R"("precision": "bf16")"));

  const fs::path resumed_dir = dir.path() / "resumed";
  stop_at_frame_15([&](const AnalyzeOptions& stopping) { analyze(resumed_dir, stopping); });
  const VideoAnalysis other = analyze(resumed_dir, bf16).front();
  ASSERT_EQ(other.outcome, VideoAnalysis::Outcome::analyzed) << other.error;
  EXPECT_EQ(other.resumed_from, 0) << "an fp32 journal is not continued in bf16";
  const fs::path bf16_dir = dir.path() / "bf16";
  stop_at_frame_15([&](const AnalyzeOptions& stopping) {
    AnalyzeOptions stopping_bf16 = stopping;
    stopping_bf16.precision = nets::PlanPrecision::bf16;
    analyze(bf16_dir, stopping_bf16);
  });
  const VideoAnalysis resumed = analyze(bf16_dir, bf16).front();
  ASSERT_EQ(resumed.outcome, VideoAnalysis::Outcome::analyzed) << resumed.error;
  EXPECT_EQ(resumed.resumed_from, 15);
  const MultiAnimalFiles first = files_of(whole), second = files_of(resumed);
  EXPECT_EQ(testing::read_text(first.full_pickle), testing::read_text(second.full_pickle));
  EXPECT_EQ(testing::read_text(first.tracks_csv), testing::read_text(second.tracks_csv));
}

TEST_F(MultiAnimalAnalysis, BadInputIsNamed) {
  AnalyzeOptions batched;
  batched.batch_size = 4;
  EXPECT_TRUE(contains(testing::error_text([&] { check_multi_animal_options(batched); }),
                       "--batch-size is for single-animal projects"));
  AnalyzeOptions int8;
  int8.precision = nets::PlanPrecision::int8;
  const std::string no_int8 = testing::error_text([&] { check_multi_animal_options(int8); });
  EXPECT_TRUE(contains(no_int8, "--precision int8 is for single-animal projects")) << no_int8;
  EXPECT_TRUE(contains(no_int8, "--precision bf16")) << no_int8;
  AnalyzeOptions reduced;
  for (const auto precision : {nets::PlanPrecision::fp32, nets::PlanPrecision::bf16,
                               nets::PlanPrecision::automatic, nets::PlanPrecision::fp16}) {
    reduced.precision = precision;
    EXPECT_NO_THROW(check_multi_animal_options(reduced)) << nets::precision_name(precision);
  }

  // An edge the network's graph does not have (4 bodyparts: edges 0 to 5).
  const fs::path test_config = mice_->model_dir / "test" / "pose_cfg.yaml";
  const std::string kept = testing::read_text(test_config);
  write_paf_best(test_config, {0, 99});
  const testing::TempDir dir;
  const std::string message = testing::error_text([&] { analyze(dir.path()); });
  testing::write_text(test_config, kept);
  EXPECT_TRUE(contains(message, test_config.string())) << message;
  EXPECT_TRUE(contains(message, "paf_best (the edges animals are linked through)")) << message;
  EXPECT_TRUE(contains(message, "edge of the 6-edge graph")) << message;

  MultiAnimalOptions by_identity;
  by_identity.tracker = TrackMethod::identity;
  const std::string no_head = testing::error_text([&] { analyze(dir.path(), {}, by_identity); });
  EXPECT_TRUE(contains(no_head, "--tracker identity")) << no_head;
  EXPECT_TRUE(contains(no_head, "identity: true in " + mice_->config.string())) << no_head;
}

// The same mice in a project with identity: true.
class IdentityAnalysis : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { mice_ = std::make_unique<TrainedMice>(true); }
  static void TearDownTestSuite() { mice_.reset(); }

  static VideoAnalysis analyze(const fs::path& dest, AnalyzeOptions options = {}) {
    options.dest = dest;
    options.csv = true;
    MultiAnimalOptions multi;
    multi.tracker = TrackMethod::identity;
    const auto config = projects::ProjectConfig::load(mice_->config);
    return analyze_multi_animal_videos(config, {mice_->video}, options, multi).front();
  }

  static std::unique_ptr<TrainedMice> mice_;
};

std::unique_ptr<TrainedMice> IdentityAnalysis::mice_;

TEST_F(IdentityAnalysis, TheVotesGoIntoTheFilesAndTheIdentityTrackerLinksByThem) {
  const testing::TempDir dir;
  const VideoAnalysis result = analyze(dir.path());
  ASSERT_EQ(result.outcome, VideoAnalysis::Outcome::analyzed) << result.error;
  EXPECT_TRUE(result.files.h5.string().ends_with("_id.h5")) << result.files.h5;
  const MultiAnimalFiles files = files_of(result, TrackMethod::identity);
  const auto assembled = read_assemblies_pickle(files.assemblies_pickle, kFrames, 4, 0);
  int animals = 0;
  for (const Assemblies& frame : assembled) {
    for (const Assembly& animal : frame.animals) {
      ++animals;
      ASSERT_EQ(animal.identity.size(), 4u) << "every keypoint has an individual";
      for (std::size_t j = 0; j < 4; ++j) {
        if (std::isnan(animal.keypoints[j].x)) continue;
        EXPECT_GE(animal.identity[j], 0);
        EXPECT_LT(animal.identity[j], 3);
      }
    }
  }
  EXPECT_GT(animals, 0);

  // labpose track reads the identity column back and links the same tracklets.
  const std::string single_pass = testing::read_text(files.tracklets_pickle);
  TrackStepOptions step;
  step.analyze.dest = dir.path();
  step.analyze.overwrite = true;
  step.tracker = TrackMethod::identity;
  track_videos(projects::ProjectConfig::load(mice_->config), {mice_->video}, step);
  EXPECT_EQ(testing::read_text(files.tracklets_pickle), single_pass);

  LABPOSE_REQUIRE_INTEROP_PYTHON(python);
  const testing::CommandResult checked = python_check(python, result, true, TrackMethod::identity);
  EXPECT_EQ(checked.exit_code, 0) << checked.output;
  EXPECT_TRUE(contains(checked.output, "identities of")) << checked.output;
  EXPECT_FALSE(contains(checked.output, " 0 tracklets")) << checked.output;
}

TEST_F(IdentityAnalysis, InterruptedThenResumedGivesTheSameFiles) {
  const testing::TempDir dir;
  const VideoAnalysis whole = analyze(dir.path() / "whole");
  ASSERT_EQ(whole.outcome, VideoAnalysis::Outcome::analyzed) << whole.error;
  const fs::path resumed_dir = dir.path() / "resumed";
  stop_at_frame_15([&](const AnalyzeOptions& stopping) { analyze(resumed_dir, stopping); });
  const VideoAnalysis resumed = analyze(resumed_dir);
  ASSERT_EQ(resumed.outcome, VideoAnalysis::Outcome::analyzed) << resumed.error;
  EXPECT_EQ(resumed.resumed_from, 15);
  const MultiAnimalFiles first = files_of(whole, TrackMethod::identity),
                         second = files_of(resumed, TrackMethod::identity);
  for (const auto& [one, other] : {std::pair{first.full_pickle, second.full_pickle},
                                   std::pair{first.assemblies_pickle, second.assemblies_pickle},
                                   std::pair{first.tracklets_pickle, second.tracklets_pickle},
                                   std::pair{first.tracks_csv, second.tracks_csv}}) {
    EXPECT_EQ(testing::read_text(one), testing::read_text(other)) << one << " and " << other;
  }
}

}  // namespace
}  // namespace labpose::pipeline
