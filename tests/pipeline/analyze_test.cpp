// Video analysis on the demo project with a snapshot the test writes (random weights: the numbers
// are checked against whole-image prediction, not against the truth): one row per frame in
// DeepLabCut's files, skipping finished videos, resuming an interrupted one to the same table, NaN
// rows at exactly the undecodable frames, shards, and the messages for bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <opencv2/core.hpp>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/interrupt.hpp"
#include "nets/cpu/backend.hpp"
#include "nets/models/models.hpp"
#include "pipeline/analysis/analysis_backend.hpp"
#include "pipeline/analysis/analyze.hpp"
#include "pipeline/dataset/create_dataset.hpp"
#include "pipeline/dataset/dataset.hpp"
#include "pipeline/pose/int8_calibration.hpp"
#include "pipeline/pose/predict.hpp"
#include "pipeline/training/snapshot.hpp"
#include "pipeline/video/reader.hpp"
#include "pipeline/video/writer.hpp"
#include "projects/table.hpp"
#include "tests/support/media_support.hpp"
#include "tests/support/test_support.hpp"

namespace labpose::pipeline {
namespace {
namespace fs = std::filesystem;
using testing::TempDir;

// The demo project (60 frames of 320x240) with shuffle 1 made and a snapshot of random weights.
struct AnalysisFixture {
  TempDir dir;
  fs::path config_file, video;
  std::optional<projects::ProjectConfig> config;
  fs::path snapshot;

