// Optimizers over a network's flat trainable buffer: SGD with momentum and AdamW behind one small
// interface, each owning its state on the backend (zeros at the start) and calling the Backend's
// sgd_step / adam_step. An update covers a range of the buffer, so a caller can leave a prefix
// frozen or give a part its own learning rate. Not the learning-rate schedule and not the choice of
// ranges (the trainer's); not a general parameter-group system.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "nets/backend.hpp"
#include "nets/safetensors.hpp"
#include "nets/tensor.hpp"

namespace labpose::nets {

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  /// "sgd" or "adamw", as pose_cfg.yaml's optimizer names it.
  const std::string& name() const { return name_; }

  /// Updates values[begin, end) from gradients[begin, end) at `learning_rate`; `step` counts
  /// from 1 (AdamW's bias correction). An empty range does nothing.
  // values, gradients: (count) flat, the size the optimizer was made for
  void update(Tensor& values, const Tensor& gradients, std::int64_t begin, std::int64_t end,
              float learning_rate, std::int64_t step);

  /// The state copied to the host under the names snapshots store it by, each of shape (count).
  std::map<std::string, HostTensor> save() const;
  /// Loads state written by save(); throws Error naming `file` when a tensor of this optimizer
  /// is missing from `saved` or of another size.
  void restore(const std::map<std::string, HostTensor>& saved, const std::filesystem::path& file);

 protected:
  /// An optimizer called `name` for `count` trainable values on `backend` (which must outlive it).
  Optimizer(Backend& backend, std::string name, std::int64_t count)
      : backend_(backend), name_(std::move(name)), count_(count) {}
  /// A new state tensor of count zeros, which save() and restore() know as `state_name`.
  Tensor add_state(const std::string& state_name);
  /// Elements [begin, end) of a flat tensor, sharing its memory.
  static Tensor range(const Tensor& flat, std::int64_t begin, std::int64_t end);
  /// One backend step on views of [begin, end): values, gradients and the state's same range.
  virtual void step_range(Tensor& values, const Tensor& gradients, std::int64_t begin,
                          std::int64_t end, float learning_rate, std::int64_t step) = 0;

  Backend& backend_;

 private:
  std::string name_;
  std::int64_t count_;
  std::vector<std::pair<std::string, Tensor>> state_;  // by snapshot name, sharing the subclass's
};

/// PyTorch's SGD with momentum (dampening 0) and L2 weight decay added to the gradient; the state
/// is "velocity".
class SgdMomentum final : public Optimizer {
 public:
  SgdMomentum(Backend& backend, std::int64_t count, float momentum, float weight_decay);

 private:
  void step_range(Tensor& values, const Tensor& gradients, std::int64_t begin, std::int64_t end,
                  float learning_rate, std::int64_t step) override;

  SgdSettings settings_;  // learning_rate is set on each update
  Tensor velocity_;       // (count)
};

/// PyTorch's AdamW (decoupled weight decay, betas 0.9 and 0.999, epsilon 1e-8); the state is
/// "first_moment" and "second_moment".
class AdamW final : public Optimizer {
 public:
  AdamW(Backend& backend, std::int64_t count, float weight_decay);

 private:
  void step_range(Tensor& values, const Tensor& gradients, std::int64_t begin, std::int64_t end,
                  float learning_rate, std::int64_t step) override;

  AdamSettings settings_;  // learning_rate is set on each update
  Tensor first_moment_;    // (count)
  Tensor second_moment_;   // (count)
};

}  // namespace labpose::nets
