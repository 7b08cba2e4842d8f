// One cuDNN legacy convolution primitive (forward, backward data or backward filter) for one shape
// and type: descriptors, the first algorithm of cuDNN's heuristics (cudnnGet*Algorithm_v7) that
// fits the workspace limit, its workspace size, and the calls that run it. fp32 uses FMA math only
// (no TF32: it matches the reference to float rounding); fp16/bf16 use tensor cores with fp32
// accumulation. Shared by the training ops (conv2d.cpp) and plans (plan.cpp); internal to cuda/.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "cuda/conv_geometry.hpp"
#include "cuda/cudnn_handles.hpp"

namespace labpose::cuda {

enum class ConvPrimitive { forward, backward_data, backward_filter };

struct CudnnConv {
  CudnnConvGeometry geometry;
  DataType type = DataType::f32;
  ConvPrimitive primitive = ConvPrimitive::forward;
  TensorDescriptor in, out;  // padded_in and conv_out, NHWC
  FilterDescriptor filter;   // (K, R, S, C/g)
  ConvolutionDescriptor convolution;
  int algorithm = 0;
  std::size_t workspace_bytes = 0;
};

/// Descriptors and algorithm for `primitive`; throws an Error naming `context` when cuDNN has no
/// algorithm for it.
std::unique_ptr<CudnnConv> make_cudnn_conv(cudnnHandle_t handle, const CudnnConvGeometry& geometry,
                                           DataType type, ConvPrimitive primitive,
                                           const std::string& context);

// All pointers are device memory of conv.type, NHWC, filters (K, R, S, C/g); workspace holds at
// least conv.workspace_bytes. Outputs are overwritten.
// in: padded_in, filter -> out: conv_out
void run_forward(cudnnHandle_t handle, const CudnnConv& conv, const void* in, const void* filter,
                 void* out, void* workspace, const std::string& context);
// out_gradient: conv_out, filter -> in_gradient: padded_in
void run_backward_data(cudnnHandle_t handle, const CudnnConv& conv, const void* out_gradient,
                       const void* filter, void* in_gradient, void* workspace,
                       const std::string& context);
// in: padded_in, out_gradient: conv_out -> filter_gradient: (K, R, S, C/g)
void run_backward_filter(cudnnHandle_t handle, const CudnnConv& conv, const void* in,
                         const void* out_gradient, void* filter_gradient, void* workspace,
                         const std::string& context);

}  // namespace labpose::cuda
