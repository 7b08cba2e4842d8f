// The loader's share of a training run's time: silent below 5 %, then in the progress line and in
// an advice that names what to change; and the workers a run starts on a CPU and on a GPU.
#include <gtest/gtest.h>

#include "pipeline/training/data_wait.hpp"
#include "tests/support/test_support.hpp"

namespace labpose::pipeline {
namespace {
using testing::contains;

TEST(DataWait, SaysNothingUntilTheWaitsAreAShareWorthActingOn) {
  DataWait wait;
  EXPECT_EQ(wait.share(0.0), 0.0);
  EXPECT_EQ(wait.progress_text(10.0), "");
  wait.add(0.2);
  wait.add(0.25);
  EXPECT_DOUBLE_EQ(wait.share(10.0), 0.045);
  EXPECT_EQ(wait.progress_text(10.0), "");
  EXPECT_EQ(wait.advice(10.0, 2, 16), "");
  wait.add(1.85);
  EXPECT_EQ(wait.progress_text(10.0), "  waiting for data 23 %");
  const std::string advice = wait.advice(10.0, 2, 16);
  EXPECT_TRUE(contains(advice, "23 % of the time (2.3 s)")) << advice;
  EXPECT_TRUE(contains(advice, "the 2 loader threads of this machine's 16 cores")) << advice;
  EXPECT_TRUE(contains(advice, "loader_threads in pose_cfg.yaml")) << advice;
  EXPECT_FALSE(contains(wait.advice(10.0, 2, 0), "cores"));
  EXPECT_EQ(wait.share(1.0), 1.0) << "never more than all of the time";
}

TEST(DataWait, AGpuRunGetsAWorkerPerCoreButOneUpToEight) {
  EXPECT_EQ(loader_threads_for(2, false, 16), 2) << "on the CPU the cores train";
  EXPECT_EQ(loader_threads_for(2, true, 16), 8);
  EXPECT_EQ(loader_threads_for(2, true, 4), 3);
  EXPECT_EQ(loader_threads_for(2, true, 2), 2);
  EXPECT_EQ(loader_threads_for(12, true, 16), 12) << "more, when asked for, are kept";
  EXPECT_EQ(loader_threads_for(3, true, 0), 3) << "unknown cores";
}

}  // namespace
}  // namespace labpose::pipeline
