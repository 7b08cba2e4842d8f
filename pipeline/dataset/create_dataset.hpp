// DeepLabCut's create_training_dataset for labpose (reference/dlc-format.md §4.2, §6.6): the split
// of every (TrainingFraction, shuffle) - saved by image path and reused, never drawn again - and
// the files of training-datasets/iteration-K/UnaugmentedDataSet_<Task><date>/ (merged
// CollectedData, Documentation pickles, metadata.yaml) plus each shuffle's
// labpose-models/.../{train,test}/pose_cfg.yaml; in a multi-animal project also DeepLabCut's
// training set <Task>_<scorer><P>shuffle<S>.pickle and test/inference_cfg.yaml, with the complete
// PAF graph. Not DeepLabCut's .mat (TensorFlow only) and not the merging itself (dataset.hpp).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "pipeline/dataset/dataset.hpp"
#include "pipeline/dataset/paf_graph_choice.hpp"
#include "projects/config.hpp"

namespace labpose::pipeline {

struct CreateDatasetOptions {
  std::optional<int> shuffle;  // make (or remake) this shuffle number
  int new_shuffles = 1;        // without `shuffle`: this many new shuffles after the largest one
  std::string net_type;        // a nets::pose_architectures() name; empty: default_net_type
  std::filesystem::path init_weights;  // pretrained backbone (safetensors); empty: the cache's
  bool from_scratch = false;  // no pretrained backbone, not even the cache's (--weights none)
  // Where ImageNet weights are looked up when init_weights is empty (weights_cache_dir() for the
  // CLI); unset: nowhere, the network trains from scratch (a caller's explicit choice). When the
  // cache has none, fetch_missing is called once to store them (the CLI: fetch_weights); without
  // it, or when it fails, create_training_dataset stops with the choices before writing anything.
  std::optional<std::filesystem::path> weights_cache;
  std::function<void(const std::string& net_type)> fetch_missing;
  std::optional<std::uint64_t> seed;  // split seed (with the shuffle number); default 0
  std::optional<std::filesystem::path> train_indices, test_indices;  // a split of the user's
  bool force = false;        // overwrite an edited train/pose_cfg.yaml, replace a saved split
  PafGraphChoice paf_graph;  // multi-animal: the PAF graph trained (default every pair)
};

struct CreatedShuffle {
  double training_fraction = 0.0;
  int shuffle = 1;
  std::size_t train_images = 0, test_images = 0;
  std::size_t unused_images = 0;  // labeled images in neither set (labeled after the split)
  bool split_reused = false;      // the saved split was used as it was
  bool split_replaced = false;    // a saved split was replaced by the user's (--force)
  bool pose_config_kept = false;  // train/pose_cfg.yaml differed and was left as it was
  std::filesystem::path model_dir;
};

struct CreatedDataset {
  std::filesystem::path training_set_dir;
  std::string net_type;
  std::string init_weights;  // the pretrained backbone every shuffle starts from; empty: none
  std::vector<CreatedShuffle> shuffles;
  std::vector<std::filesystem::path> written;  // every file written, in order
};

/// Builds the training set of `config`'s iteration from `dataset` (merge_labeled_data) as the
/// options say. Everything is checked before the first file is written (network name, weights,
/// index files, saved splits, metadata.yaml); each file is written atomically. Throws Error when
/// nothing is left to train on or a saved split no longer fits the labels, UsageError for bad
/// options.
CreatedDataset create_training_dataset(const projects::ProjectConfig& config,
                                       const Dataset& dataset, const CreateDatasetOptions& options);

/// Bodyparts that swap under a horizontal flip: a name starting with "left" (any case) and one
/// starting with "right" in the same case pattern ("Left"/"Right", "LEFT"/"RIGHT") whose rest is
/// identical: leftear/rightear, left_paw/right_paw, LeftEar/RightEar. In the left one's order.
std::vector<std::pair<std::string, std::string>> symmetric_pairs(
    const std::vector<std::string>& bodyparts);

/// The largest shuffle number of the config's iteration, of labpose or DeepLabCut (training-set
/// files and model folders); 0 when there is none.
int largest_shuffle_number(const projects::ProjectConfig& config);

/// The seed of a new split: `seed` (default 0) mixed with the shuffle number, so that every shuffle
/// differs and the same command draws the same split again.
std::uint64_t split_seed(std::optional<std::uint64_t> seed, int shuffle);

/// Reads an index file (one whole number per line, as DeepLabCut's trainIndices: rows of the merged
/// training set, 0-based; blank lines and `#` comments skipped). Errors name file:line.
std::vector<std::size_t> read_index_file(const std::filesystem::path& file,
                                         std::size_t image_count);

}  // namespace labpose::pipeline
