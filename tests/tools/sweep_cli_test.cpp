// labpose sweep end to end on the demo project with budgets of a few iterations (runs that repeat
// exactly): a grid, successive halving, the validation images, a sweep killed and run again, two
// sweep processes at once, bad spaces, --status and --slurm-array.
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "tests/support/test_support.hpp"

namespace labpose {
namespace {
namespace fs = std::filesystem;
using testing::CommandResult;
using testing::contains;
using testing::read_text;
using testing::run_labpose;
using testing::shell_quote;
using testing::TempDir;

// A demo project whose shuffle 1 trains mobilenet_v2_0.35 from scratch on 64x64 crops.
struct SweepProject {
  TempDir dir;
  fs::path config, project, models;
  std::string base_name;  // shuffle 1's model folder

  SweepProject() {
    config = testing::demo_project_from_cli(dir.path(), 60, 12);
    project = config.parent_path();
    models = project / "labpose-models" / "iteration-0";
    const CommandResult made = run_labpose("create-dataset " + shell_quote(config.string()) +
                                           " --net mobilenet_v2_0.35 --weights none");
    EXPECT_EQ(made.exit_code, 0) << made.output;
    for (const auto& entry : fs::directory_iterator(models))
      base_name = entry.path().filename().string();
    testing::set_yaml_values(shuffle_dir(1) / "train" / "pose_cfg.yaml",
                             {{"crop_size", "[64, 64]"},
                              {"batch_size", "2"},
                              {"display_iters", "1"},
                              {"evaluate_iters", "1000"},
                              {"save_iters", "100000"},
                              // Runs are compared number for number: fp32 on every CPU and
                              // under any load (`auto` measures the CPU at each start).
                              {"precision", "fp32"}});
  }

  // The model folder of a shuffle (which may not exist yet).
  fs::path shuffle_dir(int shuffle) const {
    std::string name = base_name;
    name.replace(name.rfind("shuffle1"), 8, "shuffle" + std::to_string(shuffle));
    return models / name;
  }

  // training-datasets/iteration-0/UnaugmentedDataSet_<Task><date>/
  fs::path training_set() const {
    return fs::directory_iterator(project / "training-datasets" / "iteration-0")->path();
  }

  fs::path write_space(const std::string& name, const std::string& text) const {
    const fs::path file = dir.path() / (name + ".yaml");
    testing::write_text(file, text);
    return file;
  }

  std::string sweep_command(const std::string& arguments) const {
    return shell_quote(testing::labpose_binary()) + " sweep " + shell_quote(config.string()) +
           " --devices cpu " + arguments;
  }

  CommandResult sweep(const std::string& arguments) const {
    return testing::run(sweep_command(arguments) + " 2>&1");
  }

