// Stage threads and the bounded queues between them.
#include "pipeline/analysis/runner.hpp"

#include <atomic>
#include <exception>
#include <memory>
#include <thread>

#include "core/bounded_queue.hpp"
#include "core/error.hpp"
#include "core/interrupt.hpp"
#include "core/thread_priority.hpp"

namespace labpose::pipeline {

namespace {

// Besides the batch in each slot: one being decoded and one being written.
constexpr std::size_t kBatchesBesideSlots = 2;

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

// The batches and the queues they circulate in: free -> decoded -> predicted -> free. Batches
// carry their sequence number from the source, and the sink gets them back in that order.
class Wiring {
 public:
  Wiring(std::size_t slots, const BatchShape& shape)
      : count_(batches_in_flight(slots)),
        free_(count_),
        decoded_(count_),
        predicted_(count_),
        early_(count_, nullptr) {
    batches_.reserve(count_);
    for (std::size_t i = 0; i < count_; ++i)
      batches_.emplace_back(shape.batch_size, shape.frame_bytes, shape.joints);
    for (FrameBatch& batch : batches_) free_.push(&batch);
  }

  // Source's thread: frames into free batches.
  void decode(const BatchSource& source) {
    std::int64_t sequence = 0;
    while (!stop_) {
      const auto taken = free_.pop();
      if (!taken) return;
      if (!source(**taken)) break;
      (*taken)->sequence = sequence++;
      if (!decoded_.push(*taken)) return;
    }
    decoded_.close();
  }

  // A slot's thread: keypoints of decoded batches, until the frames end or a stop.
  void predict(const PoseSlot& slot) {
    while (!stop_) {
      if (interrupt_requested()) {
        interrupted_ = true;
        stop_decoding();
        return;
      }
      const auto taken = decoded_.pop();
      if (!taken) return;
      slot(**taken);
      if (!predicted_.push(*taken)) return;
    }
  }

  // Sink's thread: predicted batches in sequence, then the batch is free again. A batch that comes
  // early waits in early_; at most count_ sequences are in flight, so sequence % count_ is its
  // place.
  void write(const BatchSink& sink) {
    std::int64_t next = 0;
    while (const auto taken = predicted_.pop()) {
      early_[static_cast<std::size_t>((*taken)->sequence) % count_] = *taken;
      for (FrameBatch* batch = early_[static_cast<std::size_t>(next) % count_];
           batch != nullptr && batch->sequence == next;
           batch = early_[static_cast<std::size_t>(next) % count_]) {
        early_[static_cast<std::size_t>(next) % count_] = nullptr;
        sink(*batch);
        ++next;
        free_.push(batch);  // refused once stopping: the remaining predicted batches still drain
      }
    }
  }

  // No more batches from the source, nor predictions; what was predicted is still written.
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
  bool interrupted() const { return interrupted_; }

 private:
  std::size_t count_;
  std::vector<FrameBatch> batches_;
  BoundedQueue<FrameBatch*> free_, decoded_, predicted_;
  std::vector<FrameBatch*> early_;  // the sink's thread's own
  std::atomic<bool> stop_{false}, interrupted_{false};
};

}  // namespace

std::size_t batches_in_flight(std::size_t slots) {
  return slots + kBatchesBesideSlots;
}

bool run_analysis_stages(const BatchShape& shape, const BatchSource& source,
                         const std::vector<PoseSlot>& slots, const BatchSink& sink,
                         bool source_in_background) {
  LABPOSE_ASSERT(!slots.empty());
  Wiring wiring(slots.size(), shape);
  const auto close_all = [&wiring] { wiring.close_all(); };
  const auto stop_decoding = [&wiring] { wiring.stop_decoding(); };
  Stage decoding(
      [&wiring, &source, source_in_background] {
        if (source_in_background) move_this_thread_to_background();
        wiring.decode(source);
      },
      close_all);
  Stage writing([&wiring, &sink] { wiring.write(sink); }, close_all);
  {
    // A failed slot stops the decoding and the other slots; what was predicted is written.
    std::vector<std::unique_ptr<Stage>> predicting;
    for (const PoseSlot& slot : slots) {
      predicting.push_back(
          std::make_unique<Stage>([&wiring, &slot] { wiring.predict(slot); }, stop_decoding));
    }
    for (auto& stage : predicting) stage->join();
    wiring.close_predicted();  // the sink finishes what was predicted
    writing.join();
    wiring.close_all();
    decoding.join();
    for (auto& stage : predicting) {
      if (stage->error()) std::rethrow_exception(stage->error());
    }
  }
  for (const std::exception_ptr& error : {decoding.error(), writing.error()}) {
    if (error) std::rethrow_exception(error);
  }
  return !wiring.interrupted();
}

}  // namespace labpose::pipeline
