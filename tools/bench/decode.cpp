// labpose-bench-decode: decoding speed of labpose's VideoReader (decoding to RGB) against the
// ffmpeg command line on the same file with the same number of decoder threads, decoding only and
// decoding to RGB, printed as frames/s and ratios; labpose's figure alone where the ffmpeg command
// is not installed (a GPU machine without Debian's packages). A benchmark program, not a test: it
// asserts nothing. Usage:
//   labpose-bench-decode VIDEO [--threads N] [--repeat R] [--order rgb|bgr] [--gpu G]
// With --gpu, labpose decodes with NVDEC on CUDA device G (the CPU where it cannot, as it says).
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "pipeline/video/reader.hpp"

namespace {

double now_seconds() {
  using std::chrono::duration;
  return duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string shell_quote(const std::string& text) {
  std::string out = "'";
  for (const char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

struct Run {
  double seconds = 0, open_seconds = 0;
  std::int64_t frames = 0, undecodable = 0;
  bool on_gpu = false;
};

// One full pass with VideoReader, opening included (the frame table is part of the cost).
Run decode_with_labpose(const std::string& path, int threads, labpose::pipeline::PixelOrder order,
                        std::optional<int> gpu) {
  const double start = now_seconds();
  labpose::pipeline::VideoReader reader(path, {order, std::nullopt, threads, gpu});
  Run run;
  run.open_seconds = now_seconds() - start;
  std::vector<std::uint8_t> frame(reader.frame_bytes());
  while (const auto read = reader.read(frame.data())) {
    ++run.frames;
    if (read->status == labpose::pipeline::FrameStatus::undecodable) ++run.undecodable;
  }
  run.seconds = now_seconds() - start;
  run.on_gpu = reader.decodes_on_gpu();
  return run;
}

// `ffmpeg -threads N -i VIDEO [-pix_fmt rgb24] -f null -`: decoding only (frames thrown away),
// or decoding and conversion to RGB as labpose does; nullopt on failure.
std::optional<double> decode_with_ffmpeg(const std::string& path, int threads, bool rgb) {
  const std::string command = fmt::format("ffmpeg -nostdin -v error -threads {} -i {} {}-f null -",
                                          threads, shell_quote(path), rgb ? "-pix_fmt rgb24 " : "");
  const double start = now_seconds();
  if (std::system(command.c_str()) != 0) return std::nullopt;
  return now_seconds() - start;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::string(argv[1]) == "--help") {
    std::fprintf(stderr,
                 "usage: labpose-bench-decode VIDEO [--threads N] [--repeat R] [--order rgb|bgr] "
                 "[--gpu G]\n"
                 "Decodes VIDEO with labpose's reader and with `ffmpeg -threads N -i VIDEO "
                 "[-pix_fmt rgb24] -f null -`\nand prints the speeds (best of R alternating runs, "
                 "default 3; N defaults to 2). With --gpu, labpose decodes with NVDEC on CUDA "
                 "device G.\n");
    return 2;
  }
  const std::string path = argv[1];
  int threads = 2, repeat = 3;
  std::optional<int> gpu;
  auto order = labpose::pipeline::PixelOrder::rgb;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--threads") {
      threads = std::stoi(value);
    } else if (flag == "--gpu") {
      gpu = std::stoi(value);
    } else if (flag == "--repeat") {
      repeat = std::max(1, std::stoi(value));
    } else if (flag == "--order" && (value == "rgb" || value == "bgr")) {
      order =
          value == "rgb" ? labpose::pipeline::PixelOrder::rgb : labpose::pipeline::PixelOrder::bgr;
    } else {
      std::fprintf(stderr, "labpose-bench-decode: unknown option %s %s\n", flag.c_str(),
                   value.c_str());
      return 2;
    }
  }
  try {
    const labpose::pipeline::VideoReader probe(path);
    const auto& info = probe.info();
    std::printf("video       %s: %dx%d %s, %lld frames\n", path.c_str(), info.width, info.height,
                info.codec.c_str(), static_cast<long long>(info.frame_count));
    std::printf("threads     %d decoder threads for both\n", threads);
    const bool have_ffmpeg = std::system("command -v ffmpeg > /dev/null 2>&1") == 0;
    // The three runs alternate, so that a change in the machine's load affects them alike.
    Run best;
    std::optional<double> ffmpeg_best, ffmpeg_rgb_best;
    for (int r = 0; r < repeat; ++r) {
      const Run run = decode_with_labpose(path, threads, order, gpu);
      if (r == 0 || run.seconds < best.seconds) best = run;
      if (!have_ffmpeg) continue;
      const auto plain = decode_with_ffmpeg(path, threads, false);
      const auto rgb = decode_with_ffmpeg(path, threads, true);
      if (!plain || !rgb) {
        std::printf(
            "ffmpeg      failed or not installed (tools/install-deps.sh --bench installs it)\n");
        return 1;
      }
      if (!ffmpeg_best || *plain < *ffmpeg_best) ffmpeg_best = plain;
      if (!ffmpeg_rgb_best || *rgb < *ffmpeg_rgb_best) ffmpeg_rgb_best = rgb;
    }
    const double ours = static_cast<double>(best.frames) / best.seconds;
    std::printf(
        "labpose     %7.1f frames/s  %lld frames in %.3f s%s, %s output (opening and frame "
        "table %.3f s included; %lld undecodable)\n",
        ours, static_cast<long long>(best.frames), best.seconds,
        best.on_gpu ? " decoded with NVDEC" : "",
        order == labpose::pipeline::PixelOrder::rgb ? "RGB" : "BGR", best.open_seconds,
        static_cast<long long>(best.undecodable));
    if (!have_ffmpeg) {
      std::printf(
          "ffmpeg      not installed here: labpose's figure alone (tools/install-deps.sh --bench "
          "installs the ffmpeg command for the comparison)\n");
      return 0;
    }
    const double frames = static_cast<double>(info.frame_count);
    const double theirs = frames / *ffmpeg_best, theirs_rgb = frames / *ffmpeg_rgb_best;
    std::printf(
        "ffmpeg      %7.1f frames/s  ffmpeg -threads %d -i VIDEO -f null - (decoding only)\n",
        theirs, threads);
    std::printf(
        "ffmpeg rgb  %7.1f frames/s  ffmpeg -threads %d -i VIDEO -pix_fmt rgb24 -f null -\n",
        theirs_rgb, threads);
    std::printf("ratio       %.2f against decoding only, %.2f against decoding to RGB\n",
                ours / theirs, ours / theirs_rgb);
  } catch (const labpose::Error& error) {
    std::fprintf(stderr, "error: %s\n", error.what());
    if (!error.hint().empty()) std::fprintf(stderr, "hint: %s\n", error.hint().c_str());
    return 1;
  }
  return 0;
}
