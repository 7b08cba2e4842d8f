// Each OpenMP thread's share of a range, for the CPU backend's own loops over element types
// (elements.hpp). A header of its own, as it needs OpenMP, which only the backend's sources build
// with.
#pragma once

#include <omp.h>

#include <cstdint>

/// A kernel compiled for AVX-512 (x86-64-v4: F, BW, VL, DQ, CD), AVX2 and the baseline, the CPU
/// picking one by its instructions when the program starts. (`arch=skylake-avx512` would pick by
/// the CPU's model: GCC's resolver then takes the AVX-512 clone on Skylake-SP alone, and on
/// Sapphire Rapids or Zen 4 runs the AVX2 one.)
#define LABPOSE_CLONES __attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
/// What a clone calls: always inlined, as GCC inlines no plain inline function into a clone for
/// another architecture and would call it per value.
#define LABPOSE_INLINE inline __attribute__((always_inline))

namespace labpose::nets::cpu {

/// Runs body(thread, first, n) on each OpenMP thread's share of `count` items: contiguous, in
/// thread order, n possibly 0. For kernels compiled per instruction set (target_clones), which an
/// OpenMP region inside them would not be.
template <typename Body>
void in_thread_shares(std::int64_t count, const Body& body) {
#pragma omp parallel
  {
    const std::int64_t threads = omp_get_num_threads(), thread = omp_get_thread_num();
    const std::int64_t first = count * thread / threads, last = count * (thread + 1) / threads;
    body(thread, first, last - first);
  }
}

}  // namespace labpose::nets::cpu
