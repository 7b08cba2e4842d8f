// Recording repeated work once and replaying it (repeated_work.hpp).
#include "nets/repeated_work.hpp"

#include "core/console.hpp"

namespace labpose::nets {

RepeatedWork::RepeatedWork(Backend& backend, std::string what)
    : RepeatedWork([&backend](const std::function<void()>& work,
                              std::string& why_not) { return backend.record(work, why_not); },
                   std::move(what), !backend.host_memory()) {}

RepeatedWork::RepeatedWork(Recorder recorder, std::string what, bool records)
    : recorder_(std::move(recorder)), what_(std::move(what)), enabled_(records) {}

void RepeatedWork::run(std::int64_t key, const std::function<void()>& work) {
  if (!enabled_) {
    work();
    return;
  }
  if (key_ != key) {
    key_ = key;
    ran_once_ = false;
    recorded_.reset();
  }
  if (!recorded_ && !ran_once_) {
    ran_once_ = true;
    work();
    return;
  }
  if (!recorded_) {
    std::string why_not;
    recorded_ = recorder_(work, why_not);  // records the ops without running them
    if (!recorded_) {
      console::warn("{} runs op by op: {}", what_, why_not);
      enabled_ = false;
      work();
      return;
    }
  }
  recorded_->replay();
  ++replays_;
}

}  // namespace labpose::nets
