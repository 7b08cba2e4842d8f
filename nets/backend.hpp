// The Backend interface: one method per op direction, implemented by `ref` (plain loops, the
// oracle), `cpu` (oneDNN) and `cuda` (cuDNN + kernels). Layers and models call only these methods,
// so every device runs the same network code. Backends cache their per-shape plans (primitives,
// algorithms) internally; callers pass preallocated output tensors and never see a backend's memory
// layout. Not an autograd system: layers decide what to call in backward.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "nets/tensor.hpp"

namespace labpose::nets {

/// Geometry of a (transposed) convolution. Padding may be asymmetric (TensorFlow "same" padding).
/// Convolution: P = (H + pad_top + pad_bottom - dilation_h * (R - 1) - 1) / stride_h + 1.
/// Transposed: P = (H - 1) * stride_h - pad_top - pad_bottom + dilation_h * (R - 1) + output_pad_h
/// + 1.
struct ConvGeometry {
  int stride_h = 1, stride_w = 1;
  int pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  int dilation_h = 1, dilation_w = 1;
  int groups = 1;
  int output_pad_h = 0, output_pad_w = 0;  // transposed convolution only

  static ConvGeometry symmetric(int stride, int pad, int dilation = 1, int groups = 1);
  bool operator==(const ConvGeometry&) const = default;
};

/// Output size of a convolution with filter `filter` on input `input` (one spatial axis).
std::int64_t conv_output_size(std::int64_t input, std::int64_t filter, int stride, int pad_before,
                              int pad_after, int dilation);
/// Output size of a transposed convolution (one spatial axis).
std::int64_t conv_transpose_output_size(std::int64_t input, std::int64_t filter, int stride,
                                        int pad_before, int pad_after, int dilation,
                                        int output_pad);
/// (N, K, P, Q) for x: (N, C, H, W) and w: (K, C/groups, R, S).
Shape conv2d_output_shape(const Shape& x, const Shape& w, const ConvGeometry& geometry);
/// (N, K, P, Q) for x: (N, C, H, W) and w: (C, K/groups, R, S) (PyTorch's ConvTranspose2d layout).
Shape conv_transpose2d_output_shape(const Shape& x, const Shape& w, const ConvGeometry& geometry);

struct PoolGeometry {
  int kernel_h = 3, kernel_w = 3;
  int stride_h = 2, stride_w = 2;
  int pad_top = 1, pad_left = 1, pad_bottom = 1, pad_right = 1;
  bool operator==(const PoolGeometry&) const = default;
};
Shape max_pool_output_shape(const Shape& x, const PoolGeometry& geometry);

/// PyTorch's SGD with momentum (dampening 0) and L2 weight decay added to the gradient.
struct SgdSettings {
  float learning_rate = 0.01F, momentum = 0.9F, weight_decay = 0.0F;
};

/// PyTorch's Adam (decoupled = false) and AdamW (decoupled = true).
struct AdamSettings {
  float learning_rate = 1e-3F, beta1 = 0.9F, beta2 = 0.999F, epsilon = 1e-8F, weight_decay = 0.0F;
  bool decoupled = true;
};

/// The arithmetic of inference plans: fp32 (the default and the reference), fp16 / bf16 on a GPU's
/// tensor cores (bf16 needs compute capability 8.0), bf16 on a CPU with bf16 units, or int8 on a
/// CPU with VNNI (post-training quantization: a graph calibrated with ActivationRanges).
/// `automatic` (--precision auto) is a request, resolved per device by its kind's
/// automatic_precision before a backend is made; it never picks int8. `tf32` is fp32 whose
/// convolutions multiply on TF32 tensor cores (GPUs of compute capability 8.0 and later); devices
/// resolve it to fp32 where they have none. Training computes in fp32 (or tf32, or mixed bf16).
enum class PlanPrecision { fp32, fp16, bf16, int8, automatic, tf32 };

/// "fp32", "fp16", "bf16", "int8", "auto" or "tf32".
inline const char* precision_name(PlanPrecision precision) {
  switch (precision) {
    case PlanPrecision::tf32:
      return "tf32";
    case PlanPrecision::fp16:
      return "fp16";
    case PlanPrecision::bf16:
      return "bf16";
    case PlanPrecision::int8:
      return "int8";
    case PlanPrecision::automatic:
      return "auto";
    case PlanPrecision::fp32:
      break;
  }
  return "fp32";
}

class InferencePlan;
struct FusedGraph;

/// What a backend keeps of a convolution's input between a layer's training forward and its
/// backward: in mixed precision, the bf16 copy the forward made, so that each step converts x once.
/// A backend that reads x itself keeps nothing. Owned by the layer; it describes x as the forward
/// saw it, which the backward needs unchanged in any case.
class SavedInput {
 public:
  virtual ~SavedInput() = default;
};

/// A flat tensor on its way to the host (Backend::make_readback). Reuse it: one start() at a time.
class HostReadback {
 public:
  virtual ~HostReadback() = default;
  /// Starts copying `t` (flat, the readback's count of floats) after the work queued so far.
  virtual void start(const Tensor& t) = 0;
  /// The values of the last start(), waiting for them if they are still on the way.
  virtual std::span<const float> values() = 0;
};

/// Work recorded once by a backend and replayed as it was recorded (Backend::record).
class RecordedWork {
 public:
  virtual ~RecordedWork() = default;
  /// Queues the recorded work again: the same ops on the same tensors, whatever they hold now.
  virtual void replay() = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;

