// The batch loader's threads, sampling and buffer recycling.
#include "pipeline/training/loader.hpp"

#include <opencv2/core.hpp>

#include <numeric>

#include "core/error.hpp"
#include "nets/random.hpp"
#include "pipeline/pose/predict.hpp"
#include "pipeline/training/multi_animal_batch.hpp"
#include "pipeline/training/targets.hpp"

namespace labpose::pipeline {
namespace {

constexpr std::int64_t kAhead = 3;  // batches made ahead of the training loop
constexpr std::size_t kCacheBytes = std::size_t{2} << 30;

std::uint64_t mix(std::uint64_t a, std::uint64_t b) {
  nets::Random random(a * 0x9E3779B97F4A7C15ULL + b);
  return random.next();
}

}  // namespace

BatchLoader::BatchLoader(const Dataset& dataset, std::vector<std::size_t> train,
                         const std::filesystem::path& project, const PoseConfig& config,
                         const BatchGeometry& geometry, std::int64_t first_step, int threads)
    : dataset_(dataset),
      train_(std::move(train)),
      project_(project),
      config_(config),
      geometry_(geometry),
      partners_(flip_partners(config)),
      multi_layout_(config.multi_animal()
                        ? std::optional(multi_target_layout(config, geometry.output_height,
                                                            geometry.output_width))
                        : std::nullopt),
      next_to_make_(first_step),
      next_to_hand_out_(first_step) {
  if (train_.empty()) {
    throw Error("there are no training images in this split",
                "use a larger TrainingFraction or label more frames");
  }
  std::size_t bytes = 0;
  for (std::size_t index : train_) {
    bytes += static_cast<std::size_t>(dataset_.images[index].width) *
             static_cast<std::size_t>(dataset_.images[index].height) * 3;
  }
  cache_.resize(dataset_.images.size());
  if (bytes <= kCacheBytes) {
    for (std::size_t index : train_)
      cache_[index] =
          std::make_shared<cv::Mat>(load_rgb_image(project_ / dataset_.images[index].path));
  }
  for (int t = 0; t < std::max(threads, 1); ++t) workers_.emplace_back([this] { work(); });
}

BatchLoader::~BatchLoader() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  for (auto& worker : workers_) worker.join();
}

cv::Mat BatchLoader::image(std::size_t index) const {
  if (cache_[index]) return *cache_[index];
  return load_rgb_image(project_ / dataset_.images[index].path);
}

std::size_t BatchLoader::sample_of(std::int64_t step, int k) {
  const auto count = static_cast<std::int64_t>(train_.size());
  const std::int64_t whole = geometry_.global_batch > 0 ? geometry_.global_batch : geometry_.batch;
  const std::int64_t item = step * whole + k;
  const std::int64_t epoch = item / count, position = item % count;
  std::vector<std::size_t>* order = nullptr;
  {
    auto found = permutations_.find(epoch);
    if (found == permutations_.end()) {
      std::vector<std::size_t> permutation(train_.size());
      std::iota(permutation.begin(), permutation.end(), 0);
      nets::Random random(mix(config_.seed, static_cast<std::uint64_t>(epoch)));
      for (std::size_t i = permutation.size(); i > 1; --i)
        std::swap(permutation[i - 1], permutation[random.next() % i]);
      found = permutations_.emplace(epoch, std::move(permutation)).first;
      while (permutations_.size() > 4) permutations_.erase(permutations_.begin());  // old epochs
    }
    order = &found->second;
  }
  return train_[(*order)[static_cast<std::size_t>(position)]];
}

