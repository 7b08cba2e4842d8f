// The stages of video analysis: FrameDecoder fills batches from a synthetic MJPEG video with an
// undecodable frame (and from a resume position), RowWriter writes keypoint rows, NaN rows for
// skipped, undecodable and missing frames, and their statuses to the checkpoint, and the
// checkpoint resumes at whole batches of the same analysis only. Then their wiring with several
// pose slots at once (runner.hpp): rows in frame order whatever order the slots finish in, and a
// failing slot that stops the others without a gap in the rows.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <mutex>

#include "core/error.hpp"
#include "pipeline/analysis/checkpoint.hpp"
#include "pipeline/analysis/runner.hpp"
#include "pipeline/analysis/stages.hpp"
#include "pipeline/video/writer.hpp"
#include "tests/support/media_support.hpp"
#include "tests/support/test_support.hpp"

namespace labpose::pipeline {
namespace {
namespace fs = std::filesystem;
using testing::TempDir;

constexpr int kWidth = 64, kHeight = 48, kFrames = 10;

// Frame i is one flat gray of step * i + 10, so that a decoded frame tells its index.
void write_gray_clip(const fs::path& path, int frames = kFrames, int step = 20) {
  VideoWriter writer(path, {kWidth, kHeight, 25.0, "mjpeg", 12});
  for (int i = 0; i < frames; ++i) {
    const std::vector<std::uint8_t> frame(std::size_t{kWidth} * kHeight * 3,
                                          static_cast<std::uint8_t>(step * i + 10));
    writer.write_bgr(frame.data(), std::size_t{kWidth} * 3);
  }
  writer.close();
}

// The gray level frame `slot` of `batch` shows (its centre pixel).
int gray_at(const FrameBatch& batch, std::size_t slot, std::size_t frame_bytes) {
  const std::size_t centre = (std::size_t{kHeight} / 2 * kWidth + kWidth / 2) * 3;
  return batch.pixels[slot * frame_bytes + centre];
}

std::vector<std::int64_t> indices(const FrameBatch& batch) {
  std::vector<std::int64_t> out;
  for (const FrameRead& read : batch.reads) out.push_back(read.index);
  return out;
}

TEST(AnalysisStages, FrameDecoderFillsBatchesInFrameOrderUpToTheEnd) {
  const TempDir dir;
  const fs::path video = dir / "gray.avi";
  write_gray_clip(video);
  testing::corrupt_avi_frames(video, {5});
  VideoReader reader(video, {PixelOrder::rgb, std::nullopt, 1});
  FrameDecoder decoder(reader, 4);
  FrameBatch batch(4, decoder.frame_bytes(), 2);

  ASSERT_TRUE(decoder.fill(batch));
  EXPECT_EQ(indices(batch), (std::vector<std::int64_t>{0, 1, 2, 3}));
  for (int slot = 0; slot < 4; ++slot) {
    EXPECT_NEAR(gray_at(batch, static_cast<std::size_t>(slot), decoder.frame_bytes()),
                20 * slot + 10, 3)
        << slot;
  }
  EXPECT_FALSE(decoder.finished());

  ASSERT_TRUE(decoder.fill(batch));
  EXPECT_EQ(indices(batch), (std::vector<std::int64_t>{4, 5, 6, 7}));
  EXPECT_EQ(batch.reads[1].status, FrameStatus::undecodable);
  EXPECT_EQ(batch.reads[2].status, FrameStatus::ok);
  EXPECT_NEAR(gray_at(batch, 2, decoder.frame_bytes()), 130, 3);

  ASSERT_TRUE(decoder.fill(batch));
  EXPECT_EQ(indices(batch), (std::vector<std::int64_t>{8, 9})) << "a partial last batch";
  EXPECT_TRUE(decoder.finished());
  EXPECT_FALSE(decoder.fill(batch));
}

TEST(AnalysisStages, FrameDecoderStartsWhereTheReaderWasSought) {
  const TempDir dir;
  const fs::path video = dir / "gray.avi";
  write_gray_clip(video);
  VideoReader reader(video, {PixelOrder::rgb, std::nullopt, 1});
  reader.seek(6);
  FrameDecoder decoder(reader, 3);
  FrameBatch batch(3, decoder.frame_bytes(), 1);
  ASSERT_TRUE(decoder.fill(batch));
  EXPECT_EQ(indices(batch), (std::vector<std::int64_t>{6, 7, 8}));
  EXPECT_NEAR(gray_at(batch, 0, decoder.frame_bytes()), 130, 3);
  ASSERT_TRUE(decoder.fill(batch));
  EXPECT_EQ(indices(batch), (std::vector<std::int64_t>{9}));
  EXPECT_TRUE(decoder.finished());
}

AnalysisIdentity test_identity(std::int64_t frames, int batch_size) {
  AnalysisIdentity identity;
  identity.video = "/videos/mouse.mp4";
  identity.frames = frames;
  identity.scorer = "DLC_test";
  identity.snapshot = "snapshot-7.safetensors";
  identity.batch_size = batch_size;
  return identity;
}

// `joints` keypoints per frame: frame f's keypoint j at (f, j) with likelihood 0.5.
void set_keypoints(FrameBatch& batch, std::size_t joints) {
  for (std::size_t i = 0; i < batch.reads.size(); ++i) {
    for (std::size_t j = 0; j < joints; ++j) {
      batch.keypoints[i * joints + j] = {static_cast<double>(batch.reads[i].index),
                                         static_cast<double>(j), 0.5};
    }
  }
}

TEST(AnalysisStages, RowWriterWritesARowPerFrameWithNaNForFramesWithoutPixels) {
  const TempDir dir;
  Checkpoint checkpoint(dir / "video.labpose-checkpoint", 6);
  ASSERT_EQ(checkpoint.open(test_identity(7, 4)), 0);
  std::vector<std::pair<std::int64_t, std::int64_t>> reported;
  RowWriter writer(checkpoint, 0, [&](std::int64_t frames, std::int64_t rows) {
    reported.emplace_back(frames, rows);
  });

  // Frame 1 is missing from the stream, 2 damaged, 3 undecodable; 5 and 6 never come.
  FrameBatch batch(4, 3, 2);
  batch.reads = {{0, FrameStatus::ok, 0.0},
                 {2, FrameStatus::damaged, 0.08},
                 {3, FrameStatus::undecodable, 0.12},
                 {4, FrameStatus::ok, 0.16}};
  set_keypoints(batch, 2);
  writer.write(batch);
  EXPECT_EQ(writer.rows(), 5);
  EXPECT_EQ(reported, (std::vector<std::pair<std::int64_t, std::int64_t>>{{4, 5}}));
  writer.finish(7);
  EXPECT_EQ(writer.rows(), 7);
  EXPECT_EQ(writer.undecodable_frames(), (std::vector<std::int64_t>{1, 3, 5, 6}));
  EXPECT_EQ(writer.damaged_frames(), (std::vector<std::int64_t>{2}));
  checkpoint.close();

  std::vector<double> values(7 * 6), status;
  checkpoint.read(0, 7, values.data(), status);
  EXPECT_EQ(status, (std::vector<double>{kRowOk, kRowUndecodable, kRowDamaged, kRowUndecodable,
                                         kRowOk, kRowUndecodable, kRowUndecodable}));
  for (std::size_t row = 0; row < 7; ++row) {
    const bool nan = status[row] == kRowUndecodable;
    for (std::size_t c = 0; c < 6; ++c)
      EXPECT_EQ(std::isnan(values[row * 6 + c]), nan) << "row " << row << " column " << c;
    if (nan) continue;
    EXPECT_EQ(values[row * 6 + 0], static_cast<double>(row)) << "x of keypoint 0";
    EXPECT_EQ(values[row * 6 + 4], 1.0) << "y of keypoint 1";
    EXPECT_EQ(values[row * 6 + 5], 0.5) << "likelihood of keypoint 1";
  }
  const BadRows bad = checkpoint.bad_rows(7);
  EXPECT_EQ(bad.undecodable, writer.undecodable_frames());
  EXPECT_EQ(bad.damaged, writer.damaged_frames());
}

TEST(AnalysisStages, CheckpointResumesWholeBatchesOfTheSameAnalysisOnly) {
  const TempDir dir;
  const fs::path file = dir / "video.labpose-checkpoint";
  {
    Checkpoint checkpoint(file, 3);
    ASSERT_EQ(checkpoint.open(test_identity(20, 4)), 0);
    RowWriter writer(checkpoint, 0);
    FrameBatch batch(10, 3, 1);
    for (std::int64_t i = 0; i < 10; ++i) batch.reads.push_back({i, FrameStatus::ok, 0.0});
    set_keypoints(batch, 1);
    writer.write(batch);  // 10 rows: two whole batches of 4 and half of one
  }
  {
    Checkpoint checkpoint(file, 3);
    EXPECT_EQ(checkpoint.open(test_identity(20, 4)), 8);
    RowWriter writer(checkpoint, 8);
    FrameBatch batch(1, 3, 1);
    batch.reads = {{8, FrameStatus::ok, 0.0}};
    batch.keypoints[0] = {100.0, 0.0, 0.5};
    writer.write(batch);
    std::vector<double> values(10 * 3), status;
    checkpoint.read(0, 9, values.data(), status);
    EXPECT_EQ(values[7 * 3], 7.0);
    EXPECT_EQ(values[8 * 3], 100.0) << "row 8 replaced, not appended after the cut rows";
    EXPECT_THROW(checkpoint.read(0, 10, values.data(), status), Error) << "9 rows in all";
  }
  AnalysisIdentity other = test_identity(20, 4);
  other.crop = projects::CropBox{0, 32, 0, 24};
  Checkpoint checkpoint(file, 3);
  EXPECT_EQ(checkpoint.open(other), 0) << "another crop is another analysis";
}

// 30 frames of gray 8 * i + 10 in batches of 2, through `slots` into a checkpoint; returns the
// rows written, and `error` the failure run_analysis_stages threw.
struct SlotRun {
  std::int64_t rows = 0;
  std::vector<double> values;  // rows x 3: x (the frame's gray level), y (its index), likelihood
  std::string error;
};
constexpr int kSlotFrames = 30, kSlotBatch = 2, kSlotStep = 8;

SlotRun run_through_slots(const TempDir& dir, const std::vector<PoseSlot>& slots) {
  const fs::path video = dir / "grays.avi";
  write_gray_clip(video, kSlotFrames, kSlotStep);
  VideoReader reader(video, {PixelOrder::rgb, std::nullopt, 1});
  FrameDecoder decoder(reader, kSlotBatch);
  Checkpoint checkpoint(dir / "grays.labpose-checkpoint", 3);
  EXPECT_EQ(checkpoint.open(test_identity(kSlotFrames, kSlotBatch)), 0);
  RowWriter writer(checkpoint, 0);
  SlotRun run;
  try {
    const BatchShape shape{kSlotBatch, decoder.frame_bytes(), 1};
    EXPECT_TRUE(run_analysis_stages(
        shape, [&decoder](FrameBatch& batch) { return decoder.fill(batch); }, slots,
        [&writer](const FrameBatch& batch) { writer.write(batch); }, false));
  } catch (const Error& error) {
    run.error = error.what();
  }
  checkpoint.close();
  run.rows = writer.rows();
  run.values.resize(static_cast<std::size_t>(run.rows) * 3);
  std::vector<double> status;
  checkpoint.read(0, static_cast<std::size_t>(run.rows), run.values.data(), status);
  return run;
}

// A slot's work: each frame's keypoint at (its gray level, its index).
void gray_keypoints(FrameBatch& batch) {
  const std::size_t frame_bytes = std::size_t{kWidth} * kHeight * 3;
  for (std::size_t i = 0; i < batch.reads.size(); ++i) {
    batch.keypoints[i] = {static_cast<double>(gray_at(batch, i, frame_bytes)),
                          static_cast<double>(batch.reads[i].index), 1.0};
  }
}

// The first three batches meet in the three slots, then leave in reverse order: 2, 1, 0.
class Meeting {
 public:
  void enter(const FrameBatch& batch) {
    std::unique_lock lock(mutex_);
    most_inside_ = std::max(most_inside_, ++inside_);
    changed_.notify_all();
    if (batch.sequence >= 3) return;
    // Bounded only so that a broken wiring fails instead of hanging the suite.
    const bool met = changed_.wait_for(lock, std::chrono::minutes(2), [&] {
      return (met_ = met_ || inside_ == 3) && next_to_leave_ == batch.sequence;
    });
    if (!met) ADD_FAILURE() << "batch " << batch.sequence << " never met the other two";
  }
  void leave(const FrameBatch& batch) {
    std::lock_guard lock(mutex_);
    --inside_;
    if (batch.sequence < 3) --next_to_leave_;
    changed_.notify_all();
  }
  int most_inside() const { return most_inside_; }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  int inside_ = 0, most_inside_ = 0;
  bool met_ = false;
  std::int64_t next_to_leave_ = 2;
};

TEST(AnalysisStages, SlotsRunAtOnceAndRowsComeBackInFrameOrder) {
  const TempDir dir;
  Meeting meeting;
  const PoseSlot slot = [&meeting](FrameBatch& batch) {
    meeting.enter(batch);
    gray_keypoints(batch);
    meeting.leave(batch);
  };
  const SlotRun run = run_through_slots(dir, {slot, slot, slot});
  EXPECT_EQ(run.error, "");
  EXPECT_EQ(meeting.most_inside(), 3);
  ASSERT_EQ(run.rows, kSlotFrames);
  for (std::size_t row = 0; row < static_cast<std::size_t>(kSlotFrames); ++row) {
    EXPECT_EQ(run.values[row * 3 + 1], static_cast<double>(row)) << "row " << row;
    EXPECT_NEAR(run.values[row * 3], kSlotStep * static_cast<double>(row) + 10, 3)
        << "row " << row << " has its own frame's keypoints";
  }
}

TEST(AnalysisStages, AFailingSlotStopsTheOthersAndLeavesNoGapInTheRows) {
  const TempDir dir;
  const PoseSlot slot = [](FrameBatch& batch) {
    if (batch.sequence == 4) throw Error("the GPU failed on batch 4");
    gray_keypoints(batch);
  };
  const SlotRun run = run_through_slots(dir, {slot, slot, slot});
  EXPECT_EQ(run.error, "the GPU failed on batch 4");
  EXPECT_LE(run.rows, 4 * kSlotBatch) << "nothing after the failed batch";
  EXPECT_EQ(run.rows % kSlotBatch, 0);
  for (std::size_t row = 0; row < static_cast<std::size_t>(run.rows); ++row)
    EXPECT_EQ(run.values[row * 3 + 1], static_cast<double>(row)) << "row " << row;
}

}  // namespace
}  // namespace labpose::pipeline
