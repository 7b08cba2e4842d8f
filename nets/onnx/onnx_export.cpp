// write_onnx: each fused op as the ONNX nodes that compute exactly what generic_plan.cpp runs
// (convolution with bias, ReLU or Clip, residual Add, ReLU or Clip; ConvTranspose; MaxPool whose
// padding never wins), then ONNX's checker and strict shape inference, then an atomic write.
// read_onnx_info: parse + checker.
#include "nets/onnx/onnx_export.hpp"

#include <fmt/core.h>
#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>

#include <limits>
#include <set>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "nets/onnx/graph_builder.hpp"
#include "nets/onnx/pose_decoding.hpp"

namespace labpose::nets {
namespace fs = std::filesystem;
using onnx_export::GraphBuilder;
using onnx_export::set_attribute;

namespace {

constexpr std::int64_t kRgbChannels = 3;

[[noreturn]] void cannot_export(const std::string& why) {
  throw Error(fmt::format("internal error: cannot write the network as ONNX: {}", why),
              "this is a bug in labpose, not in your model; please report it");
}

// The channels of each op's output, and a check that the network reads RGB images.
std::vector<std::int64_t> output_channels(const FusedGraph& graph) {
  std::vector<std::int64_t> channels;
  for (const FusedOp& op : graph.ops) {
    const std::int64_t in =
        op.input < 0 ? kRgbChannels : channels.at(static_cast<std::size_t>(op.input));
    std::int64_t reads = in, out = in;
    if (op.kind == FusedOp::Kind::normalize) {
      reads = static_cast<std::int64_t>(op.scale.size());
    } else if (op.kind == FusedOp::Kind::conv) {
      reads = op.weight_shape[1] * op.geometry.groups;
      out = op.weight_shape[0];
    } else if (op.kind == FusedOp::Kind::conv_transpose) {
      reads = op.weight_shape[0];
      out = op.weight_shape[1] * op.geometry.groups;
    }
    if (reads != in) {
      cannot_export(
          fmt::format("op {} reads {} channels but its input has {}", op.name, reads, in));
    }
    channels.push_back(out);
  }
  return channels;
}

// ReLU (cap 0) or ReLU capped at `cap` (Clip), as relu_forward does; a negative cap is none.
std::string activation(GraphBuilder& builder, const std::string& input, float cap,
                       const std::string& output) {
  if (cap == 0.0F) {
    builder.node("Relu", {input}, output);
  } else {
    builder.node("Clip", {input, builder.float_scalar(0.0F), builder.float_scalar(cap)}, output);
  }
  return output;
}

void set_convolution_attributes(onnx::NodeProto& node, const FusedOp& op) {
  const ConvGeometry& g = op.geometry;
  set_attribute(node, "kernel_shape",
                std::vector<std::int64_t>{op.weight_shape[2], op.weight_shape[3]});
  set_attribute(node, "strides", std::vector<std::int64_t>{g.stride_h, g.stride_w});
  set_attribute(node, "pads",
                std::vector<std::int64_t>{g.pad_top, g.pad_left, g.pad_bottom, g.pad_right});
  set_attribute(node, "dilations", std::vector<std::int64_t>{g.dilation_h, g.dilation_w});
  set_attribute(node, "group", std::int64_t{g.groups});
  if (op.kind == FusedOp::Kind::conv_transpose) {
    set_attribute(node, "output_padding",
                  std::vector<std::int64_t>{g.output_pad_h, g.output_pad_w});
  }
}

// The nodes of one fused op, reading `input` (and `values` for a residual) and writing `output`.
void add_op(GraphBuilder& builder, const FusedOp& op, const std::string& input,
            const std::vector<std::string>& values, const std::string& output) {
  switch (op.kind) {
    case FusedOp::Kind::normalize: {
      // y[:, c] = x[:, c] * scale[c] + shift[c], with (1, C, 1, 1) constants.
      const auto channels = static_cast<std::int64_t>(op.scale.size());
      const std::string scaled = builder.apply(
          "Mul", {input, builder.float_tensor(op.name + ".scale", {1, channels, 1, 1}, op.scale)},
          op.name + "/scaled");
      builder.node(
          "Add", {scaled, builder.float_tensor(op.name + ".shift", {1, channels, 1, 1}, op.shift)},
          output);
      return;
    }
    case FusedOp::Kind::max_pool: {
      const PoolGeometry& g = op.pool;
      onnx::NodeProto& node = builder.node("MaxPool", {input}, output);
      set_attribute(node, "kernel_shape", std::vector<std::int64_t>{g.kernel_h, g.kernel_w});
      set_attribute(node, "strides", std::vector<std::int64_t>{g.stride_h, g.stride_w});
      set_attribute(node, "pads",
                    std::vector<std::int64_t>{g.pad_top, g.pad_left, g.pad_bottom, g.pad_right});
      return;
    }
    case FusedOp::Kind::conv:
    case FusedOp::Kind::conv_transpose: {
      // y = act_after(act_before(conv(x) + bias) + residual): each present step writes the next
      // value, the last one `output`.
      const int steps = 1 + (op.activation >= 0 ? 1 : 0) + (op.residual >= 0 ? 1 : 0) +
                        (op.activation_after_residual >= 0 ? 1 : 0);
      int step = 0;
      const auto next = [&](const char* what) {
        return ++step == steps ? output : builder.unique_name(op.name + "/" + what);
      };
      const bool transposed = op.kind == FusedOp::Kind::conv_transpose;
      const std::string weight =
          builder.float_tensor(op.name + ".weight", op.weight_shape.dims(), op.weights);
      const std::string bias = builder.float_tensor(
          op.name + ".bias", {static_cast<std::int64_t>(op.bias.size())}, op.bias);
      std::string value = next(transposed ? "conv_transpose" : "conv");
      set_convolution_attributes(
          builder.node(transposed ? "ConvTranspose" : "Conv", {input, weight, bias}, value), op);
      if (op.activation >= 0) value = activation(builder, value, op.activation, next("activation"));
      if (op.residual >= 0) {
        const std::string sum = next("residual");
        builder.node("Add", {value, values.at(static_cast<std::size_t>(op.residual))}, sum);
        value = sum;
      }
      if (op.activation_after_residual >= 0)
        value = activation(builder, value, op.activation_after_residual, next("activation"));
      return;
    }
  }
}

// The whole model: frames (uint8 NHWC) -> float NCHW -> the ops -> the named outputs (+ pose).
onnx::ModelProto build_model(const FusedGraph& graph, const OnnxExportOptions& options) {
  const std::vector<std::int64_t> channels = output_channels(graph);
  if (graph.outputs.empty() || graph.outputs.size() != graph.output_names.size())
    cannot_export("the graph names no outputs");

  onnx::ModelProto model;
  model.set_ir_version(onnx::IR_VERSION);
  model.set_producer_name("labpose");
  model.set_producer_version(options.producer_version);
  model.set_doc_string(
      "a labpose pose network: frames (N, H, W, 3) uint8 RGB in, DeepLabCut's score maps "
      "(logits) and location refinement out at stride " +
      std::to_string(options.stride));
  onnx::OperatorSetIdProto& opset = *model.add_opset_import();
  opset.set_domain("");
  opset.set_version(kOnnxOpset);
  // The decoding settings, which a user of scoremap and locref needs too.
  std::map<std::string, std::string> metadata = options.metadata;
  metadata["stride"] = std::to_string(options.stride);
  metadata["locref_stdev"] = fmt::format("{}", options.locref_stdev);
  metadata["location_refinement"] = options.location_refinement ? "true" : "false";
  for (const auto& [key, value] : metadata) {
    onnx::StringStringEntryProto& entry = *model.add_metadata_props();
    entry.set_key(key);
    entry.set_value(value);
  }

  onnx::GraphProto& proto = *model.mutable_graph();
  proto.set_name("labpose_pose_net");
  GraphBuilder builder(proto);
  // The graph's outputs keep their names; every other value is named after its op.
  for (const std::string& name : graph.output_names) builder.unique_name(name);
  const std::string pose = options.with_decoding ? builder.unique_name("pose") : "";
  const std::string frames = builder.unique_name("frames");
  onnx_export::add_value_info(*proto.mutable_input(), frames, onnx::TensorProto::UINT8,
                              {0, 0, 0, kRgbChannels}, {"batch", "height", "width", ""});

  // image: (N, 3, H, W) float, 0-255, as copy_pixels_from_host feeds the plan.
  const std::string nchw = builder.unique_name("frames_nchw");
  set_attribute(builder.node("Transpose", {frames}, nchw), "perm",
                std::vector<std::int64_t>{0, 3, 1, 2});
  const std::string image = builder.unique_name("image");
  set_attribute(builder.node("Cast", {nchw}, image), "to", std::int64_t{onnx::TensorProto::FLOAT});

  std::vector<std::string> values;
  std::vector<std::string> written(graph.output_names.size());  // the first op of each output
  for (std::size_t i = 0; i < graph.ops.size(); ++i) {
    const FusedOp& op = graph.ops[i];
    std::string name;
    for (std::size_t k = 0; k < graph.outputs.size(); ++k) {
      if (graph.outputs[k] == static_cast<int>(i) && name.empty())
        name = written[k] = graph.output_names[k];
    }
    if (name.empty()) name = builder.unique_name(op.name.empty() ? "op" : op.name);
    const std::string& input = op.input < 0 ? image : values.at(static_cast<std::size_t>(op.input));
    add_op(builder, op, input, values, name);
    values.push_back(name);
  }
  for (std::size_t k = 0; k < graph.outputs.size(); ++k) {
    const int op = graph.outputs[k];
    if (op < 0 || static_cast<std::size_t>(op) >= values.size())
      cannot_export("an output is not an op");
    // An op that is several outputs writes the first; the others copy it.
    if (written[k].empty())
      builder.node("Identity", {values[static_cast<std::size_t>(op)]}, graph.output_names[k]);
    onnx_export::add_value_info(*proto.mutable_output(), graph.output_names[k],
                                onnx::TensorProto::FLOAT,
                                {0, channels[static_cast<std::size_t>(op)], 0, 0},
                                {"batch", "", "map_height", "map_width"});
  }

  if (options.with_decoding) {
    const auto find = [&](const std::string& wanted) -> std::size_t {
      for (std::size_t k = 0; k < graph.output_names.size(); ++k)
        if (graph.output_names[k] == wanted) return k;
      cannot_export("decoding needs the outputs \"scoremap\" and \"locref\"");
    };
    const std::size_t score = find("scoremap"), locref = find("locref");
    const std::int64_t joints = channels[static_cast<std::size_t>(graph.outputs[score])];
    if (channels[static_cast<std::size_t>(graph.outputs[locref])] != 2 * joints)
      cannot_export(fmt::format("locref has {} channels, expected 2 x {} bodyparts",
                                channels[static_cast<std::size_t>(graph.outputs[locref])], joints));
    onnx_export::add_pose_decoding(builder, "scoremap", "locref", joints, options, pose);
    onnx_export::add_value_info(*proto.mutable_output(), pose, onnx::TensorProto::FLOAT,
                                {0, joints, 3}, {"batch", "", ""});
  }
  return model;
}

}  // namespace

void write_onnx(const FusedGraph& graph, const fs::path& file, const OnnxExportOptions& options) {
  if (options.stride < 1 || !(options.locref_stdev > 0.0F)) {
    throw UsageError(fmt::format("cannot write {}: stride {} and locref_stdev {} must be positive",
                                 file.string(), options.stride, options.locref_stdev),
                     "use the values of the model's pose_cfg.yaml (stride 8, locref_stdev 7.2801)");
  }
  onnx::ModelProto model = build_model(graph, options);
  try {
    onnx::checker::check_model(model);
    // Strict: a node whose types or shapes do not fit is an error here, not in the user's runtime.
    onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(),
                                       onnx::ShapeInferenceOptions(true, 1, false));
  } catch (const std::exception& error) {
    cannot_export(fmt::format("ONNX's checker rejects the model: {}", error.what()));
  }
  if (model.ByteSizeLong() > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
    throw Error(fmt::format("cannot write {}: the model is {} MB, and ONNX files hold at most 2 GB",
                            file.string(), model.ByteSizeLong() >> 20),
                "export a smaller network");
  }
  std::string bytes;
  if (!model.SerializeToString(&bytes)) cannot_export("protobuf could not serialize the model");
  write_file_atomically(file, bytes);
}