  /// "ref", "cpu", "cuda:0".
  virtual std::string name() const = 0;
  /// A human description ("oneDNN 2.6.3, AVX-512", "NVIDIA H100, cuDNN 9.19").
  virtual std::string description() const = 0;
  /// The physical layout this backend uses for rank-4 activations.
  virtual Layout activation_layout() const = 0;
  /// True when tensors live in host memory (the CPU's cores compute on them directly), false on a
  /// device with memory of its own (a GPU).
  virtual bool host_memory() const = 0;
  /// The most device memory this backend has held at once, in bytes (0 on backends whose tensors
  /// are in host memory: the process's peak resident size measures those).
  virtual std::int64_t peak_memory_bytes() const { return 0; }
  /// The arithmetic of the plans compile() makes (never `automatic`).
  virtual PlanPrecision plan_precision() const { return PlanPrecision::fp32; }
  /// The arithmetic of the convolutions of the training ops: fp32, or bf16 for mixed precision
  /// (bf16 operands inside the convolutions, fp32 sums and parameters; on the CPU also bf16 values
  /// between layers, see allocate_activation).
  virtual PlanPrecision training_precision() const { return PlanPrecision::fp32; }
  /// The most values one tensor of this backend may hold (cuDNN's: 2^31 - 1; unlimited elsewhere),
  /// which caps the batch of an inference plan on large images (nets::largest_tensor_per_image).
  virtual std::int64_t largest_tensor_elements() const {
    return std::numeric_limits<std::int64_t>::max();
  }

  // ---- memory -------------------------------------------------------------------------------
  /// A new tensor: rank-4 shapes in activation_layout(), other ranks flat.
  virtual Tensor allocate(const Shape& shape) = 0;
  /// A flat tensor holding `count` floats in one allocation (parameters, gradients).
  virtual Tensor allocate_flat(std::int64_t count) = 0;
  /// A tensor that carries values (or their gradients) between the layers of a Net, never a net's
  /// input or output: the backend may keep it narrower than fp32 (the CPU training in bf16 keeps
  /// bf16, which halves the memory traffic of batch norm, ReLU and additions), and then every op
  /// of the layers reads and writes that element type. Others: allocate(shape).
  virtual Tensor allocate_activation(const Shape& shape) { return allocate(shape); }
  /// host: `t.elements()` floats in logical (NCHW) order.
  virtual void copy_from_host(const float* host, Tensor& t) = 0;
  /// One host-to-device copy of a tensor: `host` holds `tensor->elements()` floats as above.
  struct HostCopy {
    const float* host;
    Tensor* tensor;
  };
  /// Every copy at once, as copy_from_host each. On a GPU one packed transfer through pinned
  /// memory (a training step's batch: images, targets, weights), so that the host waits for the
  /// device at most once; elsewhere one copy after the other.
  virtual void copy_all_from_host(std::span<const HostCopy> copies) {
    for (const HostCopy& copy : copies) copy_from_host(copy.host, *copy.tensor);
  }
  virtual void copy_to_host(const Tensor& t, float* host) = 0;
  /// A host buffer of `count` floats that flat tensors of this backend are read into without the
  /// host waiting at the start: on a GPU a pinned buffer filled after the work queued so far;
  /// elsewhere a copy made at once.
  virtual std::unique_ptr<HostReadback> make_readback(std::int64_t count);
  /// host: t.n() images of t.h() rows of t.w() pixels, each pixel t.c() interleaved 8-bit
  /// channels (packed RGB for 3, as decoders and OpenCV give them); t gets the 0-255 values.
  virtual void copy_pixels_from_host(const std::uint8_t* pixels, Tensor& t) = 0;
  /// dst = src (same shape).
  virtual void copy(const Tensor& src, Tensor& dst) = 0;
  virtual void fill(Tensor& t, float value) = 0;
  /// Waits for all queued work (a no-op on the CPU).
  virtual void synchronize() = 0;

