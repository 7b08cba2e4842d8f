// RAII owners of CUDA runtime resources: streams, events, instantiated graphs and pinned
// (page-locked) host buffers.
// Each is created on the current device and destroyed without throwing. Not for device memory
// (memory_pool.hpp) nor for cuDNN objects (cudnn_handles.hpp).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>

namespace labpose::cuda {

struct StreamDeleter {
  void operator()(CUstream_st* stream) const noexcept { cudaStreamDestroy(stream); }
};
/// A non-blocking stream (it does not synchronize with the legacy default stream).
using Stream = std::unique_ptr<CUstream_st, StreamDeleter>;
Stream make_stream();

struct EventDeleter {
  void operator()(CUevent_st* event) const noexcept { cudaEventDestroy(event); }
};
/// An event without timing (cheap to record and wait for).
using Event = std::unique_ptr<CUevent_st, EventDeleter>;
Event make_event();

struct GraphExecDeleter {
  void operator()(CUgraphExec_st* graph) const noexcept { cudaGraphExecDestroy(graph); }
};
/// An instantiated CUDA graph, ready to launch (graphs.hpp makes them).
using GraphExec = std::unique_ptr<CUgraphExec_st, GraphExecDeleter>;

/// Page-locked host memory: the staging area of host<->device copies (truly asynchronous copies
/// need it). Grows on demand; reserve() must not be called while a copy still reads the buffer.
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  ~PinnedBuffer();
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;

  /// Makes the buffer at least `bytes` long (contents are not kept when it grows).
  void reserve(std::size_t bytes);
  void* data() const { return data_; }
  std::size_t bytes() const { return bytes_; }

 private:
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace labpose::cuda
