// Element access for the CPU backend's own loops over tensors of either element type: fp32, or the
// bf16 activations of a net training in bf16 (Backend::allocate_activation). A loop is written once
// over an accessor and compiled for each type; the conversions are selects, so that it vectorizes.
#pragma once

#include <cstdint>
#include <cstring>
#include <initializer_list>

#include "core/error.hpp"
#include "nets/tensor.hpp"

namespace labpose::nets::cpu {

/// `value` rounded to the nearest bf16 (ties to even), as its 16 bits; NaN stays NaN. Always
/// inlined, also into kernels compiled for another CPU (target_clones), where GCC would otherwise
/// call it once per value.
inline __attribute__((always_inline)) std::uint16_t bf16_bits(float value) {
  std::uint32_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  const std::uint32_t rounded = (bits + 0x7fffU + ((bits >> 16) & 1U)) >> 16;
  const std::uint32_t quiet_nan = (bits >> 16) | 0x40U;
  return static_cast<std::uint16_t>((bits & 0x7fffffffU) > 0x7f800000U ? quiet_nan : rounded);
}

/// The float whose upper half `bits` are (exact).
inline float bf16_value(std::uint16_t bits) {
  const std::uint32_t wide = std::uint32_t{bits} << 16;
  float value = 0.0F;
  std::memcpy(&value, &wide, sizeof value);
  return value;
}

/// Reads and writes the elements of an fp32 tensor.
struct F32Elements {
  float* values;
  float get(std::int64_t i) const { return values[i]; }
  void set(std::int64_t i, float value) const { values[i] = value; }
};

/// Reads and writes the elements of a bf16 tensor, as floats (rounded to nearest even on writes).
struct Bf16Elements {
  std::uint16_t* values;
  float get(std::int64_t i) const { return bf16_value(values[i]); }
  void set(std::int64_t i, float value) const { values[i] = bf16_bits(value); }
};

/// Whether every one of `tensors` holds bf16 elements.
inline bool all_bf16(std::initializer_list<const Tensor*> tensors) {
  for (const Tensor* tensor : tensors) {
    if (tensor->element() != Element::bf16) return false;
  }
  return true;
}

/// The 16 bits of each element of a bf16 tensor.
inline const std::uint16_t* bf16_bits_of(const Tensor& tensor) {
  LABPOSE_ASSERT(tensor.element() == Element::bf16);
  return static_cast<const std::uint16_t*>(tensor.raw());
}
inline std::uint16_t* bf16_bits_of(Tensor& tensor) {
  LABPOSE_ASSERT(tensor.element() == Element::bf16);
  return static_cast<std::uint16_t*>(tensor.raw());
}

/// Calls `body` with the accessor of `tensor`'s element type.
template <typename Body>
void with_elements(const Tensor& tensor, Body&& body) {
  if (tensor.element() == Element::bf16) {
    body(Bf16Elements{static_cast<std::uint16_t*>(tensor.raw())});
  } else {
    body(F32Elements{static_cast<float*>(tensor.raw())});
  }
}

}  // namespace labpose::nets::cpu
