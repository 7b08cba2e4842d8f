// The learning-rate schedule: fitted to a time budget (the same drops at the same fraction of the
// time on a slow and a fast machine, resumed exactly), by iterations (the clock ignored), the
// backbone's warm-up, and bad settings. Every clock here is simulated: no test depends on timing.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/interrupt.hpp"
#include "pipeline/training/schedule.hpp"
#include "pipeline/training/snapshot.hpp"
#include "pipeline/training/trainer.hpp"
#include "tests/pipeline/training_fixture.hpp"
#include "tests/support/test_support.hpp"

namespace labpose::pipeline {
namespace {

PoseConfig default_recipe() {
  PoseConfig pose;  // multi_step [[1e-3, 6000], [3e-4, 9000], [1e-4, 10000]], max_iters 10000
  pose.freeze_backbone_stages = 9;
  pose.unfreeze_backbone_after = 1000;
  return pose;
}

TEST(TrainingSchedule, ByTimeTheDropsFallAtFractionsOfTheBudget) {
  TrainingSchedule schedule(default_recipe(), 720.0);
  EXPECT_EQ(schedule.description(),
            "schedule: time, 12 minutes (learning rate 1e-3, 3e-4 from 60 %, 1e-4 from 90 %; "
            "backbone trains from 10 %)");
  EXPECT_TRUE(schedule.advance(0, 0.0).empty());
  EXPECT_DOUBLE_EQ(schedule.rate(), 1e-3);
  EXPECT_TRUE(schedule.backbone_frozen());
  EXPECT_EQ(schedule.advance(300, 72.0),
            std::vector<std::string>{"iteration 300 (10 % of 12 min): the backbone trains from now "
                                     "on (unfreeze_backbone_after)"});
  EXPECT_FALSE(schedule.backbone_frozen());
  EXPECT_TRUE(schedule.advance(1842, 431.9).empty());
  EXPECT_EQ(schedule.advance(1843, 432.0),
            std::vector<std::string>{"iteration 1843 (60 % of 12 min): learning rate 3e-4"});
  EXPECT_DOUBLE_EQ(schedule.rate(), 3e-4);
  EXPECT_FALSE(schedule.finished(5000, 719.9)) << "not at max_iters but at the budget";
  EXPECT_TRUE(schedule.finished(2000, 720.0));
}

TEST(TrainingSchedule, ResumedKeepsTheIterationsOfPassedDrops) {
  TrainingSchedule schedule(default_recipe(), 720.0);
  schedule.advance(300, 72.0);
  schedule.advance(1843, 432.0);
  std::map<std::string, std::string> metadata;
  schedule.save(metadata);
  EXPECT_EQ(metadata.at("schedule"), "time");
  EXPECT_EQ(exact_number(metadata, "schedule_seconds", 0), 720.0);
  EXPECT_EQ(exact_numbers(metadata, "schedule_drops"), std::vector<double>{1843});
  EXPECT_EQ(exact_number(metadata, "schedule_unfreeze", 0), 300);

  // Resumed with a clock that reads less than the drop's time: the drop stays passed.
  TrainingSchedule resumed = TrainingSchedule::resumed(default_recipe(), metadata, 1843);
  EXPECT_TRUE(resumed.timed());
  EXPECT_TRUE(resumed.advance(1843, 400.0).empty());
  EXPECT_DOUBLE_EQ(resumed.rate(), 3e-4);
  EXPECT_FALSE(resumed.backbone_frozen());

  // A snapshot from before schedules: by iterations, the drops following from the iteration.
  TrainingSchedule old = TrainingSchedule::resumed(default_recipe(), {}, 6500);
  EXPECT_FALSE(old.timed());
  EXPECT_DOUBLE_EQ(old.rate(), 3e-4);
  EXPECT_FALSE(old.backbone_frozen());
  EXPECT_EQ(old.advance(9000, 1.0), std::vector<std::string>{"iteration 9000: learning rate 1e-4"});
}

TEST(TrainingSchedule, WarmupRampsTheBackboneLinearlyFromItsStart) {
  PoseConfig pose;
  pose.multi_step = {{1e-3, 100}};
  pose.max_iters = 100;
  pose.backbone_lr_multiplier = 0.5;
  pose.backbone_warmup = 0.1;
  TrainingSchedule by_iterations(pose, 0.0);  // nothing frozen: from the start, over 10 iterations
  for (const std::int64_t iteration : {0, 1, 4, 9, 10, 50}) {
    by_iterations.advance(iteration, 0.0);
    EXPECT_DOUBLE_EQ(by_iterations.backbone_rate(),
                     1e-3 * 0.5 * std::min(1.0, static_cast<double>(iteration) / 10))
        << iteration;
    EXPECT_DOUBLE_EQ(by_iterations.rate(), 1e-3) << "the head is not warmed up";
  }
  pose.freeze_backbone_stages = 9;
  pose.unfreeze_backbone_after = 20;
  TrainingSchedule by_time(pose, 100.0);  // from 20 s, over 10 s
  for (const double seconds : {10.0, 20.0, 22.5, 25.0, 30.0, 90.0}) {
    by_time.advance(static_cast<std::int64_t>(seconds), seconds);
    EXPECT_NEAR(by_time.backbone_rate(), 5e-4 * std::clamp((seconds - 20) / 10, 0.0, 1.0), 1e-15)
        << seconds;
  }
}

// A machine where every step takes `step_seconds` exactly: the clock advances in on_step.
struct SimulatedMachine {
  double now = 0.0;
  double step_seconds = 1.0;
  std::vector<double> losses, rates, backbone_rates;

