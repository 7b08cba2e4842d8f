// What labpose's own AVX-512 kernels (Winograd, depthwise) share: the instructions they are
// compiled for, reading and writing 16 channels of bf16 activations as fp32 lanes, and the
// activations applied to them. Include only from files whose kernels run where cpu_has_avx512()
// says so: the functions carry their own target attribute, and the rest of the file stays
// portable.
#pragma once

// GCC 12 reports the intrinsics' own deliberately undefined vectors (`__Y = __Y`) as
// maybe-uninitialized where they are inlined; the warning's location is in this header.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#else
#include <immintrin.h>
#endif

#include <cstdint>

// The kernels' instructions: AVX-512 (and, in bf16's functions, its bf16 instructions). The fp32
// paths, which run on CPUs without bf16, execute none of those: the compiler emits them only for
// the bf16 intrinsics.
#define LABPOSE_AVX512_KERNEL \
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512bf16")))

namespace labpose::nets::cpu {

/// The lanes of `count` (at most 16) channels.
inline __mmask16 lanes_of(std::int64_t count) {
  return count >= 16 ? static_cast<__mmask16>(0xFFFF)
                     : static_cast<__mmask16>((1U << static_cast<unsigned>(count)) - 1U);
}

/// The channels of `lanes` at p, bf16 bit patterns, widened to fp32 (the others 0).
LABPOSE_AVX512_KERNEL inline __m512 load_lanes(const std::uint16_t* p, __mmask16 lanes) {
  const __m256i half = _mm256_maskz_loadu_epi16(lanes, p);
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(half), 16));
}

/// v's `lanes` written to p, rounded to bf16 (to nearest, ties to even).
LABPOSE_AVX512_KERNEL inline void store_lanes(std::uint16_t* p, __m512 v, __mmask16 lanes) {
  const __m256bh h = _mm512_cvtneps_pbh(v);
  _mm256_mask_storeu_epi16(p, lanes, reinterpret_cast<const __m256i&>(h));
}

/// The activation `cap` of a fused op: < 0 none, 0 ReLU, > 0 ReLU capped there.
LABPOSE_AVX512_KERNEL inline __m512 activate(__m512 v, float cap) {
  if (cap < 0) return v;
  v = _mm512_max_ps(v, _mm512_setzero_ps());
  return cap > 0 ? _mm512_min_ps(v, _mm512_set1_ps(cap)) : v;
}

}  // namespace labpose::nets::cpu
