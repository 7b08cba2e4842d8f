// The threads of one video's analysis, as OpenPose wires workers: FrameDecoder on a thread of its
// own, PoseRunner on the caller's, RowWriter on a third, passing a few preallocated FrameBatches
// through bounded queues. Only the wiring: the work is in the stage objects (stages.hpp,
// pipeline/pose/pose_runner.hpp), each thread just calls its own.
#pragma once

#include "pipeline/analysis/stages.hpp"
#include "pipeline/pose/pose_runner.hpp"

namespace labpose::pipeline {

/// Runs the frames from the decoder's position to the video's end through decoder -> pose ->
/// writer (batches of pose.batch_size() frames). `decoder_in_background`: the decoder's thread
/// runs at background priority (when the network computes on the same cores). Returns false when
/// interrupt_requested() stopped it (the batches already predicted are written first), true at the
/// end of the video. After every thread has ended, rethrows the first failure of the pose stage,
/// the decoder or the writer (in that order).
bool run_analysis_stages(FrameDecoder& decoder, PoseRunner& pose, RowWriter& writer,
                         bool decoder_in_background);

}  // namespace labpose::pipeline
