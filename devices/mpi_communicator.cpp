// The MPI communicator's thread, its queue of calls, its answers to roll calls while idle and the
// bounded waits.
#include "devices/mpi_communicator.hpp"

#include <fmt/core.h>

#include <array>
#include <chrono>
#include <memory>

#include "core/error.hpp"

namespace labpose::devices {
namespace {

constexpr std::size_t kErrorSize = 512;
constexpr auto kRollCallPeriod = std::chrono::milliseconds(100);  // idle answers to roll calls
constexpr double kBackstopSeconds = 60.0;

class PendingMean final : public nets::PendingReduction {
 public:
  PendingMean(MpiCommunicator& communicator, std::future<void> done,
              std::shared_ptr<const double> seconds)
      : communicator_(&communicator), done_(std::move(done)), seconds_(std::move(seconds)) {}
  void wait() override {
    if (done_.valid()) communicator_->wait(done_, "the exchange of gradients");
  }
  double seconds() const override { return *seconds_; }

 private:
  MpiCommunicator* communicator_;
  std::future<void> done_;
  std::shared_ptr<const double> seconds_;  // written by the communicator's thread before `done_`
};

int mpi_op(nets::ReduceOp op) {
  switch (op) {
    case nets::ReduceOp::min:
      return labpose_mpi_min;
    case nets::ReduceOp::max:
      return labpose_mpi_max;
    case nets::ReduceOp::sum:
      break;
  }
  return labpose_mpi_sum;
}

}  // namespace

MpiCommunicator::MpiCommunicator(const LabposeMpiApi& api, double timeout_seconds)
    : api_(api), timeout_seconds_(timeout_seconds) {
  thread_ = std::thread([this] { serve(); });
  auto started = submit(
      [this](char* error, std::size_t error_size) {
        return api_.init(&rank_, &size_, &local_rank_, &local_size_, timeout_seconds_, error,
                         error_size);
      },
      "starting MPI");
  try {
    wait(started, "starting MPI");
  } catch (...) {
    if (!stuck_) {
      {
        const std::lock_guard lock(mutex_);
        stopping_ = true;
      }
      wake_.notify_one();
      thread_.join();
    } else {
      thread_.detach();
    }
    throw;
  }
  std::array<char, 256> version{};
  api_.library_version(version.data(), version.size());
  library_ = version.data();
}

MpiCommunicator::~MpiCommunicator() {
  if (!stuck_) {
    // Without a time limit: MPI_Finalize waits for the other ranks to finish too (rank 0 may still
    // be writing its last snapshot), and a rank that died makes the launcher end this one.
    auto finalized = submit(
        [this](char* error, std::size_t error_size) { return api_.finalize(error, error_size); },
        "finishing MPI");
    finalized.wait();
  }
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  if (stuck_) {
    thread_.detach();  // blocked in MPI for good: the process's end (or the launcher) ends it
  } else {
    thread_.join();
  }
}

std::string MpiCommunicator::description() const {
  return fmt::format("{}, {} ranks, {} on this machine", library_, size_, local_size_);
}

std::unique_ptr<nets::PendingReduction> MpiCommunicator::start_mean(float* data,
                                                                    std::size_t count) {
  const float scale = 1.0F / static_cast<float>(size_);
  auto seconds = std::make_shared<double>(0.0);
  auto done = submit(
      [this, data, count, scale, seconds](char* error, std::size_t error_size) {
        const auto start = std::chrono::steady_clock::now();
        const int code = api_.all_reduce_floats(data, count, error, error_size);
        if (code == 0) {
          for (std::size_t i = 0; i < count; ++i) data[i] *= scale;
        }
        *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        return code;
      },
      "the exchange of gradients");
  return std::make_unique<PendingMean>(*this, std::move(done), std::move(seconds));
}

void MpiCommunicator::all_reduce(std::span<double> values, nets::ReduceOp op) {
  auto done = submit(
      [this, values, op](char* error, std::size_t error_size) {
        return api_.all_reduce_doubles(values.data(), values.size(), mpi_op(op), error, error_size);
      },
      "an exchange of values");
  wait(done, "an exchange of values");
}

void MpiCommunicator::broadcast(std::span<std::byte> bytes, int root) {
  auto done = submit(
      [this, bytes, root](char* error, std::size_t error_size) {
        return api_.broadcast(bytes.data(), bytes.size(), root, error, error_size);
      },
      fmt::format("the broadcast from rank {}", root));
  wait(done, fmt::format("the broadcast from rank {}", root));
}

void MpiCommunicator::wait(std::future<void>& done, const std::string& what) {
  if (stuck_) {
    throw Error(
        fmt::format("rank {}: {} cannot start: an earlier exchange never finished", rank_, what));
  }
  // The plugin's calls keep the time limit themselves and then call the roll; this wait is the
  // backstop for a call that never returns (the calls queued before it included).
  const auto limit = std::chrono::duration<double>(timeout_seconds_ * 2 + kBackstopSeconds);
  if (done.wait_for(limit) == std::future_status::timeout) {
    stuck_ = true;
    throw Error(fmt::format("rank {} of {}: {} waited {:g} s for the other ranks without an "
                            "answer: a rank has stopped, crashed or hangs",
                            rank_, size_, what, limit.count()),
                "look for the first error in the other ranks' output; a rank that is only slow "
                "(a large test set on rank 0) needs a longer LABPOSE_RANK_TIMEOUT (seconds)");
  }
  done.get();
}

std::future<void> MpiCommunicator::submit(Call call, std::string what) {
  Job job{std::move(call), std::move(what), {}};
  std::future<void> done = job.done.get_future();
  {
    const std::lock_guard lock(mutex_);
    jobs_.push_back(std::move(job));
  }
  wake_.notify_one();
  return done;
}

void MpiCommunicator::serve() {
  for (;;) {
    Job job;
    {
      std::unique_lock lock(mutex_);
      // Idle, the thread answers the roll calls of ranks that wait for this one.
      while (
          !wake_.wait_for(lock, kRollCallPeriod, [this] { return stopping_ || !jobs_.empty(); })) {
        lock.unlock();
        std::array<char, kErrorSize> ignored{};
        api_.answer_roll_calls(ignored.data(), ignored.size());
        lock.lock();
      }
      if (jobs_.empty()) return;
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    if (timed_out_) {  // an earlier collective is still pending in MPI: nothing can follow it
      job.done.set_exception(std::make_exception_ptr(Error(fmt::format(
          "rank {}: {} cannot start: an earlier exchange never finished", rank_, job.what))));
      continue;
    }
    std::array<char, kErrorSize> error{};
    const int code = job.call(error.data(), error.size());
    if (code == 0) {
      job.done.set_value();
      continue;
    }
    if (code == kLabposeMpiTimedOut) {
      timed_out_ = true;
      job.done.set_exception(std::make_exception_ptr(
          Error(fmt::format("rank {} of {}: {}: {}", rank_, size_, job.what, error.data()),
                "look for the first error in the output of the ranks named; a rank that is only "
                "slow (a large test set on rank 0) needs a longer LABPOSE_RANK_TIMEOUT "
                "(seconds)")));
      continue;
    }
    job.done.set_exception(std::make_exception_ptr(
        Error(fmt::format("rank {}: {} failed: {}", rank_, job.what, error.data()),
              "a rank of the job has failed or lost its connection; look for the first error in "
              "the ranks' output")));
  }
}

}  // namespace labpose::devices