void BatchLoader::make(std::int64_t step, TrainingBatch& batch) {
  const BatchGeometry& g = geometry_;
  const std::size_t pixels = static_cast<std::size_t>(g.height) * static_cast<std::size_t>(g.width);
  const auto n = static_cast<std::size_t>(g.batch);
  batch.step = step;
  batch.size = g.batch;
  batch.images.resize(n * 3 * pixels);
  size_targets(batch);
  std::vector<std::size_t> samples;
  {
    std::lock_guard lock(mutex_);  // permutations_ is shared
    for (int k = 0; k < g.batch; ++k) samples.push_back(sample_of(step, g.first_sample + k));
  }
  for (std::size_t k = 0; k < n; ++k) {
    const LabeledImage& labeled = dataset_.images[samples[k]];
    const auto sample_number = static_cast<std::uint64_t>(g.first_sample) + k;
    nets::Random random(
        mix(mix(config_.seed, static_cast<std::uint64_t>(step)), sample_number + 1));
    const CentreSlots centre =
        multi_layout_ ? centre_animal(labeled.x, animal_slots(config_), random) : CentreSlots{};
    const AugmentedSample sample =
        augment(image(samples[k]), labeled.x, labeled.y, config_, partners_, random, centre);
    float* planes = batch.images.data() + k * 3 * pixels;
    for (std::size_t i = 0; i < pixels; ++i) {
      for (std::size_t c = 0; c < 3; ++c) planes[c * pixels + i] = sample.pixels[3 * i + c];
    }
    add_targets(sample, k, batch);
  }
}

void BatchLoader::size_targets(TrainingBatch& batch) const {
  const auto n = static_cast<std::size_t>(geometry_.batch);
  if (multi_layout_) {
    size_multi_targets(*multi_layout_, n, batch);
    return;
  }
  const std::size_t values = static_cast<std::size_t>(geometry_.joints) *
                             static_cast<std::size_t>(geometry_.output_height) *
                             static_cast<std::size_t>(geometry_.output_width);
  batch.score.resize(n * values);
  batch.locref.resize(n * 2 * values);
  batch.locref_weights.resize(n * 2 * values);
}

// Crop k's targets: DeepLabCut's single-animal recipe (targets.hpp) or its multi-animal one.
void BatchLoader::add_targets(const AugmentedSample& sample, std::size_t k,
                              TrainingBatch& batch) const {
  if (multi_layout_) {
    add_multi_targets(sample, config_, *multi_layout_, k, batch);
    return;
  }
  const BatchGeometry& g = geometry_;
  const std::size_t values = static_cast<std::size_t>(g.joints) *
                             static_cast<std::size_t>(g.output_height) *
                             static_cast<std::size_t>(g.output_width);
  TargetSettings settings;
  settings.stride = config_.stride;
  settings.radius = config_.pos_dist_thresh * sample.scale;
  settings.locref_stdev = config_.locref_stdev;
  build_targets(sample.x.data(), sample.y.data(), g.joints, g.output_height, g.output_width,
                settings, batch.score.data() + k * values, batch.locref.data() + k * 2 * values,
                batch.locref_weights.data() + k * 2 * values);
}

void BatchLoader::work() {
  for (;;) {
    std::int64_t step = 0;
    std::unique_ptr<TrainingBatch> batch;
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] { return stopping_ || next_to_make_ < next_to_hand_out_ + kAhead; });
      if (stopping_) return;
      step = next_to_make_++;
      if (!spare_.empty()) {
        batch = std::move(spare_.back());
        spare_.pop_back();
      }
    }
    if (!batch) batch = std::make_unique<TrainingBatch>();
    try {
      make(step, *batch);
    } catch (...) {
      std::lock_guard lock(mutex_);
      if (!failure_) failure_ = std::current_exception();
      stopping_ = true;
      changed_.notify_all();
      return;
    }
    {
      std::lock_guard lock(mutex_);
      ready_[step] = std::move(batch);
    }
    changed_.notify_all();
  }
}

std::unique_ptr<TrainingBatch> BatchLoader::next() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return failure_ || ready_.count(next_to_hand_out_) != 0; });
  if (failure_) std::rethrow_exception(failure_);
  auto batch = std::move(ready_.at(next_to_hand_out_));
  ready_.erase(next_to_hand_out_);
  ++next_to_hand_out_;
  lock.unlock();
  changed_.notify_all();
  return batch;
}

void BatchLoader::recycle(std::unique_ptr<TrainingBatch> batch) {
  std::lock_guard lock(mutex_);
  spare_.push_back(std::move(batch));
}

}  // namespace labpose::pipeline
