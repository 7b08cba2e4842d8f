// The sweep's parts without training: sweep.yaml and its errors, trial configurations, halving's
// rungs and budget, the promotion rule, the state file and the locks.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <set>

#include "core/error.hpp"
#include "core/file_lock.hpp"
#include "nets/models/models.hpp"
#include "pipeline/sweep/scheduler.hpp"
#include "pipeline/sweep/space.hpp"
#include "pipeline/sweep/state.hpp"
#include "pipeline/sweep/trial_config.hpp"
#include "pipeline/sweep/trials.hpp"
#include "tests/support/test_support.hpp"

namespace labpose::pipeline {
namespace {
namespace fs = std::filesystem;
using labpose::testing::contains;
using labpose::testing::error_text;

SweepSpace space_of(const std::string& text) {
  return parse_sweep_space(text, "sweep.yaml");
}

TEST(SweepSpace, ReadsListsRangesAndSingleValues) {
  const SweepSpace space = space_of(
      "# comment\n"
      "lr: {log_uniform: [1.0e-4, 3.0e-3]}\n"
      "batch_size: [8, 16]\n"
      "net_type: mobilenet_v2_0.35\n"
      "crop_size: [256, [320, 240]]\n"
      "rotation: {uniform: [0, 30]}\n");
  ASSERT_EQ(space.parameters.size(), 5u);
  EXPECT_EQ(space.parameters[0].kind, SweepParameter::Kind::log_uniform);
  EXPECT_EQ(space.parameters[0].line, 2);
  EXPECT_DOUBLE_EQ(space.parameters[0].low, 1e-4);
  EXPECT_EQ(space.parameters[1].choices, (std::vector<std::string>{"8", "16"}));
  EXPECT_EQ(space.parameters[2].choices, (std::vector<std::string>{"mobilenet_v2_0.35"}));
  EXPECT_EQ(space.parameters[3].choices, (std::vector<std::string>{"256", "[320, 240]"}));
  EXPECT_EQ(space.parameters[4].kind, SweepParameter::Kind::uniform);
  EXPECT_FALSE(is_grid(space));
  EXPECT_TRUE(contains(error_text([&] { grid_trials(space); }),
                       "sweep.yaml:2: lr is a range, and a grid needs lists of values"));
}

TEST(SweepSpace, BadSpacesNameTheLine) {
  const auto error = [](const std::string& text) { return error_text([&] { space_of(text); }); };
  EXPECT_TRUE(contains(error("lr: [0.001]\nlearning_rate: [0.1]\n"),
                       "sweep.yaml:2:1: unknown key 'learning_rate'"));
  EXPECT_TRUE(contains(error("max_iters: [100, 200]\n"),
                       "sweep.yaml:1:1: max_iters cannot be searched: the sweep's budget sets"));
  EXPECT_TRUE(contains(error("dataset: [a]\n"), "cannot be searched: it belongs to the shuffle"));
  EXPECT_TRUE(contains(error("lr: {log_uniform: [0.01, 0.001]}\n"),
                       "sweep.yaml:1:19: the range of lr must go from low to high"));
  EXPECT_TRUE(contains(error("weight_decay: {log_uniform: [0, 0.1]}\n"),
                       "a log_uniform range of weight_decay must be above 0"));
  EXPECT_TRUE(contains(error("net_type: {uniform: [1, 2]}\n"),
                       "net_type takes names: give a list, not a range"));
  EXPECT_TRUE(contains(error("batch_size: [8, eight]\n"),
                       "sweep.yaml:1:17: batch_size takes whole numbers (found \"eight\")"));
  EXPECT_TRUE(contains(error("batch_size: [8, 8]\n"), "batch_size lists 8 twice"));
  EXPECT_TRUE(contains(error("batch_size: []\n"), "batch_size lists no value"));
  EXPECT_TRUE(contains(error("rotation: {normal: [0, 1]}\n"),
                       "unknown scale 'normal' for rotation: use uniform or log_uniform"));
  EXPECT_TRUE(
      contains(error("crop_size: [[256]]\n"), "a crop_size must be one size or [width, height]"));
  EXPECT_TRUE(contains(error("batch_size: {uniform: [2.2, 2.8]}\n"), "holds no whole number"));
  EXPECT_TRUE(contains(error("lr: [0.1]\nlr: [0.2]\n"), "lr is given twice"));
  EXPECT_TRUE(contains(error(""), "sweep.yaml lists no parameter to search"));
  EXPECT_TRUE(contains(error("- lr\n"), "a search space is a mapping"));
}

TEST(SweepSpace, TheExampleReads) {
  const SweepSpace space = space_of(example_space_text());
  EXPECT_GE(space.parameters.size(), 4u);
}

TEST(SweepSpace, LargeGridsAreRefusedAndSampledByIndex) {
  std::string text;
  for (const char* key : {"rotation", "brightness", "contrast", "noise_stddev", "global_scale"})
    text += std::string(key) + ": [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]\n";
  const SweepSpace space = space_of(text);
  EXPECT_EQ(grid_size(space), 100000u);
  EXPECT_TRUE(contains(error_text([&] { grid_trials(space); }),
                       "sweep.yaml makes a grid of 100000 combinations: more than the 10000"));
  const TrialParameters last = grid_trial(space, 99999);
  for (const auto& [key, value] : last) EXPECT_EQ(value, "1.0") << key;
  EXPECT_EQ(grid_trial(space, 1)[4].second, "0.2");  // the last parameter varies fastest
  EXPECT_EQ(grid_trial(space, 1)[3].second, "0.1");
}

TEST(SweepSpace, GridIsEveryCombination) {
  const SweepSpace space = space_of("batch_size: [8, 16]\nrotation: [0, 25, 40]\n");
  const auto trials = grid_trials(space);
  ASSERT_EQ(trials.size(), 6u);
  EXPECT_EQ(trials[0], (TrialParameters{{"batch_size", "8"}, {"rotation", "0"}}));
  EXPECT_EQ(trials[5], (TrialParameters{{"batch_size", "16"}, {"rotation", "40"}}));
}

TEST(SweepSpace, RandomDrawsRepeatAndStayInTheirRanges) {
  const SweepSpace space = space_of(
      "lr: {log_uniform: [1.0e-4, 1.0e-2]}\nbatch_size: {uniform: [2, 5]}\n"
      "net_type: [a, b, c]\n");
  std::set<std::string> batches, nets;
  double low = 1.0, high = 0.0;
  for (int index = 0; index < 200; ++index) {
    const TrialParameters trial = random_trial(space, 7, index);
    EXPECT_EQ(trial, random_trial(space, 7, index));
    const double lr = std::stod(trial[0].second);
    EXPECT_GE(lr, 1e-4);
    EXPECT_LE(lr, 1e-2);
    low = std::min(low, lr);
    high = std::max(high, lr);
    batches.insert(trial[1].second);
    nets.insert(trial[2].second);
  }
  EXPECT_EQ(batches, (std::set<std::string>{"2", "3", "4", "5"}));
  EXPECT_EQ(nets.size(), 3u);
  EXPECT_LT(low, 2e-4);  // log-uniform: the low decade is drawn as often as the high one
  EXPECT_GT(high, 5e-3);
  EXPECT_NE(random_trial(space, 7, 0), random_trial(space, 8, 0));
}

PoseConfig base_config() {
  PoseConfig pose;
  pose.net_type = "mobilenet_v2_0.35";
  pose.split = "split.json";
  pose.bodyparts = {"snout", "tail"};
  return pose;
}

TEST(TrialConfig, AppliesValuesAsTrainReadsThem) {
  const SweepSpace space =
      space_of("lr: [0.002]\ncrop_size: [320]\nbatch_size: [4]\nrotation: [10]\n");
  const PoseConfig pose =
      trial_pose_config(base_config(), grid_trials(space)[0], space, {}, TrialBudget{15.0, 0});
  ASSERT_EQ(pose.multi_step.size(), 3u);
  EXPECT_DOUBLE_EQ(pose.multi_step[0].first, 0.002);
  EXPECT_DOUBLE_EQ(pose.multi_step[1].first, 0.0006);  // the base's ratios kept
  EXPECT_EQ(pose.crop_width, 320);
  EXPECT_EQ(pose.crop_height, 320);
  EXPECT_EQ(pose.batch_size, 4);
  EXPECT_DOUBLE_EQ(pose.rotation, 10.0);
  EXPECT_EQ(pose.schedule, ScheduleKind::time);
}

TEST(TrialConfig, AnIterationBudgetScalesTheSchedule) {
  PoseConfig base = base_config();
  base.unfreeze_backbone_after = 1000;
  const SweepSpace space = space_of("batch_size: [4]\n");
  const PoseConfig pose =
      trial_pose_config(base, grid_trials(space)[0], space, {}, TrialBudget{0.0, 200});
  EXPECT_EQ(pose.max_iters, 200);
  EXPECT_EQ(pose.multi_step[0].second, 120);
  EXPECT_EQ(pose.multi_step[1].second, 180);
  EXPECT_EQ(pose.multi_step[2].second, 200);
  EXPECT_EQ(pose.unfreeze_backbone_after, 20);
  EXPECT_EQ(pose.schedule, ScheduleKind::iterations);
}

TEST(TrialConfig, PretrainedTrialsGetTheFineTuningRecipe) {
  const SweepSpace space = space_of("net_type: [efficientnet_lite0]\ninit_weights: [imagenet]\n");
  const ImageNetWeights cache = [](const std::string& net) -> std::optional<std::string> {
    if (net == "efficientnet_lite0") return "/cache/efficientnet_lite0.safetensors";
    return std::nullopt;
  };
  const PoseConfig pose =
      trial_pose_config(base_config(), grid_trials(space)[0], space, cache, TrialBudget{10, 0});
  EXPECT_EQ(pose.init_weights, "/cache/efficientnet_lite0.safetensors");
  EXPECT_EQ(pose.freeze_backbone_stages, nets::backbone_stages("efficientnet_lite0"));
  EXPECT_EQ(pose.unfreeze_backbone_after, 1000);  // a tenth of max_iters

  // Another network than a pretrained base's: its own weights, or from scratch without them.
  PoseConfig pretrained_base = base_config();
  pretrained_base.net_type = "efficientnet_lite0";
  pretrained_base.init_weights = "/cache/efficientnet_lite0.safetensors";
  use_fine_tuning_defaults(pretrained_base);
  const SweepSpace nets = space_of("net_type: [mobilenet_v2_0.35, efficientnet_lite0]\n");
  const PoseConfig scratch =
      trial_pose_config(pretrained_base, grid_trials(nets)[0], nets, cache, TrialBudget{10, 0});
  EXPECT_EQ(scratch.init_weights, "");
  EXPECT_EQ(scratch.freeze_backbone_stages, 0);
  EXPECT_EQ(scratch.unfreeze_backbone_after, 0);
  const PoseConfig same =
      trial_pose_config(pretrained_base, grid_trials(nets)[1], nets, cache, TrialBudget{10, 0});
  EXPECT_EQ(same.init_weights, pretrained_base.init_weights);
  EXPECT_EQ(same.freeze_backbone_stages, pretrained_base.freeze_backbone_stages);

  const SweepSpace missing = space_of("init_weights: [imagenet]\n");
  EXPECT_TRUE(contains(error_text([&] {
                         trial_pose_config(base_config(), grid_trials(missing)[0], missing, cache,
                                           TrialBudget{10, 0});
                       }),
                       "sweep.yaml:1: there are no ImageNet weights of mobilenet_v2_0.35 in the "
                       "weights cache"));
}

TEST(TrialConfig, ValuesTrainWouldRefuseNameTheLine) {
  const PoseConfig base = base_config();
  EXPECT_TRUE(contains(
      error_text([&] { check_space_values(base, space_of("lr: [0.001]\nbatch_size: [8, 0]\n")); }),
      "sweep.yaml:2: batch_size 0 would be refused by train: batch_size must be "
      "a whole number from 1 to 4096"));
  EXPECT_TRUE(contains(
      error_text([&] { check_space_values(base, space_of("rotation: {uniform: [0, 400]}\n")); }),
      "sweep.yaml:1: rotation 400.0 would be refused by train"));
  EXPECT_TRUE(contains(
      error_text([&] { check_space_values(base, space_of("net_type: [mobilenet_v3]\n")); }),
      "net_type mobilenet_v3 would be refused by train: it is not a network labpose can train"));
  EXPECT_TRUE(contains(error_text([&] { check_space_values(base, space_of("lr: [0, 0.001]\n")); }),
                       "sweep.yaml:1: lr must be a learning rate above 0"));
  EXPECT_TRUE(
      contains(error_text([&] {
                 check_space_values(base, space_of("init_weights: [/no/such.safetensors]\n"));
               }),
               "init_weights /no/such.safetensors is neither imagenet, none nor a weights file"));
  // A combination: every value alone is fine, the trial is not.
  const SweepSpace space = space_of("freeze_backbone_stages: [12]\n");
  check_space_values(base, space);
  EXPECT_TRUE(
      contains(error_text([&] {
                 trial_pose_config(base, grid_trials(space)[0], space, {}, TrialBudget{10, 0});
               }),
               "the trial (freeze_backbone_stages 12) would be refused by train: cannot "
               "freeze 12 backbone stages"));
}

TEST(Halving, RungsAndBudget) {
  // 90 minutes of trials of 15: rungs at 15/9, 15/3 and 15 minutes; 26 trials fit (8 go on to
  // 5 minutes, 2 to 15).
  const auto rungs = halving_rungs(15.0, 23, 3, 1.0, false);
  ASSERT_EQ(rungs.size(), 3u);
  EXPECT_NEAR(rungs[0], 15.0 / 9, 1e-12);
  EXPECT_NEAR(rungs[1], 5.0, 1e-12);
  EXPECT_EQ(rungs[2], 15.0);
  EXPECT_NEAR(halving_cost(23, rungs, 3), 23 * 15.0 / 9 + 7 * (5 - 15.0 / 9) + 2 * 10.0, 1e-9);
  EXPECT_EQ(halving_trials_within(90.0, TrialBudget{15.0, 0}, 3), 26);
  // Too few trials to halve; a first rung never below a minute.
  EXPECT_EQ(halving_rungs(15.0, 2, 3, 1.0, false).size(), 1u);
  EXPECT_EQ(halving_rungs(2.0, 100, 3, 1.0, false).size(), 1u);
  EXPECT_EQ(halving_rungs(27.0, 100, 3, 1.0, false).size(), 4u);  // at most 4 rungs
  EXPECT_EQ(halving_rungs(9.0, 9, 3, 0.1, true), (std::vector<double>{1, 3, 9}));
  EXPECT_EQ(halving_trials_within(10.0, TrialBudget{15.0, 0}, 3), 0);
}

SweepState halving_state(int trials) {
  SweepState state;
  state.name = "test";
  state.algorithm = "halving";
  state.budget.iterations = 9;
  state.device = "cpu";
  state.rungs = {1, 3, 9};
  state.trials.resize(static_cast<std::size_t>(trials));
  for (std::size_t i = 0; i < state.trials.size(); ++i) {
    state.trials[i].id = static_cast<int>(i) + 1;
    state.trials[i].shuffle = 11 + static_cast<int>(i);
  }
  return state;
}

void finish(SweepState& state, int id, int rung, double error) {
  TrialRecord& trial = trial_by_id(state, id);
  trial.state = TrialState::done;
  trial.rung = rung;
  trial.target_rung = rung;
  trial.errors.resize(static_cast<std::size_t>(rung) + 1);
  trial.errors[static_cast<std::size_t>(rung)] = error;
}

TEST(Halving, PromotesTheBestThirdAsSoonAsItIsKnown) {
  SweepState state = halving_state(9);
  const auto idle = [](int) { return false; };
  NextStep step = next_job(state, idle);
  ASSERT_EQ(step.kind, NextStep::Kind::run);
  EXPECT_EQ(step.job.trial, 1);
  EXPECT_EQ(step.job.rung, 0);
  finish(state, 1, 0, 5.0);
  finish(state, 2, 0, 3.0);
  step = next_job(state, idle);
  EXPECT_EQ(step.job.trial, 3);  // 2 finished: no third is known yet
  finish(state, 3, 0, 4.0);
  step = next_job(state, idle);
  EXPECT_EQ(step.job.trial, 2);  // the best of 3 goes on
  EXPECT_EQ(step.job.rung, 1);
  trial_by_id(state, 2).state = TrialState::running;
  trial_by_id(state, 2).target_rung = 1;
  // While trial 2 trains, another process starts new trials; one whose process died resumes first.
  const auto trial_two_busy = [](int id) { return id == 2; };
  step = next_job(state, trial_two_busy);
  EXPECT_EQ(step.job.trial, 4);
  trial_by_id(state, 4).state = TrialState::running;
  step = next_job(state, trial_two_busy);
  EXPECT_EQ(step.job.trial, 4);  // running, but no process holds it
  EXPECT_EQ(step.job.rung, 0);
  finish(state, 2, 1, 2.5);
  finish(state, 4, 0, 9.0);
  finish(state, 5, 0, 8.0);
  finish(state, 6, 0, 1.0);
  step = next_job(state, idle);
  EXPECT_EQ(step.job.trial, 6);  // the best 2 of 6: trials 6 and 2 (2 is promoted already)
  EXPECT_EQ(step.job.rung, 1);
  finish(state, 6, 1, 2.0);
  for (int id = 7; id <= 9; ++id) finish(state, id, 0, 10.0 + id);
  step = next_job(state, idle);
  EXPECT_EQ(step.job.trial, 3);  // the best 3 of 9 at rung 0: 6, 2, 3
  EXPECT_EQ(step.job.rung, 1);
  finish(state, 3, 1, 7.0);
  step = next_job(state, idle);
  EXPECT_EQ(step.job.trial, 6);  // the best of the 3 at rung 1 goes to the last rung
  EXPECT_EQ(step.job.rung, 2);
  finish(state, 6, 2, 1.5);
  EXPECT_EQ(next_job(state, idle).kind, NextStep::Kind::over);
  EXPECT_EQ(best_trial(state), 6);
  EXPECT_EQ(ranked_trials(state).front()->id, 6);
  EXPECT_EQ(ranked_trials(state)[1]->id, 2);  // rung 1 at 2.5 px, before trial 3 at 7.0
}

TEST(Halving, WaitsForRunningTrialsAndRanksFailuresLast) {
  SweepState state = halving_state(3);
  finish(state, 1, 0, 5.0);
  finish(state, 2, 0, 6.0);
  TrialRecord& failed = trial_by_id(state, 3);
  failed.state = TrialState::failed;
  const NextStep step = next_job(state, [](int) { return false; });
  EXPECT_EQ(step.job.trial, 1);  // 3 finished rung 0 (one failed): the best goes on
  EXPECT_EQ(step.job.rung, 1);
  trial_by_id(state, 1).state = TrialState::running;
  trial_by_id(state, 1).target_rung = 1;
  EXPECT_EQ(next_job(state, [](int id) { return id == 1; }).kind, NextStep::Kind::wait);
  EXPECT_EQ(ranked_trials(state).back()->id, 3);
}

TEST(SweepState, RoundTripsAndRefusesDamage) {
  SweepState state = halving_state(2);
  state.validation = {"labeled-data/v/img001.png"};
  state.trials[0].parameters = {{"lr", "0.001"}, {"crop_size", "[320, 240]"}};
  finish(state, 1, 0, 4.25);
  state.chosen = 1;
  state.test_error = 5.5;
  state.test_snapshot = "snapshot-best-100";
  const std::string text = sweep_state_text(state);
  const SweepState back = parse_sweep_state(text, "state.json");
  EXPECT_EQ(sweep_state_text(back), text);
  EXPECT_EQ(back.trials[0].parameters, state.trials[0].parameters);
  EXPECT_EQ(back.trials[0].errors, state.trials[0].errors);
  EXPECT_TRUE(contains(error_text([&] { parse_sweep_state(text.substr(0, 100), "state.json"); }),
                       "state.json is not a labpose sweep state"));
  // Damage that would crash or stall the sweep later is an error now.
  const auto damaged = [&](const std::string& from, const std::string& to) {
    std::string changed = text;
    const std::size_t at = changed.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) changed.replace(at, from.size(), to);
    return error_text([&] { parse_sweep_state(changed, "state.json"); });
  };
  EXPECT_TRUE(contains(damaged("\"rung\": 0", "\"rung\": 7"), "trial 1: rung out of range"));
  EXPECT_TRUE(
      contains(damaged("\"target_rung\": 0", "\"target_rung\": -5"), "target_rung out of range"));
  EXPECT_TRUE(contains(damaged("\"id\": 2", "\"id\": 1"), "a missing or repeated id"));
  EXPECT_TRUE(
      contains(damaged("\"chosen\": 1", "\"chosen\": 9"), "the chosen trial does not exist"));
  EXPECT_TRUE(contains(damaged("4.25", "-1"), "an error that is not a distance"));
}

TEST(SweepState, ATrialLockIsHeldUntilItsLastHolderCloses) {
  const labpose::testing::TempDir dir;
  const fs::path file = dir.path() / "trial.lock";
  std::optional<FileLock> held = FileLock::try_take(file);
  ASSERT_TRUE(held);
  EXPECT_FALSE(FileLock::try_take(file));  // another open of the file, in the same process
  held.reset();
  EXPECT_TRUE(FileLock::try_take(file));
}

TEST(SweepValidation, DrawnFromTheTrainingImagesOnly) {
  Split split;
  for (int i = 0; i < 40; ++i) split.train.push_back("train" + std::to_string(i));
  split.test = {"test0", "test1"};
  const auto validation = draw_validation_images(split, 0.15, 3);
  EXPECT_EQ(validation.size(), 6u);
  EXPECT_EQ(validation, draw_validation_images(split, 0.15, 3));
  EXPECT_NE(validation, draw_validation_images(split, 0.15, 4));
  for (const auto& image : validation) EXPECT_TRUE(image.starts_with("train")) << image;
  split.train.resize(2);
  EXPECT_EQ(draw_validation_images(split, 0.9, 1).size(), 1u);  // one is left to train on
}

}  // namespace
}  // namespace labpose::pipeline
