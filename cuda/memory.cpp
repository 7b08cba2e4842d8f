// CUDA backend basics: start-up on one GPU, device memory, host copies through pinned staging with
// the NCHW <-> NHWC conversion on the GPU, fills, and the State helpers the op files share.
#include <fmt/core.h>

#include <cstring>

#include "core/error.hpp"
#include "cuda/cudnn_api.hpp"
#include "cuda/device_query.hpp"
#include "cuda/graphs.hpp"
#include "cuda/kernels.hpp"
#include "cuda/operands.hpp"
#include "cuda/runtime_check.hpp"
#include "cuda/state.hpp"

namespace labpose::cuda {

using nets::Layout;
using nets::Shape;
using nets::Tensor;

// ---- State -------------------------------------------------------------------------------------
void CudaBackend::State::activate() const {
  LABPOSE_CUDA_CHECK(cudaSetDevice(device), fmt::format("selecting GPU cuda:{}", device));
}

void* CudaBackend::State::workspace(std::size_t bytes) {
  if (bytes == 0) return nullptr;
  if (workspace_storage == nullptr || workspace_storage->bytes() < bytes)
    workspace_storage = pool->allocate(bytes);
  return workspace_storage->data();
}

void* CudaBackend::State::staging_for(std::size_t bytes, const std::string& context) {
  StagingSlot& slot = staging[staging_next];
  LABPOSE_CUDA_CHECK(cudaEventSynchronize(slot.done.get()), context);
  slot.buffer.reserve(bytes);
  return slot.buffer.data();
}

void CudaBackend::State::staging_queued(const std::string& context) {
  LABPOSE_CUDA_CHECK(cudaEventRecord(staging[staging_next].done.get(), queue()), context);
  staging_next = (staging_next + 1) % kStagingSlots;
}

const float* CudaBackend::State::constant(const std::vector<float>& values,
                                          const std::string& context) {
  auto found = constants.find(values);
  if (found == constants.end()) {
    auto storage = pool->allocate(values.size() * sizeof(float));
    // On the backend's stream (the block may have been freed by work still queued there), and
    // waited for: once per distinct vector, and the host vector may go away.
    LABPOSE_CUDA_CHECK(
        cudaMemcpyAsync(storage->data(), values.data(), values.size() * sizeof(float),
                        cudaMemcpyHostToDevice, queue()),
        context);
    LABPOSE_CUDA_CHECK(cudaStreamSynchronize(queue()), context);
    found = constants.emplace(values, std::move(storage)).first;
  }
  return found->second->data();
}

float* device_data(const Tensor& tensor) {
  LABPOSE_ASSERT(!tensor.empty() && tensor.memory() == nets::Memory::cuda);
  return tensor.data();
}

std::string shapes_text(std::initializer_list<std::pair<const char*, const Tensor*>> tensors) {
  std::string text;
  for (const auto& [name, tensor] : tensors) {
    if (!text.empty()) text += ", ";
    text += fmt::format("{} {}", name, tensor->empty() ? "none" : tensor->shape().text());
  }
  return text;
}

namespace {

// t = `floats`: its elements in logical (NCHW) order in device memory, put in t's layout and
// element type.
void place_floats(CudaBackend::State& s, const float* floats, Tensor& t) {
  if (t.layout() == Layout::nhwc) {
    const Shape& shape = t.shape();
    kernels::nchw_to_nhwc(floats, data_type(t), device_bytes(t), shape.n(), shape.c(),
                          shape.h() * shape.w(), s.queue());
  } else if (data_type(t) != DataType::f32) {
    kernels::convert(DataType::f32, floats, data_type(t), device_bytes(t), t.elements(), s.queue());
  } else {
    LABPOSE_CUDA_CHECK(cudaMemcpyAsync(device_data(t), floats,
                                       static_cast<std::size_t>(t.elements()) * sizeof(float),
                                       cudaMemcpyDeviceToDevice, s.queue()),
                       fmt::format("placing ({})", t.shape().text()));
  }
}

}  // namespace

// ---- construction ------------------------------------------------------------------------------
CudaBackend::CudaBackend(const CudaOptions& options) : state_(std::make_unique<State>()) {
  const CudaReport report = query_cuda();
  const std::string problem = gpu_problem(report, options.device);
  if (!problem.empty()) {
    throw Error(fmt::format("cannot use GPU cuda:{}: {}", options.device, problem),
                "run `labpose doctor` to see the GPUs and drivers; --device cpu works without one");
  }
  const GpuInfo& gpu = report.gpus[static_cast<std::size_t>(options.device)];
  if (options.plan_precision == DataType::bf16 && gpu.major < 8) {
    throw Error(fmt::format("bf16 needs a GPU of compute capability 8.0 or newer; cuda:{} ({}) "
                            "has {}.{}",
                            options.device, gpu.name, gpu.major, gpu.minor),
                "use fp16 on this GPU");
  }
  if (options.tf32 && gpu.major < 8) {
    throw Error(fmt::format("TF32 needs a GPU of compute capability 8.0 or newer; cuda:{} ({}) "
                            "has {}.{}",
                            options.device, gpu.name, gpu.major, gpu.minor),
                "use --precision fp32 on this GPU");
  }
  State& s = *state_;
  s.device = options.device;
  s.plan_precision = options.plan_precision;
  s.training_type = options.plan_precision == DataType::bf16 ? DataType::bf16 : DataType::f32;
  s.fp32_math = options.tf32 ? Fp32Math::tf32 : Fp32Math::strict;
  s.algorithm_choice = algorithm_choice_from_environment();
  s.gpu_name = gpu.name;
  s.major = gpu.major;
  s.minor = gpu.minor;
  s.activate();
  s.stream = make_stream();
  for (std::size_t k = 0; k < State::kStagingSlots; ++k) {
    s.staging[k].done = make_event();
    s.staging_queued("starting the CUDA backend");
  }
  s.cudnn = make_cudnn_handle(s.queue());
  s.pool = std::make_shared<DevicePool>(s.device);
}

CudaBackend::~CudaBackend() {
  // Let queued work finish before its buffers go back to the pool and the stream is destroyed.
  if (cudaSetDevice(state_->device) == cudaSuccess && state_->stream != nullptr)
    cudaStreamSynchronize(state_->stream.get());
}

std::string CudaBackend::name() const {
  return fmt::format("cuda:{}", state_->device);
}

std::string CudaBackend::description() const {
  return fmt::format("{}, compute capability {}.{}, cuDNN {}, inference plans in {}{}",
                     state_->gpu_name, state_->major, state_->minor,
                     cudnn_version_text(cudnn().GetVersion()), name_of(state_->plan_precision),
                     state_->fp32_math == Fp32Math::tf32
                         ? ", fp32 convolutions on TF32 tensor cores (--precision fp32: strict)"
                         : "");
}

nets::PlanPrecision CudaBackend::plan_precision() const {
  switch (state_->plan_precision) {
    case DataType::f16:
      return nets::PlanPrecision::fp16;
    case DataType::bf16:
      return nets::PlanPrecision::bf16;
    case DataType::f32:
      break;
  }
  return training_precision();
}

nets::PlanPrecision CudaBackend::training_precision() const {
  if (state_->training_type == DataType::bf16) return nets::PlanPrecision::bf16;
  return state_->fp32_math == Fp32Math::tf32 ? nets::PlanPrecision::tf32
                                             : nets::PlanPrecision::fp32;
}

PoolStatistics CudaBackend::memory_statistics() const {
  return state_->pool->statistics();
}

std::int64_t CudaBackend::peak_memory_bytes() const {
  return static_cast<std::int64_t>(memory_statistics().peak_bytes);
}

CudaBackend& as_cuda(nets::Backend& backend) {
  auto* cuda = dynamic_cast<CudaBackend*>(&backend);
  if (cuda == nullptr) {
    throw Error(fmt::format("this needs the CUDA backend, not {}", backend.name()),
                "use --device cuda");
  }
  return *cuda;
}

// ---- memory ------------------------------------------------------------------------------------
Tensor CudaBackend::allocate(const Shape& shape) {
  state_->activate();
  return Tensor(state_->pool->allocate(static_cast<std::size_t>(shape.elements()) * sizeof(float)),
                0, shape, shape.rank() == 4 ? Layout::nhwc : Layout::flat);
}

Tensor CudaBackend::allocate_activation(const Shape& shape) {
  if (state_->training_type != DataType::bf16 || shape.rank() != 4) return allocate(shape);
  state_->activate();
  return Tensor(
      state_->pool->allocate(static_cast<std::size_t>(shape.elements()) * bytes_of(DataType::bf16)),
      0, shape, Layout::nhwc, nets::Element::bf16);
}

Tensor CudaBackend::allocate_flat(std::int64_t count) {
  state_->activate();
  return Tensor(state_->pool->allocate(static_cast<std::size_t>(count) * sizeof(float)), 0,
                Shape{count}, Layout::flat);
}

void CudaBackend::copy_from_host(const float* host, Tensor& t) {
  State& s = *state_;
  s.activate();
  const std::string context = fmt::format("copy_from_host ({})", t.shape().text());
  const std::size_t bytes = static_cast<std::size_t>(t.elements()) * sizeof(float);
  if (bytes == 0) return;
  void* staging = s.staging_for(bytes, context);
  std::memcpy(staging, host, bytes);
  if (t.layout() != Layout::nhwc && data_type(t) == DataType::f32) {
    LABPOSE_CUDA_CHECK(
        cudaMemcpyAsync(device_data(t), staging, bytes, cudaMemcpyHostToDevice, s.queue()),
        context);
    s.staging_queued(context);
    return;
  }
  const auto logical = s.scratch(bytes);
  LABPOSE_CUDA_CHECK(
      cudaMemcpyAsync(logical->data(), staging, bytes, cudaMemcpyHostToDevice, s.queue()), context);
  s.staging_queued(context);
  place_floats(s, logical->data(), t);
}

void CudaBackend::copy_all_from_host(std::span<const HostCopy> copies) {
  State& s = *state_;
  s.activate();
  std::size_t total = 0;
  for (const HostCopy& copy : copies)
    total += static_cast<std::size_t>(copy.tensor->elements()) * sizeof(float);
  if (total == 0) return;
  const std::string context =
      fmt::format("copy_all_from_host ({} tensors, {} bytes)", copies.size(), total);
  // The host's floats packed into one staging buffer, one transfer, then each tensor's part put
  // in place on the GPU (in its layout).
  auto* staging = static_cast<std::byte*>(s.staging_for(total, context));
  std::size_t at = 0;
  for (const HostCopy& copy : copies) {
    const std::size_t bytes = static_cast<std::size_t>(copy.tensor->elements()) * sizeof(float);
    std::memcpy(staging + at, copy.host, bytes);
    at += bytes;
  }
  const auto packed = s.scratch(total);
  auto* device = reinterpret_cast<std::byte*>(packed->data());
  LABPOSE_CUDA_CHECK(cudaMemcpyAsync(device, staging, total, cudaMemcpyHostToDevice, s.queue()),
                     context);
  s.staging_queued(context);
  at = 0;
  for (const HostCopy& copy : copies) {
    Tensor& t = *copy.tensor;
    const std::size_t bytes = static_cast<std::size_t>(t.elements()) * sizeof(float);
    const auto* part = reinterpret_cast<const float*>(device + at);
    at += bytes;
    if (bytes == 0) continue;
    place_floats(s, part, t);
  }
}

namespace {

// A pinned buffer the tensor is copied into on the backend's stream, and the event that says the
// copy is done.
class CudaReadback final : public nets::HostReadback {
 public:
  CudaReadback(CudaBackend::State& state, std::int64_t count)
      : state_(state), count_(static_cast<std::size_t>(count)) {
    state_.activate();
    buffer_.reserve(count_ * sizeof(float));
    done_ = make_event();
  }
  void start(const Tensor& t) override {
    LABPOSE_ASSERT(t.layout() != Layout::nhwc && t.elements() == static_cast<std::int64_t>(count_));
    state_.activate();
    const std::string context = fmt::format("reading back ({})", t.shape().text());
    // The previous values must have been taken before the buffer is written again.
    LABPOSE_CUDA_CHECK(cudaEventSynchronize(done_.get()), context);
    LABPOSE_CUDA_CHECK(cudaMemcpyAsync(buffer_.data(), device_data(t), count_ * sizeof(float),
                                       cudaMemcpyDeviceToHost, state_.queue()),
                       context);
    LABPOSE_CUDA_CHECK(cudaEventRecord(done_.get(), state_.queue()), context);
  }
  std::span<const float> values() override {
    state_.activate();
    LABPOSE_CUDA_CHECK(cudaEventSynchronize(done_.get()), "reading back");
    return {static_cast<const float*>(buffer_.data()), count_};
  }

