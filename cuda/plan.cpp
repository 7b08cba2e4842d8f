// CUDA inference plans: a fused graph compiled once per input shape into steps on the backend's
// stream: each convolution is one cuDNN call (algorithm chosen at compile time) and one epilogue
// kernel (bias, activation, residual add, activation), activations NHWC in the plan's precision
// (fp32, fp16 or bf16), buffers allocated once and reused once dead, outputs converted to fp32.
// run() queues the work and returns; reading an output waits for it. After the first run (op by op,
// so that any algorithm fallback happens then), the work is captured as a CUDA graph per input
// address (a few kept) and each run is one graph launch (graphs.hpp; LABPOSE_CUDA_GRAPHS=0: op by
// op); where capture fails, the plan says why once and runs op by op.
#include <fmt/core.h>

#include <algorithm>
#include <functional>

#include "core/console.hpp"
#include "core/error.hpp"
#include "cuda/cudnn_conv.hpp"
#include "cuda/graphs.hpp"
#include "cuda/kernels.hpp"
#include "cuda/recently_used.hpp"
#include "cuda/runtime_check.hpp"
#include "cuda/state.hpp"
#include "nets/fused_graph.hpp"
#include "nets/generic_plan.hpp"

namespace labpose::cuda {
namespace {

using nets::FusedGraph;
using nets::FusedOp;
using nets::Shape;
using nets::Storage;
using nets::Tensor;

class CudaPlan final : public nets::InferencePlan {
 public:
  CudaPlan(CudaBackend& backend, const FusedGraph& graph, const Shape& input)
      : state_(backend.state()), type_(backend.state().plan_precision), input_shape_(input) {
    state_.activate();
    const std::vector<Shape> shapes = nets::fused_shapes(graph, input);
    const std::size_t count = graph.ops.size();
    // The last op reading each value (outputs live to the end); likewise for the network input.
    std::vector<std::size_t> last_use(count, 0);
    std::size_t input_last_use = 0;
    bool converted_input = false;
    for (std::size_t i = 0; i < count; ++i) {
      const FusedOp& op = graph.ops[i];
      if (op.input >= 0) last_use[static_cast<std::size_t>(op.input)] = i;
      if (op.input < 0) {
        input_last_use = i;
        converted_input = converted_input || op.kind != FusedOp::Kind::normalize;
      }
      if (op.residual >= 0) last_use[static_cast<std::size_t>(op.residual)] = i;
    }
    for (int output : graph.outputs) last_use[static_cast<std::size_t>(output)] = count;

    // With fp16/bf16, ops other than normalization read a converted copy of the fp32 input.
    if (type_ != DataType::f32 && converted_input) {
      input_buffer_ = acquire(bytes(input));
      steps_.emplace_back([this, elements = input.elements()] {
        kernels::convert(DataType::f32, input_data_, type_, buffer(input_buffer_), elements,
                         state_.queue());
      });
    }
    buffer_of_.assign(count, -1);
    for (std::size_t i = 0; i < count; ++i) {
      const FusedOp& op = graph.ops[i];
      const Shape& in = op.input < 0 ? input : shapes[static_cast<std::size_t>(op.input)];
      buffer_of_[i] = acquire(bytes(shapes[i]));
      const std::string context =
          fmt::format("{} of the inference plan for input {}", op.name, input.text());
      switch (op.kind) {
        case FusedOp::Kind::normalize:
          add_normalize(op, in, static_cast<int>(i), context);
          break;
        case FusedOp::Kind::max_pool:
          add_pool(op, in, shapes[i], static_cast<int>(i));
          break;
        case FusedOp::Kind::conv:
        case FusedOp::Kind::conv_transpose:
          if (op.residual >= 0 && shapes[static_cast<std::size_t>(op.residual)] != shapes[i]) {
            throw Error(
                fmt::format("internal error: {}: residual of shape {} added to {}", context,
                            shapes[static_cast<std::size_t>(op.residual)].text(), shapes[i].text()),
                "this is a bug in labpose's model definition; please report it");
          }
          add_conv(op, in, shapes[i], static_cast<int>(i), context);
          break;
      }
      // Values whose last reader was op i give their buffers back (after op i got its own).
      for (std::size_t v = 0; v <= i; ++v) {
        if (last_use[v] == i) free_.push_back(buffer_of_[v]);
      }
      if (input_buffer_ >= 0 && input_last_use == i) free_.push_back(input_buffer_);
    }
    for (int output : graph.outputs) {
      const auto index = static_cast<std::size_t>(output);
      outputs_.push_back(backend.allocate(shapes[index]));
      output_shapes_.push_back(shapes[index]);
      steps_.emplace_back([this, output, target = device_data(outputs_.back()),
                           elements = shapes[index].elements()] {
        kernels::convert(type_, value(output), DataType::f32, target, elements, state_.queue());
      });
    }
    if (workspace_bytes_ > 0) workspace_ = state_.pool->allocate(workspace_bytes_);
    if (scratch_bytes_ > 0) scratch_ = state_.pool->allocate(scratch_bytes_);
    // Errors of the weight conversions show up here rather than in the first run.
    LABPOSE_CUDA_CHECK(cudaStreamSynchronize(state_.queue()),
                       fmt::format("compiling an inference plan for input {}", input.text()));
  }

