// Max pooling of a bf16 plan's NHWC activations by labpose's own loop. resnet_50's 3×3 stride-2
// pooling of its first layer's 64 channels at 640×480 took 0.65–0.9 ms on oneDNN 2.6's bf16 kernel
// on a 2-core AMX Xeon, where OpenVINO's took 0.42 ms (docs/precision.md). bf16 values are compared
// as 16-bit integers: the magnitude bits of a negative value flipped, a bf16 pattern orders as its
// value does, and the map undoes itself; so a window's maximum is a run of integer maxima over the
// channels, which vectorize 32 to a register.
#pragma once

#include <cstdint>

#include "nets/backend.hpp"
#include "nets/tensor.hpp"

namespace labpose::nets::cpu {

/// The maximum over each window of `g` (padding excluded, as PyTorch's MaxPool2d) of NHWC bf16
/// activations x (bit patterns) of shape `in` into y of shape `out` (max_pool_output_shape),
/// shared by the OpenMP threads over output rows. Requires max_pool_bf16_applies(g): every
/// window then holds a pixel of the input. NaN: a positive NaN wins over every number, a negative
/// one loses to them. (int8 plans keep oneDNN's kernel, which pools u8 at 0.19 ms there against
/// this loop's 0.23.)
void max_pool_bf16(const std::uint16_t* x, std::uint16_t* y, const Shape& in, const Shape& out,
                   const PoolGeometry& g);

/// Whether max_pool_bf16 takes windows of `g`: each padding less than the window.
bool max_pool_bf16_applies(const PoolGeometry& g);

/// Whether plans pool with max_pool: yes, unless the environment variable LABPOSE_MAX_POOL is 0 (to
/// compare with oneDNN's kernel in one run).
bool own_max_pool_enabled();

/// How many max pools plans of this process have compiled onto max_pool: what tests observe.
std::int64_t own_max_pools_made();
void count_own_max_pool();

}  // namespace labpose::nets::cpu