  // ---- convolution ---------------------------------------------------------------------------
  // x: (N, C, H, W), w: (K, C/groups, R, S), bias: (K) or empty, y: (N, K, P, Q)
  virtual void conv2d_forward(const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y,
                              const ConvGeometry& geometry) = 0;
  // dy: (N, K, P, Q), w: (K, C/groups, R, S) -> dx: (N, C, H, W)
  virtual void conv2d_backward_data(const Tensor& dy, const Tensor& w, Tensor& dx,
                                    const ConvGeometry& geometry) = 0;
  // x: (N, C, H, W), dy: (N, K, P, Q) -> dw: (K, C/groups, R, S), dbias: (K) or empty (not
  // computed)
  virtual void conv2d_backward_weights(const Tensor& x, const Tensor& dy, Tensor& dw, Tensor& dbias,
                                       const ConvGeometry& geometry) = 0;
  // A layer's training step: conv2d_forward_training keeps in `saved` what the backward needs of
  // x (see SavedInput); conv2d_backward computes both gradients (dx when it is not null) and
  // converts dy once where the arithmetic needs a copy. The defaults call the ops above.
  virtual void conv2d_forward_training(const Tensor& x, const Tensor& w, const Tensor& bias,
                                       Tensor& y, const ConvGeometry& geometry,
                                       std::unique_ptr<SavedInput>& saved);
  virtual void conv2d_backward(const Tensor& x, const Tensor& dy, const Tensor& w, Tensor* dx,
                               Tensor& dw, Tensor& dbias, const ConvGeometry& geometry,
                               const SavedInput* saved);

  // ---- transposed convolution (PyTorch ConvTranspose2d weights) -------------------------------
  // x: (N, C, H, W), w: (C, K/groups, R, S), bias: (K) or empty, y: (N, K, P, Q)
  virtual void conv_transpose2d_forward(const Tensor& x, const Tensor& w, const Tensor& bias,
                                        Tensor& y, const ConvGeometry& geometry) = 0;
  // dy: (N, K, P, Q) -> dx: (N, C, H, W)
  virtual void conv_transpose2d_backward_data(const Tensor& dy, const Tensor& w, Tensor& dx,
                                              const ConvGeometry& geometry) = 0;
  // x: (N, C, H, W), dy: (N, K, P, Q) -> dw: (C, K/groups, R, S), dbias: (K) or empty
  virtual void conv_transpose2d_backward_weights(const Tensor& x, const Tensor& dy, Tensor& dw,
                                                 Tensor& dbias, const ConvGeometry& geometry) = 0;
  // A layer's training step, as conv2d_forward_training and conv2d_backward.
  virtual void conv_transpose2d_forward_training(const Tensor& x, const Tensor& w,
                                                 const Tensor& bias, Tensor& y,
                                                 const ConvGeometry& geometry,
                                                 std::unique_ptr<SavedInput>& saved);
  virtual void conv_transpose2d_backward(const Tensor& x, const Tensor& dy, const Tensor& w,
                                         Tensor* dx, Tensor& dw, Tensor& dbias,
                                         const ConvGeometry& geometry, const SavedInput* saved);

