// What the fuzz harnesses of tensor files check of every array a reader returns; a failed check
// traps, which libFuzzer reports as a crash.
#pragma once

#include <cstdint>
#include <vector>

namespace labpose::fuzz {

// The shape's sizes are non-negative and their product is the number of values.
inline void trap_unless_sized_by_shape(const std::vector<std::int64_t>& shape,
                                       const std::vector<float>& values) {
  std::uint64_t elements = 1;
  for (const std::int64_t dim : shape) {
    if (dim < 0) __builtin_trap();
    elements *= static_cast<std::uint64_t>(dim);
  }
  if (elements != values.size()) __builtin_trap();
}

// No value is NaN or infinite (for the formats whose readers refuse them).
inline void trap_unless_finite(const std::vector<float>& values) {
  for (const float value : values) {
    if (!(value - value == 0.0F)) __builtin_trap();
  }
}

}  // namespace labpose::fuzz
