// A small deterministic random source for weight initialization and tests: the same numbers on
// every platform and compiler (unlike std::normal_distribution). Not for cryptography.
#pragma once

#include <cmath>
#include <cstdint>

namespace labpose::nets {

class Random {
 public:
  explicit Random(std::uint64_t seed) : state_(seed ^ 0x9E3779B97F4A7C15ULL) {}

  /// splitmix64.
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, 1).
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  /// Standard normal (Box-Muller).
  double normal() {
    const double u1 = 1.0 - uniform(), u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }

 private:
  std::uint64_t state_;
};

}  // namespace labpose::nets