  AnalysisFixture() {
    config_file = testing::copy_demo_project(dir.path());
    config = projects::ProjectConfig::load(config_file);
    const Dataset dataset = merge_labeled_data(*config, nullptr);
    CreateDatasetOptions create;
    create.net_type = "mobilenet_v2_0.35";
    const CreatedDataset created = create_training_dataset(*config, dataset, create);
    const fs::path train_dir = created.shuffles.front().model_dir / "train";
    nets::cpu::CpuBackend backend;
    auto net = nets::build_pose_net(backend, {"mobilenet_v2_0.35", 4, true});
    nets::initialize_pose_net(*net, 5);
    SnapshotMetadata metadata;
    metadata.iteration = 20;
    metadata.architecture = "mobilenet_v2_0.35";
    metadata.bodyparts = {"snout", "leftear", "rightear", "tailbase"};
    snapshot = train_dir / "snapshot-20.safetensors";
    write_snapshot(snapshot, *net, {}, metadata);
    video = config->project_dir() / "videos" / "synthetic_mouse.mp4";
  }
};

projects::Table read_tracks(const fs::path& h5) {
  return projects::read_table_hdf5(h5);
}

TEST(Analyze, EveryFrameAsWholeImagePredictionInDeepLabCutFiles) {
  const AnalysisFixture fixture;
  AnalyzeOptions options;
  options.batch_size = 8;  // 60 frames: the last batch is partial
  options.csv = true;
  const auto results = analyze_videos(*fixture.config, {fixture.video}, options);
  ASSERT_EQ(results.size(), 1u);
  const VideoAnalysis& result = results.front();
  ASSERT_EQ(result.outcome, VideoAnalysis::Outcome::analyzed) << result.error;
  EXPECT_EQ(result.frames, 60);
  const std::string scorer = "DLC_mobnet_35_demo" + fixture.config->values().date + "shuffle1_20";
  EXPECT_EQ(result.files.h5, fixture.video.parent_path() / ("synthetic_mouse" + scorer + ".h5"));
  EXPECT_FALSE(fs::exists(result.files.checkpoint)) << "removed once the outputs are written";

  const projects::Table tracks = read_tracks(result.files.h5);
  ASSERT_EQ(tracks.row_count(), 60u);
  ASSERT_EQ(tracks.column_count(), 12u);
  EXPECT_TRUE(tracks.integer_index);
  EXPECT_EQ(tracks.column_level_names, (std::vector<std::string>{"scorer", "bodyparts", "coords"}));
  EXPECT_EQ(tracks.columns[0], (std::vector<std::string>{scorer, "snout", "x"}));
  EXPECT_EQ(tracks.columns[11], (std::vector<std::string>{scorer, "tailbase", "likelihood"}));
  EXPECT_EQ(tracks.index[59][0], "59");
  EXPECT_TRUE(projects::same_table(tracks, projects::read_table_csv(result.files.csv)));

  // Frames predicted one at a time give the same keypoints as the batches.
  nets::cpu::CpuBackend backend;
  const LoadedSnapshot loaded = read_snapshot(fixture.snapshot);
  const auto net = load_snapshot_network(backend, loaded, fixture.snapshot);
  ImagePredictor predictor(backend, *net, DecodeSettings{});
  VideoReader reader(fixture.video, {PixelOrder::rgb, std::nullopt, 1});
  cv::Mat frame(reader.height(), reader.width(), CV_8UC3);
  for (const std::int64_t index : {0, 13, 59}) {
    reader.seek(index);
    ASSERT_TRUE(reader.read(frame.ptr<std::uint8_t>()));
    const auto keypoints = predictor.predict(frame);
    for (std::size_t j = 0; j < 4; ++j) {
      const auto row = static_cast<std::size_t>(index);
      EXPECT_NEAR(tracks.at(row, 3 * j), keypoints[j].x, 1e-3) << "frame " << index;
      EXPECT_NEAR(tracks.at(row, 3 * j + 1), keypoints[j].y, 1e-3) << "frame " << index;
      EXPECT_NEAR(tracks.at(row, 3 * j + 2), keypoints[j].likelihood, 1e-5) << "frame " << index;
    }
  }

  const auto meta = nlohmann::json::parse(read_file(result.files.meta_json));
  EXPECT_TRUE(meta["complete"].get<bool>());
  EXPECT_EQ(meta["frames"], 60);
  EXPECT_EQ(meta["batch_size"], 8);
  EXPECT_TRUE(meta["undecodable_frames"].empty());
  EXPECT_EQ(read_file(result.files.meta_pickle).substr(0, 2), std::string("\x80\x02", 2))
      << "a protocol-2 pickle";

  // Done is done: skipped, unless --overwrite; a missing CSV is made from the .h5.
  fs::remove(result.files.csv);
  auto again = analyze_videos(*fixture.config, {fixture.video}, options);
  EXPECT_EQ(again.front().outcome, VideoAnalysis::Outcome::skipped);
  EXPECT_TRUE(projects::same_table(tracks, projects::read_table_csv(result.files.csv)));
  options.overwrite = true;
  options.batch_size = 60;
  again = analyze_videos(*fixture.config, {fixture.video}, options);
  EXPECT_EQ(again.front().outcome, VideoAnalysis::Outcome::analyzed);
  const projects::Table one_batch = read_tracks(result.files.h5);
  for (std::size_t i = 0; i < tracks.values.size(); ++i)
    ASSERT_NEAR(one_batch.values[i], tracks.values[i], 1e-3) << "any batch size";

  // Three copies of the network at once (as on a GPU) give the same table as one.
  options.batch_size = 8;
  options.slots = 3;
  again = analyze_videos(*fixture.config, {fixture.video}, options);
  EXPECT_EQ(again.front().outcome, VideoAnalysis::Outcome::analyzed);
  const projects::Table three_slots = read_tracks(result.files.h5);
  EXPECT_TRUE(projects::same_table(three_slots, tracks)) << "the same rows, in frame order";

  // --decode gpu: NVDEC's pixels, or the CPU's where there is none, give the same table.
  options.slots = 1;
  options.decode_on_gpu = true;
  again = analyze_videos(*fixture.config, {fixture.video}, options);
  EXPECT_EQ(again.front().outcome, VideoAnalysis::Outcome::analyzed);
  EXPECT_TRUE(projects::same_table(read_tracks(result.files.h5), tracks));
}

TEST(Analyze, AnInterruptedVideoResumesToTheSameTable) {
  const AnalysisFixture fixture;
  AnalyzeOptions options;
  options.batch_size = 4;
  options.csv = true;
  options.dest = fixture.dir / "whole";
  const auto whole = analyze_videos(*fixture.config, {fixture.video}, options);
  ASSERT_EQ(whole.front().outcome, VideoAnalysis::Outcome::analyzed);

  options.dest = fixture.dir / "interrupted";
  options.slots = 3;  // stopped with three batches in flight, resumed with one slot
  options.on_batch = [](std::int64_t rows) {
    if (rows >= 20) request_interrupt();
  };
  try {
    const InterruptHandler handler;
    analyze_videos(*fixture.config, {fixture.video}, options);
    FAIL() << "expected the interruption to stop the analysis";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::interrupted);
    EXPECT_NE(std::string(error.what()).find("analysis stopped by request at frame"),
              std::string::npos)
        << error.what();
  }
  const AnalysisFiles files = analysis_files(*options.dest, "synthetic_mouse",
                                             whole.front().files.h5.stem().string().substr(15));
  EXPECT_TRUE(fs::exists(files.checkpoint));
  EXPECT_FALSE(fs::exists(files.h5)) << "no output until the video is done";

