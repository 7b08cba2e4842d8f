// NumPy .npy arrays (version 1-3, C order) for `labpose net forward` and tests:
// float32/float64/uint8 read (as float), float32 written. Not a general NumPy reader: no Fortran
// order, no structured types.
#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

namespace labpose::nets {

struct NpyArray {
  std::vector<std::int64_t> shape;
  std::vector<float> values;  // C order
};

NpyArray read_npy(const std::filesystem::path& file);
void write_npy(const NpyArray& array, const std::filesystem::path& file);  // atomic

}  // namespace labpose::nets
