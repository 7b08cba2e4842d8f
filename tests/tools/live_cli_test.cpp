// labpose live end to end: from a file every frame is processed and its rows are analyze's; from a
// stream (a FIFO standing in for a camera: v4l2loopback is not available here) every frame that
// arrived is either processed or counted as dropped; Ctrl-C while the stream is silent stops it
// with the rows written; bad usage is named.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <regex>
#include <sstream>
#include <thread>

#include "tests/support/media_support.hpp"
#include "tests/support/test_support.hpp"

namespace labpose {
namespace {
namespace fs = std::filesystem;
using testing::CommandResult;
using testing::contains;
using testing::shell_quote;
using testing::TempDir;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The first `cells` cells of a CSV line.
std::string first_cells(const std::string& line, int cells) {
  std::size_t at = 0;
  for (int cell = 0; cell < cells && at != std::string::npos; ++cell) {
    at = line.find(',', at == 0 ? 0 : at + 1);
  }
  return line.substr(0, at);
}

// (frames processed, frames dropped) from live's last summary line.
std::pair<long, long> summary_counts(const std::string& output) {
  static const std::regex pattern(R"(live(?: \(stopped\))?: (\d+) frames, .* (\d+) dropped)");
  std::pair<long, long> counts{-1, -1};
  for (auto match = std::sregex_iterator(output.begin(), output.end(), pattern);
       match != std::sregex_iterator(); ++match)
    counts = {std::stol((*match)[1].str()), std::stol((*match)[2].str())};
  EXPECT_NE(counts.first, -1) << output;
  return counts;
}

// Writes a file's bytes into a FIFO from a thread: the first `bytes` of them (all when 0), then
// keeps the FIFO open until the object ends. Never blocks on a reader that does not come.
class FifoFeeder {
 public:
  FifoFeeder(const fs::path& fifo, const fs::path& file, std::size_t bytes = 0)
      : thread_([this, fifo, data = testing::read_text(file), bytes] {
          // O_RDWR: no wait for a reader. O_CLOEXEC: labpose, started beside this thread, must not
          // inherit the write end, or the FIFO never ends for it.
          const int fd = ::open(fifo.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
          if (fd < 0) return;
          const std::size_t total = bytes == 0 ? data.size() : std::min(bytes, data.size());
          std::size_t written = 0;
          while (!done_ && written < total) {
            pollfd ready{fd, POLLOUT, 0};
            if (::poll(&ready, 1, 50) <= 0) continue;
            const ssize_t n = ::write(fd, data.data() + written, total - written);
            if (n > 0) written += static_cast<std::size_t>(n);
          }
          // A whole file ends the stream once read; a part keeps it open, as a silent camera.
          while (!done_ && (bytes != 0 || !drained(fd))) ::usleep(20000);
          ::close(fd);
        }) {}
  ~FifoFeeder() {
    done_ = true;
    thread_.join();
  }
  FifoFeeder(const FifoFeeder&) = delete;
  FifoFeeder& operator=(const FifoFeeder&) = delete;

 private:
  static bool drained(int fd) {
    int pending = 0;
    return ::ioctl(fd, FIONREAD, &pending) == 0 && pending == 0;
  }
  std::atomic<bool> done_{false};
  std::thread thread_;
};

TEST(LiveCli, FromAFileEveryFrameGetsAnalyzesPose) {
  const TempDir dir;
  const fs::path config = testing::demo_with_random_snapshot(dir.path(), 40);
  const std::string c = shell_quote(config.string());
  const fs::path video = config.parent_path() / "videos" / "synthetic_mouse.mp4";
  ASSERT_EQ(testing::run_labpose("--quiet analyze " + c + " " + shell_quote(video.string()) +
                                 " --csv --batch-size 1 --dest " +
                                 shell_quote((dir / "analyzed").string()))
                .exit_code,
            0);
  ASSERT_EQ(testing::run_labpose("--quiet export " + c).exit_code, 0);
  fs::path analyzed;
  for (const auto& entry : fs::directory_iterator(dir / "analyzed"))
    if (entry.path().extension() == ".csv") analyzed = entry.path();
  const std::vector<std::string> expected = lines_of(testing::read_text(analyzed));
  ASSERT_EQ(expected.size(), 43U);

  const fs::path folder =
      config.parent_path() / "exported-models" / "DLC_demo_mobilenet_v2_0.35_iteration-0_shuffle-1";
  for (const std::string& model : {folder.string(), config.string()}) {
    const fs::path csv = dir / "live.csv";
    const CommandResult live = testing::run_labpose("live --model " + shell_quote(model) +
                                                    " --video " + shell_quote(video.string()) +
                                                    " --output " + shell_quote(csv.string()));
    ASSERT_EQ(live.exit_code, 0) << live.output;
    EXPECT_EQ(summary_counts(live.output), std::make_pair(40L, 0L)) << live.output;
    EXPECT_TRUE(contains(live.output, "latency p50 ")) << live.output;
    EXPECT_TRUE(contains(live.output, "likelihood >= 0.6: snout ")) << live.output;
    const std::vector<std::string> rows = lines_of(testing::read_text(csv));
    ASSERT_EQ(rows.size(), expected.size()) << model;
    for (std::size_t row = 0; row < rows.size(); ++row) {
      // Frame number and x, y, likelihood of the 4 bodyparts; then timestamp and latency.
      EXPECT_EQ(first_cells(rows[row], 13), expected[row]) << "row " << row << " of " << model;
    }
    EXPECT_TRUE(contains(rows[1], ",timestamp,latency")) << rows[1];
    EXPECT_FALSE(fs::exists(dir / "live.csv.part"));
    fs::remove(csv);
  }
}

// The demo with a random snapshot, a 40-frame AVI to stream and a FIFO to stream it through.
struct StreamProject {
  explicit StreamProject(const TempDir& dir)
      : config(testing::demo_with_random_snapshot(dir.path(), 20)),
        stream(dir / "stream.avi"),
        fifo(dir / "camera") {
    testing::write_test_video(stream, 40, 128, 96);
    EXPECT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  }
  fs::path config, stream, fifo;
};

TEST(LiveCli, FromAStreamEveryFrameIsProcessedOrCountedAsDropped) {
  const TempDir dir;
  const StreamProject project(dir);
  const fs::path &config = project.config, &stream = project.stream, &fifo = project.fifo;
  const fs::path csv = dir / "live.csv";
  CommandResult live;
  {
    const FifoFeeder feeder(fifo, stream);
    live =
        testing::run_labpose("live --model " + shell_quote(config.string()) + " --camera " +
                             shell_quote(fifo.string()) + " --output " + shell_quote(csv.string()));
  }
  ASSERT_EQ(live.exit_code, 0) << live.output;
  const auto [processed, dropped] = summary_counts(live.output);
  EXPECT_GE(processed, 1) << live.output;
  EXPECT_EQ(processed + dropped, 40) << live.output;
  EXPECT_EQ(lines_of(testing::read_text(csv)).size(), static_cast<std::size_t>(processed + 3));
}

TEST(LiveCli, CtrlCStopsASilentStreamWithItsRowsWritten) {
  const TempDir dir;
  const StreamProject project(dir);
  const fs::path &config = project.config, &stream = project.stream, &fifo = project.fifo;
  const fs::path csv = dir / "live.csv";
  CommandResult stopped;
  {
    // Most of the stream, then silence with the FIFO open: live waits for the next frame.
    const FifoFeeder feeder(fifo, stream, fs::file_size(stream) * 4 / 5);
    stopped = testing::run_until_then_signal(
        shell_quote(testing::labpose_binary()) + " live --model " + shell_quote(config.string()) +
            " --camera " + shell_quote(fifo.string()) + " --output " + shell_quote(csv.string()) +
            " --report-every 0.2 --for 300",  // --for: never a test waiting for ever
        "grep -q 'live: [1-9]' \"$out\"", "INT");
  }
  EXPECT_EQ(stopped.exit_code, 0) << stopped.output;
  EXPECT_TRUE(contains(stopped.output, "live (stopped): ")) << stopped.output;
  const auto [processed, dropped] = summary_counts(stopped.output);
  EXPECT_GE(processed, 1);
  EXPECT_LT(processed + dropped, 40) << stopped.output;
  EXPECT_EQ(lines_of(testing::read_text(csv)).size(), static_cast<std::size_t>(processed + 3));
  EXPECT_FALSE(fs::exists(dir / "live.csv.part"));
}

TEST(LiveCli, AStreamThatNeverSendsAFrameEndsWithFor) {
  const TempDir dir;
  const StreamProject project(dir);
  CommandResult live;
  {
    const FifoFeeder silent(project.fifo, project.stream, 100);  // a few bytes, then nothing
    live = testing::run_labpose("live --model " + shell_quote(project.config.string()) +
                                " --camera " + shell_quote(project.fifo.string()) + " --for 1");
  }
  EXPECT_EQ(live.exit_code, 1) << live.output;
  EXPECT_TRUE(contains(live.output, "sent no video to recognize within the time given"))
      << live.output;
}

TEST(LiveCli, BadUsageIsNamed) {
  const TempDir dir;
  const fs::path config = testing::demo_with_random_snapshot(dir.path(), 10);
  const fs::path video = config.parent_path() / "videos" / "synthetic_mouse.mp4";
  const std::string m = " --model " + shell_quote(config.string());
  CommandResult result = testing::run_labpose("live" + m);
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_TRUE(contains(result.output, "live needs one source")) << result.output;
  result = testing::run_labpose("live" + m + " --video " + shell_quote(video.string()) +
                                " --camera /dev/video0");
  EXPECT_EQ(result.exit_code, 2) << result.output;
  result = testing::run_labpose("live" + m + " --camera " + shell_quote((dir / "none").string()));
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_TRUE(contains(result.output, "cannot open ")) << result.output;
  result = testing::run_labpose("live --model " + shell_quote(dir.path().string()) + " --video " +
                                shell_quote(video.string()));
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_TRUE(contains(result.output, "is not an exported model")) << result.output;
  result = testing::run_labpose("live" + m + " --camera " + shell_quote(video.string()) +
                                " --size 64x48");
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_TRUE(contains(result.output, "--size and --fps set a camera's mode")) << result.output;
  result = testing::run_labpose("live" + m + " --video " + shell_quote(video.string()) +
                                " --tracker box");
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_TRUE(contains(result.output, "--tracker is for multi-animal projects")) << result.output;
}

}  // namespace
}  // namespace labpose
