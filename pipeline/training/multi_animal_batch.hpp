// The multi-animal part of a training batch: which animal a crop is centred on, and one augmented
// sample's keypoint slots (dataset.hpp: every individual's bodyparts, "single" last) turned into
// the targets of multi_targets.hpp inside the batch's arrays. Not the augmentation itself
// (augment.hpp) and not the batch loader's threads (loader.hpp).
#pragma once

#include <cstddef>

#include "nets/random.hpp"
#include "pipeline/training/augment.hpp"
#include "pipeline/training/loader.hpp"
#include "pipeline/training/multi_targets.hpp"
#include "pipeline/training/pose_config.hpp"

namespace labpose::pipeline {

/// How a multi-animal image's keypoint slots are laid out.
struct AnimalSlots {
  std::size_t bodyparts = 0;        // per individual: multi-animal bodyparts, then unique ones
  std::size_t multi_bodyparts = 0;  // the first of them
  std::size_t animals = 0;          // individuals with multi-animal bodyparts
  bool single = false;              // a last individual holds the unique bodyparts
};

AnimalSlots animal_slots(const PoseConfig& config);

/// The crop's centre: one animal with a visible keypoint, drawn from `random`; the unique
/// bodyparts when no animal is visible (everything when nothing is).
CentreSlots centre_animal(const std::vector<double>& x, const AnimalSlots& slots,
                          nets::Random& random);

/// The targets' layout of `config` on an output grid of height x width cells.
MultiTargetLayout multi_target_layout(const PoseConfig& config, int height, int width);

/// Sizes `batch`'s target arrays for `samples` crops of `layout`.
void size_multi_targets(const MultiTargetLayout& layout, std::size_t samples, TrainingBatch& batch);

/// Writes the targets of `sample` (its keypoints in slots) as crop `k` of `batch` (sized by
/// size_multi_targets()).
void add_multi_targets(const AugmentedSample& sample, const PoseConfig& config,
                       const MultiTargetLayout& layout, std::size_t k, TrainingBatch& batch);

}  // namespace labpose::pipeline
