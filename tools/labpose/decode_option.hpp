// --decode cpu|gpu, where analyze and bench --pipeline decode video: FFmpeg on the CPU's cores, or
// NVDEC on an NVIDIA GPU (pipeline/video/gpu_decoding.hpp), with the CPU taking over, and saying
// why, where NVDEC cannot be used.
#pragma once

#include <CLI/CLI.hpp>

namespace labpose::tools {

/// Adds --decode to `app`; `on_gpu` (which must outlive the parse) becomes true for `gpu`.
void add_decode_option(CLI::App& app, bool* on_gpu);

}  // namespace labpose::tools
