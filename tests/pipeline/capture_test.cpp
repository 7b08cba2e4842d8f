// LiveCapture: a slow consumer gets the newest frames, each frame that arrived is taken or counted
// as dropped, the pixels are VideoReader's, a FIFO whose writer went silent stops on request, and
// a source that is not video is named. Threaded: run under TSan by tools/check.sh.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "core/error.hpp"
#include "core/interrupt.hpp"
#include "pipeline/video/capture.hpp"
#include "pipeline/video/reader.hpp"
#include "tests/support/media_support.hpp"
#include "tests/support/test_support.hpp"

namespace labpose::pipeline {
namespace {
namespace fs = std::filesystem;
using std::chrono::milliseconds;
using testing::TempDir;

constexpr int kFrames = 30;

TEST(LiveCapture, ASlowConsumerTakesTheNewestAndEveryFrameIsCounted) {
  const TempDir dir;
  const fs::path video = dir / "clip.avi";
  testing::write_test_video(video, kFrames, 96, 64);
  VideoReader reader(video);
  std::vector<std::vector<std::uint8_t>> expected(kFrames,
                                                  std::vector<std::uint8_t>(reader.frame_bytes()));
  for (auto& frame : expected) ASSERT_TRUE(reader.read(frame.data()));

  LiveCapture capture(video.string());
  EXPECT_EQ(capture.width(), 96);
  EXPECT_EQ(capture.height(), 64);
  CapturedFrame frame;
  std::int64_t taken = 0, last = -1;
  while (true) {
    const LiveCapture::Next next = capture.next(frame, milliseconds(1000));
    if (next == LiveCapture::Next::ended) break;
    if (next == LiveCapture::Next::waiting) continue;
    ++taken;
    EXPECT_GT(frame.index, last) << "frames come newest first, never twice";
    last = frame.index;
    ASSERT_LT(frame.index, kFrames);
    ASSERT_EQ(frame.width, 96);
    ASSERT_EQ(frame.height, 64);
    EXPECT_EQ(frame.pixels, expected[static_cast<std::size_t>(frame.index)])
        << "frame " << frame.index;
    std::this_thread::sleep_for(milliseconds(2));  // slower than the decoder, now and then
  }
  EXPECT_EQ(capture.arrived(), kFrames);
  EXPECT_EQ(taken + capture.dropped(), kFrames);
  EXPECT_EQ(last, kFrames - 1) << "the last frame is never dropped";
  EXPECT_EQ(capture.error(), "");
}

TEST(LiveCapture, ASilentFifoStopsOnRequest) {
  const TempDir dir;
  const fs::path fifo = dir / "camera";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const fs::path video = dir / "clip.avi";
  testing::write_test_video(video, kFrames, 96, 64);
  const std::string bytes = testing::read_text(video);
  // A writer that sends most of the stream, then keeps the FIFO open and silent.
  const int writer = ::open(fifo.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
  ASSERT_GE(writer, 0);
  std::atomic<bool> done{false};
  std::thread feeder([&] {
    std::size_t written = 0;
    while (!done && written < bytes.size() * 4 / 5) {
      const ssize_t n = ::write(writer, bytes.data() + written, bytes.size() * 4 / 5 - written);
      if (n > 0)
        written += static_cast<std::size_t>(n);
      else
        std::this_thread::sleep_for(milliseconds(1));
    }
  });
  // Should opening or waiting never end, a watchdog stops it as Ctrl-C would: a failure, not a
  // test that hangs.
  const InterruptHandler interrupts;
  std::mutex mutex;
  std::condition_variable finished;
  bool over = false;
  std::thread watchdog([&] {
    std::unique_lock lock(mutex);
    if (!finished.wait_for(lock, std::chrono::seconds(120), [&] { return over; }))
      request_interrupt();
  });
  const auto stop_watchdog = [&] {
    {
      const std::lock_guard lock(mutex);
      over = true;
    }
    finished.notify_all();
    watchdog.join();
  };
  try {
    LiveCapture capture(fifo.string());
    CapturedFrame frame;
    while (capture.next(frame, milliseconds(50)) == LiveCapture::Next::waiting &&
           !interrupt_requested()) {
    }
    EXPECT_GE(capture.arrived(), 1);
    capture.stop();  // returns although the FIFO is open and silent
    EXPECT_GT(capture.arrived(), 0);
  } catch (const Error& error) {
    ADD_FAILURE() << error.what();
  }
  EXPECT_FALSE(interrupt_requested()) << "the watchdog had to stop it";
  stop_watchdog();
  done = true;
  feeder.join();
  ::close(writer);
}

TEST(LiveCapture, ASourceThatIsNotVideoIsNamed) {
  const TempDir dir;
  testing::write_text(dir / "notes.txt", "not a video\n");
  const std::string message =
      testing::error_text([&] { LiveCapture capture((dir / "notes.txt").string()); });
  EXPECT_NE(message.find("notes.txt"), std::string::npos) << message;
  const std::string missing = testing::error_text([&] { LiveCapture capture("/dev/video-none"); });
  EXPECT_NE(missing.find("cannot open /dev/video-none"), std::string::npos) << missing;
}

}  // namespace
}  // namespace labpose::pipeline
