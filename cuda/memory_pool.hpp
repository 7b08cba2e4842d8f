// The caching device-memory pool of one GPU: blocks freed by tensors are kept and handed out again,
// so the steady-state training or analysis loop never calls cudaMalloc. Stream-ordered by
// construction: the CUDA backend queues all its work on one stream, so a block reused by a later
// allocation is only touched by work queued after the work that used it before. Not a general
// allocator for several streams. While a CUDA graph is captured, the blocks the captured work
// allocates belong to the capture (CaptureArena): the graph reuses them on every replay, so they
// go back to the arena, not to the pool, until the graph and every tensor made then are gone.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>

#include "nets/tensor.hpp"

namespace labpose::cuda {

class DevicePool;

/// The blocks of one captured graph (DevicePool::begin_capture): free ones wait for the graph's
/// replays; all return to the pool when the arena goes (the graph holds it, as does every tensor
/// allocated while capturing).
class CaptureArena {
 public:
  explicit CaptureArena(std::shared_ptr<DevicePool> pool) : pool_(std::move(pool)) {}
  ~CaptureArena();
  CaptureArena(const CaptureArena&) = delete;
  CaptureArena& operator=(const CaptureArena&) = delete;

 private:
  friend class DevicePool;
  std::shared_ptr<DevicePool> pool_;
  std::multimap<std::size_t, void*> free_blocks_;  // by size; guarded by the pool's mutex
};

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

  /// From now until end_capture(), allocations belong to a capture's arena: they take its free
  /// blocks first, and go back to it.
  void begin_capture();
  /// The arena of the capture begun last, for the graph to hold.
  std::shared_ptr<CaptureArena> end_capture();

  /// The size a request of `bytes` is rounded up to (a few size classes keep reuse high).
  static std::size_t block_size(std::size_t bytes);

 private:
  friend class PooledStorage;
  friend class CaptureArena;
  void give_back(void* block, std::size_t bytes, CaptureArena* arena) noexcept;
  // A cached block of at least `size` (not more than twice) from `blocks`, or null.
  static void* take(std::multimap<std::size_t, void*>& blocks, std::size_t size,
                    std::size_t& block_bytes);
  void free_cached();  // with mutex_ held

  int device_;
  mutable std::mutex mutex_;
  std::multimap<std::size_t, void*> free_blocks_;  // by size
  PoolStatistics statistics_;
  std::shared_ptr<CaptureArena> capturing_;  // between begin_capture and end_capture
};

}  // namespace labpose::cuda
