// RAII owners of cuDNN objects (the library handle, tensor, filter and convolution descriptors) and
// LABPOSE_CUDNN_CHECK, which turns a failed cuDNN call into a labpose error naming the call, the op
// and its shapes. Descriptors describe NHWC tensors only: that is the CUDA backend's layout.
#pragma once

#include <memory>
#include <string_view>

#include "cuda/cudnn_api.hpp"
#include "cuda/data_type.hpp"
#include "nets/tensor.hpp"

namespace labpose::cuda {

/// Throws a labpose::Error when `status` is not CUDNN_STATUS_SUCCESS.
void check_cudnn(cudnnStatus_t status, std::string_view call, std::string_view context);

cudnnDataType_t cudnn_type(DataType type);

struct CudnnHandleDeleter {
  void operator()(cudnnContext* handle) const noexcept { cudnn().Destroy(handle); }
};
using CudnnHandle = std::unique_ptr<cudnnContext, CudnnHandleDeleter>;
/// A cuDNN handle for the current device whose work goes to `stream`.
CudnnHandle make_cudnn_handle(cudaStream_t stream);

struct TensorDescriptorDeleter {
  void operator()(cudnnTensorStruct* descriptor) const noexcept {
    cudnn().DestroyTensorDescriptor(descriptor);
  }
};
using TensorDescriptor = std::unique_ptr<cudnnTensorStruct, TensorDescriptorDeleter>;
/// An NHWC tensor of logical shape (N, C, H, W).
TensorDescriptor make_tensor_descriptor(DataType type, const nets::Shape& shape,
                                        std::string_view context);

struct FilterDescriptorDeleter {
  void operator()(cudnnFilterStruct* descriptor) const noexcept {
    cudnn().DestroyFilterDescriptor(descriptor);
  }
};
using FilterDescriptor = std::unique_ptr<cudnnFilterStruct, FilterDescriptorDeleter>;
/// Convolution weights of logical shape (K, C/groups, R, S) stored as (K, R, S, C/groups).
FilterDescriptor make_filter_descriptor(DataType type, const nets::Shape& shape,
                                        std::string_view context);

struct ConvolutionDescriptorDeleter {
  void operator()(cudnnConvolutionStruct* descriptor) const noexcept {
    cudnn().DestroyConvolutionDescriptor(descriptor);
  }
};
using ConvolutionDescriptor = std::unique_ptr<cudnnConvolutionStruct, ConvolutionDescriptorDeleter>;

}  // namespace labpose::cuda

/// LABPOSE_CUDNN_CHECK(cudnn().ConvolutionForward(...), context).
#define LABPOSE_CUDNN_CHECK(call, context) ::labpose::cuda::check_cudnn((call), #call, (context))
