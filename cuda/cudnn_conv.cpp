// cuDNN legacy convolutions: descriptors, algorithm choice and execution.
#include "cuda/cudnn_conv.hpp"

#include <fmt/core.h>

#include <cstdlib>
#include <string_view>

#include "core/console.hpp"
#include "core/error.hpp"
#include "cuda/graphs.hpp"

namespace labpose::cuda {
namespace {

// Algorithms needing more workspace than this are skipped (cuDNN ranks cheaper ones after them).
constexpr std::size_t kMaxWorkspaceBytes = std::size_t{1} << 30;

bool tensor_core_math(cudnnMathType_t math) {
  return math == CUDNN_TENSOR_OP_MATH || math == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION;
}

// cuDNN's ranked results of one primitive, as take_ranked reads them.
template <typename Perf>
std::vector<RankedAlgorithm> ranked_of(const Perf* results, int returned) {
  std::vector<RankedAlgorithm> ranked;
  for (int k = 0; k < returned; ++k) {
    ranked.push_back({static_cast<int>(results[k].algo), results[k].status, results[k].mathType,
                      results[k].memory});
  }
  return ranked;
}

// The workspace of `algorithm` with `math` set on the descriptor (where the type lets it choose).
template <typename Algorithm, typename Query>
WorkspaceSize workspace_size_of(CudnnConv& conv, const Query& query) {
  return [&conv, query](int algorithm, cudnnMathType_t math, std::size_t* bytes) {
    if (conv.type != DataType::f32 || conv.math == Fp32Math::tf32) {
      const cudnnStatus_t set = cudnn().SetConvolutionMathType(conv.convolution.get(), math);
      if (set != CUDNN_STATUS_SUCCESS) return set;
    }
    return query(static_cast<Algorithm>(algorithm), bytes);
  };
}

// Runs `call` with conv's algorithm and its workspace; on a failure that falls_back(), the next of
// conv.fallbacks replaces the algorithm and runs.
template <typename Call>
void run_with_fallbacks(CudnnConv& conv, const WorkspaceFor& workspace, const char* function,
                        const std::string& context, const Call& call) {
  for (;;) {
    const cudnnStatus_t status = call(workspace(conv.workspace_bytes));
    if (status == CUDNN_STATUS_SUCCESS) return;
    // While a graph is captured, a failure fails the capture (the plan then runs op by op) rather
    // than replacing the algorithm for good.
    if (conv.fallbacks.empty() || !falls_back(status) || capturing_on_this_thread())
      check_cudnn(status, function, context);
    const RankedAlgorithm next = conv.fallbacks.front();
    conv.fallbacks.erase(conv.fallbacks.begin());
    console::warn("cuDNN's algorithm {} could not run {} ({}); using its next one, {}",
                  conv.algorithm, context, cudnn().GetErrorString(status), next.algorithm);
    if (conv.type != DataType::f32 || conv.math == Fp32Math::tf32) {
      LABPOSE_CUDNN_CHECK(cudnn().SetConvolutionMathType(conv.convolution.get(), next.math),
                          context);
    }
    conv.algorithm = next.algorithm;
    conv.workspace_bytes = next.workspace_bytes;
  }
}

// Ranks the algorithms by timing them (`find`), or by cuDNN's heuristics where timing is not asked
// for or fails: it allocates trial buffers of its own, which a nearly full GPU may not have.
template <typename Find, typename Heuristics, typename... Arguments>
void rank_algorithms(bool measured, const Find& find, const Heuristics& heuristics,
                     const std::string& context, Arguments... arguments) {
  if (measured && find(arguments...) == CUDNN_STATUS_SUCCESS) return;
  check_cudnn(heuristics(arguments...), "cudnnGet*Algorithm_v7", context);
}

}  // namespace

void take_ranked(CudnnConv& conv, const std::vector<RankedAlgorithm>& ranked,
                 const WorkspaceSize& workspace_size, const std::string& context) {
  bool chosen = false;
  cudnnMathType_t chosen_math = CUDNN_DEFAULT_MATH;
  conv.fallbacks.clear();
  for (const RankedAlgorithm& result : ranked) {
    if (!algorithm_usable(conv.type, conv.math, result.status, result.math, result.workspace_bytes))
      continue;
    std::size_t bytes = 0;
    if (workspace_size(result.algorithm, result.math, &bytes) != CUDNN_STATUS_SUCCESS) continue;
    if (!chosen) {
      conv.algorithm = result.algorithm;
      conv.workspace_bytes = bytes;
      chosen_math = result.math;
      chosen = true;
    } else {
      conv.fallbacks.push_back({result.algorithm, result.status, result.math, bytes});
    }
  }
  if (!chosen) {
    throw Error(fmt::format("cuDNN has no {} algorithm for {}", name_of(conv.type), context),
                "this layer shape is not supported on this GPU; please report it with the output "
                "of `labpose doctor` (--device cpu works meanwhile)");
  }
  // The descriptor ends with the chosen algorithm's math type (the fallbacks' queries set theirs).
  std::size_t bytes = 0;
  if (!conv.fallbacks.empty()) workspace_size(conv.algorithm, chosen_math, &bytes);
}

bool falls_back(cudnnStatus_t status) {
  return status == CUDNN_STATUS_NOT_SUPPORTED || status == CUDNN_STATUS_BAD_PARAM ||
         status == CUDNN_STATUS_EXECUTION_FAILED ||
         status == CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH;
}

AlgorithmChoice algorithm_choice_from_environment() {
  const char* value = std::getenv("LABPOSE_CUDNN_FIND");
  return value != nullptr && std::string_view(value) == "0" ? AlgorithmChoice::heuristics
                                                            : AlgorithmChoice::measured;
}

cudnnMathType_t convolution_math_type(DataType type, Fp32Math math) {
  if (type != DataType::f32) return CUDNN_TENSOR_OP_MATH;
  // CUDNN_DEFAULT_MATH lets cuDNN use TF32 tensor cores for fp32 data; FMA math forbids them.
  return math == Fp32Math::tf32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH;
}

bool algorithm_usable(DataType type, Fp32Math math, cudnnStatus_t status, cudnnMathType_t algorithm,
                      std::size_t workspace_bytes) {
  if (status != CUDNN_STATUS_SUCCESS || workspace_bytes > kMaxWorkspaceBytes) return false;
  return type != DataType::f32 || math == Fp32Math::tf32 || !tensor_core_math(algorithm);
}

ConvolutionDescriptor make_convolution_descriptor(const nets::ConvGeometry& g, DataType type,
                                                  Fp32Math math, const std::string& context) {
  cudnnConvolutionDescriptor_t descriptor = nullptr;
  LABPOSE_CUDNN_CHECK(cudnn().CreateConvolutionDescriptor(&descriptor), context);
  ConvolutionDescriptor owned(descriptor);
  LABPOSE_ASSERT(g.pad_top == g.pad_bottom && g.pad_left == g.pad_right);
  LABPOSE_CUDNN_CHECK(cudnn().SetConvolution2dDescriptor(
                          descriptor, g.pad_top, g.pad_left, g.stride_h, g.stride_w, g.dilation_h,
                          g.dilation_w, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
                      context);
  LABPOSE_CUDNN_CHECK(cudnn().SetConvolutionGroupCount(descriptor, g.groups), context);
  LABPOSE_CUDNN_CHECK(cudnn().SetConvolutionMathType(descriptor, convolution_math_type(type, math)),
                      context);
  return owned;
}

std::unique_ptr<CudnnConv> make_cudnn_conv(cudnnHandle_t handle, const CudnnConvGeometry& geometry,
                                           const ConvSettings& settings, ConvPrimitive primitive,
                                           const std::string& context) {
  const DataType type = settings.type;
  const bool measured = settings.choice == AlgorithmChoice::measured;
  auto conv = std::make_unique<CudnnConv>();
  conv->geometry = geometry;
  conv->type = type;
  conv->math = type == DataType::f32 ? settings.math : Fp32Math::strict;
  conv->primitive = primitive;
  conv->in = make_tensor_descriptor(type, geometry.padded_in, context);
  conv->out = make_tensor_descriptor(type, geometry.conv_out, context);
  conv->filter = make_filter_descriptor(type, geometry.filter, context);
  conv->convolution = make_convolution_descriptor(geometry.symmetric, type, conv->math, context);
  cudnnTensorDescriptor_t in = conv->in.get(), out = conv->out.get();
  cudnnFilterDescriptor_t filter = conv->filter.get();
  cudnnConvolutionDescriptor_t convolution = conv->convolution.get();
  int returned = 0;
  switch (primitive) {
    case ConvPrimitive::forward: {
      cudnnConvolutionFwdAlgoPerf_t results[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
      rank_algorithms(measured, cudnn().FindConvolutionForwardAlgorithm,
                      cudnn().GetConvolutionForwardAlgorithm_v7, context, handle, in, filter,
                      convolution, out, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &returned, results);
      take_ranked(*conv, ranked_of(results, returned),
                  workspace_size_of<cudnnConvolutionFwdAlgo_t>(
                      *conv,
                      [&](cudnnConvolutionFwdAlgo_t algorithm, std::size_t* bytes) {
                        return cudnn().GetConvolutionForwardWorkspaceSize(
                            handle, in, filter, convolution, out, algorithm, bytes);
                      }),
                  context);
      break;
    }
    case ConvPrimitive::backward_data: {
      cudnnConvolutionBwdDataAlgoPerf_t results[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
      rank_algorithms(measured, cudnn().FindConvolutionBackwardDataAlgorithm,
                      cudnn().GetConvolutionBackwardDataAlgorithm_v7, context, handle, filter, out,
                      convolution, in, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &returned, results);
      take_ranked(*conv, ranked_of(results, returned),
                  workspace_size_of<cudnnConvolutionBwdDataAlgo_t>(
                      *conv,
                      [&](cudnnConvolutionBwdDataAlgo_t algorithm, std::size_t* bytes) {
                        return cudnn().GetConvolutionBackwardDataWorkspaceSize(
                            handle, filter, out, convolution, in, algorithm, bytes);
                      }),
                  context);
      break;
    }
    case ConvPrimitive::backward_filter: {
      cudnnConvolutionBwdFilterAlgoPerf_t results[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
      rank_algorithms(measured, cudnn().FindConvolutionBackwardFilterAlgorithm,
                      cudnn().GetConvolutionBackwardFilterAlgorithm_v7, context, handle, in, out,
                      convolution, filter, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &returned,
                      results);
      take_ranked(*conv, ranked_of(results, returned),
                  workspace_size_of<cudnnConvolutionBwdFilterAlgo_t>(
                      *conv,
                      [&](cudnnConvolutionBwdFilterAlgo_t algorithm, std::size_t* bytes) {
                        return cudnn().GetConvolutionBackwardFilterWorkspaceSize(
                            handle, in, out, convolution, filter, algorithm, bytes);
                      }),
                  context);
      break;
    }
  }
  return conv;
}

// alpha = 1, beta = 0: float scaling factors for float, half and bfloat16 data alike.
void run_forward(cudnnHandle_t handle, CudnnConv& conv, const void* in, const void* filter,
                 void* out, const WorkspaceFor& workspace, const std::string& context) {
  LABPOSE_ASSERT(conv.primitive == ConvPrimitive::forward);
  const float one = 1.0F, zero = 0.0F;
  run_with_fallbacks(conv, workspace, "cudnnConvolutionForward", context, [&](void* space) {
    return cudnn().ConvolutionForward(handle, &one, conv.in.get(), in, conv.filter.get(), filter,
                                      conv.convolution.get(),
                                      static_cast<cudnnConvolutionFwdAlgo_t>(conv.algorithm), space,
                                      conv.workspace_bytes, &zero, conv.out.get(), out);
  });
}

void run_backward_data(cudnnHandle_t handle, CudnnConv& conv, const void* out_gradient,
                       const void* filter, void* in_gradient, const WorkspaceFor& workspace,
                       const std::string& context) {
  LABPOSE_ASSERT(conv.primitive == ConvPrimitive::backward_data);
  const float one = 1.0F, zero = 0.0F;
  run_with_fallbacks(conv, workspace, "cudnnConvolutionBackwardData", context, [&](void* space) {
    return cudnn().ConvolutionBackwardData(
        handle, &one, conv.filter.get(), filter, conv.out.get(), out_gradient,
        conv.convolution.get(), static_cast<cudnnConvolutionBwdDataAlgo_t>(conv.algorithm), space,
        conv.workspace_bytes, &zero, conv.in.get(), in_gradient);
  });
}

void run_backward_filter(cudnnHandle_t handle, CudnnConv& conv, const void* in,
                         const void* out_gradient, void* filter_gradient,
                         const WorkspaceFor& workspace, const std::string& context) {
  LABPOSE_ASSERT(conv.primitive == ConvPrimitive::backward_filter);
  const float one = 1.0F, zero = 0.0F;
  run_with_fallbacks(conv, workspace, "cudnnConvolutionBackwardFilter", context, [&](void* space) {
    return cudnn().ConvolutionBackwardFilter(
        handle, &one, conv.in.get(), in, conv.out.get(), out_gradient, conv.convolution.get(),
        static_cast<cudnnConvolutionBwdFilterAlgo_t>(conv.algorithm), space, conv.workspace_bytes,
        &zero, conv.filter.get(), filter_gradient);
  });
}

}  // namespace labpose::cuda