  ~CudaPlan() override {
    // A graph is not destroyed while it may still run.
    if (graphs_.size() > 0 && cudaSetDevice(state_.device) == cudaSuccess)
      cudaStreamSynchronize(state_.queue());
  }
  CudaPlan(const CudaPlan&) = delete;
  CudaPlan& operator=(const CudaPlan&) = delete;

  const Shape& input_shape() const override { return input_shape_; }
  const std::vector<Shape>& output_shapes() const override { return output_shapes_; }

  const std::vector<Tensor>& run(const Tensor& input) override {
    check_shape("InferencePlan::run", "input", input.shape(), input_shape_);
    LABPOSE_ASSERT(input.layout() == nets::Layout::nhwc);
    state_.activate();
    input_data_ = device_data(input);
    if (!graphs_enabled_ || runs_++ == 0) {
      run_steps();
      return outputs_;
    }
    GraphExec* graph = graphs_.find(input_data_);
    if (graph == nullptr) {
      std::string why;
      GraphExec captured = capture_graph(
          state_.queue(), [this] { run_steps(); }, why);
      if (captured == nullptr) {
        console::warn(
            "the inference plan for input {} runs op by op: capturing it as a CUDA "
            "graph failed ({})",
            input_shape_.text(), why);
        graphs_enabled_ = false;
        graphs_.clear();
        run_steps();
        return outputs_;
      }
      graph = &graphs_.insert(input_data_, std::move(captured));
    }
    launch_graph(*graph, state_.queue(),
                 fmt::format("running the inference plan for input {}", input_shape_.text()));
    return outputs_;
  }

 private:
  void run_steps() {
    for (const auto& step : steps_) step();
  }

  std::size_t bytes(const Shape& shape) const {
    return static_cast<std::size_t>(shape.elements()) * bytes_of(type_);
  }

  // A buffer of at least `size` bytes, reused from dead values when one is big enough.
  int acquire(std::size_t size) {
    int best = -1;
    for (int b : free_) {
      const std::size_t available = buffers_[static_cast<std::size_t>(b)]->bytes();
      if (available >= size &&
          (best < 0 || available < buffers_[static_cast<std::size_t>(best)]->bytes()))
        best = b;
    }
    if (best >= 0) {
      free_.erase(std::find(free_.begin(), free_.end(), best));
      return best;
    }
    buffers_.push_back(state_.pool->allocate(size));
    return static_cast<int>(buffers_.size()) - 1;
  }

  void* buffer(int index) const { return buffers_[static_cast<std::size_t>(index)]->data(); }

  // The data of value `v` (an op's output), or of the network input for v < 0 in the plan's type.
  void* value(int v) const {
    if (v >= 0) return buffer(buffer_of_[static_cast<std::size_t>(v)]);
    return type_ == DataType::f32 ? input_data_ : buffer(input_buffer_);
  }

  // Host values uploaded as fp32, on the backend's stream (pooled blocks are stream-ordered) and
  // waited for (the host values may go away).
  std::shared_ptr<Storage> upload(const std::vector<float>& values, const std::string& context) {
    auto storage = state_.pool->allocate(values.size() * sizeof(float));
    LABPOSE_CUDA_CHECK(
        cudaMemcpyAsync(storage->data(), values.data(), values.size() * sizeof(float),
                        cudaMemcpyHostToDevice, state_.queue()),
        context);
    LABPOSE_CUDA_CHECK(cudaStreamSynchronize(state_.queue()), context);
    return storage;
  }

  // Host values kept on the device for the plan's life.
  float* constant(const std::vector<float>& values, const std::string& context) {
    constants_.push_back(upload(values, context));
    return constants_.back()->data();
  }

  void add_normalize(const FusedOp& op, const Shape& in, int i, const std::string& context) {
    const float* scale = constant(op.scale, context);
    const float* shift = constant(op.shift, context);
    const bool from_input = op.input < 0;
    steps_.emplace_back([this, i, input = op.input, from_input, scale, shift,
                         pixels = in.n() * in.h() * in.w(), channels = in.c()] {
      kernels::channel_affine(from_input ? DataType::f32 : type_,
                              from_input ? input_data_ : value(input), type_, value(i), scale,
                              shift, pixels, channels, state_.queue());
    });
  }

  void add_pool(const FusedOp& op, const Shape& in, const Shape& out, int i) {
    steps_.emplace_back([this, i, input = op.input, shape = make_pool_shape(in, out, op.pool)] {
      kernels::max_pool_forward(type_, value(input), value(i), shape, state_.queue());
    });
  }