  options.on_batch = nullptr;
  options.slots = 1;
  const auto resumed = analyze_videos(*fixture.config, {fixture.video}, options);
  ASSERT_EQ(resumed.front().outcome, VideoAnalysis::Outcome::analyzed) << resumed.front().error;
  EXPECT_GE(resumed.front().resumed_from, 20);
  EXPECT_LT(resumed.front().resumed_from, 60);
  EXPECT_EQ(resumed.front().resumed_from % 4, 0) << "whole batches";
  EXPECT_EQ(read_file(resumed.front().files.csv), read_file(whole.front().files.csv))
      << "the same file as an uninterrupted run";
  EXPECT_TRUE(projects::same_table(read_tracks(resumed.front().files.h5),
                                   read_tracks(whole.front().files.h5)));
  EXPECT_FALSE(fs::exists(resumed.front().files.checkpoint));
}

TEST(Analyze, AnInterruptedOverwriteResumesInsteadOfLookingFinished) {
  const AnalysisFixture fixture;
  AnalyzeOptions options;
  options.batch_size = 4;
  options.dest = fixture.dir / "out";
  const auto whole = analyze_videos(*fixture.config, {fixture.video}, options);
  ASSERT_EQ(whole.front().outcome, VideoAnalysis::Outcome::analyzed);
  const std::string table = read_file(whole.front().files.h5);

  options.overwrite = true;
  options.on_batch = [](std::int64_t rows) {
    if (rows >= 20) request_interrupt();
  };
  {
    const InterruptHandler handler;
    const std::string message =
        testing::error_text([&] { analyze_videos(*fixture.config, {fixture.video}, options); });
    EXPECT_NE(message.find("analysis stopped by request"), std::string::npos) << message;
  }
  EXPECT_EQ(read_file(whole.front().files.h5), table) << "the old table stays until replaced";
  EXPECT_FALSE(fs::exists(whole.front().files.meta_json)) << "but no longer looks finished";

  options.overwrite = false;
  options.on_batch = nullptr;
  const auto resumed = analyze_videos(*fixture.config, {fixture.video}, options);
  ASSERT_EQ(resumed.front().outcome, VideoAnalysis::Outcome::analyzed) << resumed.front().error;
  EXPECT_GE(resumed.front().resumed_from, 20);
  EXPECT_TRUE(fs::exists(resumed.front().files.meta_json));
}

TEST(Analyze, UndecodableFramesAreNaNRowsAtExactlyTheirIndices) {
  const AnalysisFixture fixture;
  // The demo video re-encoded as MJPEG in AVI, whose frames can be damaged one by one.
  const fs::path damaged = fixture.dir / "damaged.avi";
  {
    VideoReader reader(fixture.video, {PixelOrder::bgr, std::nullopt, 1});
    VideoWriterOptions writer_options;
    writer_options.width = reader.width();
    writer_options.height = reader.height();
    writer_options.codec = "mjpeg";
    VideoWriter writer(damaged, writer_options);
    std::vector<std::uint8_t> frame(reader.frame_bytes());
    while (reader.read(frame.data()))
      writer.write_bgr(frame.data(), static_cast<std::size_t>(reader.width()) * 3);
    writer.close();
  }
  testing::corrupt_avi_frames(damaged, {3, 17, 18, 59});
  AnalyzeOptions options;
  options.batch_size = 8;
  const auto results = analyze_videos(*fixture.config, {damaged}, options);
  ASSERT_EQ(results.front().outcome, VideoAnalysis::Outcome::analyzed) << results.front().error;
  EXPECT_EQ(results.front().undecodable_frames, (std::vector<std::int64_t>{3, 17, 18, 59}));
  const projects::Table tracks = read_tracks(results.front().files.h5);
  ASSERT_EQ(tracks.row_count(), 60u);
  for (std::size_t row = 0; row < 60; ++row) {
    const bool bad = row == 3 || row == 17 || row == 18 || row == 59;
    for (std::size_t c = 0; c < 12; ++c) {
      EXPECT_EQ(std::isnan(tracks.at(row, c)), bad) << "row " << row << " column " << c;
    }
  }
  const auto meta = nlohmann::json::parse(read_file(results.front().files.meta_json));
  EXPECT_EQ(meta["undecodable_frames"], nlohmann::json::array({3, 17, 18, 59}));
}

TEST(Analyze, FoldersShardsAndBadInputs) {
  const AnalysisFixture fixture;
  const fs::path folder = fixture.dir / "videos";
  fs::create_directories(folder);
  for (const char* name : {"a.mp4", "b.mp4", "c.mp4"}) fs::copy_file(fixture.video, folder / name);
  testing::write_text(folder / "notes.txt", "not a video");
  EXPECT_EQ(videos_to_analyze({folder}, 0, 1).size(), 3u);
  EXPECT_EQ(videos_to_analyze({folder, folder / "b.mp4"}, 0, 1).size(), 3u) << "no duplicates";
  EXPECT_EQ(videos_to_analyze({folder}, 0, 2),
            (std::vector<fs::path>{folder / "a.mp4", folder / "c.mp4"}));
  EXPECT_EQ(videos_to_analyze({folder}, 1, 2), (std::vector<fs::path>{folder / "b.mp4"}));
  EXPECT_THROW(videos_to_analyze({folder}, 2, 2), UsageError);
  EXPECT_THROW(videos_to_analyze({fixture.dir / "nothing.mp4"}, 0, 1), Error);
  const fs::path empty = fixture.dir / "empty";
  fs::create_directories(empty);
  EXPECT_THROW(videos_to_analyze({empty}, 0, 1), Error);

  // A video that cannot be read fails alone; the others are analyzed.
  testing::write_text(folder / "broken.mp4", "this is not a video");
  AnalyzeOptions options;
  const auto results =
      analyze_videos(*fixture.config, {folder / "broken.mp4", folder / "a.mp4"}, options);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].outcome, VideoAnalysis::Outcome::failed);
  EXPECT_NE(results[0].error.find("broken.mp4"), std::string::npos) << results[0].error;
  EXPECT_EQ(results[1].outcome, VideoAnalysis::Outcome::analyzed);

  options.crop = projects::CropBox{0, 400, 0, 100};
  const auto cropped = analyze_videos(*fixture.config, {folder / "c.mp4"}, options);
  EXPECT_EQ(cropped.front().outcome, VideoAnalysis::Outcome::failed);
  EXPECT_NE(cropped.front().error.find("the crop 400x100 at (0, 0) does not fit inside the 320x240 "
                                       "frames of video " +
                                       (folder / "c.mp4").string()),
            std::string::npos)
      << cropped.front().error;
  EXPECT_NE(cropped.front().error.find("x2 <= 320"), std::string::npos) << cropped.front().error;

  options.crop.reset();
  options.shuffle = 2;
  try {
    analyze_videos(*fixture.config, {folder / "c.mp4"}, options);
    FAIL() << "shuffle 2 does not exist";
  } catch (const Error& error) {
    EXPECT_NE(
        std::string(error.what()).find("shuffle 2 of trainset95 (iteration 0) was never made"),
        std::string::npos)
        << error.what();
  }
  options.shuffle = 1;
  options.snapshot_index = 3;
  EXPECT_THROW(analyze_videos(*fixture.config, {folder / "c.mp4"}, options), UsageError);
}