  fs::path folder(const std::string& name) const { return project / "sweeps" / name; }
};

// results.csv as rows of named cells.
std::vector<std::map<std::string, std::string>> results(const fs::path& file) {
  std::istringstream in(read_text(file));
  std::string line;
  std::getline(in, line);
  std::vector<std::string> header;
  std::stringstream names(line);
  for (std::string name; std::getline(names, name, ',');) header.push_back(name);
  std::vector<std::map<std::string, std::string>> rows;
  while (std::getline(in, line)) {
    std::map<std::string, std::string> row;
    std::stringstream cells(line);
    std::size_t column = 0;
    for (std::string cell; std::getline(cells, cell, ',') && column < header.size(); ++column)
      row[header[column]] = cell;
    for (; column < header.size(); ++column) row[header[column]] = "";  // empty last cells
    rows.push_back(row);
  }
  return rows;
}

std::size_t count_of(const std::string& text, const std::string& part) {
  std::size_t count = 0;
  for (std::size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1))
    ++count;
  return count;
}

std::set<std::string> strings_of(const nlohmann::json& list) {
  return list.get<std::set<std::string>>();
}

TEST(SweepCli, AGridOfFourTrainsFourTrialsAndTestsOnlyTheChosenOne) {
  const SweepProject p;
  const fs::path space = p.write_space("grid", "batch_size: [2, 4]\nrotation: [0, 20]\n");
  const CommandResult result =
      p.sweep("--space " + shell_quote(space.string()) + " --iterations-per-trial 3");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_TRUE(contains(result.output,
                       "sweep grid: grid over 4 trials (shuffles 2 to 5) of up to "
                       "3 iterations each; chosen on 2 validation images"))
      << result.output;
  EXPECT_TRUE(contains(result.output, "never its 1 test image\n")) << result.output;
  const auto rows = results(p.folder("grid") / "results.csv");
  ASSERT_EQ(rows.size(), 4u);
  int tested = 0;
  for (const auto& row : rows) {
    EXPECT_EQ(row.at("state"), "done");
    EXPECT_EQ(row.at("iterations"), "3");
    EXPECT_FALSE(row.at("validation_error_at_3_iterations").empty());
    tested += row.at("test_error").empty() ? 0 : 1;
  }
  EXPECT_EQ(tested, 1);
  EXPECT_TRUE(contains(result.output, "chosen: trial ")) << result.output;
  const std::string best = read_text(p.folder("grid") / "best.yaml");
  EXPECT_TRUE(contains(best, "test_error: ")) << best;

  // The validation images: taken from shuffle 1's training images, never trained on, never test
  // images; the same for every trial.
  const nlohmann::json base =
      nlohmann::json::parse(read_text(p.training_set() / "labpose-split-95shuffle1.json"));
  const auto base_train = strings_of(base.at("train"));
  const auto base_test = strings_of(base.at("test"));
  std::set<std::string> validation_sets;
  for (int shuffle = 2; shuffle <= 5; ++shuffle) {
    const nlohmann::json split = nlohmann::json::parse(read_text(
        p.training_set() / ("labpose-split-95shuffle" + std::to_string(shuffle) + ".json")));
    const auto validation = strings_of(split.at("validation"));
    const auto train = strings_of(split.at("train"));
    EXPECT_EQ(strings_of(split.at("test")), base_test);
    EXPECT_EQ(validation.size(), 2u);
    for (const auto& image : validation) {
      EXPECT_EQ(base_train.count(image), 1u) << image;
      EXPECT_EQ(train.count(image), 0u) << image;
      EXPECT_EQ(base_test.count(image), 0u) << image;
    }
    EXPECT_EQ(train.size() + validation.size(), base_train.size());
    validation_sets.insert(split.at("validation").dump());
    // Trials are ordinary shuffles whose training curve reports the validation error.
    const std::string stats = read_text(p.shuffle_dir(shuffle) / "train" / "learning_stats.csv");
    EXPECT_TRUE(stats.starts_with("iteration,loss,lr,validation_error,seconds\n")) << stats;
  }
  EXPECT_EQ(validation_sets.size(), 1u);
  // Only the chosen trial was evaluated on the test images.
  std::size_t evaluated = 0;
  for (const auto& entry :
       fs::directory_iterator(p.project / "labpose-evaluation-results" / "iteration-0")) {
    evaluated += entry.is_directory() ? 1u : 0u;
  }
  EXPECT_EQ(evaluated, 1u);

  EXPECT_TRUE(fs::exists(p.folder("grid") / "curves.png"));

  // --promote: the chosen trial becomes the default model; config.yaml changes in one key, the
  // previous file kept.
  const std::string before = read_text(p.config);
  const CommandResult promoted = p.sweep("--name grid --promote");
  ASSERT_EQ(promoted.exit_code, 0) << promoted.output;
  const int chosen = std::stoi(best.substr(best.find("\nshuffle: ") + 10));
  EXPECT_TRUE(contains(promoted.output, "shuffle " + std::to_string(chosen) + " (trial "))
      << promoted.output;
  EXPECT_EQ(read_text(p.project / "config.yaml.bak"), before);
  const std::string after = read_text(p.config);
  std::istringstream old_lines(before), new_lines(after);
  std::vector<std::string> changed;
  for (std::string a, b; std::getline(old_lines, a) && std::getline(new_lines, b);) {
    if (a != b) changed.push_back(a + " -> " + b);
  }
  EXPECT_EQ(changed,
            (std::vector<std::string>{"default_net_type: efficientnet_lite0 -> default_net_type: "
                                      "mobilenet_v2_0.35"}));
  EXPECT_TRUE(
      contains(read_text(p.models / "promoted.yaml"), "shuffle: " + std::to_string(chosen) + "\n"));
  const CommandResult evaluation = run_labpose("evaluate " + shell_quote(p.config.string()));
  ASSERT_EQ(evaluation.exit_code, 0) << evaluation.output;
  EXPECT_TRUE(contains(evaluation.output, "shuffle " + std::to_string(chosen) +
                                              " (trainset 0.95), the model promoted from sweep "
                                              "grid"))
      << evaluation.output;

  // --status prints the same table; running it again does nothing more.
  const CommandResult status = p.sweep("--name grid --status");
  ASSERT_EQ(status.exit_code, 0) << status.output;
  EXPECT_TRUE(contains(status.output, "sweep grid: grid over 4 trials (4 done)")) << status.output;
  const CommandResult again = p.sweep("--name grid");
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_FALSE(contains(again.output, "training to")) << again.output;
}

TEST(SweepCli, HalvingDropsTheWorstAndContinuesPromotedTrialsFromTheirSnapshots) {
  const SweepProject p;
  const fs::path space =
      p.write_space("halving", "lr: {log_uniform: [1.0e-5, 1.0e-2]}\nrotation: [0, 10, 20]\n");
  const CommandResult result = p.sweep("--space " + shell_quote(space.string()) +
                                       " --algo halving --trials 9 --iterations-per-trial 9");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_TRUE(contains(result.output, "rungs at 1 iterations, 3 iterations, 9 iterations"))
      << result.output;
  const auto rows = results(p.folder("halving") / "results.csv");
  ASSERT_EQ(rows.size(), 9u);
  std::vector<std::pair<double, std::string>> first_rung;
  int second = 0, third = 0;
  for (const auto& row : rows) {
    ASSERT_FALSE(row.at("validation_error_at_1_iterations").empty());
    first_rung.emplace_back(std::stod(row.at("validation_error_at_1_iterations")), row.at("trial"));
    const bool promoted = !row.at("validation_error_at_3_iterations").empty();
    second += promoted ? 1 : 0;
    third += row.at("validation_error_at_9_iterations").empty() ? 0 : 1;
    EXPECT_EQ(row.at("iterations"), !row.at("validation_error_at_9_iterations").empty() ? "9"
                                    : promoted                                          ? "3"
                                                                                        : "1");
    if (promoted) {
      // It went on from its own snapshot, never from scratch.
      const std::string log =
          read_text(p.folder("halving") / "logs" / ("trial-00" + row.at("trial") + ".log"));
      EXPECT_TRUE(contains(log, "resuming from snapshot-1.safetensors (iteration 1)")) << log;
    }
  }
  EXPECT_EQ(second, 3);  // a third of 9
  EXPECT_EQ(third, 1);   // a third of 3
  // A trial goes on only when it is in the best third of those finished so far: the two worst of
  // the first rung never do.
  std::sort(first_rung.begin(), first_rung.end());
  for (std::size_t worst = 7; worst < 9; ++worst) {
    for (const auto& row : rows) {
      if (row.at("trial") == first_rung[worst].second) {
        EXPECT_TRUE(row.at("validation_error_at_3_iterations").empty()) << row.at("trial");
      }
    }
  }
  EXPECT_TRUE(contains(read_text(p.folder("halving") / "best.yaml"), "test_error: "));
}

TEST(SweepCli, AKilledSweepContinuesAsIfUninterrupted) {
  const SweepProject p;
  const fs::path space = p.write_space("killed", "batch_size: [2, 4]\nrotation: [0, 20]\n");
  const std::string options =
      " --space " + shell_quote(space.string()) + " --iterations-per-trial 6 --seed 5";
  const fs::path csv = p.folder("killed") / "results.csv";
  const CommandResult killed = testing::run_until_then_signal(
      p.sweep_command("--name killed" + options),
      "grep -q ',done,' " + shell_quote(csv.string()) + " 2>/dev/null", "KILL");
  EXPECT_EQ(killed.exit_code, 137) << killed.output;
  std::map<std::string, std::map<std::string, std::string>> before;
  for (const auto& row : results(csv)) {
    if (row.at("state") == "done") before[row.at("trial")] = row;
  }
  ASSERT_FALSE(before.empty());
  ASSERT_LT(before.size(), 4u) << "the sweep finished before it was killed";
  const CommandResult resumed = p.sweep("--name killed" + options);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  const CommandResult whole = p.sweep("--name whole" + options);
  ASSERT_EQ(whole.exit_code, 0) << whole.output;
  const auto after = results(csv);
  const auto uninterrupted = results(p.folder("whole") / "results.csv");
  ASSERT_EQ(after.size(), 4u);
  ASSERT_EQ(uninterrupted.size(), 4u);
  for (std::size_t i = 0; i < after.size(); ++i) {
    auto row = after[i];
    EXPECT_EQ(row.at("state"), "done");
    const auto kept = before.find(row.at("trial"));
    if (kept != before.end()) {
      EXPECT_EQ(row.at("validation_error_at_6_iterations"),
                kept->second.at("validation_error_at_6_iterations"));
      EXPECT_EQ(row.at("minutes"), kept->second.at("minutes"));  // not trained again
    }
    for (const auto& column : {"trial", "batch_size", "rotation", "iterations",
                               "validation_error_at_6_iterations", "test_error"}) {
      EXPECT_EQ(row.at(column), uninterrupted[i].at(column)) << column << " of trial " << i + 1;
    }
  }
}

TEST(SweepCli, SigtermStopsTheTrialsWithSnapshotsAndExitsThree) {
  const SweepProject p;
  const fs::path space = p.write_space("stopped", "rotation: [0, 10, 20]\n");
  const std::string command =
      p.sweep_command("--space " + shell_quote(space.string()) + " --iterations-per-trial 400");
  const fs::path log = p.folder("stopped") / "logs" / "trial-001.log";
  // Stopped once the first trial has written a loss row: a condition, not a time.
  const CommandResult stopped = testing::run_until_then_signal(
      command,
      "[ -f " + shell_quote((p.shuffle_dir(2) / "train" / "learning_stats.csv").string()) + " ]",
      "TERM");
  EXPECT_EQ(stopped.exit_code, 3) << stopped.output;
  EXPECT_TRUE(contains(stopped.output, "error: the sweep stopped by SIGTERM")) << stopped.output;
  EXPECT_TRUE(contains(stopped.output, "hint: continue it with: labpose sweep")) << stopped.output;
  EXPECT_TRUE(contains(stopped.output, "trial 1 stopped at iteration ")) << stopped.output;
  const auto rows = results(p.folder("stopped") / "results.csv");
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].at("state"), "stopped");
  EXPECT_EQ(rows[1].at("state"), "waiting");
  EXPECT_TRUE(contains(read_text(log), "training stopped by SIGTERM")) << read_text(log);
}

