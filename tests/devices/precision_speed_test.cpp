// doctor's precision probe decides from rounds timed side by side, never from one timing: a
// candidate is faster only when it wins nearly every round by a margin; a burst of load in one
// round, or a split result, is never read as a speed-up. And the probe itself: every precision the
// CPU runs is timed in each round.
#include <gtest/gtest.h>

#include "devices/precision_speed.hpp"
#include "nets/cpu/backend.hpp"

namespace labpose::devices {
namespace {

using Verdict = SpeedComparison::Verdict;

MeasuredSpeed rounds(std::vector<double> values) {
  return MeasuredSpeed{std::move(values)};
}

TEST(PrecisionSpeed, MediansAndSpreadOfTheRounds) {
  const MeasuredSpeed speed = rounds({300, 310, 120, 305, 2000, 298, 302});
  EXPECT_EQ(speed.median(), 302);
  EXPECT_EQ(speed.lowest(), 120);
  EXPECT_EQ(speed.highest(), 2000);
}

TEST(PrecisionSpeed, FasterOnlyWhenNearlyEveryRoundSaysSo) {
  const MeasuredSpeed bf16 = rounds({300, 305, 298, 310, 302, 300, 299});
  // Clearly faster in every round: faster, by the medians' ratio.
  SpeedComparison compared = compare_speeds(rounds({800, 820, 790, 805, 812, 799, 801}), bf16);
  EXPECT_EQ(compared.verdict, Verdict::faster);
  EXPECT_NEAR(compared.ratio, 801.0 / 300.0, 1e-9);
  EXPECT_EQ(compared.wins, 7);
  EXPECT_EQ(compared.rounds, 7);
  // One huge timing (the other precision's round hit by load) decides nothing.
  compared = compare_speeds(rounds({290, 5000, 280, 295, 285, 290, 288}), bf16);
  EXPECT_EQ(compared.verdict, Verdict::not_faster) << compared.ratio;
  // A split: within noise, never "faster".
  compared = compare_speeds(rounds({310, 295, 312, 296, 315, 297, 311}), bf16);
  EXPECT_EQ(compared.verdict, Verdict::within_noise) << compared.wins;
  // Winning every round by less than 5 % is not worth a different precision.
  compared = compare_speeds(rounds({306, 311, 304, 316, 308, 306, 305}), bf16);
  EXPECT_EQ(compared.verdict, Verdict::within_noise) << compared.ratio;
  // Slower in nearly every round.
  compared = compare_speeds(rounds({150, 160, 155, 400, 151, 149, 150}), bf16);
  EXPECT_EQ(compared.verdict, Verdict::not_faster);
}

TEST(PrecisionSpeed, EveryPrecisionOfTheCpuIsTimedInEveryRound) {
  const PrecisionSpeeds speeds = measure_cpu_precision_speeds(3);
  EXPECT_EQ(speeds.fp32.rounds.size(), 3U);
  EXPECT_GT(speeds.fp32.median(), 0.0);
  EXPECT_EQ(speeds.bf16.has_value(), nets::cpu::cpu_has_bf16());
  EXPECT_EQ(speeds.int8.has_value(), nets::cpu::cpu_has_int8());
  if (speeds.bf16) {
    EXPECT_EQ(speeds.bf16->rounds.size(), 3U);
  }
  if (speeds.int8) {
    EXPECT_EQ(speeds.int8->rounds.size(), 3U);
  }
}

}  // namespace
}  // namespace labpose::devices
