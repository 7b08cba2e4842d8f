// cuDNN RAII owners and error conversion.
#include "cuda/cudnn_handles.hpp"

#include <fmt/core.h>

#include <climits>

#include "core/error.hpp"

namespace labpose::cuda {
namespace {

// "cudnnCreate" from the call's text "cudnn().Create(&handle)".
std::string function_name(std::string_view call) {
  const auto paren = call.find('(', call.find('.') == std::string_view::npos ? 0 : call.find('.'));
  std::string name(paren == std::string_view::npos ? call : call.substr(0, paren));
  constexpr std::string_view kTable = "cudnn().";
  if (name.starts_with(kTable)) name = "cudnn" + name.substr(kTable.size());
  return name;
}

int as_int(std::int64_t value, std::string_view context) {
  if (value < 0 || value > INT_MAX) {
    throw Error(fmt::format("{}: dimension {} is too large for cuDNN", context, value),
                "use smaller images or batches");
  }
  return static_cast<int>(value);
}

}  // namespace

void check_cudnn(cudnnStatus_t status, std::string_view call, std::string_view context) {
  if (status == CUDNN_STATUS_SUCCESS) return;
  char detail[512] = {};
  cudnn().GetLastErrorString(detail, sizeof(detail));
  const std::string reason = detail[0] != '\0'
                                 ? fmt::format("{} ({})", cudnn().GetErrorString(status), detail)
                                 : std::string(cudnn().GetErrorString(status));
  std::string hint = "please report it with the output of `labpose doctor`";
  if (status == CUDNN_STATUS_NOT_SUPPORTED || status == CUDNN_STATUS_BAD_PARAM) {
    hint =
        "cuDNN does not support this layer shape on this GPU; please report it with the "
        "output of `labpose doctor` (--device cpu works meanwhile)";
  } else if (status == CUDNN_STATUS_ALLOC_FAILED) {
    hint = "the GPU is out of memory: use a smaller batch size or image size";
  }
  throw Error(fmt::format("cuDNN failed in {}: {}: {}", context, function_name(call), reason),
              hint);
}

cudnnDataType_t cudnn_type(DataType type) {
  switch (type) {
    case DataType::f32:
      return CUDNN_DATA_FLOAT;
    case DataType::f16:
      return CUDNN_DATA_HALF;
    case DataType::bf16:
      return CUDNN_DATA_BFLOAT16;
  }
  return CUDNN_DATA_FLOAT;
}

CudnnHandle make_cudnn_handle(cudaStream_t stream) {
  cudnnHandle_t handle = nullptr;
  LABPOSE_CUDNN_CHECK(cudnn().Create(&handle), "starting cuDNN");
  CudnnHandle owned(handle);
  LABPOSE_CUDNN_CHECK(cudnn().SetStream(handle, stream), "starting cuDNN");
  return owned;
}

TensorDescriptor make_tensor_descriptor(DataType type, const nets::Shape& shape,
                                        std::string_view context) {
  LABPOSE_ASSERT(shape.rank() == 4);
  cudnnTensorDescriptor_t descriptor = nullptr;
  LABPOSE_CUDNN_CHECK(cudnn().CreateTensorDescriptor(&descriptor), context);
  TensorDescriptor owned(descriptor);
  LABPOSE_CUDNN_CHECK(
      cudnn().SetTensor4dDescriptor(descriptor, CUDNN_TENSOR_NHWC, cudnn_type(type),
                                    as_int(shape.n(), context), as_int(shape.c(), context),
                                    as_int(shape.h(), context), as_int(shape.w(), context)),
      context);
  return owned;
}

FilterDescriptor make_filter_descriptor(DataType type, const nets::Shape& shape,
                                        std::string_view context) {
  LABPOSE_ASSERT(shape.rank() == 4);
  cudnnFilterDescriptor_t descriptor = nullptr;
  LABPOSE_CUDNN_CHECK(cudnn().CreateFilterDescriptor(&descriptor), context);
  FilterDescriptor owned(descriptor);
  LABPOSE_CUDNN_CHECK(
      cudnn().SetFilter4dDescriptor(descriptor, cudnn_type(type), CUDNN_TENSOR_NHWC,
                                    as_int(shape[0], context), as_int(shape[1], context),
                                    as_int(shape[2], context), as_int(shape[3], context)),
      context);
  return owned;
}

}  // namespace labpose::cuda
