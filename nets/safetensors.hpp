// safetensors weight files: an 8-byte little-endian header length, a JSON header mapping tensor
// names to dtype/shape/byte offsets, then raw little-endian data. Safe to load from strangers (no
// code, no pickle). labpose writes float32; it reads float32, float16, bfloat16 and float64
// (converted). Not a lazy/mmap loader: files are small enough to read whole.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "nets/net.hpp"

namespace labpose::nets {

struct HostTensor {
  std::vector<std::int64_t> shape;
  std::vector<float> values;
};

struct SafetensorsFile {
  std::map<std::string, HostTensor> tensors;
  std::map<std::string, std::string> metadata;  // the header's "__metadata__" strings
};

/// Tensors where their values already lie (a downloaded checkpoint, a SafetensorsFile), to be
/// written without a copy. The values must outlive the view.
struct TensorView {
  std::vector<std::int64_t> shape;
  std::span<const float> values;
};
struct SafetensorsView {
  std::map<std::string, TensorView> tensors;
  std::map<std::string, std::string> metadata;
};

/// A view of every tensor of `contents`, which must outlive it.
SafetensorsView view_of(const SafetensorsFile& contents);

/// An IEEE 754 half-precision value (its 16 bits) as float32, exactly.
float half_to_float(std::uint16_t half);

/// Refuses `values` of tensor `tensor` in `file` when any is NaN or infinite (they would only show
/// up later as a NaN loss or NaN predictions): an Error counting them, with `hint`.
void check_finite(std::span<const float> values, const std::string& file, const std::string& tensor,
                  const std::string& hint);

/// Reads a whole file; errors name the file and what is wrong (truncated, bad header, offsets).
SafetensorsFile read_safetensors(const std::filesystem::path& file);
/// The same from the file's bytes; `name` (the file) is what messages name. Every header field is
/// checked against the data (bounded header, known dtypes, unique names, sizes without overflow,
/// tensors covering the data exactly, no overlaps) and every value must be finite (no NaN/Inf).
SafetensorsFile parse_safetensors(std::string_view bytes, const std::string& name);
/// The bytes of a safetensors file holding `contents`: tensors in name order, float32.
std::string safetensors_bytes(const SafetensorsFile& contents);
/// The same bytes handed to `sink` in pieces, in order: the header, then each tensor's values from
/// where they are, never joined into one block (a snapshot or a backbone is written as it is).
void safetensors_pieces(const SafetensorsView& contents,
                        const std::function<void(std::string_view)>& sink);
void safetensors_pieces(const SafetensorsFile& contents,
                        const std::function<void(std::string_view)>& sink);
/// Writes atomically (temp file + rename), tensors in name order, float32.
void write_safetensors(const SafetensorsFile& contents, const std::filesystem::path& file);

/// The values of every parameter of `net` (trainable and state) under their names.
SafetensorsFile net_weights(const Net& net);

/// Which parameters a load should fill.
enum class LoadScope { all, backbone };  // backbone: everything except "head." parameters

/// Loads `file` into the parameters of `net`. Missing, extra or mis-shaped tensors are errors that
/// list them all (torchvision's num_batches_tracked counters and fc.* / classifier.* classifier
/// weights are ignored, so converted ImageNet files load as they are).
void load_weights(Net& net, const SafetensorsFile& weights, LoadScope scope,
                  const std::filesystem::path& source);

}  // namespace labpose::nets
