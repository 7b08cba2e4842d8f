// The decoding nodes: ArgMax (first maximum, as decode.cpp's strict comparison) over each
// flattened score map, the cell's row and column by integer division, the location-refinement
// pair gathered at that cell, and the sigmoid of the score there.
#include "nets/onnx/pose_decoding.hpp"

namespace labpose::nets::onnx_export {

void add_pose_decoding(GraphBuilder& builder, const std::string& scoremap,
                       const std::string& locref, std::int64_t joints,
                       const OnnxExportOptions& options, const std::string& output) {
  const std::string prefix = "decode/";
  // flat: (N, J, P*Q); best: (N, J, 1) int64, the first maximum of each map.
  const std::string flat = builder.apply(
      "Reshape", {scoremap, builder.int64_tensor(prefix + "flat_shape", {3}, {0, 0, -1})},
      prefix + "flat_scoremap");
  const std::string best = builder.unique_name(prefix + "best_cell");
  onnx::NodeProto& argmax = builder.node("ArgMax", {flat}, best);
  set_attribute(argmax, "axis", std::int64_t{2});
  set_attribute(argmax, "keepdims", std::int64_t{1});
  set_attribute(argmax, "select_last_index", std::int64_t{0});

  // likelihood: (N, J, 1) = sigmoid(score at the best cell).
  const std::string score = builder.unique_name(prefix + "best_score");
  set_attribute(builder.node("GatherElements", {flat, best}, score), "axis", std::int64_t{2});
  const std::string likelihood = builder.apply("Sigmoid", {score}, prefix + "likelihood");

  // position: (N, J, 2) = (col, row) * stride + stride / 2, in pixels.
  const std::string width = builder.unique_name(prefix + "map_width");
  onnx::NodeProto& shape = builder.node("Shape", {scoremap}, width);
  set_attribute(shape, "start", std::int64_t{3});
  set_attribute(shape, "end", std::int64_t{4});
  const std::string row = builder.apply("Div", {best, width}, prefix + "row");
  const std::string col = builder.apply("Mod", {best, width}, prefix + "col");
  const std::string cell = builder.unique_name(prefix + "cell");
  set_attribute(builder.node("Concat", {col, row}, cell), "axis", std::int64_t{2});
  const std::string cell_float = builder.unique_name(prefix + "cell_float");
  set_attribute(builder.node("Cast", {cell}, cell_float), "to",
                std::int64_t{onnx::TensorProto::FLOAT});
  const std::string scaled =
      builder.apply("Mul", {cell_float, builder.float_scalar(static_cast<float>(options.stride))},
                    prefix + "cell_corner");
  std::string position = builder.apply(
      "Add", {scaled, builder.float_scalar(static_cast<float>(options.stride) / 2.0F)},
      prefix + "cell_centre");

  if (options.location_refinement) {
    // pairs: (N, J, 2, P*Q), pair [n, j, 0] = dx_j = locref channel 2j, [n, j, 1] = dy_j.
    const std::string pairs = builder.apply(
        "Reshape", {locref, builder.int64_tensor(prefix + "pair_shape", {4}, {0, joints, 2, -1})},
        prefix + "locref_pairs");
    // index: (N, J, 2, 1), the best cell for both members of the pair.
    const std::string unsqueezed =
        builder.apply("Unsqueeze", {best, builder.int64_tensor(prefix + "axis_3", {1}, {3})},
                      prefix + "best_cell_4d");
    const std::string index = builder.apply(
        "Expand",
        {unsqueezed, builder.int64_tensor(prefix + "pair_index_shape", {4}, {1, 1, 2, 1})},
        prefix + "pair_index");
    const std::string gathered = builder.unique_name(prefix + "offset_4d");
    set_attribute(builder.node("GatherElements", {pairs, index}, gathered), "axis",
                  std::int64_t{3});
    const std::string offset = builder.apply(
        "Squeeze", {gathered, builder.int64_tensor(prefix + "squeeze_axis", {1}, {3})},
        prefix + "offset");
    const std::string pixels = builder.apply(
        "Mul", {offset, builder.float_scalar(options.locref_stdev)}, prefix + "offset_pixels");
    position = builder.apply("Add", {position, pixels}, prefix + "position");
  }
  set_attribute(builder.node("Concat", {position, likelihood}, output), "axis", std::int64_t{2});
}

}  // namespace labpose::nets::onnx_export
