// The CPU backend: oneDNN primitives (cached per shape) over NHWC host memory, hand-written
// OpenMP loops for the memory-bound ops (ReLU, add, losses, optimizers), and inference plans with
// batch norm folded, post-op fusion and oneDNN's blocked layouts; in fp32 or, on a CPU with bf16
// units, in bf16 (plans in bf16, training convolutions in mixed precision). Not thread-safe: one
// training loop or one plan runner per backend object.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "nets/backend.hpp"

namespace labpose::nets::cpu {

/// The vector instructions oneDNN uses on this CPU, in words ("AVX2", "AVX-512 + BF16"). oneDNN's
/// ONEDNN_MAX_CPU_ISA environment variable can lower them.
std::string cpu_instructions();

/// Whether this CPU computes bf16 in hardware (AVX-512 BF16 or AMX) as oneDNN sees it: only then
/// are bf16 plans offered, never emulated.
bool cpu_has_bf16();

/// Whether this CPU has AVX-512 (F, BW, VL, DQ: oneDNN's avx512_core) as oneDNN sees it: where
/// fp32 plans use labpose's own Winograd convolutions.
bool cpu_has_avx512();

/// Whether this CPU has AMX (Intel's matrix units for bf16 and int8, Sapphire Rapids on) as oneDNN
/// sees it: there bf16 3×3 layers go to oneDNN's AMX kernels rather than labpose's Winograd.
bool cpu_has_amx();

/// Whether this CPU has VNNI (AVX-512 or AVX2), the dot-product instructions of fast int8, as
/// oneDNN sees it: only then are int8 plans offered.
bool cpu_has_int8();

class CpuBackend final : public Backend {
 public:
  /// A backend whose compile()d plans and whose convolutions compute in `plan_precision`: fp32,
  /// bf16 on a CPU with bf16 units, or int8 (plans only, from calibrated graphs) on a CPU with VNNI
  /// (an Error saying so elsewhere; fp16 is a UsageError: no CPU path has it). In bf16 the
  /// training ops are mixed precision: a net's values and gradients between layers are bf16
  /// (allocate_activation), its input, outputs, parameters, gradients of parameters and optimizer
  /// state fp32; convolutions read bf16 (converting fp32 operands) and sum in fp32, the other ops
  /// compute in fp32 on the values they read. In int8 the training ops are fp32.
  explicit CpuBackend(PlanPrecision plan_precision = PlanPrecision::fp32);
  ~CpuBackend() override;
  CpuBackend(const CpuBackend&) = delete;
  CpuBackend& operator=(const CpuBackend&) = delete;

  bool host_memory() const override { return true; }
  std::string name() const override { return "cpu"; }
  std::string description() const override;
  PlanPrecision plan_precision() const override { return plan_precision_; }
  PlanPrecision training_precision() const override {
    return plan_precision_ == PlanPrecision::bf16 ? plan_precision_ : PlanPrecision::fp32;
  }
  Layout activation_layout() const override { return Layout::nhwc; }

  Tensor allocate(const Shape& shape) override;
  Tensor allocate_flat(std::int64_t count) override;
  /// bf16 (rank 4) when the training ops are in bf16: the layers' values and gradients stay half
  /// width from one op to the next, and each op converts only where its operands differ.
  Tensor allocate_activation(const Shape& shape) override;
  void copy_from_host(const float* host, Tensor& t) override;
  void copy_pixels_from_host(const std::uint8_t* pixels, Tensor& t) override;
  void copy_to_host(const Tensor& t, float* host) override;
  void copy(const Tensor& src, Tensor& dst) override;
  void fill(Tensor& t, float value) override;
  void synchronize() override {}

