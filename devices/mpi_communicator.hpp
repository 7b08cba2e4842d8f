// The communicator over MPI (host memory): the plugin's calls (mpi_api.hpp) made in order on a
// thread of their own, so that a bucket of gradients is summed while backward goes on, and every
// wait bounded, so that a rank that stopped answering ends the job with an error instead of a
// hang. Not the plugin's loading (world.hpp).
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <string>
#include <thread>

#include "devices/mpi_api.hpp"
#include "nets/communicator.hpp"

namespace labpose::devices {

class MpiCommunicator final : public nets::Communicator {
 public:
  /// Starts MPI on the communicator's thread; a collective that waits longer than
  /// `timeout_seconds` for the other ranks throws. Throws a labpose::Error when MPI cannot start.
  MpiCommunicator(const LabposeMpiApi& api, double timeout_seconds);
  /// Finalizes MPI (waiting for the other ranks to do so); after a timeout, leaves the stuck
  /// thread and MPI to the end of the process.
  ~MpiCommunicator() override;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int local_rank() const override { return local_rank_; }
  int local_size() const override { return local_size_; }
  std::string description() const override;
  nets::Memory memory() const override { return nets::Memory::host; }
  std::unique_ptr<nets::PendingReduction> start_mean(float* data, std::size_t count) override;
  void all_reduce(std::span<double> values, nets::ReduceOp op) override;
  void broadcast(std::span<std::byte> bytes, int root) override;

  /// Waits for `done` (a submitted call) at most the time limit; `what` names the call in errors.
  void wait(std::future<void>& done, const std::string& what);

 private:
  // One call of the plugin; `error` receives its message, the return value is MPI's code.
  using Call = std::function<int(char* error, std::size_t error_size)>;
  std::future<void> submit(Call call, std::string what);
  void serve();

  struct Job {
    Call call;
    std::string what;
    std::promise<void> done;
  };

  const LabposeMpiApi& api_;
  double timeout_seconds_;
  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1;
  std::string library_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Job> jobs_;
  bool stopping_ = false;
  bool stuck_ = false;      // a wait timed out: the thread may never return from MPI
  bool timed_out_ = false;  // the thread's own: a collective timed out and is still pending
  std::thread thread_;
};

}  // namespace labpose::devices
