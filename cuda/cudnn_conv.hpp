// One cuDNN legacy convolution primitive (forward, backward data or backward filter) for one shape
// and type: descriptors, the fastest algorithm that fits the workspace limit (timed on the GPU by
// cudnnFind*Algorithm once per shape, as PyTorch's cudnn.benchmark does; or cuDNN's heuristics),
// its workspace size, and the calls that run it. fp32 is strict FMA math
// (the reference's float rounding) or TF32 on tensor cores (Fp32Math); fp16/bf16 use tensor cores
// with fp32 accumulation. Shared by the training ops (conv2d.cpp) and plans (plan.cpp); internal to
// cuda/.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cuda/conv_geometry.hpp"
#include "cuda/cudnn_handles.hpp"

namespace labpose::cuda {

enum class ConvPrimitive { forward, backward_data, backward_filter };

/// How fp32 convolutions multiply: strict (FMA only: the reference to float rounding) or TF32
/// (tensor cores with 10-bit mantissas and fp32 sums, compute capability 8.0 and later: PyTorch's
/// default for convolutions). fp16 and bf16 data always use tensor cores.
enum class Fp32Math { strict, tf32 };

/// How an algorithm is chosen: by timing every one cuDNN offers on this GPU (cudnnFind*Algorithm,
/// once per shape; it allocates its own trial buffers), or by cuDNN's heuristics without running
/// anything (cudnnGet*Algorithm_v7).
enum class AlgorithmChoice { measured, heuristics };

/// measured, or heuristics where LABPOSE_CUDNN_FIND=0 (for comparing the two).
AlgorithmChoice algorithm_choice_from_environment();

/// The math type a convolution descriptor of `type` starts with.
cudnnMathType_t convolution_math_type(DataType type, Fp32Math math);

/// Whether an algorithm cuDNN ranked (its status, math type and workspace) may run a convolution
/// of `type`: strict fp32 refuses tensor-core math; nothing may need more than the workspace limit.
bool algorithm_usable(DataType type, Fp32Math math, cudnnStatus_t status, cudnnMathType_t algorithm,
                      std::size_t workspace_bytes);

/// An algorithm cuDNN ranked for a convolution: its number, status, math type and workspace.
struct RankedAlgorithm {
  int algorithm = 0;
  cudnnStatus_t status = CUDNN_STATUS_SUCCESS;
  cudnnMathType_t math = CUDNN_DEFAULT_MATH;
  std::size_t workspace_bytes = 0;
};

struct CudnnConv {
  CudnnConvGeometry geometry;
  DataType type = DataType::f32;
  Fp32Math math = Fp32Math::strict;
  ConvPrimitive primitive = ConvPrimitive::forward;
  TensorDescriptor in, out;  // padded_in and conv_out, NHWC
  FilterDescriptor filter;   // (K, R, S, C/g)
  ConvolutionDescriptor convolution;
  int algorithm = 0;
  std::size_t workspace_bytes = 0;
  /// The usable algorithms ranked after the chosen one (workspace as cuDNN confirmed it), tried in
  /// turn when the chosen one fails to run.
  std::vector<RankedAlgorithm> fallbacks;
};

/// Takes the first of `ranked` that algorithm_usable() allows and whose workspace size
/// `workspace_size(algorithm, math, &bytes)` confirms (it sets the math type on the descriptor
/// first), as conv's algorithm; the usable ones after it become conv.fallbacks. Throws an Error
/// naming `context` when none is usable.
using WorkspaceSize =
    std::function<cudnnStatus_t(int algorithm, cudnnMathType_t math, std::size_t* bytes)>;
void take_ranked(CudnnConv& conv, const std::vector<RankedAlgorithm>& ranked,
                 const WorkspaceSize& workspace_size, const std::string& context);

/// Whether a run that failed with `status` is worth the next algorithm (this one cannot run this
/// shape here), rather than an error of the GPU itself (out of memory, a lost device).
bool falls_back(cudnnStatus_t status);

/// Device memory for a workspace of at least the given bytes, valid for the call it is given to.
using WorkspaceFor = std::function<void*(std::size_t bytes)>;

/// The convolution descriptor of `geometry` (symmetric padding) for `type` and `math`.
ConvolutionDescriptor make_convolution_descriptor(const nets::ConvGeometry& geometry, DataType type,
                                                  Fp32Math math, const std::string& context);

/// What make_cudnn_conv needs besides the shape: the data type, fp32's math and how to choose.
struct ConvSettings {
  DataType type = DataType::f32;
  Fp32Math math = Fp32Math::strict;  // fp32 only
  AlgorithmChoice choice = AlgorithmChoice::measured;
};

/// Descriptors and algorithm for `primitive`; throws an Error naming `context` when cuDNN has no
/// algorithm for it. Measuring runs work on the handle's stream and waits for it.
std::unique_ptr<CudnnConv> make_cudnn_conv(cudnnHandle_t handle, const CudnnConvGeometry& geometry,
                                           const ConvSettings& settings, ConvPrimitive primitive,
                                           const std::string& context);

// All pointers are device memory of conv.type, NHWC, filters (K, R, S, C/g); `workspace` gives
// the algorithm's workspace. Outputs are overwritten. When the algorithm fails to run (falls_back),
// the next of conv.fallbacks takes its place for good, and says so on the console.
// in: padded_in, filter -> out: conv_out
void run_forward(cudnnHandle_t handle, CudnnConv& conv, const void* in, const void* filter,
                 void* out, const WorkspaceFor& workspace, const std::string& context);
// out_gradient: conv_out, filter -> in_gradient: padded_in
void run_backward_data(cudnnHandle_t handle, CudnnConv& conv, const void* out_gradient,
                       const void* filter, void* in_gradient, const WorkspaceFor& workspace,
                       const std::string& context);
// in: padded_in, out_gradient: conv_out -> filter_gradient: (K, R, S, C/g)
void run_backward_filter(cudnnHandle_t handle, CudnnConv& conv, const void* in,
                         const void* out_gradient, void* filter_gradient,
                         const WorkspaceFor& workspace, const std::string& context);

}  // namespace labpose::cuda
