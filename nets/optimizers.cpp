// The optimizers' shared bookkeeping (ranges, host copies of the state) and their backend steps.
#include "nets/optimizers.hpp"

#include <fmt/core.h>

#include "core/error.hpp"

namespace labpose::nets {

void Optimizer::update(Tensor& values, const Tensor& gradients, std::int64_t begin,
                       std::int64_t end, float learning_rate, std::int64_t step) {
  if (begin >= end) return;
  LABPOSE_ASSERT(begin >= 0 && end <= count_);
  Tensor values_range = range(values, begin, end);
  step_range(values_range, range(gradients, begin, end), begin, end, learning_rate, step);
}

std::map<std::string, HostTensor> Optimizer::save() const {
  std::map<std::string, HostTensor> saved;
  for (const auto& [name, tensor] : state_) {
    HostTensor host;
    host.shape = {tensor.elements()};
    host.values.resize(static_cast<std::size_t>(tensor.elements()));
    backend_.copy_to_host(tensor, host.values.data());
    saved[name] = std::move(host);
  }
  return saved;
}

void Optimizer::restore(const std::map<std::string, HostTensor>& saved,
                        const std::filesystem::path& file) {
  for (auto& [name, tensor] : state_) {
    const auto found = saved.find(name);
    if (found == saved.end() ||
        static_cast<std::int64_t>(found->second.values.size()) != tensor.elements()) {
      throw Error(
          fmt::format("{} has no {} state for this network ({} missing or of the wrong size)",
                      file.string(), name_, name),
          "resume with the optimizer it was trained with (pose_cfg.yaml: optimizer), or "
          "train from scratch in a new shuffle");
    }
    backend_.copy_from_host(found->second.values.data(), tensor);
  }
}

Tensor Optimizer::add_state(const std::string& state_name) {
  Tensor tensor = backend_.allocate_flat(count_);
  backend_.fill(tensor, 0.0F);
  state_.emplace_back(state_name, tensor);
  return tensor;
}

Tensor Optimizer::range(const Tensor& flat, std::int64_t begin, std::int64_t end) {
  return Tensor(flat.storage(), flat.offset() + static_cast<std::size_t>(begin), Shape{end - begin},
                Layout::flat);
}

SgdMomentum::SgdMomentum(Backend& backend, std::int64_t count, float momentum, float weight_decay)
    : Optimizer(backend, "sgd", count), velocity_(add_state("velocity")) {
  settings_.momentum = momentum;
  settings_.weight_decay = weight_decay;
}

void SgdMomentum::step_range(Tensor& values, const Tensor& gradients, std::int64_t begin,
                             std::int64_t end, float learning_rate, std::int64_t /*step*/) {
  Tensor velocity = range(velocity_, begin, end);
  settings_.learning_rate = learning_rate;
  backend_.sgd_step(values, gradients, velocity, settings_);
}

AdamW::AdamW(Backend& backend, std::int64_t count, float weight_decay)
    : Optimizer(backend, "adamw", count),
      first_moment_(add_state("first_moment")),
      second_moment_(add_state("second_moment")) {
  settings_.weight_decay = weight_decay;
  settings_.decoupled = true;
}

void AdamW::step_range(Tensor& values, const Tensor& gradients, std::int64_t begin,
                       std::int64_t end, float learning_rate, std::int64_t step) {
  Tensor first = range(first_moment_, begin, end);
  Tensor second = range(second_moment_, begin, end);
  settings_.learning_rate = learning_rate;
  backend_.adam_step(values, gradients, first, second, settings_, step);
}

}  // namespace labpose::nets