// On the CPU, `auto` is measured once by the sweep, and every trial trains in what it took; the
// trials' files keep `auto`, for whatever device trains them later.
TEST(SweepCli, TrialsOnTheCpuTrainInThePrecisionAutoTookOnce) {
  const SweepProject p;
  testing::set_yaml_values(p.shuffle_dir(1) / "train" / "pose_cfg.yaml", {{"precision", "auto"}});
  const fs::path space = p.write_space("precision", "rotation: [0, 20]\n");
  const CommandResult swept = p.sweep("--space " + shell_quote(space.string()) +
                                      " --iterations-per-trial 2 --name precision");
  ASSERT_EQ(swept.exit_code, 0) << swept.output;
  std::smatch chosen;
  ASSERT_TRUE(std::regex_search(swept.output, chosen,
                                std::regex("precision auto is (fp32|bf16) on this CPU")))
      << swept.output;
  EXPECT_EQ(count_of(swept.output, "precision auto is"), 1u) << swept.output;
  for (const int trial : {1, 2}) {
    const std::string log =
        read_text(p.folder("precision") / "logs" / ("trial-00" + std::to_string(trial) + ".log"));
    EXPECT_TRUE(contains(log, "--precision " + chosen[1].str())) << log;
    EXPECT_EQ(contains(log, "mixed precision: bf16"), chosen[1] == "bf16") << log;
  }
  for (const int shuffle : {1, 2, 3}) {
    EXPECT_TRUE(contains(read_text(p.shuffle_dir(shuffle) / "train" / "pose_cfg.yaml"),
                         "\nprecision: auto\n"))
        << shuffle;
  }
}

