// Multi-animal crops: the centre animal and the targets of one augmented sample.
#include "pipeline/training/multi_animal_batch.hpp"

#include <cmath>

namespace labpose::pipeline {
namespace {

bool any_visible(const std::vector<double>& x, std::size_t first, std::size_t count) {
  for (std::size_t s = first; s < first + count && s < x.size(); ++s) {
    if (std::isfinite(x[s])) return true;
  }
  return false;
}

std::span<float> crop(std::vector<float>& values, std::size_t k, std::size_t per_crop) {
  return std::span<float>(values).subspan(k * per_crop, per_crop);
}

}  // namespace

AnimalSlots animal_slots(const PoseConfig& config) {
  AnimalSlots slots;
  slots.bodyparts = config.bodyparts.size();
  slots.multi_bodyparts = config.bodyparts.size() - config.unique_bodyparts.size();
  slots.animals = config.individuals.size();
  slots.single = !config.unique_bodyparts.empty();
  return slots;
}

CentreSlots centre_animal(const std::vector<double>& x, const AnimalSlots& slots,
                          nets::Random& random) {
  std::vector<std::size_t> visible;
  for (std::size_t i = 0; i < slots.animals; ++i) {
    if (any_visible(x, i * slots.bodyparts, slots.multi_bodyparts)) visible.push_back(i);
  }
  if (!visible.empty()) {
    const std::size_t animal = visible[random.next() % visible.size()];
    return {animal * slots.bodyparts, slots.multi_bodyparts};
  }
  if (slots.single) {
    const std::size_t first = slots.animals * slots.bodyparts + slots.multi_bodyparts;
    return {first, slots.bodyparts - slots.multi_bodyparts};
  }
  return {};
}

MultiTargetLayout multi_target_layout(const PoseConfig& config, int height, int width) {
  MultiTargetLayout layout;
  layout.multi_bodyparts =
      static_cast<int>(config.bodyparts.size() - config.unique_bodyparts.size());
  layout.unique_bodyparts = static_cast<int>(config.unique_bodyparts.size());
  layout.identity_channels = config.num_idchannel;
  for (const auto& [source, target] : config.paf_graph) layout.graph.push_back({source, target});
  layout.height = height;
  layout.width = width;
  return layout;
}

void size_multi_targets(const MultiTargetLayout& layout, std::size_t samples,
                        TrainingBatch& batch) {
  const std::size_t score = layout.score_values() + layout.identity_values();
  batch.score.resize(samples * score);
  batch.score_weights.resize(samples * score);
  batch.locref.resize(samples * layout.locref_values());
  batch.locref_weights.resize(samples * layout.locref_values());
  batch.pafs.resize(samples * layout.paf_values());
  batch.paf_weights.resize(samples * layout.paf_values());
}

void add_multi_targets(const AugmentedSample& sample, const PoseConfig& config,
                       const MultiTargetLayout& layout, std::size_t k, TrainingBatch& batch) {
  const AnimalSlots slots = animal_slots(config);
  const auto point = [&](std::size_t slot) { return CropPoint{sample.x[slot], sample.y[slot]}; };
  std::vector<std::vector<CropPoint>> animals(slots.animals);
  for (std::size_t i = 0; i < slots.animals; ++i) {
    for (std::size_t j = 0; j < slots.multi_bodyparts; ++j)
      animals[i].push_back(point(i * slots.bodyparts + j));
  }
  std::vector<CropPoint> unique;
  if (slots.single) {
    const std::size_t first = slots.animals * slots.bodyparts + slots.multi_bodyparts;
    if (any_visible(sample.x, first, slots.bodyparts - slots.multi_bodyparts)) {
      for (std::size_t s = first; s < (slots.animals + 1) * slots.bodyparts; ++s)
        unique.push_back(point(s));
    }
  }
  MultiTargetSettings settings;
  settings.stride = config.stride;
  settings.pos_dist_thresh = config.pos_dist_thresh;
  settings.scale = sample.scale;
  settings.locref_stdev = config.locref_stdev;
  settings.pafwidth = config.pafwidth;
  const std::size_t score = layout.score_values() + layout.identity_values();
  const std::span<float> scores = crop(batch.score, k, score);
  const std::span<float> score_weights = crop(batch.score_weights, k, score);
  MultiTargetMaps maps;
  maps.score = scores.first(layout.score_values());
  maps.score_weights = score_weights.first(layout.score_values());
  maps.identity = scores.subspan(layout.score_values());
  maps.identity_weights = score_weights.subspan(layout.score_values());
  maps.locref = crop(batch.locref, k, layout.locref_values());
  maps.locref_weights = crop(batch.locref_weights, k, layout.locref_values());
  maps.pafs = crop(batch.pafs, k, layout.paf_values());
  maps.paf_weights = crop(batch.paf_weights, k, layout.paf_values());
  build_multi_targets(animals, unique, layout, settings, maps);
}

}  // namespace labpose::pipeline
