// The caching device-memory pool.
#include "cuda/memory_pool.hpp"

#include <cuda_runtime_api.h>
#include <fmt/core.h>

#include <algorithm>
#include <utility>

#include "core/error.hpp"
#include "cuda/runtime_check.hpp"

namespace labpose::cuda {

class PooledStorage final : public nets::Storage {
 public:
  PooledStorage(std::shared_ptr<DevicePool> pool, void* block, std::size_t block_bytes,
                std::size_t bytes, std::shared_ptr<CaptureArena> arena)
      : pool_(std::move(pool)),
        block_(block),
        block_bytes_(block_bytes),
        bytes_(bytes),
        arena_(std::move(arena)) {}
  ~PooledStorage() override { pool_->give_back(block_, block_bytes_, arena_.get()); }
  PooledStorage(const PooledStorage&) = delete;
  PooledStorage& operator=(const PooledStorage&) = delete;

  float* data() override { return static_cast<float*>(block_); }
  std::size_t bytes() const override { return bytes_; }
  nets::Memory memory() const override { return nets::Memory::cuda; }

 private:
  std::shared_ptr<DevicePool> pool_;  // the pool outlives every block it handed out
  void* block_;
  std::size_t block_bytes_, bytes_;
  std::shared_ptr<CaptureArena> arena_;  // allocated while capturing: the block goes back there
};

CaptureArena::~CaptureArena() {
  std::lock_guard lock(pool_->mutex_);
  pool_->free_blocks_.merge(free_blocks_);
}

namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;

double mib(std::size_t bytes) {
  return static_cast<double>(bytes) / static_cast<double>(kMiB);
}

}  // namespace

std::size_t DevicePool::block_size(std::size_t bytes) {
  // 512-byte steps below 1 MiB, 2 MiB steps above (large activations of one shape reuse exactly).
  const std::size_t step = bytes < kMiB ? 512 : 2 * kMiB;
  return std::max<std::size_t>(step, (bytes + step - 1) / step * step);
}

DevicePool::~DevicePool() {
  // Tensors that outlive their backend keep the pool alive, so everything is cached by now.
  int current = 0;
  if (cudaGetDevice(&current) == cudaSuccess && current != device_) cudaSetDevice(device_);
  for (const auto& [bytes, block] : free_blocks_) cudaFree(block);
  if (current != device_) cudaSetDevice(current);
}

void* DevicePool::take(std::multimap<std::size_t, void*>& blocks, std::size_t size,
                       std::size_t& block_bytes) {
  // The smallest cached block that fits, unless it would waste more than half of itself.
  const auto found = blocks.lower_bound(size);
  if (found == blocks.end() || found->first > 2 * size) return nullptr;
  void* block = found->second;
  block_bytes = found->first;
  blocks.erase(found);
  return block;
}

void DevicePool::begin_capture() {
  std::lock_guard lock(mutex_);
  capturing_ = std::make_shared<CaptureArena>(shared_from_this());
}

std::shared_ptr<CaptureArena> DevicePool::end_capture() {
  std::lock_guard lock(mutex_);
  return std::exchange(capturing_, nullptr);
}

std::shared_ptr<nets::Storage> DevicePool::allocate(std::size_t bytes) {
  const std::size_t size = block_size(bytes);
  std::lock_guard lock(mutex_);
  std::size_t block_bytes = 0;
  void* block = capturing_ ? take(capturing_->free_blocks_, size, block_bytes) : nullptr;
  if (block == nullptr) block = take(free_blocks_, size, block_bytes);
  if (block != nullptr) {
    statistics_.cached_bytes -= block_bytes;
    statistics_.in_use_bytes += block_bytes;
    statistics_.peak_bytes = std::max(statistics_.peak_bytes, statistics_.in_use_bytes);
    return std::make_shared<PooledStorage>(shared_from_this(), block, block_bytes, bytes,
                                           capturing_);
  }
  void* fresh = nullptr;
  cudaError_t status = cudaMalloc(&fresh, size);
  if (status == cudaErrorMemoryAllocation && !free_blocks_.empty()) {
    cudaGetLastError();
    free_cached();  // blocks of other sizes may make room
    status = cudaMalloc(&fresh, size);
  }
  if (status == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    std::size_t free_bytes = 0, total_bytes = 0;
    cudaMemGetInfo(&free_bytes, &total_bytes);
    throw Error(fmt::format("out of GPU memory on cuda:{}: {:.1f} MiB requested, {:.1f} MiB in "
                            "use by labpose, {:.1f} of {:.1f} MiB free on the GPU",
                            device_, mib(size), mib(statistics_.in_use_bytes), mib(free_bytes),
                            mib(total_bytes)),
                "use a smaller batch size or image size, or stop other programs using this GPU "
                "(see nvidia-smi)");
  }
  check_cuda(status, "cudaMalloc",
             fmt::format("allocating {:.1f} MiB on cuda:{}", mib(size), device_));
  ++statistics_.device_allocations;
  statistics_.in_use_bytes += size;
  statistics_.peak_bytes = std::max(statistics_.peak_bytes, statistics_.in_use_bytes);
  return std::make_shared<PooledStorage>(shared_from_this(), fresh, size, bytes, capturing_);
}

PoolStatistics DevicePool::statistics() const {
  std::lock_guard lock(mutex_);
  return statistics_;
}

void DevicePool::give_back(void* block, std::size_t bytes, CaptureArena* arena) noexcept {
  std::lock_guard lock(mutex_);
  statistics_.in_use_bytes -= bytes;
  statistics_.cached_bytes += bytes;
  (arena != nullptr ? arena->free_blocks_ : free_blocks_).emplace(bytes, block);
}

void DevicePool::free_cached() {
  // cudaFree waits for the device, so no queued work still uses these blocks.
  for (const auto& [bytes, block] : free_blocks_) cudaFree(block);
  free_blocks_.clear();
  statistics_.cached_bytes = 0;
}

}  // namespace labpose::cuda