  void add_conv(const FusedOp& op, const Shape& in, const Shape& out, int i,
                const std::string& context) {
    const bool transposed = op.kind == FusedOp::Kind::conv_transpose;
    const Shape& w = op.weight_shape;
    // A transposed convolution is the backward data pass of the convolution from out to in.
    const CudnnConvGeometry geometry = transposed ? cudnn_conv_geometry(out, in, w, op.geometry)
                                                  : cudnn_conv_geometry(in, out, w, op.geometry);
    convs_.push_back(make_cudnn_conv(
        state_.cudnn.get(), geometry, state_.conv_settings(type_),
        transposed ? ConvPrimitive::backward_data : ConvPrimitive::forward, context));
    CudnnConv* conv = convs_.back().get();
    workspace_bytes_ = std::max(workspace_bytes_, conv->workspace_bytes);
    if (geometry.explicit_padding())
      scratch_bytes_ = std::max(scratch_bytes_, bytes(geometry.padded_in));

    // Folded weights (K, C/g, R, S) -> cuDNN's (K, R, S, C/g) in the plan's type.
    std::vector<float> reordered(op.weights.size());
    const std::int64_t channels = w[1], plane = w[2] * w[3];
    for (std::size_t k = 0; k < op.weights.size(); ++k) {
      reordered[static_cast<std::size_t>(
          nhwc_index_of_nchw(static_cast<std::int64_t>(k), channels, plane))] = op.weights[k];
    }
    void* weights = constant(reordered, context);
    if (type_ != DataType::f32) {
      // Converted on the GPU; the fp32 copy goes back to the pool (after the conversion, in
      // stream order).
      const std::shared_ptr<Storage> weights32 = std::move(constants_.back());
      constants_.back() = state_.pool->allocate(reordered.size() * bytes_of(type_));
      weights = constants_.back()->data();
      kernels::convert(DataType::f32, weights32->data(), type_, weights,
                       static_cast<std::int64_t>(reordered.size()), state_.queue());
    }
    const float* bias = constant(op.bias, context);

    steps_.emplace_back([this, conv, weights, bias, context, transposed, i, input = op.input,
                         residual = op.residual, before = op.activation,
                         after = op.activation_after_residual, pixels = out.n() * out.h() * out.w(),
                         outputs = out.c()] {
      const CudnnConvGeometry& g = conv->geometry;
      // The plan's workspace, grown only where a fallback algorithm asks for more.
      const WorkspaceFor workspace = [this](std::size_t bytes) -> void* {
        if (bytes == 0) return nullptr;
        if (workspace_ == nullptr || workspace_->bytes() < bytes) {
          workspace_ = state_.pool->allocate(bytes);
        }
        return workspace_->data();
      };
      if (!transposed) {
        const void* source = value(input);
        if (g.explicit_padding()) {
          kernels::window_copy(type_, source, scratch_->data(), g.conv_in.n(), g.pad(),
                               state_.queue());
          source = scratch_->data();
        }
        run_forward(state_.cudnn.get(), *conv, source, weights, value(i), workspace, context);
      } else {
        void* target = g.explicit_padding() ? static_cast<void*>(scratch_->data()) : value(i);
        run_backward_data(state_.cudnn.get(), *conv, value(input), weights, target, workspace,
                          context);
        if (g.explicit_padding()) {
          kernels::window_copy(type_, target, value(i), g.conv_in.n(), g.crop(), state_.queue());
        }
      }
      kernels::bias_activation(type_, value(i), bias, residual >= 0 ? value(residual) : nullptr,
                               pixels, outputs, before, after, state_.queue());
    });
  }

  CudaBackend::State& state_;
  DataType type_;
  Shape input_shape_;
  std::vector<Shape> output_shapes_;
  std::vector<std::shared_ptr<Storage>> buffers_;  // activations, reused by liveness
  std::vector<int> free_;
  std::vector<int> buffer_of_;  // the buffer of each op's output
  int input_buffer_ = -1;       // the input converted to fp16/bf16, when needed
  void* input_data_ = nullptr;  // the fp32 input of the current run
  std::vector<std::unique_ptr<CudnnConv>> convs_;
  std::vector<std::shared_ptr<Storage>> constants_;  // weights, biases, scales
  std::size_t workspace_bytes_ = 0, scratch_bytes_ = 0;
  std::shared_ptr<Storage> workspace_, scratch_;  // cuDNN workspace; explicit pad/crop buffer
  std::vector<std::function<void()>> steps_;
  std::vector<Tensor> outputs_;
  // The captured runs, per input address (callers reuse one input tensor, or a few).
  bool graphs_enabled_ = cuda_graphs_enabled();
  std::int64_t runs_ = 0;
  RecentlyUsed<void*, GraphExec> graphs_{4};
};

}  // namespace

std::unique_ptr<nets::InferencePlan> CudaBackend::compile(const FusedGraph& graph,
                                                          const Shape& input) {
  return std::make_unique<CudaPlan>(*this, graph, input);
}

}  // namespace labpose::cuda
