// Internal to nets/onnx: DeepLabCut's single-animal decoding (pipeline/pose/decode.cpp) as ONNX
// nodes, so that a runtime gets keypoints without code of ours. Not multi-animal assembly.
#pragma once

#include <cstdint>
#include <string>

#include "nets/onnx/graph_builder.hpp"
#include "nets/onnx/onnx_export.hpp"

namespace labpose::nets::onnx_export {

/// Adds the nodes that write `output` (N, J, 3) float: x, y and likelihood of each bodypart from
/// `scoremap` (N, J, P, Q) logits and `locref` (N, 2J, P, Q) ordered dx0, dy0, dx1, ...: the first
/// maximum of each score map in row-major order, x = col * stride + stride / 2 + dx *
/// locref_stdev (y likewise), likelihood = sigmoid(score) there.
void add_pose_decoding(GraphBuilder& builder, const std::string& scoremap,
                       const std::string& locref, std::int64_t joints,
                       const OnnxExportOptions& options, const std::string& output);

}  // namespace labpose::nets::onnx_export
