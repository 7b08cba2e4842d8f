// The stages of video analysis on their own, without threads: FrameDecoder fills batches from a
// synthetic MJPEG video with an undecodable frame (and from a resume position), RowWriter writes
// keypoint rows, NaN rows for skipped, undecodable and missing frames, and their statuses to the
// checkpoint, and the checkpoint resumes at whole batches of the same analysis only.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

#include "core/error.hpp"
#include "pipeline/analysis/checkpoint.hpp"
#include "pipeline/analysis/stages.hpp"
#include "pipeline/video/writer.hpp"
#include "tests/support/media_support.hpp"
#include "tests/support/test_support.hpp"

namespace labpose::pipeline {
namespace {
namespace fs = std::filesystem;
using testing::TempDir;

constexpr int kWidth = 64, kHeight = 48, kFrames = 10;

// Frame i is one flat gray of 20 * i + 10, so that a decoded frame tells its index.
void write_gray_clip(const fs::path& path) {
  VideoWriter writer(path, {kWidth, kHeight, 25.0, "mjpeg", 12});
  for (int i = 0; i < kFrames; ++i) {
    const std::vector<std::uint8_t> frame(std::size_t{kWidth} * kHeight * 3,
                                          static_cast<std::uint8_t>(20 * i + 10));
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

}  // namespace
}  // namespace labpose::pipeline
