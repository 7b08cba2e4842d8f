// Each OpenMP thread's share of a range, for the CPU backend's own loops over element types
// (elements.hpp). A header of its own, as it needs OpenMP, which only the backend's sources build
// with.
#pragma once

#include <omp.h>

#include <cstdint>

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
