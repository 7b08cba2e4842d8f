// Layers: one op with its parameters, forward and backward, calling only the Backend, so the same
// layer runs on every device. A Net wires layers into a graph and owns all memory; a layer keeps
// what it needs between forward and backward (e.g. batch statistics). Not a module system: no
// hooks, no dynamic graph.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "nets/backend.hpp"

namespace labpose::nets {

class Communicator;

/// A named tensor of the model: trainable (weights, biases) or state (batch-norm running
/// statistics). The Net keeps values (and gradients of trainable ones) in one allocation each.
struct Parameter {
  std::string name;  // torchvision naming: "layer1.0.conv1.weight"
  Shape shape;
  bool trainable = true;
  Tensor value;
  Tensor gradient;  // empty for state
};

/// What kind of op a layer is; the inference fuser and weight converters look at this.
enum class LayerKind { normalize, conv2d, batch_norm, relu, max_pool, add, conv_transpose2d };

class Layer {
 public:
  explicit Layer(std::string name) : name_(std::move(name)) {}
  virtual ~Layer() = default;
  Layer(const Layer&) = delete;
  Layer& operator=(const Layer&) = delete;

  const std::string& name() const { return name_; }
  virtual LayerKind kind() const = 0;
  /// The parameters this layer needs; the Net allocates them and fills in value/gradient.
  virtual std::vector<Parameter> declare_parameters() const { return {}; }
  /// Called by the Net after allocation with the layer's parameters, in declaration order.
  virtual void bind_parameters(const std::vector<Parameter*>& parameters) {
    static_cast<void>(parameters);
  }
  /// Throws a labpose::Error when the inputs do not fit this layer.
  virtual Shape output_shape(const std::vector<Shape>& inputs) const = 0;
  /// Allocates per-shape state (called once per input shape, before forward).
  virtual void prepare(Backend& backend, const std::vector<Shape>& inputs) {
    static_cast<void>(backend);
    static_cast<void>(inputs);
  }
  virtual void forward(Backend& backend, const std::vector<const Tensor*>& inputs, Tensor& output,
                       bool training) = 0;
  /// dinputs[i] is null when input i needs no gradient. Parameter gradients are overwritten.
  virtual void backward(Backend& backend, const std::vector<const Tensor*>& inputs,
                        const Tensor& output, const Tensor& doutput,
                        const std::vector<Tensor*>& dinputs) = 0;
  /// True when the layer may write its output over its (single) input (ReLU).
  virtual bool can_run_in_place() const { return false; }
  /// Whether backward needs the layer's inputs / output kept alive.
  virtual bool backward_needs_inputs() const { return true; }
  virtual bool backward_needs_output() const { return false; }

 private:
  std::string name_;
};

// ---- the layers -------------------------------------------------------------------------------

/// y[:, c] = (x[:, c] - mean[c]) / std[c]; the network input's normalization (no gradient).
class Normalize final : public Layer {
 public:
  Normalize(std::string name, std::vector<float> mean, std::vector<float> std);
  LayerKind kind() const override { return LayerKind::normalize; }
  Shape output_shape(const std::vector<Shape>& inputs) const override;
  void forward(Backend& backend, const std::vector<const Tensor*>& inputs, Tensor& output,
               bool training) override;
  void backward(Backend& backend, const std::vector<const Tensor*>& inputs, const Tensor& output,
                const Tensor& doutput, const std::vector<Tensor*>& dinputs) override;
  bool backward_needs_inputs() const override { return false; }
  const std::vector<float>& mean() const { return mean_; }
  const std::vector<float>& std() const { return std_; }

 private:
  std::vector<float> mean_, std_, scale_, shift_;
};

/// What Conv2d and ConvTranspose2d share: a weight (+ bias) parameter and the geometry.
class ConvolutionLayer : public Layer {
 public:
  std::vector<Parameter> declare_parameters() const override;
  void bind_parameters(const std::vector<Parameter*>& parameters) override;
  const ConvGeometry& geometry() const { return geometry_; }
  Parameter& weight() const { return *weight_; }
  Parameter* bias() const { return bias_; }  // null without bias
  int in_channels() const { return in_channels_; }
  int out_channels() const { return out_channels_; }

 protected:
  ConvolutionLayer(std::string name, int in_channels, int out_channels, const Shape& weight_shape,
                   const ConvGeometry& geometry, bool bias);
  /// Throws unless inputs are one (N, in_channels, H, W) image.
  void check_input(const std::vector<Shape>& inputs) const;
  const Tensor& bias_value() const { return bias_ != nullptr ? bias_->value : no_bias_; }
  /// What the backend kept of the input at the last training forward, for the backward.
  std::unique_ptr<SavedInput>& saved_input() { return saved_input_; }