OnnxModelInfo read_onnx_info(const fs::path& file) {
  const std::string bytes = read_file(file);
  onnx::ModelProto model;
  if (!model.ParseFromString(bytes)) {
    throw Error(fmt::format("{}: not a readable ONNX model ({} bytes; the file is truncated or is "
                            "not an ONNX file)",
                            file.string(), bytes.size()),
                "write it again (labpose export --onnx)");
  }
  try {
    onnx::checker::check_model(model);
  } catch (const std::exception& error) {
    throw Error(
        fmt::format("{}: ONNX's checker rejects the model: {}", file.string(), error.what()),
        "write it again (labpose export --onnx)");
  }
  OnnxModelInfo info;
  info.ir_version = model.ir_version();
  for (const onnx::OperatorSetIdProto& opset : model.opset_import())
    if (opset.domain().empty() || opset.domain() == "ai.onnx") info.opset = opset.version();
  info.producer_name = model.producer_name();
  info.producer_version = model.producer_version();
  std::set<std::string> initializers;
  for (const onnx::TensorProto& tensor : model.graph().initializer())
    initializers.insert(tensor.name());
  for (const onnx::ValueInfoProto& input : model.graph().input())
    if (initializers.count(input.name()) == 0) info.inputs.push_back(input.name());
  for (const onnx::ValueInfoProto& output : model.graph().output())
    info.outputs.push_back(output.name());
  for (const onnx::StringStringEntryProto& entry : model.metadata_props())
    info.metadata[entry.key()] = entry.value();
  return info;
}

}  // namespace labpose::nets
