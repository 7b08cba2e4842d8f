// Progress bars: the line's content (rate, ETA) and when plain lines are printed.
#include <gtest/gtest.h>

#include "core/console.hpp"
#include "core/progress.hpp"

namespace labpose {
namespace {

TEST(FormatDuration, MinutesAndHours) {
  EXPECT_EQ(format_duration(0), "0:00");
  EXPECT_EQ(format_duration(7.4), "0:07");
  EXPECT_EQ(format_duration(754), "12:34");
  EXPECT_EQ(format_duration(3723), "1:02:03");
  EXPECT_EQ(format_duration(-1), "?");
}

TEST(RenderProgress, ShowsPercentRateAndEta) {
  const std::string line = render_progress("analyzing m3v1mp4", 250, 1000, 10.0, "frames", "");
  EXPECT_NE(line.find(" 25% |######                  | 250/1000 frames"), std::string::npos)
      << line;
  EXPECT_NE(line.find("25.0 frames/s"), std::string::npos) << line;
  EXPECT_NE(line.find("ETA 0:30"), std::string::npos) << line;
}

TEST(RenderProgress, FinishedLineShowsElapsedTimeAndDetail) {
  const std::string line =
      render_progress("training", 100, 100, 125.0, "iterations", "loss 0.0123");
  EXPECT_NE(line.find("100%"), std::string::npos) << line;
  EXPECT_NE(line.find("elapsed 2:05"), std::string::npos) << line;
  EXPECT_NE(line.find("loss 0.0123"), std::string::npos) << line;
}

TEST(RenderProgress, SlowRatesAreShownAsSecondsPerItem) {
  const std::string line = render_progress("training", 2, 10, 20.0, "it", "");
  EXPECT_NE(line.find("10.0 s/it"), std::string::npos) << line;
}

TEST(RenderProgress, UnknownTotalHasNoPercentage) {
  const std::string line = render_progress("decoding", 42, 0, 2.0, "frames", "");
  EXPECT_EQ(line.find('%'), std::string::npos) << line;
  EXPECT_NE(line.find("42 frames"), std::string::npos) << line;
}

TEST(Progress, PlainOutputPrintsEachTenthOnceAndAFinalLine) {
  double now = 0;
  std::vector<std::string> lines;
  {
    Progress progress(
        "extracting", 100, "frames",
        {[&] { return now; }, [&](std::string_view line) { lines.emplace_back(line); }, false});
    for (int i = 0; i < 100; ++i) {
      now += 0.01;
      progress.advance();
    }
  }
  ASSERT_EQ(lines.size(), 10u) << "9 tenths (10%..90%) and the final line";
  EXPECT_NE(lines.front().find(" 10%"), std::string::npos) << lines.front();
  EXPECT_NE(lines.back().find("100%"), std::string::npos) << lines.back();
}

TEST(Progress, PlainOutputPrintsAtLeastOnceAMinuteWhenSlow) {
  double now = 0;
  std::vector<std::string> lines;
  Progress progress(
      "training", 1000, "it",
      {[&] { return now; }, [&](std::string_view line) { lines.emplace_back(line); }, false});
  now = 61;
  progress.advance();
  EXPECT_EQ(lines.size(), 1u);
  now = 62;
  progress.advance();
  EXPECT_EQ(lines.size(), 1u) << "no second line within the minute";
}

TEST(Progress, QuietPrintsNothing) {
  console::set_verbosity(console::Verbosity::quiet);
  std::vector<std::string> lines;
  {
    Progress progress(
        "x", 10, "it",
        {[] { return 0.0; }, [&](std::string_view line) { lines.emplace_back(line); }, false});
    for (int i = 0; i < 10; ++i) progress.advance();
  }
  console::set_verbosity(console::Verbosity::normal);
  EXPECT_TRUE(lines.empty());
}

}  // namespace
}  // namespace labpose
