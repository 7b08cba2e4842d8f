// Fuzz harness for the safetensors reader (parse_safetensors, what read_safetensors runs on a
// file's bytes): any bytes give weights or an Error, never a crash, a hang or an allocation larger
// than the file. Weights that were read are finite, sized by their shapes, and read back the same
// after writing (safetensors_bytes, what write_safetensors writes).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "core/error.hpp"
#include "nets/safetensors.hpp"
#include "tensor_checks.hpp"

namespace {

bool same_weights(const labpose::nets::SafetensorsFile& a,
                  const labpose::nets::SafetensorsFile& b) {
  if (a.metadata != b.metadata || a.tensors.size() != b.tensors.size()) return false;
  for (const auto& [name, tensor] : a.tensors) {
    const auto other = b.tensors.find(name);
    if (other == b.tensors.end() || other->second.shape != tensor.shape ||
        other->second.values.size() != tensor.values.size() ||
        (!tensor.values.empty() && std::memcmp(other->second.values.data(), tensor.values.data(),
                                               tensor.values.size() * sizeof(float)) != 0)) {
      return false;
    }
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace nets = labpose::nets;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  nets::SafetensorsFile weights;
  try {
    weights = nets::parse_safetensors(bytes, "fuzz.safetensors");
  } catch (const labpose::Error&) {
    return 0;  // refused with a message: what a bad file must get
  }
  for (const auto& [name, tensor] : weights.tensors) {
    labpose::fuzz::trap_unless_sized_by_shape(tensor.shape, tensor.values);
    labpose::fuzz::trap_unless_finite(tensor.values);
  }
  const nets::SafetensorsFile again =
      nets::parse_safetensors(nets::safetensors_bytes(weights), "round-trip.safetensors");
  if (!same_weights(weights, again)) __builtin_trap();
  return 0;
}