 private:
  int in_channels_, out_channels_;
  Shape weight_shape_;
  ConvGeometry geometry_;
  bool has_bias_;
  Parameter* weight_ = nullptr;
  Parameter* bias_ = nullptr;
  Tensor no_bias_;
  std::unique_ptr<SavedInput> saved_input_;
};

/// PyTorch's Conv2d (weights (K, C/groups, R, S)).
class Conv2d final : public ConvolutionLayer {
 public:
  Conv2d(std::string name, int in_channels, int out_channels, int kernel,
         const ConvGeometry& geometry, bool bias);
  LayerKind kind() const override { return LayerKind::conv2d; }
  Shape output_shape(const std::vector<Shape>& inputs) const override;
  void forward(Backend& backend, const std::vector<const Tensor*>& inputs, Tensor& output,
               bool training) override;
  void backward(Backend& backend, const std::vector<const Tensor*>& inputs, const Tensor& output,
                const Tensor& doutput, const std::vector<Tensor*>& dinputs) override;
};

/// PyTorch's ConvTranspose2d (weights (C_in, C_out/groups, R, S)).
class ConvTranspose2d final : public ConvolutionLayer {
 public:
  ConvTranspose2d(std::string name, int in_channels, int out_channels, int kernel,
                  const ConvGeometry& geometry, bool bias);
  LayerKind kind() const override { return LayerKind::conv_transpose2d; }
  Shape output_shape(const std::vector<Shape>& inputs) const override;
  void forward(Backend& backend, const std::vector<const Tensor*>& inputs, Tensor& output,
               bool training) override;
  void backward(Backend& backend, const std::vector<const Tensor*>& inputs, const Tensor& output,
                const Tensor& doutput, const std::vector<Tensor*>& dinputs) override;
};

/// BatchNorm2d with PyTorch's defaults (eps 1e-5, momentum 0.1). With `frozen`, training uses the
/// running statistics and leaves them unchanged (fine-tuning a pretrained backbone). With `ranks`
/// (sync batch norm, as PyTorch's SyncBatchNorm), training normalizes with the statistics of all
/// ranks' batches together and takes the gradient through them: one all-reduce of per-channel sums
/// in forward and one in backward.
class BatchNorm2d final : public Layer {
 public:
  BatchNorm2d(std::string name, int channels, float epsilon = 1e-5F, float momentum = 0.1F);
  LayerKind kind() const override { return LayerKind::batch_norm; }
  std::vector<Parameter> declare_parameters() const override;
  void bind_parameters(const std::vector<Parameter*>& parameters) override;
  Shape output_shape(const std::vector<Shape>& inputs) const override;
  void prepare(Backend& backend, const std::vector<Shape>& inputs) override;
  void forward(Backend& backend, const std::vector<const Tensor*>& inputs, Tensor& output,
               bool training) override;
  void backward(Backend& backend, const std::vector<const Tensor*>& inputs, const Tensor& output,
                const Tensor& doutput, const std::vector<Tensor*>& dinputs) override;
  void set_frozen(bool frozen) { frozen_ = frozen; }
  bool frozen() const { return frozen_; }
  /// Batch statistics over the ranks of `ranks` (nullptr: this replica's own). Every rank must
  /// run the same layers in the same order.
  void set_ranks(Communicator* ranks) { ranks_ = ranks; }
  float epsilon() const { return epsilon_; }
  Parameter& gamma() const { return *gamma_; }
  Parameter& beta() const { return *beta_; }
  Parameter& running_mean() const { return *running_mean_; }
  Parameter& running_var() const { return *running_var_; }

 private:
  int channels_;
  float epsilon_, momentum_;
  bool frozen_ = false;
  bool last_forward_used_batch_statistics_ = false;
  Parameter* gamma_ = nullptr;
  Parameter* beta_ = nullptr;
  Parameter* running_mean_ = nullptr;
  Parameter* running_var_ = nullptr;
  Tensor saved_mean_, saved_variance_;
  Communicator* ranks_ = nullptr;
  std::int64_t ranks_count_ = 0;     // values per channel over all ranks, of the last forward
  Tensor total_dy_xhat_, total_dy_;  // backward's sums over all ranks

  void forward_across_ranks(Backend& backend, const Tensor& x, Tensor& output);
  void backward_across_ranks(Backend& backend, const Tensor& x, const Tensor& doutput, Tensor& dx);
};

/// ReLU, or ReLU6 with cap 6.
class Relu final : public Layer {
 public:
  Relu(std::string name, float cap = 0.0F) : Layer(std::move(name)), cap_(cap) {}
  LayerKind kind() const override { return LayerKind::relu; }
  Shape output_shape(const std::vector<Shape>& inputs) const override;
  void forward(Backend& backend, const std::vector<const Tensor*>& inputs, Tensor& output,
               bool training) override;
  void backward(Backend& backend, const std::vector<const Tensor*>& inputs, const Tensor& output,
                const Tensor& doutput, const std::vector<Tensor*>& dinputs) override;
  bool can_run_in_place() const override { return true; }
  bool backward_needs_inputs() const override { return false; }
  bool backward_needs_output() const override { return true; }
  float cap() const { return cap_; }

 private:
  float cap_;
};

class MaxPool2d final : public Layer {
 public:
  MaxPool2d(std::string name, const PoolGeometry& geometry)
      : Layer(std::move(name)), geometry_(geometry) {}
  LayerKind kind() const override { return LayerKind::max_pool; }
  Shape output_shape(const std::vector<Shape>& inputs) const override;
  void forward(Backend& backend, const std::vector<const Tensor*>& inputs, Tensor& output,
               bool training) override;
  void backward(Backend& backend, const std::vector<const Tensor*>& inputs, const Tensor& output,
                const Tensor& doutput, const std::vector<Tensor*>& dinputs) override;
  const PoolGeometry& geometry() const { return geometry_; }

 private:
  PoolGeometry geometry_;
};

/// y = a + b (residual connections).
class Add final : public Layer {
 public:
  explicit Add(std::string name) : Layer(std::move(name)) {}
  LayerKind kind() const override { return LayerKind::add; }
  Shape output_shape(const std::vector<Shape>& inputs) const override;
  void forward(Backend& backend, const std::vector<const Tensor*>& inputs, Tensor& output,
               bool training) override;
  void backward(Backend& backend, const std::vector<const Tensor*>& inputs, const Tensor& output,
                const Tensor& doutput, const std::vector<Tensor*>& dinputs) override;
  bool backward_needs_inputs() const override { return false; }
};

}  // namespace labpose::nets
