// Work that repeats every step on the same tensors (a training step's forward, its backward),
// recorded by the backend once and replayed from then on (Backend::record: a GPU's CUDA graph, one
// launch instead of one per op). The first step with a key runs op by op, so that what a backend
// chooses lazily (cuDNN's algorithms, constants it uploads) is chosen outside a recording; the
// second records and replays; a new key (the net planned its tensors afresh, other layers frozen)
// starts over. Where the backend records nothing (the CPU) every step runs op by op; where
// recording fails, it says why once and runs op by op from then on.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "nets/backend.hpp"

namespace labpose::nets {

class RepeatedWork {
 public:
  using Recorder =
      std::function<std::unique_ptr<RecordedWork>(const std::function<void()>&, std::string&)>;

  /// `what` names the work in the message of a failed recording ("the training step's forward").
  RepeatedWork(Backend& backend, std::string what);
  /// With another recorder than a backend's (tests).
  RepeatedWork(Recorder recorder, std::string what, bool records);

  /// This step's `work`, under `key` (the same key: the same ops on the same tensors).
  void run(std::int64_t key, const std::function<void()>& work);

  /// Steps replayed so far.
  std::int64_t replays() const { return replays_; }

 private:
  Recorder recorder_;
  std::string what_;
  bool enabled_ = true;
  std::optional<std::int64_t> key_;
  bool ran_once_ = false;  // with key_
  std::unique_ptr<RecordedWork> recorded_;
  std::int64_t replays_ = 0;
};

}  // namespace labpose::nets