  void attach(TrainOptions& options) {
    options.clock = [this] { return now; };
    options.on_step = [this](std::int64_t, double loss) {
      now += step_seconds;
      losses.push_back(loss);
    };
    options.on_rates = [this](std::int64_t, double rate, double backbone_rate) {
      rates.push_back(rate);
      backbone_rates.push_back(backbone_rate);
    };
  }
  /// The step indices (from 0) at which the head's rate changed.
  std::vector<std::int64_t> drops() const {
    std::vector<std::int64_t> at;
    for (std::size_t i = 1; i < rates.size(); ++i) {
      if (rates[i] != rates[i - 1]) at.push_back(static_cast<std::int64_t>(i));
    }
    return at;
  }
};

// A 10-iteration recipe read as fractions: drops at 60 % and 90 %, the backbone from 20 %.
void use_time_recipe(TrainingFixture& fixture) {
  fixture.pose.multi_step = {{1e-3, 6}, {3e-4, 9}, {1e-4, 10}};
  fixture.pose.max_iters = 10;
  fixture.pose.freeze_backbone_stages = 9;
  fixture.pose.unfreeze_backbone_after = 2;
  fixture.pose.evaluate_iters = 0;
  fixture.pose.save_iters = 1000;
  fixture.pose.display_iters = 5;
  fixture.write();
}

// The uninterrupted one-minute run of the time recipe at 3 s a step, against which a run in pieces
// is compared; its outputs are cleared afterwards so that the pieces start afresh.
struct StraightRun {
  SimulatedMachine machine;
  TrainResult result;
  std::map<std::string, std::string> metadata;  // of its last snapshot
};

StraightRun straight_run(TrainingFixture& fixture) {
  StraightRun run;
  TrainOptions options = fixture.options();
  options.max_minutes = 1;
  run.machine.step_seconds = 3.0;
  run.machine.attach(options);
  run.result = train(options);
  run.metadata = read_snapshot(run.result.last_snapshot).metadata.extra;
  clear_training_outputs(fixture.train_dir);
  return run;
}

std::int64_t unfreeze_iteration(const TrainResult& result) {
  const auto metadata = read_snapshot(result.last_snapshot).metadata.extra;
  return static_cast<std::int64_t>(exact_number(metadata, "schedule_unfreeze", -1));
}

TEST(TimeSchedule, DropsAndUnfreezeFallAtTheSameFractionOfTheTimeAtAnySpeed) {
  std::vector<std::vector<std::int64_t>> drops;
  std::vector<std::int64_t> unfreezes, iterations;
  for (const double step_seconds : {3.0, 1.0}) {  // 1x and 3x: 20 and 60 steps in one minute
    SCOPED_TRACE(step_seconds);
    TrainingFixture fixture;
    use_time_recipe(fixture);
    TrainOptions options = fixture.options();
    options.max_minutes = 1;
    SimulatedMachine machine;
    machine.step_seconds = step_seconds;
    machine.attach(options);
    const TrainResult result = train(options);
    EXPECT_EQ(result.stop, TrainResult::Stop::finished) << "the end of the schedule";
    EXPECT_EQ(result.schedule_seconds, 60.0);
    drops.push_back(machine.drops());
    unfreezes.push_back(unfreeze_iteration(result));
    iterations.push_back(result.iterations);
    const auto stats = read_learning_stats(fixture.train_dir / "learning_stats.csv");
    ASSERT_FALSE(stats.empty());
    EXPECT_DOUBLE_EQ(stats.back().learning_rate, 1e-4) << "learning_stats.csv's lr column";
  }
  EXPECT_EQ(iterations, (std::vector<std::int64_t>{20, 60})) << "not max_iters (10)";
  EXPECT_EQ(drops[0], (std::vector<std::int64_t>{12, 18}));  // 60 % and 90 % of 20 steps
  ASSERT_EQ(drops[1].size(), 2u);
  // Within one step of the slow machine's (3 steps of the fast one's).
  for (std::size_t k = 0; k < 2; ++k) EXPECT_LE(std::llabs(drops[1][k] - 3 * drops[0][k]), 3) << k;
  EXPECT_EQ(unfreezes[0], 4);
  EXPECT_LE(std::llabs(unfreezes[1] - 3 * unfreezes[0]), 3);
}

TEST(TimeSchedule, AResumedRunContinuesExactly) {
  TrainingFixture fixture;
  use_time_recipe(fixture);
  const StraightRun straight = straight_run(fixture);

  // Interrupted after step 14 (past the unfreeze and the first drop), resumed with --max-minutes
  // 0.1 (stops this sitting after 2 steps, the budget kept), then resumed to the end.
  SimulatedMachine pieces;
  pieces.step_seconds = 3.0;
  TrainOptions first = fixture.options();
  first.max_minutes = 1;
  pieces.attach(first);
  first.on_step = [&](std::int64_t iteration, double loss) {
    pieces.now += pieces.step_seconds;
    pieces.losses.push_back(loss);
    if (iteration == 14) request_interrupt();
  };
  {
    const InterruptHandler handler;
    EXPECT_EQ(train(first).stop, TrainResult::Stop::interrupted);
  }
  TrainOptions sitting = fixture.options();
  sitting.resume = true;
  sitting.max_minutes = 0.1;
  pieces.attach(sitting);
  const TrainResult stopped = train(sitting);
  EXPECT_EQ(stopped.stop, TrainResult::Stop::time_limit);
  EXPECT_EQ(stopped.iterations, 16);
  TrainOptions rest = fixture.options();
  rest.resume = true;
  pieces.attach(rest);
  const TrainResult resumed = train(rest);
  EXPECT_EQ(resumed.stop, TrainResult::Stop::finished);
  EXPECT_EQ(resumed.iterations, 20);
  EXPECT_EQ(pieces.losses, straight.machine.losses) << "the same loss at every step";
  const auto metadata = read_snapshot(resumed.last_snapshot).metadata.extra;
  for (const char* key : {"schedule", "schedule_seconds", "schedule_drops", "schedule_unfreeze"})
    EXPECT_EQ(metadata.at(key), straight.metadata.at(key)) << key;
  EXPECT_THROW(train(rest), UsageError) << "the schedule is over";
}

// A sweep's rungs: stop points in training minutes and iterations that leave the schedule as it is.
TEST(TimeSchedule, StopPointsKeepTheScheduleAndResumeExactly) {
  TrainingFixture fixture;
  use_time_recipe(fixture);
  const StraightRun straight = straight_run(fixture);
  ASSERT_EQ(straight.result.iterations, 20);

  SimulatedMachine pieces;
  pieces.step_seconds = 3.0;
  TrainOptions first = fixture.options();
  first.max_minutes = 1;
  first.stop_at_minutes = 0.3;  // 18 s: after step 6
  pieces.attach(first);
  const TrainResult at_minutes = train(first);
  EXPECT_EQ(at_minutes.stop, TrainResult::Stop::time_limit);
  EXPECT_EQ(at_minutes.iterations, 6);
  EXPECT_EQ(at_minutes.schedule_seconds, 60.0) << "the budget is the run's, not the stop's";
  TrainOptions second = fixture.options();
  second.resume = true;
  second.stop_at_iteration = 15;
  pieces.attach(second);
  EXPECT_EQ(train(second).iterations, 15);
  // Resumed at its stop point again: evaluated and saved, nothing trained.
  const TrainResult again = train(second);
  EXPECT_EQ(again.stop, TrainResult::Stop::time_limit);
  EXPECT_EQ(again.iterations, 15);
  TrainOptions rest = fixture.options();
  rest.resume = true;
  pieces.attach(rest);
  EXPECT_EQ(train(rest).iterations, 20);
  EXPECT_EQ(pieces.losses, straight.machine.losses) << "the same loss at every step";
  EXPECT_EQ(pieces.drops(), straight.machine.drops());
}

TEST(TimeSchedule, ByIterationsTheClockOnlyStops) {
  for (const bool time_without_limit : {false, true}) {
    SCOPED_TRACE(time_without_limit);
    TrainingFixture fixture;
    use_time_recipe(fixture);
    fixture.pose.schedule = time_without_limit ? ScheduleKind::time : ScheduleKind::iterations;
    fixture.write();
    TrainOptions options = fixture.options();
    options.max_minutes = time_without_limit ? 0.0 : 10.0;
    SimulatedMachine machine;
    machine.step_seconds = 7.0;  // a clock that would put the drops elsewhere
    machine.attach(options);
    const TrainResult result = train(options);
    EXPECT_EQ(result.stop, TrainResult::Stop::finished);
    EXPECT_EQ(result.iterations, 10);
    EXPECT_EQ(result.schedule_seconds, 0.0);
    EXPECT_EQ(machine.drops(), (std::vector<std::int64_t>{6, 9}));
    EXPECT_EQ(unfreeze_iteration(result), 2);
  }
}

TEST(TimeSchedule, BackboneWarmupRampsLinearlyAndLeavesTheHeadAlone) {
  TrainingFixture fixture;
  fixture.pose.max_iters = 10;
  fixture.pose.evaluate_iters = 0;
  fixture.pose.backbone_lr_multiplier = 0.5;
  fixture.write();
  TrainOptions options = fixture.options();
  options.backbone_warmup = 0.5;  // as --backbone-warmup 0.5: over 5 of the 10 iterations
  SimulatedMachine machine;
  machine.attach(options);
  train(options);
  ASSERT_EQ(machine.backbone_rates.size(), 10u);
  for (std::size_t i = 0; i < 10; ++i) {
    EXPECT_DOUBLE_EQ(machine.backbone_rates[i],
                     1e-3 * 0.5 * std::min(1.0, static_cast<double>(i) / 5))
        << i;
    EXPECT_DOUBLE_EQ(machine.rates[i], 1e-3);
  }
}

std::string training_error(const TrainingFixture& fixture, const TrainOptions& options) {
  try {
    train(options);
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find((fixture.train_dir / "pose_cfg.yaml").string()),
              std::string::npos)
        << error.what();
    return error.what();
  }
  ADD_FAILURE() << "no error";
  return {};
}

TEST(TimeSchedule, BadValuesNamePoseCfgKeys) {
  TrainingFixture fixture;
  use_time_recipe(fixture);
  std::string text = testing::read_text(fixture.train_dir / "pose_cfg.yaml");
  text.replace(text.find("\nschedule: time\n"), 16, "\nschedule: weekly\n");
  testing::write_text(fixture.train_dir / "pose_cfg.yaml", text);
  EXPECT_NE(training_error(fixture, fixture.options())
                .find("schedule must be time or iterations (found \"weekly\")"),
            std::string::npos);

  for (const double warmup : {-0.1, 1.0}) {
    fixture.pose.backbone_warmup = warmup;
    fixture.write();
    EXPECT_NE(training_error(fixture, fixture.options()).find("backbone_warmup must be"),
              std::string::npos);
  }
  fixture.pose.backbone_warmup = 0;
  fixture.write();
  TrainOptions options = fixture.options();
  options.backbone_warmup = 1.0;  // as --backbone-warmup 1
  EXPECT_NE(training_error(fixture, options).find("backbone_warmup must be"), std::string::npos);

  fixture.pose.unfreeze_backbone_after = 11;
  fixture.write();
  options = fixture.options();
  options.max_minutes = 1;
  EXPECT_NE(training_error(fixture, options)
                .find("unfreeze_backbone_after (11) must be at most max_iters (10)"),
            std::string::npos);
  options.schedule = ScheduleKind::iterations;  // an iteration that is never reached: allowed
  options.max_iters = 2;
  EXPECT_EQ(train(options).iterations, 2);
}

}  // namespace
}  // namespace labpose::pipeline
