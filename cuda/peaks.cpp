// CudaBackend::find_peaks: the maps stay on the GPU, N x J x 4 values come out (peaks.cu).
#include "nets/peaks.hpp"
#include "core/error.hpp"
#include "cuda/kernels.hpp"
#include "cuda/state.hpp"

namespace labpose::cuda {

static_assert(kernels::kPeakValues == nets::Backend::kPeakValues,
              "the peak kernel writes as many values per peak as the Backend interface says");

void CudaBackend::find_peaks(const nets::Tensor& score, const nets::Tensor& locref,
                             nets::Tensor& peaks) {
  nets::check_peak_shapes(score, locref, peaks);
  LABPOSE_ASSERT(score.layout() == nets::Layout::nhwc && locref.layout() == nets::Layout::nhwc);
  State& s = state();
  s.activate();
  const nets::Shape& shape = score.shape();
  kernels::find_peaks(device_data(score), device_data(locref), device_data(peaks), shape.n(),
                      shape.c(), shape.h() * shape.w(), s.queue());
}

}  // namespace labpose::cuda
