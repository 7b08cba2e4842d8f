// labpose bench --pipeline: frames/s of analysis's own path (packed 8-bit frames up, the plan, the
// peaks found on the device, (N, J, 4) values down, keypoints decoded) through the same threads and
// slots as `analyze`, on synthetic frames, or with --video on a real video's frames, decoding
// included and set beside decoding alone. Never a file written. A benchmark, never a test.
#pragma once

#include <string>

#include "nets/backend.hpp"

namespace labpose::tools {

struct PipelineBench {
  std::string architecture;
  int bodyparts = 4, batch = 1, width = 640, height = 480;
  int slots = 0;      // 0: analyze's default for the device
  std::string video;  // "": synthetic frames of width x height
  int batches = 10, warmup = 2;
  bool json = false;
  bool decode_on_gpu = false;  // --decode gpu: the video decoded with NVDEC
};

/// Synthetic frames: `warmup` + `batches` batches, frames/s over the timed ones. With a video: all
/// its frames, decoded as `analyze` decodes them, after one pass of decoding alone; frames/s of
/// each, whole passes. Runs on `backend` and the slots' other backends; prints the figures.
void measure_pipeline(const PipelineBench& bench, nets::Backend& backend);

}  // namespace labpose::tools
