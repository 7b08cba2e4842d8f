// safetensors reading/writing and loading weights into a Net.
#include "nets/safetensors.hpp"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>
#include <string_view>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/printable.hpp"

namespace labpose::nets {
namespace fs = std::filesystem;
namespace {

std::size_t dtype_size(const std::string& dtype) {
  if (dtype == "F32") return 4;
  if (dtype == "F16" || dtype == "BF16") return 2;
  if (dtype == "F64") return 8;
  if (dtype == "I64" || dtype == "U64") return 8;
  if (dtype == "I32" || dtype == "U32") return 4;
  if (dtype == "I16" || dtype == "U16") return 2;
  if (dtype == "I8" || dtype == "U8" || dtype == "BOOL") return 1;
  return 0;
}

std::string list_some(const std::vector<std::string>& names) {
  constexpr std::size_t kShown = 6;
  std::vector<std::string> shown(names.begin(),
                                 names.begin() + static_cast<long>(std::min(names.size(), kShown)));
  std::string text = fmt::format("{}", fmt::join(shown, ", "));
  if (names.size() > kShown) text += fmt::format(" and {} more", names.size() - kShown);
  return text;
}

// The safetensors format's own bound (its reference reader refuses larger headers): a file that
// claims more is damaged, and parsing it would take that much memory first.
constexpr std::uint64_t kMaxHeaderBytes = 100'000'000;

// Converts `count` little-endian values of a floating-point dtype to float32.
std::vector<float> decode_values(const char* data, std::size_t count, const std::string& dtype) {
  std::vector<float> values(count);
  const std::size_t element_size = dtype_size(dtype);
  for (std::size_t i = 0; i < count; ++i) {
    const char* at = data + i * element_size;
    if (dtype == "F32") {
      std::uint32_t bits;
      std::memcpy(&bits, at, 4);
      values[i] = std::bit_cast<float>(bits);
    } else if (dtype == "F64") {
      std::uint64_t bits;
      std::memcpy(&bits, at, 8);
      values[i] = static_cast<float>(std::bit_cast<double>(bits));
    } else {
      std::uint16_t bits;
      std::memcpy(&bits, at, 2);
      values[i] = dtype == "F16" ? half_to_float(bits)
                                 : std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
    }
  }
  return values;
}

// Where a tensor's bytes lie in the data section.
struct Extent {
  std::uint64_t begin = 0, end = 0;
  std::string name;
};

// As the format requires: the tensors cover the data section exactly, without overlaps or holes
// (so no tensor aliases another, and no bytes hide in a weights file).
template <typename Damaged>
void check_extents(std::vector<Extent> extents, std::uint64_t data_size, const Damaged& damaged) {
  std::sort(extents.begin(), extents.end(), [](const Extent& a, const Extent& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  std::uint64_t covered = 0;
  const Extent* previous = nullptr;
  for (const Extent& extent : extents) {
    if (extent.begin < covered) {
      throw damaged(fmt::format(
          "tensors \"{}\" (bytes [{}, {})) and \"{}\" (bytes [{}, {})) overlap", previous->name,
          previous->begin, previous->end, extent.name, extent.begin, extent.end));
    }
    if (extent.begin > covered) {
      throw damaged(
          fmt::format("bytes [{}, {}) of the data section, before tensor \"{}\", belong to "
                      "no tensor",
                      covered, extent.begin, extent.name));
    }
    covered = extent.end;
    previous = &extent;
  }
  if (covered != data_size) {
    throw damaged(fmt::format("the last {} bytes of the data section belong to no tensor",
                              data_size - covered));
  }
}

bool ignorable(const std::string& name) {
  return name.ends_with(".num_batches_tracked") || name.rfind("fc.", 0) == 0 ||
         name.rfind("classifier.", 0) == 0;
}

}  // namespace

float half_to_float(std::uint16_t half) {
  const std::uint32_t sign = static_cast<std::uint32_t>(half & 0x8000U) << 16;
  std::uint32_t exponent = (half >> 10) & 0x1FU, mantissa = half & 0x3FFU;
  std::uint32_t bits;
  if (exponent == 0) {
    if (mantissa == 0) {
      bits = sign;
    } else {  // subnormal: normalize
      exponent = 127 - 15 + 1;
      while ((mantissa & 0x400U) == 0) {
        mantissa <<= 1;
        --exponent;
      }
      bits = sign | (exponent << 23) | ((mantissa & 0x3FFU) << 13);
    }
  } else if (exponent == 0x1F) {
    bits = sign | 0x7F800000U | (mantissa << 13);
  } else {
    bits = sign | ((exponent + 127 - 15) << 23) | (mantissa << 13);
  }
  return std::bit_cast<float>(bits);
}

// Weights with NaN or infinite values (a failed conversion, a damaged file, a diverged run) would
// only show up later as a NaN loss or NaN predictions: they are refused where they are read.
void check_finite(std::span<const float> values, const std::string& file, const std::string& tensor,
                  const std::string& hint) {
  // A value is NaN or infinite when its exponent bits are all ones: one pass the compiler
  // vectorizes over 100 MB of weights, and the counting below only for a file that has some.
  constexpr std::uint32_t kExponent = 0x7F800000U;
  std::uint32_t all_ones = 0;
  for (const float value : values)
    all_ones |=
        static_cast<std::uint32_t>((std::bit_cast<std::uint32_t>(value) & kExponent) == kExponent);
  if (all_ones == 0) return;
  std::size_t not_a_number = 0, infinite = 0;
  for (const float value : values) {
    if (std::isnan(value)) ++not_a_number;
    if (std::isinf(value)) ++infinite;
  }
  if (not_a_number == 0 && infinite == 0) return;
  std::vector<std::string> found;
  if (not_a_number > 0) found.push_back(fmt::format("{} NaN values", not_a_number));
  if (infinite > 0) {
    found.push_back(fmt::format("{} infinite values (or values beyond float32's range)", infinite));
  }
  throw Error(fmt::format("{}: tensor \"{}\" has {} (of {})", file, tensor,
                          fmt::join(found, " and "), values.size()),
              hint);
}

SafetensorsFile read_safetensors(const fs::path& file) {
  return parse_safetensors(read_file(file), file.string());
}

SafetensorsFile parse_safetensors(std::string_view bytes, const std::string& name) {
  const auto damaged = [&](const std::string& what) {
    return Error(
        fmt::format("{} is not a valid safetensors file: {}", name, what),
        "the file may be truncated or not a weights file; convert the weights again (labpose "
        "weights fetch or import)");
  };
  if (bytes.size() < 8) throw damaged(fmt::format("it has only {} bytes", bytes.size()));
  std::uint64_t header_size = 0;
  for (int i = 7; i >= 0; --i)
    header_size =
        (header_size << 8) | static_cast<unsigned char>(bytes[static_cast<std::size_t>(i)]);
  if (header_size > kMaxHeaderBytes) {
    throw damaged(
        fmt::format("the header says it is {} bytes long; a safetensors header has at "
                    "most {} bytes (100 MB)",
                    header_size, kMaxHeaderBytes));
  }
  if (header_size > bytes.size() - 8) {
    throw damaged(
        fmt::format("the header says it is {} bytes long but the file has only {} bytes after it",
                    header_size, bytes.size() - 8));
  }
  const std::string_view header_text = bytes.substr(8, static_cast<std::size_t>(header_size));
  // nlohmann keeps the last of two equal keys: a name given twice is caught while parsing.
  std::set<std::string> names;
  const auto no_duplicates = [&](int depth, nlohmann::json::parse_event_t event,
                                 nlohmann::json& parsed) {
    if (event == nlohmann::json::parse_event_t::key && depth == 1 &&
        !names.insert(parsed.get<std::string>()).second) {
      throw damaged(fmt::format("the header names tensor \"{}\" twice", parsed.get<std::string>()));
    }
    return true;
  };
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(header_text, no_duplicates);
  } catch (const nlohmann::json::exception& error) {
    throw damaged(fmt::format("the header is not valid JSON ({})", error.what()));
  }
  if (!header.is_object()) throw damaged("the header is not a JSON object");
  const std::size_t data_start = 8 + static_cast<std::size_t>(header_size);
  const std::uint64_t data_size = bytes.size() - data_start;
  SafetensorsFile out;
  std::vector<Extent> extents;
  for (const auto& [key, entry] : header.items()) {
    if (key == "__metadata__") {
      if (!entry.is_object()) throw damaged("its __metadata__ is not a JSON object");
      for (const auto& [meta_key, value] : entry.items()) {
        if (!value.is_string()) {
          throw damaged(fmt::format("its __metadata__ value \"{}\" is not a string",
                                    printable(meta_key, 120)));
        }
        out.metadata[meta_key] = value.get<std::string>();
      }
      continue;
    }
    const std::string tensor_name = printable(key, 120);
    if (!entry.is_object() || !entry.contains("dtype") || !entry.contains("shape") ||
        !entry.contains("data_offsets") || !entry["dtype"].is_string() ||
        !entry["shape"].is_array() || !entry["data_offsets"].is_array() ||
        entry["data_offsets"].size() != 2) {
      throw damaged(fmt::format("the entry of tensor \"{}\" lacks dtype, shape or data_offsets",
                                tensor_name));
    }
    const std::string dtype = entry["dtype"].get<std::string>();
    const std::size_t element_size = dtype_size(dtype);
    if (element_size == 0) {
      throw damaged(fmt::format("tensor \"{}\" has the unknown dtype {}", tensor_name,
                                printable(dtype, 120)));
    }
    HostTensor tensor;
    std::uint64_t elements = 1;
    for (const auto& dim : entry["shape"]) {
      if (!dim.is_number_unsigned() ||
          dim.get<std::uint64_t>() >
              static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
        throw damaged(fmt::format("tensor \"{}\" has the invalid shape {}", tensor_name,
                                  printable(entry["shape"].dump(), 120)));
      }
      tensor.shape.push_back(dim.get<std::int64_t>());
      if (__builtin_mul_overflow(elements, dim.get<std::uint64_t>(), &elements)) {
        throw damaged(fmt::format("tensor \"{}\" has the shape {}, too large to exist", tensor_name,
                                  printable(entry["shape"].dump(), 120)));
      }
    }
    std::uint64_t byte_count = 0;
    if (__builtin_mul_overflow(elements, element_size, &byte_count)) {
      throw damaged(fmt::format("tensor \"{}\" has the shape {}, too large to exist", tensor_name,
                                printable(entry["shape"].dump(), 120)));
    }
    const auto& offsets = entry["data_offsets"];
    if (!offsets[0].is_number_unsigned() || !offsets[1].is_number_unsigned()) {
      throw damaged(fmt::format("tensor \"{}\" has invalid data offsets", tensor_name));
    }
    const auto begin = offsets[0].get<std::uint64_t>(), end = offsets[1].get<std::uint64_t>();
    if (begin > end || end > data_size) {
      throw damaged(
          fmt::format("tensor \"{}\" lies at bytes [{}, {}) but the data section has only {} bytes",
                      tensor_name, begin, end, data_size));
    }
    if (end - begin != byte_count) {
      throw damaged(fmt::format(
          "tensor \"{}\" ({} {} of {} bytes each) should take {} bytes but its offsets span {}",
          tensor_name, elements, dtype, element_size, byte_count, end - begin));
    }
    extents.push_back({begin, end, tensor_name});
    const char* data = bytes.data() + data_start + begin;
    if (dtype != "F32" && dtype != "F16" && dtype != "BF16" && dtype != "F64") {
      if (key.ends_with(".num_batches_tracked")) continue;  // PyTorch's batch-norm counters
      throw Error(
          fmt::format("{}: tensor \"{}\" is {}, not floating point", name, tensor_name, dtype),
          "labpose reads F32, F16, BF16 and F64 weights");
    }
    tensor.values = decode_values(data, static_cast<std::size_t>(elements), dtype);
    check_finite(tensor.values, name, tensor_name,
                 "the file is damaged or the conversion that made it failed: convert the weights "
                 "again (labpose weights fetch or import); for a training snapshot, use an earlier "
                 "snapshot");
    out.tensors.emplace(key, std::move(tensor));
  }
  check_extents(extents, data_size, damaged);
  return out;
}

SafetensorsView view_of(const SafetensorsFile& contents) {
  SafetensorsView view;
  for (const auto& [key, tensor] : contents.tensors)
    view.tensors.emplace(key, TensorView{tensor.shape, tensor.values});
  view.metadata = contents.metadata;
  return view;
}

void safetensors_pieces(const SafetensorsFile& contents,
                        const std::function<void(std::string_view)>& sink) {
  safetensors_pieces(view_of(contents), sink);
}

void safetensors_pieces(const SafetensorsView& contents,
                        const std::function<void(std::string_view)>& sink) {
  static_assert(std::endian::native == std::endian::little, "safetensors data is little-endian");
  nlohmann::json header = nlohmann::json::object();
  std::uint64_t offset = 0;
  for (const auto& [key, tensor] : contents.tensors) {
    const std::uint64_t bytes = tensor.values.size() * sizeof(float);
    header[key] = {
        {"dtype", "F32"}, {"shape", tensor.shape}, {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  if (!contents.metadata.empty()) header["__metadata__"] = contents.metadata;
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  std::string start(8, '\0');
  for (int i = 0; i < 8; ++i)
    start[static_cast<std::size_t>(i)] = static_cast<char>((text.size() >> (8 * i)) & 0xFF);
  start += text;
  sink(start);
  for (const auto& [key, tensor] : contents.tensors) {
    sink(std::string_view(reinterpret_cast<const char*>(tensor.values.data()),
                          tensor.values.size_bytes()));
  }
}

std::string safetensors_bytes(const SafetensorsFile& contents) {
  std::size_t values = 0;
  for (const auto& entry : contents.tensors) values += entry.second.values.size() * sizeof(float);
  std::string out;
  safetensors_pieces(contents, [&](std::string_view piece) {
    if (out.empty()) out.reserve(piece.size() + values);  // the header comes first
    out += piece;
  });
  return out;
}

void write_safetensors(const SafetensorsFile& contents, const fs::path& file) {
  write_pieces_atomically(file, [&](const PieceSink& sink) { safetensors_pieces(contents, sink); });
}

SafetensorsFile net_weights(const Net& net) {
  SafetensorsFile out;
  for (const auto& parameter : net.parameters()) {
    HostTensor tensor;
    tensor.shape = parameter->shape.dims();
    tensor.values.resize(static_cast<std::size_t>(parameter->shape.elements()));
    net.backend().copy_to_host(parameter->value, tensor.values.data());
    out.tensors.emplace(parameter->name, std::move(tensor));
  }
  return out;
}

void load_weights(Net& net, const SafetensorsFile& weights, LoadScope scope,
                  const fs::path& source) {
  std::vector<std::string> missing, mismatched, unexpected;
  std::set<std::string> used;
  const auto in_scope = [&](const std::string& name) {
    return scope == LoadScope::all || name.rfind("head.", 0) != 0;
  };
  for (const auto& parameter : net.parameters()) {
    if (!in_scope(parameter->name)) continue;
    const auto found = weights.tensors.find(parameter->name);
    if (found == weights.tensors.end()) {
      missing.push_back(parameter->name);
      continue;
    }
    used.insert(parameter->name);
    if (Shape(found->second.shape) != parameter->shape) {
      mismatched.push_back(fmt::format("{} (file {}, network {})", parameter->name,
                                       Shape(found->second.shape).text(), parameter->shape.text()));
    }
  }
  for (const auto& [name, tensor] : weights.tensors) {
    if (used.count(name) == 0 && !ignorable(name) && in_scope(name)) unexpected.push_back(name);
  }
  if (!missing.empty() || !mismatched.empty() || !unexpected.empty()) {
    std::vector<std::string> problems;
    if (!missing.empty())
      problems.push_back(fmt::format("{} missing ({})", missing.size(), list_some(missing)));
    if (!mismatched.empty()) {
      problems.push_back(
          fmt::format("{} with the wrong shape ({})", mismatched.size(), list_some(mismatched)));
    }
    if (!unexpected.empty()) {
      problems.push_back(
          fmt::format("{} not in the network ({})", unexpected.size(), list_some(unexpected)));
    }
    throw Error(
        fmt::format("the weights in {} do not fit this network: tensors {}", source.string(),
                    fmt::join(problems, "; ")),
        "was the file made for another architecture or number of bodyparts? Weights converted by "
        "labpose weights import keep torchvision's names");
  }
  for (const auto& parameter : net.parameters()) {
    if (!in_scope(parameter->name)) continue;
    net.backend().copy_from_host(weights.tensors.at(parameter->name).values.data(),
                                 parameter->value);
  }
}

}  // namespace labpose::nets
