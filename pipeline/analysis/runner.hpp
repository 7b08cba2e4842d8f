// The threads of one video's analysis, as OpenPose wires workers: FrameDecoder on a thread of its
// own, one thread per pose slot, RowWriter on another, passing a few preallocated FrameBatches
// through bounded queues and writing them back in frame order. Only the wiring: the work is in the
// stage objects (stages.hpp, pipeline/pose/pose_runner.hpp), each thread just calls its own.
#pragma once

#include <functional>
#include <vector>

#include "pipeline/analysis/stages.hpp"

namespace labpose::pipeline {

/// One slot of the pose stage: fills batch.keypoints for the batch's frames (PoseRunner::run on a
/// backend of its own). Each slot runs on a thread of its own, at the same time as the others: on
/// a GPU, the upload of one batch and the download of another overlap the run of a third.
using PoseSlot = std::function<void(FrameBatch&)>;

/// Runs the frames from the decoder's position to the video's end through decoder -> slots ->
/// writer, which gets the batches in frame order whatever order the slots finish them in.
/// `decoder_in_background`: the decoder's thread runs at background priority (when the network
/// computes on the same cores). Returns false when interrupt_requested() stopped it (the batches
/// predicted without a gap before them are written first), true at the end of the video. After
/// every thread has ended, rethrows the first failure of a slot, the decoder or the writer (in that
/// order).
bool run_analysis_stages(FrameDecoder& decoder, const std::vector<PoseSlot>& slots,
                         RowWriter& writer, bool decoder_in_background);

}  // namespace labpose::pipeline
