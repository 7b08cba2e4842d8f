// labpose create-dataset <config> [--num-shuffles N | --shuffle K] [--net NAME]
//   [--weights W.safetensors|none] [--seed S] [--train-indices F --test-indices F] [--force]
//   [--paf-graph full|skeleton|0-1,1-2,...]
#include <fmt/core.h>
#include <fmt/ranges.h>

#include <iostream>

#include "core/console.hpp"
#include "core/error.hpp"
#include "nets/models/models.hpp"
#include "pipeline/dataset/create_dataset.hpp"
#include "pipeline/dataset/dataset.hpp"
#include "pipeline/weights/weight_cache.hpp"
#include "pipeline/weights/weight_sources.hpp"
#include "projects/layout.hpp"
#include "tools/labpose/command.hpp"
#include "tools/labpose/config_loading.hpp"

namespace labpose::tools {
namespace {

// One warning per problem, at most `most` unless --verbose.
void report_lines(const std::vector<std::string>& lines, const char* what) {
  const std::size_t most = console::verbosity() == console::Verbosity::verbose ? lines.size() : 20;
  for (std::size_t i = 0; i < lines.size() && i < most; ++i) console::warn("{}", lines[i]);
  if (lines.size() > most) {
    console::warn("... and {} more {} (--verbose lists them all)", lines.size() - most, what);
  }
}

}  // namespace

Command create_dataset_command() {
  Command command;
  command.name = "create-dataset";
  command.summary = "merge the labels and split them into training and test sets";
  command.define = [](CLI::App& app) -> std::function<int()> {
    struct Options {
      std::string config, net, weights, train_indices, test_indices, paf_graph;
      std::optional<int> shuffle;
      int num_shuffles = 1;
      std::optional<std::uint64_t> seed;
      bool force = false;
    };
    auto options = std::make_shared<Options>();
    app.add_option("config", options->config, "the project's config.yaml")->required();
    auto* num = app.add_option("--num-shuffles", options->num_shuffles,
                               "make N new shuffles, numbered after the largest existing one "
                               "(default 1)")
                    ->check(CLI::PositiveNumber);
    app.add_option("--shuffle", options->shuffle,
                   "make (or remake) shuffle K; a split saved for it is reused")
        ->check(CLI::PositiveNumber)
        ->excludes(num);
    app.add_option("--net", options->net,
                   fmt::format("the network: {} (default: default_net_type in config.yaml)",
                               fmt::join(nets::pose_architectures(), ", ")));
    app.add_option("--weights", options->weights,
                   "the backbone's pretrained weights (.safetensors, e.g. from labpose weights "
                   "import), or `none` to train from scratch (default: the network's ImageNet "
                   "weights in the cache of labpose weights, fetched once when they are not "
                   "there); checked now");
    app.add_option("--seed", options->seed,
                   "seed of new splits (default 0; mixed with the shuffle number)");
    auto* train = app.add_option("--train-indices", options->train_indices,
                                 "text file: one row index of the merged training set per line "
                                 "(DeepLabCut's trainIndices)");
    auto* test = app.add_option("--test-indices", options->test_indices,
                                "text file: the test rows, one per line");
    train->needs(test);
    test->needs(train);
    train->excludes(num);
    app.add_option("--paf-graph", options->paf_graph,
                   "multi-animal: the part-affinity graph to train: full (every pair of "
                   "multianimalbodyparts, the default; pruned at random to degree 6 from 105 "
                   "edges), skeleton (config.yaml's), or index pairs like 0-1,0-2,1-2; "
                   "evaluate then picks the edges assembly uses");
    app.add_flag("--force", options->force,
                 "overwrite a train/pose_cfg.yaml you edited, and replace a saved split with "
                 "--train-indices/--test-indices");
    app.footer(
        "Writes training-datasets/iteration-<K>/UnaugmentedDataSet_<Task><date>/ (the merged "
        "CollectedData .h5/.csv, Documentation_data-*.pickle, metadata.yaml and "
        "labpose-split-<P>shuffle<S>.json) and labpose-models/iteration-<K>/<Task><date>-"
        "trainset<P>shuffle<S>/{train,test}/pose_cfg.yaml for every TrainingFraction. A shuffle's "
        "split is saved by image path and reused when the shuffle is made again; frames without "
        "labels, missing images and points outside their image are reported and left out. Prints "
        "the paths written.");
    return [options]() {
      const projects::ProjectConfig config = load_project_config(options->config);
      pipeline::MergeReport report;
      const pipeline::Dataset dataset = pipeline::merge_labeled_data(config, &report);
      report_lines(report.notes, "notes on label files");
      report_lines(report.skipped, "skipped frames");
      report_lines(report.dropped, "dropped points");
      console::info("merged {} labeled image{} ({} frame{} skipped, {} point{} left out)",
                    dataset.images.size(), dataset.images.size() == 1 ? "" : "s",
                    report.skipped.size(), report.skipped.size() == 1 ? "" : "s",
                    report.dropped.size(), report.dropped.size() == 1 ? "" : "s");

      pipeline::CreateDatasetOptions create;
      create.shuffle = options->shuffle;
      create.new_shuffles = options->num_shuffles;
      create.net_type = options->net;
      if (options->weights == "none") {
        create.from_scratch = true;
      } else if (!options->weights.empty()) {
        create.init_weights = options->weights;
      } else {
        // Without a cache folder there is nowhere to find or fetch weights: create_training_dataset
        // would train from scratch, which only --weights none may ask for.
        create.weights_cache = pipeline::weights_cache_dir();
        create.fetch_missing = [cache = *create.weights_cache](const std::string& net_type) {
          pipeline::FetchOptions fetch;
          fetch.architecture = net_type;
          fetch.cache = cache;
          pipeline::fetch_weights(fetch);
        };
      }
      create.seed = options->seed;
      if (!options->train_indices.empty()) {
        create.train_indices = options->train_indices;
        create.test_indices = options->test_indices;
      }
      create.force = options->force;
      create.paf_graph = pipeline::parse_paf_graph_choice(options->paf_graph);
      const pipeline::CreatedDataset created =
          pipeline::create_training_dataset(config, dataset, create);
      for (const auto& path : created.written) std::cout << path.string() << '\n';
      std::vector<int> shuffles;
      for (const auto& shuffle : created.shuffles) {
        console::info(
            "{}: {} training, {} test image{}{}{}", shuffle.model_dir.filename().string(),
            shuffle.train_images, shuffle.test_images, shuffle.test_images == 1 ? "" : "s",
            shuffle.split_reused     ? " (the saved split)"
            : shuffle.split_replaced ? " (your split, replacing the saved one)"
                                     : " (a new split)",
            shuffle.unused_images == 0
                ? std::string()
                : fmt::format("; {} labeled image{} in neither set: make a new "
                              "shuffle to use {}",
                              shuffle.unused_images, shuffle.unused_images == 1 ? " is" : "s are",
                              shuffle.unused_images == 1 ? "it" : "them"));
        if (shuffle.pose_config_kept) {
          console::warn(
              "{} differs from what create-dataset writes (edited?): kept as it is; --force "
              "overwrites it",
              projects::pose_cfg_in(projects::model_train_dir(shuffle.model_dir)).string());
        }
        if (std::find(shuffles.begin(), shuffles.end(), shuffle.shuffle) == shuffles.end())
          shuffles.push_back(shuffle.shuffle);
      }
      console::info("network {}; next: labpose train {} --shuffle {}", created.net_type,
                    options->config, shuffles.front());
      return 0;
    };
  };
  return command;
}

}  // namespace labpose::tools
