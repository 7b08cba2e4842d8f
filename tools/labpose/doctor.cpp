// labpose doctor: what this build contains and what this machine offers (versions, CPU ISA, GPUs),
// so a user can see at once why a GPU is or is not used; each usable GPU runs a small convolution
// that is compared with the CPU's.
#include <hdf5.h>
#include <oneapi/dnnl/dnnl.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <fmt/core.h>
#include <fmt/ranges.h>
#include <opencv2/core/utility.hpp>

#include <fstream>
#include <iostream>
#include <thread>

#include "core/console.hpp"
#include "core/error.hpp"
#include "devices/devices.hpp"
#include "devices/precision_speed.hpp"
#include "nets/cpu/backend.hpp"
#include "pipeline/analysis/int8_check.hpp"
#include "pipeline/video/probe.hpp"
#include "pipeline/video/writer.hpp"
#include "pipeline/weights/weight_cache.hpp"
#include "pipeline/weights/weight_sources.hpp"
#include "tools/labpose/command.hpp"

namespace labpose::tools {
namespace {

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
    }
  }
  return "unknown CPU";
}

// The precisions this CPU runs fast, in the order of preference: bf16 where it has bf16 units
// (what --precision auto picks where they are clearly faster than fp32), int8 only where it
// clearly beats the next best, round by round (and then auto takes it for a model whose int8
// check on its labeled frames passes).
std::string cpu_precisions(const devices::PrecisionSpeeds& speeds) {
  using Verdict = devices::SpeedComparison::Verdict;
  const devices::CpuPrecisionChoice choice = devices::choose_cpu_precision(speeds);
  const bool bf16_faster = choice.without_int8 == nets::PlanPrecision::bf16;
  std::string text = "fp32";
  std::string notes = "no bf16 units (AVX-512 BF16 or AMX): --precision auto picks fp32";
  if (choice.bf16) {
    text += ", bf16";
    notes = bf16_faster ? fmt::format(
                              "--precision auto picks bf16 ({:.1f}x fp32, faster in {} of {} "
                              "rounds)",
                              choice.bf16->ratio, choice.bf16->wins, choice.bf16->rounds)
                        : fmt::format(
                              "--precision auto picks fp32: bf16 is not clearly faster here "
                              "({:.2f}x fp32, faster in {} of {} rounds)",
                              choice.bf16->ratio, choice.bf16->wins, choice.bf16->rounds);
  }
  const char* best_name = bf16_faster ? "bf16" : "fp32";
  if (!choice.int8) return text + " (" + notes + "; no int8 (VNNI))";
  const devices::SpeedComparison& int8 = *choice.int8;
  const std::string rounds = fmt::format("faster in {} of {} rounds", int8.wins, int8.rounds);
  if (int8.verdict == Verdict::faster) {
    text += ", int8";
    notes += fmt::format(
        "; int8 {:.1f}x {}, {}: analysis with --precision auto takes int8 for a model whose "
        "keypoints it moves at most {:.1f} px (median) and {:.1f} px (99th percentile) from "
        "fp32's on the project's labeled frames and videos",
        int8.ratio, best_name, rounds, pipeline::kInt8MedianShiftBound,
        pipeline::kInt8P99ShiftBound);
  } else if (int8.verdict == Verdict::not_faster) {
    notes += fmt::format("; int8 runs but is not faster than {} here ({:.2f}x, {}): use {}",
                         best_name, int8.ratio, rounds, best_name);
  } else {
    notes += fmt::format("; int8 and {} are within noise here ({:.2f}x, {}): use {}", best_name,
                         int8.ratio, rounds, best_name);
  }
  return text + " (" + notes + ")";
}

// "404 (398-410)": the median and the spread of the rounds.
std::string speed_text(const devices::MeasuredSpeed& speed) {
  return fmt::format("{:.0f} ({:.0f}-{:.0f})", speed.median(), speed.lowest(), speed.highest());
}

void row(const std::string& name, const std::string& value) {
  std::cout << fmt::format("  {:<15}{}\n", name, value);
}

// The weights cache: what it holds and which backbones have none.
void weights_rows() {
  try {
    const std::filesystem::path folder = pipeline::weights_cache_dir();
    const pipeline::WeightsOverview overview = pipeline::weights_overview(folder);
    std::vector<std::string> cached;
    for (const auto& entry : overview.cached)
      cached.push_back(entry.architecture + (entry.problem.empty() ? "" : " (DAMAGED)"));
    row("weights cache",
        fmt::format("{}: {}", folder.string(),
                    cached.empty() ? "empty" : fmt::format("{}", fmt::join(cached, ", "))));
    if (!overview.fetchable_missing.empty()) {
      row("", fmt::format("   not cached (labpose weights fetch <name>): {}",
                          fmt::join(overview.fetchable_missing, ", ")));
    }
    if (!overview.unpublished_missing.empty()) {
      row("", fmt::format("   not cached, none published: {}",
                          fmt::join(overview.unpublished_missing, ", ")));
    }
  } catch (const Error& problem) {
    row("weights cache", problem.what());
  }
}

}  // namespace

