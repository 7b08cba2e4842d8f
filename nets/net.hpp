// A Net: layers wired into a graph, on one backend. It owns every tensor: parameters in one
// allocation (trainable ones first, in definition order, so an optimizer step is one call and
// freezing the first stages is a prefix), gradients in another, batch-norm statistics in a third,
// and the activations and gradients planned once per input shape (ReLUs in place, gradient buffers
// reused as soon as they are dead). Not an autograd engine: the graph is fixed at construction.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "nets/fused_graph.hpp"
#include "nets/layer.hpp"

namespace labpose::nets {

struct FusedGraph;

class Net {
 public:
  /// The input of the network (an image batch); a node index for add().
  static constexpr int kInput = -1;

  explicit Net(Backend& backend) : backend_(&backend) {}

  /// Adds a layer fed by `inputs` (node indices or kInput); returns its node index.
  int add(std::unique_ptr<Layer> layer, std::vector<int> inputs);
  /// Names the outputs ("scoremap", "locref").
  void set_outputs(std::vector<int> nodes, std::vector<std::string> names);
  /// Allocates and binds every parameter (zeros; models initialize them). Called once, after the
  /// last add().
  void finalize();

  Backend& backend() const { return *backend_; }
  const std::vector<std::unique_ptr<Parameter>>& parameters() const { return parameters_; }
  /// The parameters the layers declare (names, shapes, trainable; no values), in finalize()'s
  /// order: trainable ones first, then state. Allocates nothing, before finalize() or after.
  std::vector<Parameter> declared_parameters() const;
  /// The parameter called `name`, or null.
  Parameter* find_parameter(const std::string& name) const;
  /// All trainable values / their gradients as one flat tensor each (optimizer steps).
  Tensor& trainable_values() { return trainable_values_; }
  Tensor& trainable_gradients() { return trainable_gradients_; }
  std::int64_t trainable_count() const { return trainable_values_.elements(); }

  std::size_t node_count() const { return nodes_.size(); }
  const Layer& layer(int node) const { return *nodes_.at(static_cast<std::size_t>(node)).layer; }
  Layer& layer(int node) { return *nodes_.at(static_cast<std::size_t>(node)).layer; }
  const std::vector<int>& inputs_of(int node) const {
    return nodes_.at(static_cast<std::size_t>(node)).inputs;
  }
  const std::vector<int>& outputs() const { return outputs_; }
  /// A node's output after forward (layer-by-layer checks and debugging; ReLUs share their
  /// input's).
  const Tensor& value(int node) const { return nodes_.at(static_cast<std::size_t>(node)).output; }
  const std::vector<std::string>& output_names() const { return output_names_; }

  /// Shapes of the outputs for an input shape (no allocation).
  std::vector<Shape> output_shapes(const Shape& input) const;
  /// Plans activations (and gradients when `training`) for `input`; forward/backward call it
  /// themselves when the shape changes.
  void prepare(const Shape& input, bool training);
  /// Counts the times prepare() planned the activations afresh: while it stays the same, forward
  /// and backward use the same tensors (what recorded work needs, repeated_work.hpp).
  std::int64_t generation() const { return generation_; }
  /// Runs the network; input: (N, C, H, W) on this backend. Returns the outputs (owned by the Net,
  /// valid until the next forward).
  const std::vector<Tensor>& forward(const Tensor& input, bool training);
  /// The outputs forward() returns, without running it (valid once prepared; work replayed by a
  /// backend writes them, repeated_work.hpp).
  const std::vector<Tensor>& output_values() const { return output_views_; }
  /// Back-propagates `output_gradients` (one per output, shapes of the outputs) from the last
  /// training forward; parameter gradients are overwritten. `gradients_ready(offset)` is called
  /// as soon as every gradient from `offset` of trainable_gradients() on is final (with the
  /// offset decreasing), so that a data-parallel job can send them while backward goes on.
  void backward(const std::vector<Tensor>& output_gradients,
                const std::function<void(std::int64_t)>& gradients_ready = {});

  /// The graph for inference compilation: batch norm folded into the preceding convolution,
  /// activations and residual adds attached to the producing convolution.
  FusedGraph fuse(bool include_normalization) const;
  /// Calibration for int8 plans, measured on fuse(true)'s graph (nets/calibration.hpp): fuse(true)
  /// carries it from now on.
  void set_activation_ranges(ActivationRanges ranges) { activation_ranges_ = std::move(ranges); }

 private:
  struct Node {
    std::unique_ptr<Layer> layer;
    std::vector<int> inputs;
    std::vector<int> consumers;
    Shape shape;
    Tensor output;
    Tensor gradient;
    bool needs_gradient = false;        // a trainable parameter is at or before this node
    std::int64_t first_trainable = -1;  // offset of its first trainable parameter; -1: none
  };

  void plan_training_buffers();

  Backend* backend_;
  std::vector<Node> nodes_;
  std::vector<int> outputs_;
  std::vector<std::string> output_names_;
  std::vector<std::unique_ptr<Parameter>> parameters_;
  Tensor trainable_values_, trainable_gradients_, state_values_;
  bool finalized_ = false;
  Shape prepared_shape_;
  bool prepared_for_training_ = false;
  std::int64_t generation_ = 0;
  std::vector<Tensor> output_views_;
  std::map<std::int64_t, Tensor> accumulation_scratch_;  // by element count
  bool have_training_forward_ = false;
  ActivationRanges activation_ranges_;  // of fuse(true)'s graph; empty: none
  Tensor
      last_input_;  // the input of the last training forward (backward of the first layer reads it)
};

}  // namespace labpose::nets
