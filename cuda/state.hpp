// The shared state of the CUDA backend's op files: the device, its stream, the cuDNN handle, the
// memory pool, the cuDNN workspace, pinned staging for host copies, device copies of small host
// constants, and the per-shape cache of cuDNN descriptors and algorithms. Internal to cuda/.
#pragma once

#include <array>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cuda/backend.hpp"
#include "cuda/cudnn_conv.hpp"
#include "cuda/cudnn_handles.hpp"
#include "cuda/handles.hpp"
#include "cuda/memory_pool.hpp"
#include "cuda/op_math.hpp"

namespace labpose::cuda {

/// Something an op keeps between calls for one shape (descriptors, the chosen algorithm).
struct CacheEntry {
  virtual ~CacheEntry() = default;
};

struct CudaBackend::State {
  int device = 0;
  DataType plan_precision = DataType::f32;
  Fp32Math fp32_math = Fp32Math::strict;  // of every fp32 convolution: training ops and plans
  // The training ops' arithmetic: fp32, or bf16 (mixed precision: bf16 activations and
  // convolutions, fp32 parameters, gradients of parameters, sums and outputs).
  DataType training_type = DataType::f32;
  AlgorithmChoice algorithm_choice = AlgorithmChoice::measured;
  std::string gpu_name;
  int major = 0, minor = 0;  // compute capability

  // Destroyed in reverse order: everything that queues work goes before the stream.
  Stream stream;
  /// Page-locked bounce buffers of host copies, used in turn: a copy waits only for the one that
  /// used its buffer kStagingSlots copies ago, not for the work queued just before it.
  struct StagingSlot {
    Event done;  // recorded after the last copy that read or wrote `buffer`
    PinnedBuffer buffer;
  };
  static constexpr std::size_t kStagingSlots = 2;
  std::array<StagingSlot, kStagingSlots> staging;
  std::size_t staging_next = 0;  // the slot the next staging_for() takes
  CudnnHandle cudnn;
  std::shared_ptr<DevicePool> pool;
  std::shared_ptr<nets::Storage> workspace_storage;  // cuDNN workspace, grows on demand
  std::map<std::vector<float>, std::shared_ptr<nets::Storage>> constants;
  std::map<std::string, std::unique_ptr<CacheEntry>> cache;

  /// The convolution settings of this backend for data of `type`.
  ConvSettings conv_settings(DataType type) const { return {type, fp32_math, algorithm_choice}; }
  /// Makes this backend's GPU current for the calling thread (every public method starts here).
  void activate() const;
  cudaStream_t queue() const { return stream.get(); }
  /// Device memory for the duration of one op (back to the pool when the returned owner goes; the
  /// single stream keeps reuse ordered after the work that read it).
  std::shared_ptr<nets::Storage> scratch(std::size_t bytes) { return pool->allocate(bytes); }
  /// A cuDNN workspace of at least `bytes` (null for 0).
  void* workspace(std::size_t bytes);
  /// The next pinned staging buffer, at least `bytes` long, once no queued copy uses it any more.
  void* staging_for(std::size_t bytes, const std::string& context);
  /// Marks the buffer staging_for() gave busy until the work queued so far is done; the next
  /// staging_for() takes the next buffer.
  void staging_queued(const std::string& context);
  /// A device copy of `values`, uploaded on first use (normalization scales and shifts).
  const float* constant(const std::vector<float>& values, const std::string& context);

  /// The entry under `key`, made by `make` on first use.
  template <typename Entry>
  Entry& cached(const std::string& key, const std::function<std::unique_ptr<Entry>()>& make) {
    auto found = cache.find(key);
    if (found == cache.end()) found = cache.emplace(key, make()).first;
    return static_cast<Entry&>(*found->second);
  }
};

/// The device pointer of a tensor of this backend (asserts it is device memory).
float* device_data(const nets::Tensor& tensor);

/// The kernels' description of max pooling from x: (N, C, H, W) to y: (N, C, P, Q).
PoolShape make_pool_shape(const nets::Shape& x, const nets::Shape& y, const nets::PoolGeometry& g);

/// "(2, 3, 7, 9)" of several tensors: "x (..), w (..) -> y (..)" style context for errors.
std::string shapes_text(std::initializer_list<std::pair<const char*, const nets::Tensor*>> tensors);

}  // namespace labpose::cuda