Command doctor_command() {
  Command command;
  command.name = "doctor";
  command.summary =
      "show what this build contains and what this machine offers (CPU, GPUs, versions)";
  command.define = [](CLI::App&) -> std::function<int()> {
    return []() {
      std::cout << "labpose " << LABPOSE_VERSION << '\n';
      row("build", fmt::format("{}, GCC {}.{}.{}, C++20", LABPOSE_BUILD_TYPE, __GNUC__,
                               __GNUC_MINOR__, __GNUC_PATCHLEVEL__));
      utsname system{};
      uname(&system);
      const double memory_gib = static_cast<double>(sysconf(_SC_PHYS_PAGES)) *
                                static_cast<double>(sysconf(_SC_PAGESIZE)) /
                                (1024.0 * 1024.0 * 1024.0);
      row("system",
          fmt::format("{} {} {}, {} CPU threads, {:.1f} GiB memory", system.sysname, system.release,
                      system.machine, std::thread::hardware_concurrency(), memory_gib));
      row("CPU", cpu_model());
      const dnnl_version_t* dnnl = dnnl_version();
      row("oneDNN", fmt::format("{}.{}.{} (CPU instructions used: {})", dnnl->major, dnnl->minor,
                                dnnl->patch, nets::cpu::cpu_instructions()));
      const devices::PrecisionSpeeds speeds = devices::measure_cpu_precision_speeds();
      row("CPU precisions", cpu_precisions(speeds));
      row("", fmt::format("   a 3x3 convolution, GFLOP/s, median (lowest-highest) of {} "
                          "interleaved rounds: fp32 {}{}{}",
                          speeds.fp32.rounds.size(), speed_text(speeds.fp32),
                          speeds.bf16 ? ", bf16 " + speed_text(*speeds.bf16) : "",
                          speeds.int8 ? ", int8 " + speed_text(*speeds.int8) : ""));

      const devices::CudaSummary cuda = devices::cuda_summary();
      row("CUDA backend", cuda.compiled ? "compiled (" + cuda.versions + ")" : "not compiled");
      if (cuda.compiled) row("NVIDIA driver", cuda.driver);
      bool gpus_agree = true;
      if (!cuda.problem.empty()) {
        row("GPUs", "none usable: " + cuda.problem);
        row("",
            "--device cuda will stop with this message; --device auto uses the CPU and says so");
      }
      for (std::size_t i = 0; i < cuda.gpus.size(); ++i) {
        const devices::CudaSummary::Gpu& gpu = cuda.gpus[i];
        row(i == 0 && cuda.problem.empty() ? "GPUs" : "", gpu.text);
        if (!gpu.usable) continue;
        try {
          const auto check = devices::check_convolution(fmt::format("cuda:{}", gpu.index));
          gpus_agree = gpus_agree && check.agrees();
          row("", fmt::format("   convolution check against the CPU: max difference {:.2g} "
                              "(outputs up to {:.2g}): {}",
                              check.max_difference, check.max_magnitude,
                              check.agrees() ? "ok" : "WRONG RESULTS"));
        } catch (const Error& error) {
          gpus_agree = false;
          row("", fmt::format("   convolution check failed: {}", error.what()));
        }
      }

      row("FFmpeg", pipeline::ffmpeg_versions());
      row("video encoders", fmt::format("libx264 (H.264): {}, mpeg4: {}",
                                        pipeline::has_video_encoder("libx264") ? "yes" : "no",
                                        pipeline::has_video_encoder("mpeg4") ? "yes" : "no"));
      row("OpenCV", cv::getVersionString());
      unsigned major = 0, minor = 0, release = 0;
      H5get_libversion(&major, &minor, &release);
      row("HDF5", fmt::format("{}.{}.{}", major, minor, release));
      weights_rows();
      row("display",
          "not needed: labpose never opens a window (labeling is a web page served by labpose)");
      row("headless", console::headless()
                          ? "yes (--headless or LABPOSE_HEADLESS): no browser is opened"
                          : "no (set LABPOSE_HEADLESS=1 on servers to never open a browser)");
      return gpus_agree ? 0 : 1;
    };
  };
  return command;
}

}  // namespace labpose::tools