 private:
  CudaBackend::State& state_;
  std::size_t count_;
  PinnedBuffer buffer_;
  Event done_;
};

}  // namespace

std::unique_ptr<nets::HostReadback> CudaBackend::make_readback(std::int64_t count) {
  return std::make_unique<CudaReadback>(*state_, count);
}

void CudaBackend::copy_pixels_from_host(const std::uint8_t* pixels, Tensor& t) {
  State& s = *state_;
  s.activate();
  const std::string context = fmt::format("copy_pixels_from_host ({})", t.shape().text());
  LABPOSE_ASSERT(t.shape().rank() == 4 && t.layout() == Layout::nhwc);
  const auto count = static_cast<std::size_t>(t.elements());
  if (count == 0) return;
  // Interleaved pixels are NHWC already: the 8-bit values go up as they are (a quarter of the
  // bytes of floats, and no widening on the host) and the GPU widens them.
  void* staging = s.staging_for(count, context);
  std::memcpy(staging, pixels, count);
  const auto bytes = s.scratch(count);
  auto* device_pixels = reinterpret_cast<std::uint8_t*>(bytes->data());
  LABPOSE_CUDA_CHECK(
      cudaMemcpyAsync(device_pixels, staging, count, cudaMemcpyHostToDevice, s.queue()), context);
  s.staging_queued(context);
  kernels::widen_pixels(device_pixels, device_data(t), t.elements(), s.queue());
}

void CudaBackend::copy_to_host(const Tensor& t, float* host) {
  State& s = *state_;
  s.activate();
  const std::string context = fmt::format("copy_to_host ({})", t.shape().text());
  const std::size_t bytes = static_cast<std::size_t>(t.elements()) * sizeof(float);
  if (bytes == 0) return;
  void* staging = s.staging_for(bytes, context);
  std::shared_ptr<nets::Storage> logical;
  const void* source = device_bytes(t);
  if (t.layout() == Layout::nhwc) {
    logical = s.scratch(bytes);
    const Shape& shape = t.shape();
    kernels::nhwc_to_nchw(data_type(t), source, logical->data(), shape.n(), shape.c(),
                          shape.h() * shape.w(), s.queue());
    source = logical->data();
  } else if (data_type(t) != DataType::f32) {
    logical = s.scratch(bytes);
    kernels::convert(data_type(t), source, DataType::f32, logical->data(), t.elements(), s.queue());
    source = logical->data();
  }
  LABPOSE_CUDA_CHECK(cudaMemcpyAsync(staging, source, bytes, cudaMemcpyDeviceToHost, s.queue()),
                     context);
  s.staging_queued(context);
  LABPOSE_CUDA_CHECK(cudaStreamSynchronize(s.queue()), context);
  std::memcpy(host, staging, bytes);
}

void CudaBackend::copy(const Tensor& src, Tensor& dst) {
  nets::check_shape("copy", "dst", dst.shape(), src.shape());
  LABPOSE_ASSERT(src.layout() == dst.layout());
  State& s = *state_;
  s.activate();
  if (src.raw() == dst.raw()) return;
  if (data_type(src) != data_type(dst)) {
    kernels::convert(data_type(src), device_bytes(src), data_type(dst), device_bytes(dst),
                     src.elements(), s.queue());
    return;
  }
  LABPOSE_CUDA_CHECK(
      cudaMemcpyAsync(device_bytes(dst), device_bytes(src),
                      static_cast<std::size_t>(src.elements()) * bytes_of(data_type(src)),
                      cudaMemcpyDeviceToDevice, s.queue()),
      fmt::format("copy ({})", src.shape().text()));
}

void CudaBackend::fill(Tensor& t, float value) {
  State& s = *state_;
  s.activate();
  kernels::fill(data_type(t), device_bytes(t), t.elements(), value, s.queue());
}

std::unique_ptr<nets::RecordedWork> CudaBackend::record(const std::function<void()>& work,
                                                        std::string& why_not) {
  State& s = *state_;
  s.activate();
  return record_on_stream(s.queue(), s.pool, work, why_not);
}

void CudaBackend::synchronize() {
  state_->activate();
  LABPOSE_CUDA_CHECK(cudaStreamSynchronize(state_->queue()), "synchronize");
}

}  // namespace labpose::cuda
