// The op-by-op inference plan.
#include "nets/generic_plan.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace labpose::nets {

std::vector<Shape> fused_shapes(const FusedGraph& graph, const Shape& input) {
  std::vector<Shape> shapes;
  for (const FusedOp& op : graph.ops) {
    const Shape& in = op.input < 0 ? input : shapes.at(static_cast<std::size_t>(op.input));
    switch (op.kind) {
      case FusedOp::Kind::normalize:
        shapes.push_back(in);
        break;
      case FusedOp::Kind::conv:
        shapes.push_back(conv2d_output_shape(in, op.weight_shape, op.geometry));
        break;
      case FusedOp::Kind::conv_transpose:
        shapes.push_back(conv_transpose2d_output_shape(in, op.weight_shape, op.geometry));
        break;
      case FusedOp::Kind::max_pool:
        shapes.push_back(max_pool_output_shape(in, op.pool));
        break;
    }
  }
  return shapes;
}

std::int64_t largest_tensor_per_image(const FusedGraph& graph, const Shape& image) {
  const Shape one{1, image.c(), image.h(), image.w()};
  const std::vector<Shape> shapes = fused_shapes(graph, one);
  std::int64_t largest = one.elements();
  for (std::size_t i = 0; i < graph.ops.size(); ++i) {
    largest = std::max(largest, shapes[i].elements());
    const FusedOp& op = graph.ops[i];
    if (op.kind != FusedOp::Kind::conv) continue;
    const Shape& in = op.input < 0 ? one : shapes[static_cast<std::size_t>(op.input)];
    const ConvGeometry& g = op.geometry;
    largest = std::max(largest, in.c() * (in.h() + g.pad_top + g.pad_bottom) *
                                    (in.w() + g.pad_left + g.pad_right));
  }
  return largest;
}

namespace {

class GenericPlan final : public InferencePlan {
 public:
  GenericPlan(Backend& backend, const FusedGraph& graph, const Shape& input)
      : backend_(backend), graph_(graph), input_shape_(input), shapes_(fused_shapes(graph, input)) {
    for (std::size_t i = 0; i < graph_.ops.size(); ++i) {
      const FusedOp& op = graph_.ops[i];
      values_.push_back(backend_.allocate(shapes_[i]));
      if (op.kind == FusedOp::Kind::conv || op.kind == FusedOp::Kind::conv_transpose) {
        weights_.push_back(backend_.allocate(op.weight_shape));
        backend_.copy_from_host(op.weights.data(), weights_.back());
        biases_.push_back(backend_.allocate(Shape{static_cast<std::int64_t>(op.bias.size())}));
        backend_.copy_from_host(op.bias.data(), biases_.back());
      } else {
        weights_.emplace_back();
        biases_.emplace_back();
      }
    }
    for (int output : graph_.outputs) {
      outputs_.push_back(values_.at(static_cast<std::size_t>(output)));
      output_shapes_.push_back(shapes_.at(static_cast<std::size_t>(output)));
    }
  }

  const Shape& input_shape() const override { return input_shape_; }
  const std::vector<Shape>& output_shapes() const override { return output_shapes_; }

  const std::vector<Tensor>& run(const Tensor& input) override {
    check_shape("InferencePlan::run", "input", input.shape(), input_shape_);
    for (std::size_t i = 0; i < graph_.ops.size(); ++i) {
      const FusedOp& op = graph_.ops[i];
      const Tensor& in = op.input < 0 ? input : values_[static_cast<std::size_t>(op.input)];
      Tensor& out = values_[i];
      switch (op.kind) {
        case FusedOp::Kind::normalize:
          backend_.channel_affine(in, op.scale, op.shift, out);
          break;
        case FusedOp::Kind::max_pool:
          backend_.max_pool_forward(in, out, op.pool);
          break;
        case FusedOp::Kind::conv:
        case FusedOp::Kind::conv_transpose:
          if (op.kind == FusedOp::Kind::conv) {
            backend_.conv2d_forward(in, weights_[i], biases_[i], out, op.geometry);
          } else {
            backend_.conv_transpose2d_forward(in, weights_[i], biases_[i], out, op.geometry);
          }
          if (op.activation >= 0) backend_.relu_forward(out, out, op.activation);
          if (op.residual >= 0)
            backend_.add(out, values_[static_cast<std::size_t>(op.residual)], out);
          if (op.activation_after_residual >= 0)
            backend_.relu_forward(out, out, op.activation_after_residual);
          break;
      }
    }
    return outputs_;
  }

 private:
  Backend& backend_;
  FusedGraph graph_;
  Shape input_shape_;
  std::vector<Shape> shapes_, output_shapes_;
  std::vector<Tensor> values_, weights_, biases_, outputs_;
};

}  // namespace

std::unique_ptr<InferencePlan> make_generic_plan(Backend& backend, const FusedGraph& graph,
                                                 const Shape& input) {
  return std::make_unique<GenericPlan>(backend, graph, input);
}

}  // namespace labpose::nets