  // ---- batch normalization --------------------------------------------------------------------
  // x, y: (N, C, H, W); gamma, beta, running_mean, running_var: (C)
  virtual void batch_norm_forward_inference(const Tensor& x, const Tensor& gamma,
                                            const Tensor& beta, const Tensor& running_mean,
                                            const Tensor& running_var, float epsilon,
                                            Tensor& y) = 0;
  /// Normalizes with batch statistics (biased variance), saves them for backward, and updates the
  /// running statistics as PyTorch does: running = (1 - momentum) * running + momentum * batch,
  /// with the unbiased variance.
  // saved_mean, saved_variance, running_mean, running_var: (C)
  virtual void batch_norm_forward_training(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                           float epsilon, float momentum, Tensor& y,
                                           Tensor& saved_mean, Tensor& saved_variance,
                                           Tensor& running_mean, Tensor& running_var) = 0;
  /// The gradient of batch normalization with statistics `mean`/`variance` (C). When
  /// `constant_statistics` (frozen layers using running statistics) they are constants and
  /// dx = dy * gamma / sqrt(variance + eps); otherwise they are the batch's own and dx has the
  /// mean and variance terms.
  // dy, x: (N, C, H, W) -> dx: (N, C, H, W), dgamma, dbeta: (C)
  virtual void batch_norm_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma,
                                   const Tensor& mean, const Tensor& variance, float epsilon,
                                   bool constant_statistics, Tensor& dx, Tensor& dgamma,
                                   Tensor& dbeta) = 0;
  // Batch norm over the ranks of a job (sync_batch_norm): each rank computes its share's
  // statistics and sums, the ranks add them up, and each rank normalizes and takes the gradient of
  // its share with the totals.
  /// The per-channel mean and biased variance of x (its batch statistics), and nothing else.
  // x: (N, C, H, W) -> mean, variance: (C)
  virtual void batch_norm_statistics(const Tensor& x, Tensor& mean, Tensor& variance) = 0;
  /// The per-channel sums of the gradient: dgamma = sum(dy * xhat), dbeta = sum(dy), with xhat =
  /// (x - mean) / sqrt(variance + eps); batch_norm_backward computes the same two.
  // dy, x: (N, C, H, W); mean, variance -> dgamma, dbeta: (C)
  virtual void batch_norm_backward_reduce(const Tensor& dy, const Tensor& x, const Tensor& mean,
                                          const Tensor& variance, float epsilon, Tensor& dgamma,
                                          Tensor& dbeta) = 0;
  /// dx of batch norm whose statistics `mean`/`variance` came from `count` values per channel
  /// (this x and the other ranks'), given the sums of dy * xhat and dy over all of them:
  /// dx = gamma / sqrt(variance + eps) * (dy - sum_dy / count - xhat * sum_dy_xhat / count).
  // dy, x: (N, C, H, W); gamma, mean, variance, sum_dy_xhat, sum_dy: (C) -> dx: (N, C, H, W)
  virtual void batch_norm_backward_data(const Tensor& dy, const Tensor& x, const Tensor& gamma,
                                        const Tensor& mean, const Tensor& variance, float epsilon,
                                        const Tensor& sum_dy_xhat, const Tensor& sum_dy,
                                        std::int64_t count, Tensor& dx) = 0;

  // ---- activations, pooling, elementwise -------------------------------------------------------
  /// y = max(x, 0), or min(max(x, 0), cap) when cap > 0 (ReLU6: cap 6). y may be x.
  virtual void relu_forward(const Tensor& x, Tensor& y, float cap) = 0;
  /// dx = dy where 0 < y < cap (or y > 0 without cap), else 0; uses the output y. dx may be dy.
  virtual void relu_backward(const Tensor& dy, const Tensor& y, Tensor& dx, float cap) = 0;
  // x: (N, C, H, W) -> y: (N, C, P, Q); padding never wins the max
  virtual void max_pool_forward(const Tensor& x, Tensor& y, const PoolGeometry& geometry) = 0;
  // dy: (N, C, P, Q), x: (N, C, H, W) -> dx: (N, C, H, W): each dy goes to its window's first
  // maximum
  virtual void max_pool_backward(const Tensor& dy, const Tensor& x, Tensor& dx,
                                 const PoolGeometry& geometry) = 0;
  /// y = a + b (same shapes); y may be a or b.
  virtual void add(const Tensor& a, const Tensor& b, Tensor& y) = 0;
  /// y[:, c] = x[:, c] * scale[c] + shift[c] for x, y: (N, C, H, W); image normalization.
  virtual void channel_affine(const Tensor& x, const std::vector<float>& scale,
                              const std::vector<float>& shift, Tensor& y) = 0;

  // ---- pose decoding ----------------------------------------------------------------------------
  /// DeepLabCut's peaks, the arithmetic left to the caller (pipeline/pose/decode.hpp): per image n
  /// and bodypart j the first maximum of score map j in row-major order (a later cell replaces it
  /// only when strictly greater; NaN never does, and a NaN first cell stays), and the location
  /// refinement there. score: (N, J, P, Q) logits; locref: (N, 2J, P, Q) ordered dx0, dy0, dx1,
  /// ...; peaks: N * J * kPeakValues floats, per (n, j): the cell p * Q + q, the score there, dx,
  /// dy. On a GPU only these values come back to the host, not the maps.
  virtual void find_peaks(const Tensor& score, const Tensor& locref, Tensor& peaks) = 0;
  static constexpr std::int64_t kPeakValues = 4;

