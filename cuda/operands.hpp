// The element types of the CUDA backend's image tensors and their conversion around an op: a net
// training in bf16 keeps its activations in bf16 (CudaBackend::allocate_activation) while its
// input, outputs and parameters stay fp32, so an op may meet both. Each op computes in one type; an
// operand of the other type is converted into scratch on the way in (InputAs) or out (OutputAs).
// Internal to cuda/.
#pragma once

#include <memory>

#include "cuda/state.hpp"

namespace labpose::cuda {

/// The element type of a tensor of this backend: fp32, or bf16 (activations of a bf16 net).
DataType data_type(const nets::Tensor& tensor);
/// The device address of a tensor's first element, whatever its element type.
void* device_bytes(const nets::Tensor& tensor);

/// A tensor an op computing in `type` reads: its own memory when it holds that type, else a
/// converted copy in scratch, kept while this object lives (the stream orders the reuse).
class InputAs {
 public:
  InputAs(CudaBackend::State& state, const nets::Tensor& tensor, DataType type);
  const void* data() const { return data_; }

 private:
  const void* data_ = nullptr;
  std::shared_ptr<nets::Storage> copy_;
};

/// A tensor an op computing in `type` writes: its own memory when it holds that type, else scratch
/// that finish() converts into the tensor.
class OutputAs {
 public:
  OutputAs(CudaBackend::State& state, nets::Tensor& tensor, DataType type);
  void* data() const { return data_; }
  /// Converts the scratch into the tensor (nothing to do when the op wrote the tensor itself).
  void finish();

 private:
  CudaBackend::State& state_;
  nets::Tensor& tensor_;
  DataType type_;
  void* data_ = nullptr;
  std::shared_ptr<nets::Storage> scratch_;
};

}  // namespace labpose::cuda
