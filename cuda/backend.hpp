// The CUDA backend: the Backend interface on one NVIDIA GPU, cuDNN for convolutions (transposed
// ones through the same three primitives) and batch norm, own kernels for the rest; NHWC
// activations, float32 or, for a net training in bf16, bfloat16 (allocate_activation); inference
// plans in fp32, fp16 or bf16, fp32 convolutions strict or in TF32 (CudaOptions). All work goes to
// one stream in order; methods return before the GPU is done unless they hand values to the host.
// Not thread-safe: one training loop or one plan runner per backend object (analysis runs several
// backends on one GPU, one per thread).
#pragma once

#include <memory>
#include <string>

#include "cuda/data_type.hpp"
#include "cuda/memory_pool.hpp"
#include "nets/backend.hpp"

namespace labpose::cuda {

struct CudaOptions {
  int device = 0;  // the N of cuda:N
  // The arithmetic of compile()d inference plans; bf16 also trains in mixed precision (bf16
  // activations and convolutions, fp32 parameters and sums), as PyTorch's AMP does.
  DataType plan_precision = DataType::f32;
  // fp32 convolutions (the training ops' and fp32 plans') on TF32 tensor cores; refused before
  // compute capability 8.0 (devices/ asks for it only where the GPU has them).
  bool tf32 = false;
};

class CudaBackend final : public nets::Backend {
 public:
  /// Starts the backend on GPU `options.device`; throws a labpose::Error saying why when that GPU
  /// cannot be used (no driver, no such device, compute capability below 7.5, bf16 or TF32 before
  /// 8.0).
  explicit CudaBackend(const CudaOptions& options);
  ~CudaBackend() override;
  CudaBackend(const CudaBackend&) = delete;
  CudaBackend& operator=(const CudaBackend&) = delete;

  std::string name() const override;
  std::string description() const override;
  /// fp16 or bf16 plans; else tf32 when fp32 convolutions use TF32, else fp32.
  nets::PlanPrecision plan_precision() const override;
  /// bf16 for a bf16 backend (mixed precision), else tf32 when fp32 convolutions use TF32, else
  /// fp32. fp16 backends train in fp32 (the trainer refuses that pairing).
  nets::PlanPrecision training_precision() const override;
  bool host_memory() const override { return false; }
  /// cuDNN's tensors hold at most 2^31 - 1 values (their sizes and strides are int).
  std::int64_t largest_tensor_elements() const override { return 2147483647; }
  /// The memory pool's peak: the most device memory held at once.
  std::int64_t peak_memory_bytes() const override;
  nets::Layout activation_layout() const override { return nets::Layout::nhwc; }

  nets::Tensor allocate(const nets::Shape& shape) override;
  nets::Tensor allocate_flat(std::int64_t count) override;
  /// bf16 images (NHWC) on a backend training in bf16, else allocate().
  nets::Tensor allocate_activation(const nets::Shape& shape) override;
  void copy_from_host(const float* host, nets::Tensor& t) override;
  void copy_all_from_host(std::span<const HostCopy> copies) override;
  std::unique_ptr<nets::HostReadback> make_readback(std::int64_t count) override;
  void copy_pixels_from_host(const std::uint8_t* pixels, nets::Tensor& t) override;
  void copy_to_host(const nets::Tensor& t, float* host) override;
  void copy(const nets::Tensor& src, nets::Tensor& dst) override;
  void fill(nets::Tensor& t, float value) override;
  void synchronize() override;

