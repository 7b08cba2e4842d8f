// Stage threads and the bounded queues between them.
#include "pipeline/analysis/runner.hpp"

#include <atomic>
#include <exception>
#include <thread>

#include "core/bounded_queue.hpp"
#include "core/error.hpp"
#include "core/interrupt.hpp"
#include "core/thread_priority.hpp"

namespace labpose::pipeline {

namespace {

constexpr int kBatchesInFlight = 3;

// Runs `body` on a thread; its exception is kept for the owner, and `on_failure` (closing the
// queues) lets the other stages stop instead of waiting for it.
class Stage {
 public:
  template <typename Body, typename OnFailure>
  Stage(Body body, OnFailure on_failure)
      : thread_([this, body = std::move(body), on_failure = std::move(on_failure)]() mutable {
          try {
            body();
          } catch (...) {
            error_ = std::current_exception();
            on_failure();
          }
        }) {}
  ~Stage() { join(); }
  Stage(const Stage&) = delete;
  Stage& operator=(const Stage&) = delete;
  void join() {
    if (thread_.joinable()) thread_.join();
  }
  std::exception_ptr error() const { return error_; }

 private:
  std::exception_ptr error_;
  std::thread thread_;
};

// The batches and the queues they circulate in: free -> decoded -> predicted -> free.
class Wiring {
 public:
  Wiring(std::size_t batch_size, std::size_t frame_bytes, std::size_t joints)
      : free_(kBatchesInFlight), decoded_(kBatchesInFlight), predicted_(kBatchesInFlight) {
    batches_.reserve(kBatchesInFlight);
    for (int i = 0; i < kBatchesInFlight; ++i)
      batches_.emplace_back(batch_size, frame_bytes, joints);
    for (FrameBatch& batch : batches_) free_.push(&batch);
  }

  // Decoder's thread: frames into free batches.
  void decode(FrameDecoder& decoder) {
    while (!stop_ && !decoder.finished()) {
      const auto taken = free_.pop();
      if (!taken) return;
      if (!decoder.fill(**taken)) break;
      if (!decoded_.push(*taken)) return;
    }
    decoded_.close();
  }

  // Caller's thread: keypoints of decoded batches; false when interrupted.
  bool predict(PoseRunner& pose) {
    while (!interrupt_requested()) {
      const auto taken = decoded_.pop();
      if (!taken) return true;
      FrameBatch& batch = **taken;
      pose.run(batch.pixels.data(), batch.reads.size(), batch.keypoints.data());
      if (!predicted_.push(&batch)) return true;
    }
    return false;
  }

  // Writer's thread: rows of predicted batches, then the batch is free again.
  void write(RowWriter& writer) {
    while (const auto taken = predicted_.pop()) {
      writer.write(**taken);
      free_.push(*taken);  // refused once stopping: the remaining predicted batches still drain
    }
  }

  // No more decoding; what was predicted is still written.
  void stop_decoding() {
    stop_ = true;
    free_.close();
    decoded_.close();
  }
  void close_predicted() { predicted_.close(); }
  void close_all() {
    stop_decoding();
    close_predicted();
  }

 private:
  std::vector<FrameBatch> batches_;
  BoundedQueue<FrameBatch*> free_, decoded_, predicted_;
  std::atomic<bool> stop_{false};
};

}  // namespace

bool run_analysis_stages(FrameDecoder& decoder, PoseRunner& pose, RowWriter& writer,
                         bool decoder_in_background) {
  LABPOSE_ASSERT(decoder.batch_size() == pose.batch_size());
  Wiring wiring(static_cast<std::size_t>(pose.batch_size()), decoder.frame_bytes(),
                static_cast<std::size_t>(pose.joints()));
  const auto close_all = [&wiring] { wiring.close_all(); };
  Stage decoding(
      [&wiring, &decoder, decoder_in_background] {
        if (decoder_in_background) move_this_thread_to_background();
        wiring.decode(decoder);
      },
      close_all);
  Stage writing([&wiring, &writer] { wiring.write(writer); }, close_all);

  std::exception_ptr pose_error;
  bool interrupted = false;
  try {
    interrupted = !wiring.predict(pose);
  } catch (...) {
    pose_error = std::current_exception();
  }
  if (interrupted || pose_error) wiring.stop_decoding();
  wiring.close_predicted();  // the writer finishes what was predicted
  writing.join();
  wiring.close_all();
  decoding.join();
  for (const std::exception_ptr& error : {pose_error, decoding.error(), writing.error()}) {
    if (error) std::rethrow_exception(error);
  }
  return !interrupted;
}

}  // namespace labpose::pipeline
