// NCCL's communicator over the ranks' GPUs: the id broadcast over MPI, one reduction stream, events
// that order it after backward and the backend's stream after it.
#include "cuda/nccl_communicator.hpp"

#include <fmt/core.h>
#include <array>

#include "core/error.hpp"
#include "cuda/nccl_api.hpp"
#include "cuda/runtime_check.hpp"
#include "cuda/state.hpp"

namespace labpose::cuda {
namespace {

void check_nccl(ncclResult_t result, const char* what, int rank) {
  if (result == ncclSuccess) return;
  throw Error(fmt::format("rank {}: {} failed: {}", rank, what, nccl().GetErrorString(result)),
              "a rank of the job has failed, or the GPUs cannot reach each other; look for the "
              "first error in the ranks' output (NCCL_DEBUG=WARN says more)");
}

// An event with timing (the reductions' durations are reported).
Event make_timed_event() {
  cudaEvent_t event = nullptr;
  LABPOSE_CUDA_CHECK(cudaEventCreate(&event), "an NCCL reduction's event");
  return Event(event);
}

class PendingNcclMean final : public nets::PendingReduction {
 public:
  PendingNcclMean(cudaStream_t compute, Event start, Event done)
      : compute_(compute), start_(std::move(start)), done_(std::move(done)) {}
  // The backend's stream waits for the reduction; the host goes on.
  void wait() override {
    LABPOSE_CUDA_CHECK(cudaStreamWaitEvent(compute_, done_.get(), 0), "gradient exchange");
  }
  double seconds() const override {
    LABPOSE_CUDA_CHECK(cudaEventSynchronize(done_.get()), "gradient exchange");
    float milliseconds = 0;
    LABPOSE_CUDA_CHECK(cudaEventElapsedTime(&milliseconds, start_.get(), done_.get()),
                       "gradient exchange");
    return milliseconds / 1e3;
  }

 private:
  cudaStream_t compute_;
  Event start_, done_;
};

class NcclCommunicator final : public nets::Communicator {
 public:
  NcclCommunicator(nets::Communicator& host, CudaBackend& backend)
      : host_(host), state_(backend.state()) {
    state_.activate();
    ncclUniqueId id{};
    if (host.rank() == 0) check_nccl(nccl().GetUniqueId(&id), "ncclGetUniqueId", host.rank());
    host.broadcast(std::as_writable_bytes(std::span<ncclUniqueId>(&id, 1)), 0);
    check_nccl(nccl().CommInitRank(&comm_, host.size(), id, host.rank()), "ncclCommInitRank",
               host.rank());
    reductions_ = make_stream();
    int version = 0;
    nccl().GetVersion(&version);
    version_ = fmt::format("NCCL {}.{}.{}", version / 10000, version / 100 % 100, version % 100);
  }
  ~NcclCommunicator() override {
    cudaStreamSynchronize(reductions_.get());
    nccl().CommDestroy(comm_);
  }
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;

  int rank() const override { return host_.rank(); }
  int size() const override { return host_.size(); }
  int local_rank() const override { return host_.local_rank(); }
  int local_size() const override { return host_.local_size(); }
  std::string description() const override {
    return fmt::format("{} between GPUs, {}", version_, host_.description());
  }
  nets::Memory memory() const override { return nets::Memory::cuda; }

  std::unique_ptr<nets::PendingReduction> start_mean(float* data, std::size_t count) override {
    state_.activate();
    Event start = make_timed_event(), done = make_timed_event();
    // The bucket is final once the work queued so far on the backend's stream is done.
    LABPOSE_CUDA_CHECK(cudaEventRecord(start.get(), state_.queue()), "gradient exchange");
    LABPOSE_CUDA_CHECK(cudaStreamWaitEvent(reductions_.get(), start.get(), 0), "gradient exchange");
    check_nccl(nccl().AllReduce(data, data, count, ncclFloat, ncclAvg, comm_, reductions_.get()),
               "ncclAllReduce", rank());
    LABPOSE_CUDA_CHECK(cudaEventRecord(done.get(), reductions_.get()), "gradient exchange");
    return std::make_unique<PendingNcclMean>(state_.queue(), std::move(start), std::move(done));
  }
  void all_reduce(std::span<double> values, nets::ReduceOp op) override {
    host_.all_reduce(values, op);
  }
  void broadcast(std::span<std::byte> bytes, int root) override { host_.broadcast(bytes, root); }

 private:
  nets::Communicator& host_;
  CudaBackend::State& state_;
  ncclComm_t comm_ = nullptr;
  Stream reductions_;
  std::string version_;
};

}  // namespace

std::unique_ptr<nets::Communicator> make_nccl_communicator(nets::Communicator& host,
                                                           nets::Backend& backend) {
  return std::make_unique<NcclCommunicator>(host, as_cuda(backend));
}

}  // namespace labpose::cuda
