// The ranks of a data-parallel job and the collective operations its training needs: the
// interface, and the communicator of a process that runs alone. Implementations over MPI (host
// memory, devices/mpi/) and NCCL (device memory, bootstrapped over MPI) are chosen by
// devices/world.hpp from the launcher that started the job. Not a message-passing library: no
// point-to-point messages, no sub-communicators, no process start-up.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "nets/tensor.hpp"

namespace labpose::nets {

enum class ReduceOp { sum, min, max };

/// A reduction running in the background (one bucket of gradients).
class PendingReduction {
 public:
  virtual ~PendingReduction() = default;
  /// Returns once the buffer holds the result; throws a labpose::Error when the reduction failed
  /// or a rank stopped answering (the message names the rank where it can).
  virtual void wait() = 0;
  /// How long the reduction itself ran (on the communicator's thread), once wait() has returned.
  virtual double seconds() const = 0;
};

class Communicator {
 public:
  virtual ~Communicator() = default;
  Communicator() = default;
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// This rank's index among the ranks of its machine (which GPU it takes).
  virtual int local_rank() const = 0;
  /// The ranks on this rank's machine.
  virtual int local_size() const = 0;
  /// "Open MPI v4.1.4, 2 ranks on 1 machine": for logs and the progress line.
  virtual std::string description() const = 0;
  /// Where start_mean() buffers live: host memory (MPI) or the GPU's (NCCL).
  virtual Memory memory() const = 0;

  /// Replaces `count` floats at `data` by their mean over the ranks, in the background. Reductions
  /// complete in the order they were started; `data` must stay untouched until wait() returns.
  virtual std::unique_ptr<PendingReduction> start_mean(float* data, std::size_t count) = 0;
  /// Element-wise `op` of host `values` over the ranks, in place, in the order of the ranks'
  /// calls (stop requests, checksums, losses, batch statistics).
  virtual void all_reduce(std::span<double> values, ReduceOp op) = 0;
  /// Rank `root`'s host `bytes` to every rank (the same size on every rank).
  virtual void broadcast(std::span<std::byte> bytes, int root) = 0;
};

/// The smallest and the largest of each value over the ranks.
struct RangeOverRanks {
  std::vector<double> low, high;
};
/// `values`' range over the ranks of `world` in one collective (the maximum of the values and of
/// their negatives).
RangeOverRanks range_over_ranks(Communicator& world, std::span<const double> values);

/// The communicator of a process that is its job's only rank: every collective is the identity.
class SingleProcess final : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  int local_rank() const override { return 0; }
  int local_size() const override { return 1; }
  std::string description() const override { return "1 process"; }
  Memory memory() const override { return Memory::host; }
  std::unique_ptr<PendingReduction> start_mean(float* data, std::size_t count) override;
  void all_reduce(std::span<double> values, ReduceOp op) override;
  void broadcast(std::span<std::byte> bytes, int root) override;
};

}  // namespace labpose::nets