TEST(Analyze, CropGivesCropRelativeCoordinatesAndRecordsTheOffset) {
  const AnalysisFixture fixture;
  AnalyzeOptions options;
  options.crop = projects::CropBox{40, 280, 20, 220};
  options.batch_size = 16;
  const auto results = analyze_videos(*fixture.config, {fixture.video}, options);
  ASSERT_EQ(results.front().outcome, VideoAnalysis::Outcome::analyzed) << results.front().error;
  const projects::Table tracks = read_tracks(results.front().files.h5);
  for (std::size_t row = 0; row < tracks.row_count(); ++row) {
    for (std::size_t j = 0; j < 4; ++j) {
      EXPECT_LT(tracks.at(row, 3 * j), 240.0);
      EXPECT_LT(tracks.at(row, 3 * j + 1), 200.0);
    }
  }
  const auto meta = nlohmann::json::parse(read_file(results.front().files.meta_json));
  EXPECT_EQ(meta["crop"], nlohmann::json::array({40, 280, 20, 220}));
}

// --precision auto on a GPU: fp16 only where the model's values sit well inside its range.
TEST(Analyze, AutoOnAGpuTakesFp16OnlyWithinItsRange) {
  const auto ranges = [](std::vector<float> values) {
    return std::optional<nets::ActivationRanges>(nets::ActivationRanges{2.64F, std::move(values)});
  };
  HalfPrecisionChoice choice = choose_half_precision(ranges({0.5F, 0.0F, 120.0F, 3000.0F}), true);
  EXPECT_EQ(choice.precision, nets::PlanPrecision::fp16) << "an all-zero value is exact";
  EXPECT_EQ(choice.why,
            "fp16: the network's values stay between 0.5 and 3e+03 on the project's "
            "frames, well inside fp16's range");
  choice = choose_half_precision(ranges({0.5F, 3.95e5F}), true);
  EXPECT_EQ(choice.precision, nets::PlanPrecision::bf16);
  EXPECT_TRUE(testing::contains(choice.why, "bf16: the network's values reach 3.95e+05"))
      << choice.why;
  choice = choose_half_precision(ranges({0.5F, 20000.0F}), false);
  EXPECT_EQ(choice.precision, nets::PlanPrecision::fp32) << "a quarter of fp16's largest at most";
  EXPECT_TRUE(testing::contains(choice.why, "fp32 (this GPU has no bf16)")) << choice.why;
  choice = choose_half_precision(ranges({4e-8F, 1.0F}), true);
  EXPECT_EQ(choice.precision, nets::PlanPrecision::bf16);
  EXPECT_TRUE(testing::contains(choice.why, "stay below 4e-08")) << choice.why;
  choice = choose_half_precision(std::nullopt, true);
  EXPECT_EQ(choice.precision, nets::PlanPrecision::bf16);
  EXPECT_TRUE(testing::contains(choice.why, "could not be checked")) << choice.why;
}

// The ranges come from the model's calibration on the project's labeled frames, kept beside the
// snapshot; a network of random weights (batch norm the identity) has values too small for fp16.
TEST(Analyze, AModelsRangesAreItsCalibrationOnTheProjectsFrames) {
  const AnalysisFixture fixture;
  const AnalysisModel model =
      find_analysis_model(*fixture.config, 1, std::nullopt, std::nullopt, false);
  std::string why_not;
  const auto ranges = model_ranges(model, why_not);
  ASSERT_TRUE(ranges.has_value()) << why_not;
  EXPECT_GT(ranges->input, 2.0F) << "the normalized input";
  EXPECT_FALSE(ranges->values.empty());
  EXPECT_TRUE(fs::exists(int8_calibration_file(model.snapshot))) << "measured once, then kept";
  const HalfPrecisionChoice choice = choose_half_precision(ranges, true);
  EXPECT_EQ(choice.precision, nets::PlanPrecision::bf16) << choice.why;
  EXPECT_TRUE(testing::contains(choice.why, "stay below")) << choice.why;
}

}  // namespace
}  // namespace labpose::pipeline
