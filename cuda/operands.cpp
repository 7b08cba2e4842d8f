// Element types of CUDA tensors and their conversion around an op (operands.hpp).
#include "cuda/operands.hpp"

#include "core/error.hpp"
#include "cuda/kernels.hpp"

namespace labpose::cuda {

DataType data_type(const nets::Tensor& tensor) {
  return tensor.element() == nets::Element::bf16 ? DataType::bf16 : DataType::f32;
}

void* device_bytes(const nets::Tensor& tensor) {
  LABPOSE_ASSERT(!tensor.empty() && tensor.memory() == nets::Memory::cuda);
  return tensor.raw();
}

InputAs::InputAs(CudaBackend::State& state, const nets::Tensor& tensor, DataType type) {
  const DataType own = data_type(tensor);
  if (own == type) {
    data_ = device_bytes(tensor);
    return;
  }
  copy_ = state.scratch(static_cast<std::size_t>(tensor.elements()) * bytes_of(type));
  kernels::convert(own, device_bytes(tensor), type, copy_->data(), tensor.elements(),
                   state.queue());
  data_ = copy_->data();
}

OutputAs::OutputAs(CudaBackend::State& state, nets::Tensor& tensor, DataType type)
    : state_(state), tensor_(tensor), type_(type) {
  if (data_type(tensor) == type) {
    data_ = device_bytes(tensor);
    return;
  }
  scratch_ = state.scratch(static_cast<std::size_t>(tensor.elements()) * bytes_of(type));
  data_ = scratch_->data();
}

void OutputAs::finish() {
  if (scratch_ == nullptr) return;
  kernels::convert(type_, scratch_->data(), data_type(tensor_), device_bytes(tensor_),
                   tensor_.elements(), state_.queue());
}

}  // namespace labpose::cuda
