// labpose bench --pipeline: frames/s of analysis's own path (packed 8-bit frames up, the plan, the
// peaks found on the device, (N, J, 4) values down, keypoints decoded) on synthetic frames, through
// the same threads and slots as `analyze`, without a video to decode or a file to write. A
// benchmark, never a test.
#pragma once

#include <string>

#include "nets/backend.hpp"

namespace labpose::tools {

struct PipelineBench {
  std::string architecture;
  int bodyparts = 4, batch = 1, width = 640, height = 480;
  int slots = 0;  // 0: analyze's default for the device
  int batches = 10, warmup = 2;
  bool json = false;
};

/// Runs `warmup` + `batches` batches through the pipeline on `backend` (and the slots' other
/// backends) and prints frames/s over the timed batches.
void measure_pipeline(const PipelineBench& bench, nets::Backend& backend);

}  // namespace labpose::tools