  void conv2d_forward(const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y,
                      const ConvGeometry& geometry) override;
  void conv2d_backward_data(const Tensor& dy, const Tensor& w, Tensor& dx,
                            const ConvGeometry& geometry) override;
  void conv2d_backward_weights(const Tensor& x, const Tensor& dy, Tensor& dw, Tensor& dbias,
                               const ConvGeometry& geometry) override;
  void conv_transpose2d_forward(const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y,
                                const ConvGeometry& geometry) override;
  void conv_transpose2d_backward_data(const Tensor& dy, const Tensor& w, Tensor& dx,
                                      const ConvGeometry& geometry) override;
  void conv_transpose2d_backward_weights(const Tensor& x, const Tensor& dy, Tensor& dw,
                                         Tensor& dbias, const ConvGeometry& geometry) override;
  void conv2d_forward_training(const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y,
                               const ConvGeometry& geometry,
                               std::unique_ptr<SavedInput>& saved) override;
  void conv2d_backward(const Tensor& x, const Tensor& dy, const Tensor& w, Tensor* dx, Tensor& dw,
                       Tensor& dbias, const ConvGeometry& geometry,
                       const SavedInput* saved) override;
  void conv_transpose2d_forward_training(const Tensor& x, const Tensor& w, const Tensor& bias,
                                         Tensor& y, const ConvGeometry& geometry,
                                         std::unique_ptr<SavedInput>& saved) override;
  void conv_transpose2d_backward(const Tensor& x, const Tensor& dy, const Tensor& w, Tensor* dx,
                                 Tensor& dw, Tensor& dbias, const ConvGeometry& geometry,
                                 const SavedInput* saved) override;
  void batch_norm_forward_inference(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                    const Tensor& running_mean, const Tensor& running_var,
                                    float epsilon, Tensor& y) override;
  void batch_norm_forward_training(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                   float epsilon, float momentum, Tensor& y, Tensor& saved_mean,
                                   Tensor& saved_variance, Tensor& running_mean,
                                   Tensor& running_var) override;
  void batch_norm_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma,
                           const Tensor& mean, const Tensor& variance, float epsilon,
                           bool constant_statistics, Tensor& dx, Tensor& dgamma,
                           Tensor& dbeta) override;
  void batch_norm_statistics(const Tensor& x, Tensor& mean, Tensor& variance) override;
  void batch_norm_backward_reduce(const Tensor& dy, const Tensor& x, const Tensor& mean,
                                  const Tensor& variance, float epsilon, Tensor& dgamma,
                                  Tensor& dbeta) override;
  void batch_norm_backward_data(const Tensor& dy, const Tensor& x, const Tensor& gamma,
                                const Tensor& mean, const Tensor& variance, float epsilon,
                                const Tensor& sum_dy_xhat, const Tensor& sum_dy, std::int64_t count,
                                Tensor& dx) override;
  void relu_forward(const Tensor& x, Tensor& y, float cap) override;
  void relu_backward(const Tensor& dy, const Tensor& y, Tensor& dx, float cap) override;
  void max_pool_forward(const Tensor& x, Tensor& y, const PoolGeometry& geometry) override;
  void max_pool_backward(const Tensor& dy, const Tensor& x, Tensor& dx,
                         const PoolGeometry& geometry) override;
  void add(const Tensor& a, const Tensor& b, Tensor& y) override;
  void find_peaks(const Tensor& score, const Tensor& locref, Tensor& peaks) override;
  void channel_affine(const Tensor& x, const std::vector<float>& scale,
                      const std::vector<float>& shift, Tensor& y) override;
  double sigmoid_cross_entropy_forward(const Tensor& logits, const Tensor& targets,
                                       const Tensor& weights) override;
  void sigmoid_cross_entropy_backward(const Tensor& logits, const Tensor& targets,
                                      const Tensor& weights, float scale, Tensor& dlogits) override;
  double huber_forward(const Tensor& predictions, const Tensor& targets, const Tensor& weights,
                       float delta) override;
  void huber_backward(const Tensor& predictions, const Tensor& targets, const Tensor& weights,
                      float delta, float scale, Tensor& dpredictions) override;
  void sgd_step(Tensor& parameters, const Tensor& gradients, Tensor& velocity,
                const SgdSettings& settings) override;
  void adam_step(Tensor& parameters, const Tensor& gradients, Tensor& first_moment,
                 Tensor& second_moment, const AdamSettings& settings, std::int64_t step) override;
  std::unique_ptr<InferencePlan> compile(const FusedGraph& graph, const Shape& input) override;
  /// The last-level cache's size in bytes that plans fit their passes to (plan.cpp), as Linux
  /// reports it, or 32 MiB where it does not say.
  std::size_t cache_bytes() const { return cache_bytes_; }
  /// Plans compiled from now on assume this cache size (tests use it to force several passes).
  void set_cache_bytes(std::size_t bytes) { cache_bytes_ = bytes; }

  /// oneDNN state shared by the op files (engine, stream, primitive cache); defined in
  /// dnnl_state.hpp.
  struct State;
  State& state() { return *state_; }

 private:
  std::unique_ptr<State> state_;
  PlanPrecision plan_precision_ = PlanPrecision::fp32;
  std::size_t cache_bytes_;
};

}  // namespace labpose::nets::cpu
