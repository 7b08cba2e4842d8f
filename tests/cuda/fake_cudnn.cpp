// A stand-in for libcudnn.so.9 with only cudnnGetVersion and cudnnGetCudartVersion, which report
// FAKE_CUDNN_VERSION and FAKE_CUDART_VERSION (this build's own versions where FAKE_CUDNN_PAIRS is
// set): the tests of how labpose refuses a cuDNN that does not pair with it. Never linked.
#include <cstddef>

#ifdef FAKE_CUDNN_PAIRS
#include <cuda_runtime_api.h>
#include <cudnn_version.h>
#define FAKE_CUDNN_VERSION CUDNN_VERSION
#define FAKE_CUDART_VERSION CUDART_VERSION
#endif

extern "C" {
__attribute__((visibility("default"))) std::size_t cudnnGetVersion() {
  return FAKE_CUDNN_VERSION;
}
__attribute__((visibility("default"))) std::size_t cudnnGetCudartVersion() {
  return FAKE_CUDART_VERSION;
}
}
