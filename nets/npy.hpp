// NumPy .npy arrays (version 1-3, C order) for `labpose net forward` and tests:
// float32/float64/uint8 read (as float), float32 written. Not a general NumPy reader: no Fortran
// order, no structured types.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace labpose::nets {

struct NpyArray {
  std::vector<std::int64_t> shape;
  std::vector<float> values;  // C order
};

/// Reads a whole file; errors name the file and what is wrong. The shape is checked against the
/// file's size (without overflow) before anything is allocated.
NpyArray read_npy(const std::filesystem::path& file);
/// The same from the file's bytes; `name` (the file) is what messages name.
NpyArray parse_npy(std::string_view bytes, const std::string& name);
/// The bytes of a float32 .npy file holding `array` (version 1.0, or 2.0 for a very long header).
std::string npy_bytes(const NpyArray& array);
void write_npy(const NpyArray& array, const std::filesystem::path& file);  // atomic

}  // namespace labpose::nets
