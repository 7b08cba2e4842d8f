// labpose-bench-cpu-peak: the arithmetic peak of this CPU's cores in fp32, bf16 and int8, measured
// with the instructions oneDNN's convolutions are made of, so that `labpose bench`'s GFLOP/s can
// be stated as a fraction of what the machine can do. Not a benchmark of labpose.
//
// Each OpenMP thread runs a loop of independent multiply-adds on 512-bit registers (16
// accumulators, more than the latency x throughput of the FMA pipes, so the loop is bound by
// throughput alone):
//   fp32  vfmadd231ps   16 multiply-adds per instruction  = 32 FLOP
//   bf16  vdpbf16ps     32 bf16 products summed into 16 fp32 = 64 FLOP
//   int8  vpdpbusd      64 u8 x s8 products summed into 16 int32 = 128 "FLOP" (operations)
// An instruction this CPU lacks is reported as such, never emulated. Usage:
//   labpose-bench-cpu-peak [--seconds S]     (threads: OMP_NUM_THREADS, default every core)
#include <immintrin.h>
#include <omp.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

constexpr int kAccumulators = 16;
constexpr long kInnerLoops = 1 << 16;

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// The sum of every lane of the accumulators (GCC 12's _mm512_reduce_add_* trip -Wuninitialized).
__attribute__((target("avx512f"))) float lane_sum(const __m512 (&acc)[kAccumulators]) {
  float sum = 0;
  alignas(64) float lanes[16];
  for (const __m512& a : acc) {
    _mm512_store_ps(lanes, a);
    for (const float lane : lanes) sum += lane;
  }
  return sum;
}

// Each kernel runs `loops` x kInnerLoops x kAccumulators instructions and returns a value that
// depends on every accumulator (so that none is optimized away).

__attribute__((target("avx512f"))) float fp32_kernel(long loops) {
  __m512 acc[kAccumulators];
  for (int i = 0; i < kAccumulators; ++i) acc[i] = _mm512_set1_ps(0.001F * static_cast<float>(i));
  const __m512 a = _mm512_set1_ps(0.999999F), b = _mm512_set1_ps(1e-7F);
  for (long l = 0; l < loops * kInnerLoops; ++l) {
#pragma GCC unroll 16
    for (int i = 0; i < kAccumulators; ++i) acc[i] = _mm512_fmadd_ps(acc[i], a, b);
  }
  return lane_sum(acc);
}

__attribute__((target("avx512f,avx512bf16"))) float bf16_kernel(long loops) {
  __m512 acc[kAccumulators];
  for (int i = 0; i < kAccumulators; ++i) acc[i] = _mm512_set1_ps(0.001F * static_cast<float>(i));
  const __m512bh a = _mm512_cvtne2ps_pbh(_mm512_set1_ps(1e-3F), _mm512_set1_ps(1e-3F));
  const __m512bh b = _mm512_cvtne2ps_pbh(_mm512_set1_ps(1e-3F), _mm512_set1_ps(1e-3F));
  for (long l = 0; l < loops * kInnerLoops; ++l) {
#pragma GCC unroll 16
    for (int i = 0; i < kAccumulators; ++i) acc[i] = _mm512_dpbf16_ps(acc[i], a, b);
  }
  return lane_sum(acc);
}

__attribute__((target("avx512f,avx512vnni"))) float int8_kernel(long loops) {
  __m512i acc[kAccumulators];
  for (int i = 0; i < kAccumulators; ++i) acc[i] = _mm512_set1_epi32(i);
  const __m512i a = _mm512_set1_epi8(1), b = _mm512_set1_epi8(-1);
  for (long l = 0; l < loops * kInnerLoops; ++l) {
#pragma GCC unroll 16
    for (int i = 0; i < kAccumulators; ++i) acc[i] = _mm512_dpbusd_epi32(acc[i], a, b);
  }
  long long sum = 0;
  alignas(64) int lanes[16];
  for (int i = 0; i < kAccumulators; ++i) {
    _mm512_store_si512(lanes, acc[i]);
    for (const int lane : lanes) sum += lane;
  }
  return static_cast<float>(sum);
}

// Giga-operations per second of `kernel` on every thread at once, for about `seconds`.
double measure(float (*kernel)(long), double operations_per_instruction, double seconds) {
  // Calibrate the loop count on one thread, then run it on all of them together.
  long loops = 1;
  for (;;) {
    const double start = now_seconds();
    volatile float sink = kernel(loops);
    (void)sink;
    const double elapsed = now_seconds() - start;
    if (elapsed > seconds / 4 || loops > (1L << 30)) {
      loops = static_cast<long>(static_cast<double>(loops) * seconds / elapsed) + 1;
      break;
    }
    loops *= 2;
  }
  double slowest = 0.0;
#pragma omp parallel reduction(max : slowest)
  {
    const double start = now_seconds();
    volatile float sink = kernel(loops);
    (void)sink;
    slowest = now_seconds() - start;
  }
  const double instructions =
      static_cast<double>(loops) * kInnerLoops * kAccumulators * omp_get_max_threads();
  return instructions * operations_per_instruction / slowest * 1e-9;
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 2.0;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) {
      seconds = std::atof(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: labpose-bench-cpu-peak [--seconds S]\n");
      return 2;
    }
  }
  __builtin_cpu_init();
  const int threads = omp_get_max_threads();
  std::printf(
      "peak of %d thread%s, %.1f s per precision (512-bit multiply-adds, 16 independent "
      "accumulators)\n",
      threads, threads == 1 ? "" : "s", seconds);
  if (!__builtin_cpu_supports("avx512f")) {
    std::printf("fp32: this CPU has no AVX-512; the peak program measures 512-bit instructions\n");
    return 0;
  }
  std::printf("fp32  vfmadd231ps  %8.1f GFLOP/s\n", measure(fp32_kernel, 32.0, seconds));
  if (__builtin_cpu_supports("avx512bf16")) {
    std::printf("bf16  vdpbf16ps    %8.1f GFLOP/s\n", measure(bf16_kernel, 64.0, seconds));
  } else {
    std::printf("bf16  vdpbf16ps    not on this CPU\n");
  }
  if (__builtin_cpu_supports("avx512vnni")) {
    std::printf("int8  vpdpbusd     %8.1f GOP/s\n", measure(int8_kernel, 128.0, seconds));
  } else {
    std::printf("int8  vpdpbusd     not on this CPU\n");
  }
  return 0;
}
