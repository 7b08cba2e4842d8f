// The reference backend: plain loops over NCHW host memory, accumulating in double. Obviously
// correct and slow; it is the oracle every other backend is tested against. Not for production use.
#pragma once

#include "nets/backend.hpp"

namespace labpose::nets::ref {

class RefBackend final : public Backend {
 public:
  bool host_memory() const override { return true; }
  std::string name() const override { return "ref"; }
  std::string description() const override { return "reference loops (the test oracle)"; }
  Layout activation_layout() const override { return Layout::nchw; }

  Tensor allocate(const Shape& shape) override;
  Tensor allocate_flat(std::int64_t count) override;
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
};

}  // namespace labpose::nets::ref
