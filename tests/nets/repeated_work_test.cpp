// RepeatedWork's policy without a GPU: a recorder that counts what it records and replays stands
// for a backend's CUDA graphs. On a GPU: Gpu.RecordedTrainingStepsFollowTheStepsRunOpByOp.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "devices/devices.hpp"
#include "nets/repeated_work.hpp"

namespace labpose::nets {
namespace {

struct Counts {
  int recorded = 0, replayed = 0;
};

// Records by counting, and replays by running the work (as a graph runs the ops recorded).
class CountingRecording final : public RecordedWork {
 public:
  CountingRecording(std::function<void()> work, Counts& counts)
      : work_(std::move(work)), counts_(counts) {}
  void replay() override {
    ++counts_.replayed;
    work_();
  }

 private:
  std::function<void()> work_;
  Counts& counts_;
};

RepeatedWork::Recorder counting(Counts& counts, bool fail = false) {
  return [&counts, fail](const std::function<void()>& work,
                         std::string& why_not) -> std::unique_ptr<RecordedWork> {
    if (fail) {
      why_not = "no graphs today";
      return nullptr;
    }
    ++counts.recorded;
    return std::make_unique<CountingRecording>(work, counts);
  };
}

TEST(RepeatedWork, RunsOnceOpByOpThenRecordsAndReplays) {
  Counts counts;
  RepeatedWork repeated(counting(counts), "the work", true);
  int ran = 0;
  const auto work = [&] { ++ran; };
  repeated.run(7, work);
  EXPECT_EQ(counts.recorded, 0) << "the first step with a key runs op by op";
  EXPECT_EQ(ran, 1);
  for (int step = 0; step < 3; ++step) repeated.run(7, work);
  EXPECT_EQ(counts.recorded, 1) << "recorded once";
  EXPECT_EQ(counts.replayed, 3);
  EXPECT_EQ(repeated.replays(), 3);
  EXPECT_EQ(ran, 4) << "every step's work ran once";
  repeated.run(8, work);  // another key: op by op again, then recorded again
  repeated.run(8, work);
  EXPECT_EQ(counts.recorded, 2);
  EXPECT_EQ(counts.replayed, 4);
  EXPECT_EQ(ran, 6);
}

TEST(RepeatedWork, AFailedRecordingRunsOpByOpFromThenOn) {
  Counts counts;
  RepeatedWork repeated(counting(counts, true), "the work", true);
  int ran = 0;
  for (int step = 0; step < 4; ++step) repeated.run(1, [&] { ++ran; });
  EXPECT_EQ(ran, 4);
  EXPECT_EQ(repeated.replays(), 0);
}

TEST(RepeatedWork, HostBackendsRunOpByOp) {
  const auto cpu = devices::make_backend("cpu");
  RepeatedWork repeated(*cpu, "the work");
  int ran = 0;
  for (int step = 0; step < 3; ++step) repeated.run(1, [&] { ++ran; });
  EXPECT_EQ(ran, 3);
  EXPECT_EQ(repeated.replays(), 0);
  std::string why;
  EXPECT_EQ(cpu->record([] {}, why), nullptr);
  EXPECT_NE(why.find("records none"), std::string::npos) << why;
}

}  // namespace
}  // namespace labpose::nets
