// The score-map peak kernel of the CUDA backend: one block per (image, bodypart) map, each thread
// scans a strided share of the cells and the block reduces the candidates in shared memory, so
// only N x J x 4 values leave the GPU. The first-maximum rule is op_math.hpp's (tested on the CPU
// against the reference's sequential loop).
#include "cuda/device_types.cuh"
#include "cuda/kernels.hpp"

namespace labpose::cuda::kernels {
namespace {

constexpr int kPeakThreads = 256;  // a power of two: the reduction halves it

// Reads cell `cell` of map j of image n from NHWC score maps (N, cells, J).
struct MapLoader {
  const float* score;
  std::int64_t base, joints;
  __device__ float operator()(std::int64_t cell) const { return score[base + cell * joints]; }
};

__global__ void find_peaks_kernel(const float* score, const float* locref, float* peaks,
                                  std::int64_t joints, std::int64_t cells) {
  __shared__ float values[kPeakThreads];
  __shared__ std::int64_t indices[kPeakThreads];
  const std::int64_t map = blockIdx.x, n = map / joints, j = map - n * joints;
  const MapLoader load{score, n * cells * joints + j, joints};
  const PeakCandidate mine = thread_peak(load, cells, static_cast<int>(threadIdx.x), kPeakThreads);
  values[threadIdx.x] = mine.value;
  indices[threadIdx.x] = mine.cell;
  __syncthreads();
  for (int stride = kPeakThreads / 2; stride > 0; stride /= 2) {
    if (static_cast<int>(threadIdx.x) < stride) {
      const PeakCandidate challenger{values[threadIdx.x + stride], indices[threadIdx.x + stride]};
      const PeakCandidate holder{values[threadIdx.x], indices[threadIdx.x]};
      if (peak_replaces(challenger, holder)) {
        values[threadIdx.x] = challenger.value;
        indices[threadIdx.x] = challenger.cell;
      }
    }
    __syncthreads();
  }
  if (threadIdx.x != 0) return;
  const std::int64_t best = peak_cell(PeakCandidate{values[0], indices[0]}, load(0));
  const std::int64_t at = (n * cells + best) * 2 * joints + 2 * j;
  float* peak = peaks + map * kPeakValues;
  peak[0] = static_cast<float>(best);
  peak[1] = load(best);
  peak[2] = locref[at];
  peak[3] = locref[at + 1];
}

}  // namespace

void find_peaks(const float* score, const float* locref, float* peaks, std::int64_t batch,
                std::int64_t joints, std::int64_t cells, cudaStream_t stream) {
  const std::int64_t maps = batch * joints;
  if (maps == 0 || cells == 0) return;
  find_peaks_kernel<<<static_cast<unsigned>(maps), kPeakThreads, 0, stream>>>(score, locref, peaks,
                                                                              joints, cells);
  check_kernel_launch("find_peaks");
}

}  // namespace labpose::cuda::kernels
