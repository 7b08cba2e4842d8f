// labpose evaluate <config> [--shuffle K] [--training-fraction F] [--snapshot S|all|best]
//   [--device cpu] [--precision P] [--plot]
#include <fmt/core.h>
#include <fmt/format.h>

#include <cmath>
#include <iostream>
#include <tuple>

#include "core/console.hpp"
#include "core/error.hpp"
#include "core/text_table.hpp"
#include "devices/devices.hpp"
#include "pipeline/evaluation/evaluate.hpp"
#include "projects/layout.hpp"
#include "projects/promoted_model.hpp"
#include "projects/yaml_text.hpp"
#include "tools/labpose/command.hpp"
#include "tools/labpose/config_loading.hpp"

namespace labpose::tools {
namespace {

projects::SnapshotIndex parse_snapshot(const std::string& text) {
  projects::SnapshotIndex choice;
  if (text == "all") {
    choice.kind = projects::SnapshotIndex::Kind::all;
  } else if (text == "best") {
    choice.kind = projects::SnapshotIndex::Kind::best;
  } else if (const auto index = projects::yaml_text::parse_int(text)) {
    choice.index = static_cast<int>(*index);
  } else {
    throw UsageError(fmt::format("--snapshot {} is not a snapshot index, all or best", text),
                     "-1 is the last snapshot (the best one when there is one), 0 the first");
  }
  return choice;
}

std::string pixels(double value) {
  return std::isnan(value) ? "-" : fmt::format("{:.2f}", value);
}

// How far another precision's errors and keypoints are from fp32's.
void print_precision_comparison(const pipeline::SnapshotEvaluation& result) {
  const pipeline::ReducedPrecisionEvaluation& reduced = *result.reduced;
  const char* name = nets::precision_name(reduced.precision);
  std::cout << '\n'
            << fmt::format("{} against fp32 ({}): test {} px (fp32 {}), train {} px (fp32 {})\n",
                           name, result.snapshot, pixels(reduced.test.mean),
                           pixels(result.test.mean), pixels(reduced.train.mean),
                           pixels(result.train.mean))
            << fmt::format(
                   "keypoints moved {:.3f} px (median), {:.3f} px (99th percentile), {:.3f} px at "
                   "most, over the {} with likelihood >= pcutoff ({}) in fp32\n",
                   reduced.shift.confident.median, reduced.shift.confident.p99,
                   reduced.shift.confident.largest, reduced.shift.confident.keypoints,
                   result.pcutoff)
            << fmt::format(
                   "  over all {} keypoints: {:.3f} px (median), {:.3f} px (99th percentile), "
                   "{:.3f} px at most; likelihoods changed by {:.4f} at most\n",
                   reduced.shift.all.keypoints, reduced.shift.all.median, reduced.shift.all.p99,
                   reduced.shift.all.largest, reduced.shift.likelihood_change);
}

}  // namespace

Command evaluate_command() {
  Command command;
  command.name = "evaluate";
  command.summary = "measure train and test error of trained snapshots";
  command.define = [](CLI::App& app) -> std::function<int()> {
    struct Options {
      std::string config, snapshot, device = "cpu", precision = "fp32";
      std::optional<int> shuffle;
      std::optional<double> training_fraction;
      bool plot = false;
    };
    auto options = std::make_shared<Options>();
    app.add_option("config", options->config, "the project's config.yaml")->required();
    app.add_option("--shuffle", options->shuffle,
                   "the shuffle (default: the model labpose sweep --promote chose, else 1)")
        ->check(CLI::PositiveNumber);
    app.add_option("--training-fraction", options->training_fraction,
                   "only this training fraction (default: every TrainingFraction of config.yaml)")
        ->check(CLI::Range(0.01, 1.0));
    app.add_option("--snapshot", options->snapshot,
                   "which snapshots: an index as snapshotindex (-1 = the last, the best one when "
                   "there is one), all, or best (default: snapshotindex in config.yaml)");
    app.add_option("--device", options->device, "cpu (default), auto, cuda or cuda:N");
    app.add_option("--precision", options->precision,
                   "also predict in this precision and report its errors and how far its "
                   "keypoints are from fp32's: bf16, int8 (a CPU with VNNI), fp16 (GPUs) or auto "
                   "(bf16 where the CPU has bf16 units); the files always hold fp32's (default "
                   "fp32: no comparison)");
    app.add_flag("--plot", options->plot,
                 "also draw the test and training frames: labels '+', predictions '.' (likelihood "
                 "above pcutoff) or 'x'");
    app.footer(
        "Errors are mean distances in pixels between labels and predictions on the full-size "
        "images (DeepLabCut calls them RMSE), also over predictions with likelihood >= pcutoff. "
        "Writes labpose-evaluation-results/iteration-<K>/CombinedEvaluation-results.csv and, per "
        "shuffle folder, <scorer>-results.csv, <scorer>-keypoint-results.csv and the predictions "
        "<scorer>-<snapshot>.h5 (with --plot, LabeledImages_<scorer>_<snapshot>/); for a "
        "multi-animal shuffle also <scorer>-assembly-results.csv (mAP and mAR), and into its "
        "test/pose_cfg.yaml the PAF graph chosen (paf_best) and, unless you set it, the "
        "candidates' nmsradius chosen among 3 to 6, which analyze then uses.");
    return [options]() {
      const projects::ProjectConfig config = load_project_config(options->config);
      pipeline::EvaluateOptions evaluate;
      std::tie(evaluate.shuffle, evaluate.training_fraction) =
          projects::default_model_shuffle(config, options->shuffle, options->training_fraction);
      if (!options->snapshot.empty()) evaluate.snapshots = parse_snapshot(options->snapshot);
      evaluate.device = options->device;
      evaluate.precision = devices::parse_plan_precision(options->precision);
      evaluate.plot = options->plot;
      const auto results = pipeline::evaluate_network(config, evaluate);

      const std::string cut = fmt::format("p>={}", config.values().pcutoff);
      std::vector<std::vector<std::string>> summary = {{"trainset", "shuffle", "snapshot",
                                                        "train px", "test px", "train px " + cut,
                                                        "test px " + cut, "train/test images"}};
      for (const auto& result : results) {
        summary.push_back(
            {std::to_string(projects::training_fraction_percent(result.training_fraction)),
             std::to_string(result.shuffle), result.snapshot, pixels(result.train.mean),
             pixels(result.test.mean), pixels(result.train.mean_pcutoff),
             pixels(result.test.mean_pcutoff),
             fmt::format("{}/{}", result.train_images, result.test_images)});
      }
      std::cout << text_table(summary);
      for (const auto& result : results) {
        std::cout << '\n'
                  << result.scorer << " (trainset"
                  << projects::training_fraction_percent(result.training_fraction)
                  << "), per bodypart:\n";
        std::vector<std::vector<std::string>> rows = {
            {"bodypart", "train px", "test px", "train px " + cut, "test px " + cut}};
        for (std::size_t j = 0; j < result.bodyparts.size(); ++j) {
          rows.push_back({result.bodyparts[j], pixels(result.train.per_bodypart[j]),
                          pixels(result.test.per_bodypart[j]),
                          pixels(result.train.per_bodypart_pcutoff[j]),
                          pixels(result.test.per_bodypart_pcutoff[j])});
        }
        std::cout << text_table(rows);
      }
      for (const auto& result : results) {
        if (!result.assembly) continue;
        const auto& train = result.assembly->train;
        const auto& test = result.assembly->test;
        std::cout << fmt::format(
            "\n{} (trainset{}), animals: train mAP {:.3f} mAR {:.3f}, test mAP {:.3f} mAR {:.3f} "
            "(COCO's OKS 0.50:0.95; {} labeled test animals left unmatched)\n",
            result.scorer, projects::training_fraction_percent(result.training_fraction),
            train.mean_average_precision, train.mean_average_recall, test.mean_average_precision,
            test.mean_average_recall, test.misses);
        const auto& assembly = *result.assembly;
        std::cout << fmt::format(
            "assembly through {} of the {} PAF edges (paf_best [{}]) from candidates of "
            "nmsradius {} ({} test/pose_cfg.yaml): test purity {:.3f}, miss {:.3f}, whole "
            "animals {:.3f} (train {:.3f}, {:.3f}, {:.3f})\n",
            assembly.paf_best.size(), assembly.graph_edges, fmt::join(assembly.paf_best, ", "),
            assembly.nms_radius, assembly.nms_radius_chosen ? "chosen, in" : "from",
            assembly.test_purity.purity, assembly.test_purity.miss,
            assembly.test_purity.whole_animals, assembly.train_purity.purity,
            assembly.train_purity.miss, assembly.train_purity.whole_animals);
      }
      for (const auto& result : results) {
        if (result.reduced) print_precision_comparison(result);
      }
      for (const auto& result : results) {
        for (const auto& path : result.written) console::info("wrote {}", path.string());
      }
      return 0;
    };
  };
  return command;
}

}  // namespace labpose::tools
