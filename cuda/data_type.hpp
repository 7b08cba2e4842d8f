// The element types of device buffers: float everywhere in the Backend interface, half and bfloat16
// for inference plans on tensor cores. Only names and sizes here (the arithmetic is in the
// kernels).
#pragma once

#include <cstddef>

namespace labpose::cuda {

enum class DataType { f32, f16, bf16 };

constexpr std::size_t bytes_of(DataType type) {
  return type == DataType::f32 ? 4 : 2;
}

constexpr const char* name_of(DataType type) {
  return type == DataType::f32 ? "fp32" : type == DataType::f16 ? "fp16" : "bf16";
}

}  // namespace labpose::cuda
