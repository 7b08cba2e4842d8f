// CUDA runtime RAII owners.
#include "cuda/handles.hpp"

#include <algorithm>

#include "cuda/runtime_check.hpp"

namespace labpose::cuda {

Stream make_stream() {
  cudaStream_t stream = nullptr;
  LABPOSE_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking),
                     "creating a CUDA stream");
  return Stream(stream);
}

Event make_event() {
  cudaEvent_t event = nullptr;
  LABPOSE_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming),
                     "creating a CUDA event");
  return Event(event);
}

PinnedBuffer::~PinnedBuffer() {
  if (data_ != nullptr) cudaFreeHost(data_);
}

void PinnedBuffer::reserve(std::size_t bytes) {
  if (bytes <= bytes_) return;
  // Grow by at least half again, so a slowly growing sequence of requests reallocates rarely.
  const std::size_t wanted = std::max(bytes, bytes_ + bytes_ / 2);
  if (data_ != nullptr) cudaFreeHost(data_);
  data_ = nullptr;
  bytes_ = 0;
  LABPOSE_CUDA_CHECK(cudaMallocHost(&data_, wanted), "allocating pinned host memory for copies");
  bytes_ = wanted;
}

}  // namespace labpose::cuda
