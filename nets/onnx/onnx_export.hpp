// A network's inference graph (nets::FusedGraph) written as an ONNX model with the ONNX library
// (opset 17): 8-bit RGB frames in, the normalization inside the graph, score maps and location
// refinement out, and optionally the decoded keypoints. Not an ONNX importer or runtime: reading
// back only checks a file and reports what it holds.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "nets/fused_graph.hpp"

namespace labpose::nets {

/// The opset of the default ONNX domain that write_onnx uses.
inline constexpr std::int64_t kOnnxOpset = 17;

struct OnnxExportOptions {
  /// Adds the output "pose" (N, J, 3): x, y in pixels of the input frame and the likelihood of
  /// each bodypart, decoded as pipeline/pose/decode.cpp does (first maximum of each score map).
  bool with_decoding = false;
  int stride = 8;                   // pixels per score-map cell
  float locref_stdev = 7.2801F;     // location refinement's unit, in pixels
  bool location_refinement = true;  // false: the cell centre, no offset
  std::string producer_version;     // labpose's version
  /// metadata_props (bodyparts, net type, ...); write_onnx sets "stride", "locref_stdev" and
  /// "location_refinement" to the values above.
  std::map<std::string, std::string> metadata;
};

/// Writes `graph` to `file` (atomically: temp file + rename). Input "frames": uint8 (N, H, W, 3)
/// RGB 0-255 with symbolic N, H, W; outputs named by graph.output_names ("scoremap" (N, J, P, Q)
/// logits and "locref" (N, 2J, P, Q) ordered dx0, dy0, dx1, ...), plus "pose" with
/// `with_decoding`. Weights are initializers (little-endian raw data). The model passes ONNX's
/// checker and strict shape inference before it is written; throws an Error otherwise, or when
/// the file cannot be written.
void write_onnx(const FusedGraph& graph, const std::filesystem::path& file,
                const OnnxExportOptions& options);

/// What an ONNX file holds, as read_onnx_info reports it.
struct OnnxModelInfo {
  std::int64_t ir_version = 0;
  std::int64_t opset = 0;  // of the default domain
  std::string producer_name, producer_version;
  std::vector<std::string> inputs, outputs;  // graph inputs (initializers excluded) and outputs
  std::map<std::string, std::string> metadata;
};

/// Reads `file` and checks it with ONNX's checker; an Error names the file and what is wrong
/// (missing, truncated or not ONNX, or a model that fails the checker).
OnnxModelInfo read_onnx_info(const std::filesystem::path& file);

}  // namespace labpose::nets
