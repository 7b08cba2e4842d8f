// Training batches made on worker threads: samples drawn epoch by epoch from a seeded permutation,
// augmented (augment.hpp) and turned into targets (targets.hpp, or multi_animal_batch.hpp for a
// multi-animal model). A batch depends only on the seed
// and its step number — never on thread timing — so `train --resume` continues exactly. Batches
// are produced a few steps ahead and their buffers recycled (no allocation in the steady state).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "pipeline/dataset/dataset.hpp"
#include "pipeline/training/multi_targets.hpp"
#include "pipeline/training/pose_config.hpp"

namespace cv {
class Mat;
}

namespace labpose::pipeline {

struct AugmentedSample;

/// One step's inputs and targets. A multi-animal batch's score maps have J + I channels (the
/// identity channels last) and it has score weights and part-affinity fields; a single-animal
/// batch leaves those three empty.
struct TrainingBatch {
  std::int64_t step = 0;
  int size = 0;                       // N
  std::vector<float> images;          // (N, 3, H, W) RGB 0-255, planar
  std::vector<float> score;           // (N, J, h, w) targets; (N, J + I, h, w) multi-animal
  std::vector<float> score_weights;   // multi-animal: as score
  std::vector<float> locref;          // (N, 2J, h, w) targets
  std::vector<float> locref_weights;  // (N, 2J, h, w)
  std::vector<float> pafs;            // multi-animal: (N, 2E, h, w) targets
  std::vector<float> paf_weights;     // multi-animal: (N, 2E, h, w)
};

struct BatchGeometry {
  int batch = 8, height = 320, width = 320;  // input crops
  // A rank of a data-parallel job makes `batch` samples of the step's whole batch of
  // `global_batch` (0: `batch`, a process alone), from sample `first_sample` on: exactly those
  // that one process with batch `global_batch` would make there.
  int global_batch = 0, first_sample = 0;
  int output_height = 40, output_width = 40;  // the network's output grid for that crop
  int joints = 1;
};

class BatchLoader {
 public:
  /// Starts `threads` workers producing batches from `first_step` on. Decodes the training images
  /// once (kept in memory when they fit in 2 GiB, else read on demand).
  BatchLoader(const Dataset& dataset, std::vector<std::size_t> train,
              const std::filesystem::path& project, const PoseConfig& config,
              const BatchGeometry& geometry, std::int64_t first_step, int threads);
  ~BatchLoader();
  BatchLoader(const BatchLoader&) = delete;
  BatchLoader& operator=(const BatchLoader&) = delete;

  /// The batch of the next step (blocks until a worker has made it). Hand it back with recycle().
  std::unique_ptr<TrainingBatch> next();
  void recycle(std::unique_ptr<TrainingBatch> batch);

  /// The dataset index of sample k (of the whole batch) of `step` (exposed for tests).
  std::size_t sample_of(std::int64_t step, int k);

 private:
  void work();
  void make(std::int64_t step, TrainingBatch& batch);
  void size_targets(TrainingBatch& batch) const;
  void add_targets(const AugmentedSample& sample, std::size_t k, TrainingBatch& batch) const;
  cv::Mat image(std::size_t index) const;

  const Dataset& dataset_;
  std::vector<std::size_t> train_;
  std::filesystem::path project_;
  PoseConfig config_;
  BatchGeometry geometry_;
  std::vector<int> partners_;
  std::optional<MultiTargetLayout> multi_layout_;  // a multi-animal model's targets
  std::vector<std::shared_ptr<cv::Mat>>
      cache_;  // decoded images by dataset index (empty when not cached)

  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::int64_t, std::unique_ptr<TrainingBatch>> ready_;
  std::vector<std::unique_ptr<TrainingBatch>> spare_;
  std::map<std::int64_t, std::vector<std::size_t>> permutations_;  // by epoch
  std::int64_t next_to_make_, next_to_hand_out_;
  bool stopping_ = false;
  std::exception_ptr failure_;
  std::vector<std::thread> workers_;
};

}  // namespace labpose::pipeline