  // ---- losses (sums; the caller divides by the count it wants) --------------------------------
  // logits, targets, weights: same shape. Returns sum(weights * BCE(sigmoid(logits), targets)).
  virtual double sigmoid_cross_entropy_forward(const Tensor& logits, const Tensor& targets,
                                               const Tensor& weights) = 0;
  /// dlogits = scale * weights * (sigmoid(logits) - targets).
  virtual void sigmoid_cross_entropy_backward(const Tensor& logits, const Tensor& targets,
                                              const Tensor& weights, float scale,
                                              Tensor& dlogits) = 0;
  /// sum(weights * huber(predictions - targets)), huber(d) = d^2/2 for |d| <= delta, else delta(|d|
  /// - delta/2).
  virtual double huber_forward(const Tensor& predictions, const Tensor& targets,
                               const Tensor& weights, float delta) = 0;
  /// The sums above left on the device in sums[at] (a flat tensor of this backend) instead of
  /// returned, so that nothing waits for them (a training step reads its loss a step later with a
  /// HostReadback). The defaults go through the host; a GPU's stay on the device.
  virtual void sigmoid_cross_entropy_sum(const Tensor& logits, const Tensor& targets,
                                         const Tensor& weights, Tensor& sums, std::int64_t at);
  virtual void huber_sum(const Tensor& predictions, const Tensor& targets, const Tensor& weights,
                         float delta, Tensor& sums, std::int64_t at);
  /// dpredictions = scale * weights * clamp(predictions - targets, -delta, delta).
  virtual void huber_backward(const Tensor& predictions, const Tensor& targets,
                              const Tensor& weights, float delta, float scale,
                              Tensor& dpredictions) = 0;

  // ---- optimizers (flat tensors of equal size) --------------------------------------------------
  virtual void sgd_step(Tensor& parameters, const Tensor& gradients, Tensor& velocity,
                        const SgdSettings& settings) = 0;
  /// `step` counts from 1 (bias correction).
  virtual void adam_step(Tensor& parameters, const Tensor& gradients, Tensor& first_moment,
                         Tensor& second_moment, const AdamSettings& settings,
                         std::int64_t step) = 0;

  // ---- recording -----------------------------------------------------------------------------
  /// `work`'s ops on this backend, recorded without running them, to be replayed as one unit (a
  /// GPU's CUDA graph: one launch instead of one per op). `work` must queue the same ops on the
  /// same tensors every time and wait for nothing; its host code runs once, now. Null, with
  /// `why_not` set, where the backend records nothing (the default: host backends run op by op)
  /// or recording failed.
  virtual std::unique_ptr<RecordedWork> record(const std::function<void()>& work,
                                               std::string& why_not);

  // ---- inference ------------------------------------------------------------------------------
  /// Compiles a fused graph for one input shape: batch-norm folded, activations and residual adds
  /// fused, layouts chosen by the backend, buffers allocated once.
  virtual std::unique_ptr<InferencePlan> compile(const FusedGraph& graph, const Shape& input) = 0;
};

/// A network compiled for one (backend, input shape). run() may be called any number of times.
class InferencePlan {
 public:
  virtual ~InferencePlan() = default;
  virtual const Shape& input_shape() const = 0;
  virtual const std::vector<Shape>& output_shapes() const = 0;
  /// input: input_shape() on the plan's backend; outputs are the graph's outputs, owned by the plan
  /// (valid until the next run).
  virtual const std::vector<Tensor>& run(const Tensor& input) = 0;
  /// run() for a batch of which only the first `frames` (1 to n) matter, such as a video's last,
  /// short batch: a backend that runs the batch in passes stops after the pass holding the last of
  /// them. The outputs of the frames after them are unspecified.
  virtual const std::vector<Tensor>& run_first(const Tensor& input, std::int64_t /*frames*/) {
    return run(input);
  }
  /// The frames computed at once: the whole batch, or a divisor of it where the backend runs the
  /// batch in several passes (the CPU, when a whole batch's activations would not fit its cache).
  virtual std::int64_t frames_per_pass() const { return input_shape().n(); }
};

/// Throws a labpose::Error naming `op` when `actual` differs from `expected` (a caller's bug or bad
/// weights), e.g. "conv2d_forward: y has shape (1, 8, 5, 5), expected (1, 8, 4, 4)".
void check_shape(const char* op, const char* what, const Shape& actual, const Shape& expected);

}  // namespace labpose::nets
