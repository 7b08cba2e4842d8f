// What a rank of a data-parallel training job does beyond a process alone: its slice of each
// batch, the same starting weights as rank 0, the agreement after every step (the mean loss, one
// clock and any rank's interrupt), batch norm over the ranks and the check that the replicas have
// not drifted apart. Not the gradients' exchange (gradient_exchange.hpp) and not the training loop
// (trainer.cpp).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>

#include "core/error.hpp"

#include "nets/communicator.hpp"
#include "nets/net.hpp"

namespace labpose::pipeline {

/// A rank's share of the step's whole batch: `batch` samples from sample `first` on.
struct BatchSlice {
  int batch = 0;
  int first = 0;
};

/// The slice of `global_batch` (pose_cfg's batch_size, read from `pose_file`) for this rank; a
/// UsageError when the ranks cannot share it evenly.
BatchSlice batch_slice(int global_batch, const nets::Communicator& world,
                       const std::filesystem::path& pose_file);

/// What the ranks other than 0 throw when a step run on every rank failed: rank 0 reports the
/// error, and they exit with its status without printing it again.
class ReportedByRankZero : public Error {
 public:
  explicit ReportedByRankZero(ErrorKind kind) : Error("reported by rank 0", {}, kind) {}
};

/// Runs `step` (reading files, no collectives) on every rank of `world`, then agrees whether it
/// threw a labpose::Error anywhere. If so, rank 0 throws the error of the lowest failing rank (the
/// message prefixed with "rank N: " when that is not rank 0) and the other ranks throw
/// ReportedByRankZero, so a bad setting that every rank reads is said once. A process alone runs
/// `step` as it is.
void on_every_rank(nets::Communicator& world, const std::function<void()>& step);

/// sync_batch_norm: every batch norm of `net` takes its batch statistics over the ranks of
/// `world` (frozen ones keep their running statistics).
void synchronize_batch_norms(nets::Net& net, nets::Communicator& world);

/// Rank 0's parameters (trainable and batch-norm statistics) copied to every rank.
void broadcast_parameters(nets::Communicator& world, nets::Net& net);

/// What every rank decides alike after a step.
struct StepAgreement {
  double loss = 0.0;         // the mean of the ranks' losses: the whole batch's loss
  double seconds = 0.0;      // the training clock: the slowest rank's
  bool interrupted = false;  // Ctrl-C or SIGTERM reached a rank
};
StepAgreement agree_after_step(nets::Communicator& world, double loss, double seconds,
                               bool interrupted);

/// Throws a labpose::Error naming `iteration` when the ranks' trainable parameters differ: their
/// sum and sum of magnitudes, compared over the ranks within float round-off.
void check_replicas_agree(nets::Communicator& world, nets::Net& net, std::int64_t iteration);

}  // namespace labpose::pipeline
