// The detection journal of multi-animal analysis: frames read back exactly as appended, a record
// torn by kill -9 cut off on reopening (the frames before it kept), a journal of another
// analysis replaced, and the identity head's values kept with their candidates.
#include <gtest/gtest.h>

#include "pipeline/analysis/detection_journal.hpp"
#include "tests/support/test_support.hpp"

namespace labpose::pipeline {
namespace {
namespace fs = std::filesystem;

// Frame i: i + 1 candidates of bodypart 0, one of bodypart 1; the costs of edge 1 of 2.
ImageDetections frame_detections(int i) {
  ImageDetections detections;
  detections.candidates.resize(2);
  for (int c = 0; c <= i; ++c)
    detections.candidates[0].push_back({0, c, 2 * c, 8.5 * c, 3.25, 0.1 * (c + 1)});
  detections.candidates[1].push_back({1, 4, 5, 44.0, 36.0, 0.75});
  detections.costs.resize(2);
  EdgeCosts& costs = detections.costs[1];
  costs.sources = i + 1;
  costs.targets = 1;
  for (int c = 0; c <= i; ++c) {
    costs.affinity.push_back(0.125 * c);
    costs.length.push_back(2.0 + c);
  }
  return detections;
}

AnalysisIdentity identity_of(const fs::path& video) {
  return AnalysisIdentity::of_video(video, 10, "DLC_test", "snapshot-6.safetensors", std::nullopt,
                                    1);
}

std::vector<JournalFrame> read_all(const DetectionJournal& journal) {
  std::vector<JournalFrame> frames;
  journal.for_each([&frames](const JournalFrame& frame) { frames.push_back(frame); });
  return frames;
}

TEST(DetectionJournal, TornRecordIsCutOffAndTheFramesBeforeItResume) {
  const testing::TempDir dir;
  const fs::path video = dir.path() / "mice.mp4", file = dir.path() / "mice.labpose-detections";
  testing::write_text(video, "not a video: only its path and size matter here");
  {
    DetectionJournal journal(file, {2, {1}, 2, 0});
    ASSERT_EQ(journal.open(identity_of(video)), 0);
    for (int i = 0; i < 3; ++i)
      journal.append(i, i == 1 ? kRowDamaged : kRowOk, frame_detections(i));
  }
  fs::resize_file(file, fs::file_size(file) - 5);  // kill -9 in the middle of frame 2's record

  DetectionJournal journal(file, {2, {1}, 2, 0});
  ASSERT_EQ(journal.open(identity_of(video)), 2);
  journal.append(2, kRowOk, frame_detections(2));
  journal.close();
  const std::vector<JournalFrame> frames = read_all(journal);
  ASSERT_EQ(frames.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    const JournalFrame& frame = frames[static_cast<std::size_t>(i)];
    const ImageDetections expected = frame_detections(i);
    EXPECT_EQ(frame.index, i);
    EXPECT_EQ(frame.status, i == 1 ? kRowDamaged : kRowOk);
    ASSERT_EQ(frame.detections.candidates[0].size(), static_cast<std::size_t>(i + 1));
    EXPECT_EQ(frame.detections.candidates[0].back().x, expected.candidates[0].back().x);
    EXPECT_EQ(frame.detections.candidates[0].back().col, 2 * i);
    EXPECT_EQ(frame.detections.candidates[1].front().confidence, 0.75);
    EXPECT_EQ(frame.detections.costs[0].sources, 0) << "edges the journal does not keep are empty";
    EXPECT_EQ(frame.detections.costs[1].affinity, expected.costs[1].affinity);
    EXPECT_EQ(frame.detections.costs[1].length, expected.costs[1].length);
  }

  // Another paf_best: the journal is another analysis's, and starts again.
  DetectionJournal other(file, {2, {0, 1}, 2, 0});
  EXPECT_EQ(other.open(identity_of(video)), 0);
  other.close();
  EXPECT_TRUE(read_all(other).empty());
}

// An identity head's values come back with their candidates, across a resume; a journal written
// without them (or of the format before identities) is another analysis's.
TEST(DetectionJournal, KeepsTheIdentityValuesOfEveryCandidate) {
  const testing::TempDir dir;
  const fs::path video = dir.path() / "mice.mp4", file = dir.path() / "mice.labpose-detections";
  testing::write_text(video, "not a video: only its path and size matter here");
  const auto with_identity = [](int i) {
    ImageDetections detections = frame_detections(i);
    detections.identity.resize(2);
    for (int c = 0; c <= i; ++c)
      detections.identity[0].insert(detections.identity[0].end(), {0.25 * c, 1.0 - 0.25 * c, 0.5});
    detections.identity[1] = {0.125, 0.625, 0.25};
    return detections;
  };
  {
    DetectionJournal journal(file, {2, {1}, 2, 3});
    ASSERT_EQ(journal.open(identity_of(video)), 0);
    journal.append(0, kRowOk, with_identity(0));
    journal.append(1, kRowOk, with_identity(1));
  }
  DetectionJournal journal(file, {2, {1}, 2, 3});
  ASSERT_EQ(journal.open(identity_of(video)), 2);
  ImageDetections nothing;  // an undecodable frame's
  nothing.candidates.resize(2);
  nothing.costs.resize(2);
  journal.append(2, kRowUndecodable, nothing);
  journal.close();
  const std::vector<JournalFrame> frames = read_all(journal);
  ASSERT_EQ(frames.size(), 3u);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(frames[static_cast<std::size_t>(i)].detections.identity, with_identity(i).identity);
    EXPECT_EQ(frames[static_cast<std::size_t>(i)].detections.costs[1].affinity,
              with_identity(i).costs[1].affinity);
  }
  EXPECT_EQ(frames[2].detections.identity, (std::vector<std::vector<double>>{{}, {}}));

  DetectionJournal without(file, {2, {1}, 2, 0});
  EXPECT_EQ(without.open(identity_of(video)), 0) << "the identity channels are part of the shape";
}

}  // namespace
}  // namespace labpose::pipeline
