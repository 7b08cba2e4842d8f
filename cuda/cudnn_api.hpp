// cuDNN as labpose reaches it: a table of the functions the CUDA backend calls, filled from
// libcudnn.so.<major> the first time a GPU is used, after checking that the library is the cuDNN
// this build was compiled against, built for this build's CUDA. Nothing links cuDNN at program
// start, so a CUDA build of labpose runs its CPU commands where cuDNN is missing. Not the RAII
// owners of cuDNN objects (cudnn_handles.hpp).
#pragma once

#include <cudnn.h>

#include <cstddef>
#include <string>
#include <vector>

namespace labpose::cuda {

// Every cuDNN function labpose calls, without its "cudnn" prefix: X(Create) is cudnnCreate.
#define LABPOSE_CUDNN_FUNCTIONS(X)             \
  X(GetVersion)                                \
  X(GetCudartVersion)                          \
  X(GetErrorString)                            \
  X(GetLastErrorString)                        \
  X(Create)                                    \
  X(Destroy)                                   \
  X(SetStream)                                 \
  X(CreateTensorDescriptor)                    \
  X(DestroyTensorDescriptor)                   \
  X(SetTensor4dDescriptor)                     \
  X(CreateFilterDescriptor)                    \
  X(DestroyFilterDescriptor)                   \
  X(SetFilter4dDescriptor)                     \
  X(CreateConvolutionDescriptor)               \
  X(DestroyConvolutionDescriptor)              \
  X(SetConvolution2dDescriptor)                \
  X(SetConvolutionGroupCount)                  \
  X(SetConvolutionMathType)                    \
  X(GetConvolutionMathType)                    \
  X(FindConvolutionForwardAlgorithm)           \
  X(FindConvolutionBackwardDataAlgorithm)      \
  X(FindConvolutionBackwardFilterAlgorithm)    \
  X(GetConvolutionForwardAlgorithm_v7)         \
  X(GetConvolutionBackwardDataAlgorithm_v7)    \
  X(GetConvolutionBackwardFilterAlgorithm_v7)  \
  X(GetConvolutionForwardWorkspaceSize)        \
  X(GetConvolutionBackwardDataWorkspaceSize)   \
  X(GetConvolutionBackwardFilterWorkspaceSize) \
  X(ConvolutionForward)                        \
  X(ConvolutionBackwardData)                   \
  X(ConvolutionBackwardFilter)                 \
  X(DeriveBNTensorDescriptor)                  \
  X(BatchNormalizationForwardInference)        \
  X(BatchNormalizationForwardTraining)         \
  X(BatchNormalizationBackward)

/// The functions, each with cuDNN's own signature: cudnn().ConvolutionForward(handle, ...).
struct CudnnApi {
#define LABPOSE_CUDNN_SLOT(name) decltype(&cudnn##name) name = nullptr;
  LABPOSE_CUDNN_FUNCTIONS(LABPOSE_CUDNN_SLOT)
#undef LABPOSE_CUDNN_SLOT
};

/// What opening cuDNN gave: the table, or why there is none.
struct CudnnLibrary {
  CudnnApi api;
  std::string path;         // the file opened
  std::size_t version = 0;  // cudnnGetVersion(), e.g. 91900
  std::string problem;      // "" when api is complete and pairs with this build
  bool usable() const { return problem.empty(); }
};

/// Where cuDNN is looked for: LABPOSE_CUDNN_LIBRARY alone when it is set (a path or a file name);
/// else libcudnn.so.<major> as the dynamic linker finds it (LD_LIBRARY_PATH, ld.so.conf), then
/// the library this build was compiled against.
std::vector<std::string> cudnn_candidates();

/// Opens the first candidate that loads and checks it: cuDNN's major version equals this build's,
/// it was built for this build's CUDA major version, and it has every function of the table.
CudnnLibrary open_cudnn(const std::vector<std::string>& candidates);

/// The process's cuDNN, opened at the first call from cudnn_candidates(); never throws.
const CudnnLibrary& cudnn_library();

/// The process's cuDNN functions; throws a labpose::Error saying why cuDNN cannot be used.
const CudnnApi& cudnn();

}  // namespace labpose::cuda
