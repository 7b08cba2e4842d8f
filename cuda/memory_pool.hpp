// The caching device-memory pool of one GPU: blocks freed by tensors are kept and handed out again,
// so the steady-state training or analysis loop never calls cudaMalloc. Stream-ordered by
// construction: the CUDA backend queues all its work on one stream, so a block reused by a later
// allocation is only touched by work queued after the work that used it before. Not a general
// allocator for several streams.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>

#include "nets/tensor.hpp"

namespace labpose::cuda {

struct PoolStatistics {
  std::size_t in_use_bytes = 0, cached_bytes = 0, peak_bytes = 0;
  std::size_t device_allocations = 0;  // cudaMalloc calls so far
};

class DevicePool : public std::enable_shared_from_this<DevicePool> {
 public:
  /// A pool for GPU `device` (the index cudaSetDevice takes).
  explicit DevicePool(int device) : device_(device) {}
  ~DevicePool();
  DevicePool(const DevicePool&) = delete;
  DevicePool& operator=(const DevicePool&) = delete;

  /// Device memory of at least `bytes` (256-byte aligned) that returns to the pool when the last
  /// owner lets go. Throws a labpose::Error saying how much was asked when the GPU is full.
  /// The calling thread's current device must be this pool's device.
  std::shared_ptr<nets::Storage> allocate(std::size_t bytes);
  PoolStatistics statistics() const;

  /// The size a request of `bytes` is rounded up to (a few size classes keep reuse high).
  static std::size_t block_size(std::size_t bytes);

 private:
  friend class PooledStorage;
  void give_back(void* block, std::size_t bytes) noexcept;
  void free_cached();  // with mutex_ held

  int device_;
  mutable std::mutex mutex_;
  std::multimap<std::size_t, void*> free_blocks_;  // by size
  PoolStatistics statistics_;
};

}  // namespace labpose::cuda