TEST(SweepCli, AFailingTrialIsMarkedWithItsErrorAndTheSweepGoesOn) {
  const SweepProject p;
  const fs::path space = p.write_space("failing", "rotation: [0, 20]\n");
  const std::string options =
      "--space " + shell_quote(space.string()) + " --iterations-per-trial 2";
  ASSERT_EQ(p.sweep(options + " --slurm-array").exit_code, 0);
  // A trial's configuration damaged by hand after the sweep was prepared.
  testing::set_yaml_values(p.shuffle_dir(2) / "train" / "pose_cfg.yaml", {{"batch_size", "lots"}});
  const CommandResult result = p.sweep("--name failing");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_TRUE(contains(result.output, "warning: trial 1 (rotation 0) failed: ")) << result.output;
  EXPECT_TRUE(contains(result.output, "batch_size")) << result.output;
  const auto rows = results(p.folder("failing") / "results.csv");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].at("state"), "failed");
  EXPECT_EQ(rows[1].at("state"), "done");
  EXPECT_TRUE(contains(result.output, "chosen: trial 2 ")) << result.output;
  const std::string state = read_text(p.folder("failing") / "state.json");
  EXPECT_TRUE(contains(state, "batch_size")) << state;
  const CommandResult status = p.sweep("--name failing --status");
  EXPECT_TRUE(contains(status.output, "trial 1 failed: ")) << status.output;
}