  void conv2d_forward(const nets::Tensor& x, const nets::Tensor& w, const nets::Tensor& bias,
                      nets::Tensor& y, const nets::ConvGeometry& geometry) override;
  void conv2d_backward_data(const nets::Tensor& dy, const nets::Tensor& w, nets::Tensor& dx,
                            const nets::ConvGeometry& geometry) override;
  void conv2d_backward_weights(const nets::Tensor& x, const nets::Tensor& dy, nets::Tensor& dw,
                               nets::Tensor& dbias, const nets::ConvGeometry& geometry) override;
  void conv_transpose2d_forward(const nets::Tensor& x, const nets::Tensor& w,
                                const nets::Tensor& bias, nets::Tensor& y,
                                const nets::ConvGeometry& geometry) override;
  void conv_transpose2d_backward_data(const nets::Tensor& dy, const nets::Tensor& w,
                                      nets::Tensor& dx,
                                      const nets::ConvGeometry& geometry) override;
  void conv_transpose2d_backward_weights(const nets::Tensor& x, const nets::Tensor& dy,
                                         nets::Tensor& dw, nets::Tensor& dbias,
                                         const nets::ConvGeometry& geometry) override;
  void batch_norm_forward_inference(const nets::Tensor& x, const nets::Tensor& gamma,
                                    const nets::Tensor& beta, const nets::Tensor& running_mean,
                                    const nets::Tensor& running_var, float epsilon,
                                    nets::Tensor& y) override;
  void batch_norm_forward_training(const nets::Tensor& x, const nets::Tensor& gamma,
                                   const nets::Tensor& beta, float epsilon, float momentum,
                                   nets::Tensor& y, nets::Tensor& saved_mean,
                                   nets::Tensor& saved_variance, nets::Tensor& running_mean,
                                   nets::Tensor& running_var) override;
  void batch_norm_backward(const nets::Tensor& dy, const nets::Tensor& x, const nets::Tensor& gamma,
                           const nets::Tensor& mean, const nets::Tensor& variance, float epsilon,
                           bool constant_statistics, nets::Tensor& dx, nets::Tensor& dgamma,
                           nets::Tensor& dbeta) override;
  void batch_norm_statistics(const nets::Tensor& x, nets::Tensor& mean,
                             nets::Tensor& variance) override;
  void batch_norm_backward_reduce(const nets::Tensor& dy, const nets::Tensor& x,
                                  const nets::Tensor& mean, const nets::Tensor& variance,
                                  float epsilon, nets::Tensor& dgamma,
                                  nets::Tensor& dbeta) override;
  void batch_norm_backward_data(const nets::Tensor& dy, const nets::Tensor& x,
                                const nets::Tensor& gamma, const nets::Tensor& mean,
                                const nets::Tensor& variance, float epsilon,
                                const nets::Tensor& sum_dy_xhat, const nets::Tensor& sum_dy,
                                std::int64_t count, nets::Tensor& dx) override;
  void relu_forward(const nets::Tensor& x, nets::Tensor& y, float cap) override;
  void relu_backward(const nets::Tensor& dy, const nets::Tensor& y, nets::Tensor& dx,
                     float cap) override;
  void max_pool_forward(const nets::Tensor& x, nets::Tensor& y,
                        const nets::PoolGeometry& geometry) override;
  void max_pool_backward(const nets::Tensor& dy, const nets::Tensor& x, nets::Tensor& dx,
                         const nets::PoolGeometry& geometry) override;
  void add(const nets::Tensor& a, const nets::Tensor& b, nets::Tensor& y) override;
  void channel_affine(const nets::Tensor& x, const std::vector<float>& scale,
                      const std::vector<float>& shift, nets::Tensor& y) override;
  void find_peaks(const nets::Tensor& score, const nets::Tensor& locref,
                  nets::Tensor& peaks) override;
  double sigmoid_cross_entropy_forward(const nets::Tensor& logits, const nets::Tensor& targets,
                                       const nets::Tensor& weights) override;
  void sigmoid_cross_entropy_backward(const nets::Tensor& logits, const nets::Tensor& targets,
                                      const nets::Tensor& weights, float scale,
                                      nets::Tensor& dlogits) override;
  double huber_forward(const nets::Tensor& predictions, const nets::Tensor& targets,
                       const nets::Tensor& weights, float delta) override;
  void sigmoid_cross_entropy_sum(const nets::Tensor& logits, const nets::Tensor& targets,
                                 const nets::Tensor& weights, nets::Tensor& sums,
                                 std::int64_t at) override;
  void huber_sum(const nets::Tensor& predictions, const nets::Tensor& targets,
                 const nets::Tensor& weights, float delta, nets::Tensor& sums,
                 std::int64_t at) override;
  void huber_backward(const nets::Tensor& predictions, const nets::Tensor& targets,
                      const nets::Tensor& weights, float delta, float scale,
                      nets::Tensor& dpredictions) override;
  void sgd_step(nets::Tensor& parameters, const nets::Tensor& gradients, nets::Tensor& velocity,
                const nets::SgdSettings& settings) override;
  void adam_step(nets::Tensor& parameters, const nets::Tensor& gradients,
                 nets::Tensor& first_moment, nets::Tensor& second_moment,
                 const nets::AdamSettings& settings, std::int64_t step) override;
  std::unique_ptr<nets::InferencePlan> compile(const nets::FusedGraph& graph,
                                               const nets::Shape& input) override;
  /// `work` captured as a CUDA graph, its scratch kept with it (graphs.hpp record_on_stream).
  std::unique_ptr<nets::RecordedWork> record(const std::function<void()>& work,
                                             std::string& why_not) override;

  /// Device memory in use, cached and at its peak (bench and tests read it).
  PoolStatistics memory_statistics() const;

  /// Streams, handles, pool and per-shape caches shared by the op files; defined in state.hpp.
  struct State;
  State& state() { return *state_; }

 private:
  std::unique_ptr<State> state_;
};

/// `backend` as the CUDA backend, or a labpose::Error naming what it is instead (for GPU tests
/// that read the device state of a backend from devices::make_backend).
CudaBackend& as_cuda(nets::Backend& backend);

}  // namespace labpose::cuda
