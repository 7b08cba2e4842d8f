// The threads of one video's analysis, as OpenPose wires workers: the decoder (FrameDecoder) on a
// thread of its own, one thread per pose slot, the writer (RowWriter) on another, passing a few
// preallocated FrameBatches through bounded queues and writing them back in frame order. Only the
// wiring: the work is in the stage objects (stages.hpp, pipeline/pose/pose_runner.hpp), each
// thread just calls its own; `labpose bench --pipeline` feeds it synthetic frames instead.
#pragma once

#include <functional>
#include <vector>

#include "pipeline/analysis/stages.hpp"

namespace labpose::pipeline {

/// The decoding stage: fills a batch with the next frames (FrameDecoder::fill, which sets reads and
/// pixels); false when there are none left.
using BatchSource = std::function<bool(FrameBatch&)>;

/// One slot of the pose stage: fills batch.keypoints for the batch's frames (PoseRunner::run on a
/// backend of its own). Each slot runs on a thread of its own, at the same time as the others: on
/// a GPU, the upload of one batch and the download of another overlap the run of a third.
using PoseSlot = std::function<void(FrameBatch&)>;

/// The writing stage: a predicted batch, called in frame order (RowWriter::write).
using BatchSink = std::function<void(const FrameBatch&)>;

/// The batches the stages pass around: N frames of `frame_bytes` and their J keypoints each.
struct BatchShape {
  std::size_t batch_size = 0, frame_bytes = 0, joints = 0;
};

/// The batches run_analysis_stages allocates for `slots` slots: one in each, one being filled by
/// the source and one with the sink.
std::size_t batches_in_flight(std::size_t slots);

/// Runs batches from `source` until it has no more through `slots` to `sink`, which gets them in
/// the order `source` filled them whatever order the slots finish them in.
/// `source_in_background`: the source's thread runs at background priority (when the network
/// computes on the same cores). Returns false when interrupt_requested() stopped it (the batches
/// predicted without a gap before them are written first), true at the end. After every thread has
/// ended, rethrows the first failure of a slot, the source or the sink (in that order).
bool run_analysis_stages(const BatchShape& shape, const BatchSource& source,
                         const std::vector<PoseSlot>& slots, const BatchSink& sink,
                         bool source_in_background);

}  // namespace labpose::pipeline
