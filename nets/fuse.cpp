// Net::fuse: batch-norm folding and activation/residual fusion for inference plans.
#include <fmt/core.h>

#include <cmath>

#include "core/error.hpp"
#include "nets/fused_graph.hpp"
#include "nets/net.hpp"

namespace labpose::nets {
namespace {

std::vector<float> host_copy(Backend& backend, const Tensor& tensor) {
  std::vector<float> values(static_cast<std::size_t>(tensor.elements()));
  backend.copy_to_host(tensor, values.data());
  return values;
}

[[noreturn]] void cannot_fuse(const Layer& layer, const std::string& why) {
  throw Error(
      fmt::format("internal error: cannot compile layer {} for inference: {}", layer.name(), why),
      "this is a bug in labpose's model definition; please report it");
}

}  // namespace

FusedGraph Net::fuse(bool include_normalization) const {
  LABPOSE_ASSERT(finalized_);
  FusedGraph graph;
  std::vector<int> op_of(nodes_.size(), -1);  // the fused op holding each node's value
  const auto op_input = [&](int node_input) {
    return node_input == kInput ? -1 : op_of[static_cast<std::size_t>(node_input)];
  };
  const auto single_consumer = [&](int node) {
    return node != kInput && nodes_[static_cast<std::size_t>(node)].consumers.size() == 1;
  };
  for (std::size_t n = 0; n < nodes_.size(); ++n) {
    const Node& node = nodes_[n];
    const Layer& layer = *node.layer;
    switch (layer.kind()) {
      case LayerKind::normalize: {
        const auto& normalize = static_cast<const Normalize&>(layer);
        if (!include_normalization) {
          op_of[n] = op_input(node.inputs[0]);
          break;
        }
        FusedOp op;
        op.kind = FusedOp::Kind::normalize;
        op.name = layer.name();
        op.input = op_input(node.inputs[0]);
        for (std::size_t c = 0; c < normalize.mean().size(); ++c) {
          op.scale.push_back(1.0F / normalize.std()[c]);
          op.shift.push_back(-normalize.mean()[c] / normalize.std()[c]);
        }
        op_of[n] = static_cast<int>(graph.ops.size());
        graph.ops.push_back(std::move(op));
        break;
      }
      case LayerKind::conv2d:
      case LayerKind::conv_transpose2d: {
        const bool transposed = layer.kind() == LayerKind::conv_transpose2d;
        const auto& convolution = static_cast<const ConvolutionLayer&>(layer);
        const Parameter& weight = convolution.weight();
        const Parameter* bias = convolution.bias();
        FusedOp op;
        op.kind = transposed ? FusedOp::Kind::conv_transpose : FusedOp::Kind::conv;
        op.name = layer.name();
        op.input = op_input(node.inputs[0]);
        op.weight_shape = weight.shape;
        op.weights = host_copy(*backend_, weight.value);
        op.geometry = convolution.geometry();
        const std::int64_t outputs =
            transposed ? weight.shape[1] * op.geometry.groups : weight.shape[0];
        op.bias = bias != nullptr ? host_copy(*backend_, bias->value)
                                  : std::vector<float>(static_cast<std::size_t>(outputs), 0.0F);
        op_of[n] = static_cast<int>(graph.ops.size());
        graph.ops.push_back(std::move(op));
        break;
      }
      case LayerKind::batch_norm: {
        const auto& norm = static_cast<const BatchNorm2d&>(layer);
        const int source = node.inputs[0];
        const int target = op_input(source);
        if (target < 0 || graph.ops[static_cast<std::size_t>(target)].kind != FusedOp::Kind::conv ||
            !single_consumer(source) ||
            graph.ops[static_cast<std::size_t>(target)].activation >= 0 ||
            graph.ops[static_cast<std::size_t>(target)].residual >= 0) {
          cannot_fuse(
              layer,
              "batch norm must directly follow a convolution whose output nothing else reads");
        }
        FusedOp& conv = graph.ops[static_cast<std::size_t>(target)];
        const auto gamma = host_copy(*backend_, norm.gamma().value),
                   beta = host_copy(*backend_, norm.beta().value);
        const auto mean = host_copy(*backend_, norm.running_mean().value);
        const auto variance = host_copy(*backend_, norm.running_var().value);
        const std::size_t outputs = conv.bias.size();
        const std::size_t per_output = conv.weights.size() / outputs;
        for (std::size_t k = 0; k < outputs; ++k) {
          const float factor = gamma[k] / std::sqrt(variance[k] + norm.epsilon());
          for (std::size_t i = 0; i < per_output; ++i) conv.weights[k * per_output + i] *= factor;
          conv.bias[k] = beta[k] + (conv.bias[k] - mean[k]) * factor;
        }
        op_of[n] = target;
        break;
      }
      case LayerKind::relu: {
        const auto& relu = static_cast<const Relu&>(layer);
        const int source = node.inputs[0];
        const int target = op_input(source);
        if (target < 0 ||
            graph.ops[static_cast<std::size_t>(target)].kind == FusedOp::Kind::max_pool ||
            graph.ops[static_cast<std::size_t>(target)].kind == FusedOp::Kind::normalize ||
            !single_consumer(source)) {
          cannot_fuse(layer,
                      "a ReLU must follow a convolution (or a residual add) whose output nothing "
                      "else reads");
        }
        FusedOp& op = graph.ops[static_cast<std::size_t>(target)];
        if (op.residual < 0 && op.activation < 0) {
          op.activation = relu.cap();
        } else if (op.residual >= 0 && op.activation_after_residual < 0) {
          op.activation_after_residual = relu.cap();
        } else {
          cannot_fuse(layer, "two activations in a row");
        }
        op_of[n] = target;
        break;
      }
      case LayerKind::add: {
        // The later of the two operands becomes the fused op; the earlier one is its residual.
        int main_node = node.inputs[0], other_node = node.inputs[1];
        if (op_input(other_node) > op_input(main_node)) std::swap(main_node, other_node);
        const int main = op_input(main_node), other = op_input(other_node);
        if (main < 0 || graph.ops[static_cast<std::size_t>(main)].kind != FusedOp::Kind::conv ||
            !single_consumer(main_node) ||
            graph.ops[static_cast<std::size_t>(main)].residual >= 0) {
          cannot_fuse(layer,
                      "a residual add must follow a convolution whose output nothing else reads");
        }
        graph.ops[static_cast<std::size_t>(main)].residual = other;
        op_of[n] = main;
        break;
      }
      case LayerKind::max_pool: {
        FusedOp op;
        op.kind = FusedOp::Kind::max_pool;
        op.name = layer.name();
        op.input = op_input(node.inputs[0]);
        op.pool = static_cast<const MaxPool2d&>(layer).geometry();
        op_of[n] = static_cast<int>(graph.ops.size());
        graph.ops.push_back(std::move(op));
        break;
      }
    }
  }
  for (int node : outputs_) graph.outputs.push_back(op_of[static_cast<std::size_t>(node)]);
  graph.output_names = output_names_;
  if (include_normalization && activation_ranges_.values.size() == graph.ops.size())
    graph.ranges = activation_ranges_;
  return graph;
}

}  // namespace labpose::nets