TEST(SweepCli, TwoSweepProcessesNeverTrainATrialTwice) {
  const SweepProject p;
  const fs::path space = p.write_space("shared", "batch_size: [2, 4]\nrotation: [0, 20]\n");
  const std::string command =
      p.sweep_command("--space " + shell_quote(space.string()) + " --iterations-per-trial 3");
  const CommandResult both = testing::run(
      "(" + command + " --parallel 2 > " + shell_quote((p.dir.path() / "a.log").string()) +
      " 2>&1 & " + command + " > " + shell_quote((p.dir.path() / "b.log").string()) +
      " 2>&1; b=$?; wait $!; a=$?; exit $((a + b)))");
  const std::string a = read_text(p.dir.path() / "a.log"), b = read_text(p.dir.path() / "b.log");
  ASSERT_EQ(both.exit_code, 0) << a << b;
  for (int trial = 1; trial <= 4; ++trial) {
    const std::string log =
        read_text(p.folder("shared") / "logs" / ("trial-00" + std::to_string(trial) + ".log"));
    EXPECT_EQ(count_of(log, "== labpose sweep shared: trial"), 1u) << log;
    EXPECT_EQ(count_of(a + b, "trial " + std::to_string(trial) + " of 4 ("), 1u) << a << b;
  }
  for (const auto& row : results(p.folder("shared") / "results.csv"))
    EXPECT_EQ(row.at("state"), "done");
}

TEST(SweepCli, BadSpacesAndOptionsAreRefusedBeforeAnythingRuns) {
  const SweepProject p;
  const auto refused = [&](const std::string& text, const std::string& options) {
    const fs::path space = p.write_space("bad", text);
    const CommandResult result =
        p.sweep("--space " + shell_quote(space.string()) + " --iterations-per-trial 3 " + options);
    EXPECT_EQ(result.exit_code, 2) << result.output;
    EXPECT_FALSE(fs::exists(p.folder("bad") / "state.json"));
    EXPECT_FALSE(fs::exists(p.shuffle_dir(2))) << "a trial's shuffle was made";
    return result.output;
  };
  const std::string file = (p.dir.path() / "bad.yaml").string();
  EXPECT_TRUE(contains(refused("batch_size: [2, 0]\n", ""),
                       "error: " + file + ":1: batch_size 0 would be refused by train"));
  EXPECT_TRUE(contains(refused("rotation: [0]\nlearning_rate: [0.1]\n", ""),
                       "error: " + file + ":2:1: unknown key 'learning_rate'"));
  EXPECT_TRUE(contains(refused("lr: {log_uniform: [1.0e-4, 1.0e-2]}\n", "--algo grid"),
                       file + ":1: lr is a range, and a grid needs lists of values"));
  EXPECT_TRUE(contains(refused("lr: {log_uniform: [1.0e-4, 1.0e-2]}\n", ""),
                       "say how many trials the halving sweep runs"));
  EXPECT_TRUE(contains(refused("freeze_backbone_stages: [2, 12]\n", ""),
                       "the trial (freeze_backbone_stages 12) would be refused by train"));
  EXPECT_TRUE(contains(p.sweep("--name nothing").output, "there is no sweep nothing in"));

  // A sweep continues only with the settings it started with.
  const fs::path space = p.write_space("first", "rotation: [0, 20]\n");
  const CommandResult prepared = p.sweep("--space " + shell_quote(space.string()) +
                                         " --iterations-per-trial 2 --slurm-array --parallel 3");
  ASSERT_EQ(prepared.exit_code, 0) << prepared.output;
  const std::string script = read_text(p.folder("first") / "slurm-array.sh");
  EXPECT_TRUE(contains(prepared.output, script)) << prepared.output;  // printed as written
  EXPECT_TRUE(contains(script, "#SBATCH --array=1-3\n")) << script;
  EXPECT_TRUE(contains(script, " sweep " + p.config.string() + " --name first --devices cpu\n"))
      << script;
  const CommandResult early = p.sweep("--name first --promote");
  EXPECT_EQ(early.exit_code, 1) << early.output;
  EXPECT_TRUE(contains(early.output, "error: sweep first is not over")) << early.output;
  EXPECT_FALSE(fs::exists(p.models / "promoted.yaml"));
  testing::write_text(space, "rotation: [0, 30]\n");
  const CommandResult changed =
      p.sweep("--space " + shell_quote(space.string()) + " --iterations-per-trial 2");
  EXPECT_EQ(changed.exit_code, 2) << changed.output;
  EXPECT_TRUE(contains(changed.output, "error: sweep first was started otherwise"))
      << changed.output;
  EXPECT_TRUE(contains(changed.output, "has changed since the sweep started")) << changed.output;
}

}  // namespace
}  // namespace labpose
