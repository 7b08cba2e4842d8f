// labpose demo [--dir D] [--seed S] [--frames N] [--labeled-frames K]: makes the synthetic demo
// project (pipeline/synthetic) and prints its config path; the demo's later stages run on it.
#include <fmt/core.h>

#include <chrono>
#include <iostream>

#include "core/console.hpp"
#include "pipeline/synthetic/demo_project.hpp"
#include "tools/labpose/command.hpp"

namespace labpose::tools {

Command demo_command() {
  Command command;
  command.name = "demo";
  command.summary = "make a synthetic project whose frames are labeled from exact ground truth";
  command.define = [](CLI::App& app) -> std::function<int()> {
    auto options = std::make_shared<pipeline::DemoProjectOptions>();
    app.add_option("--dir", options->dir, "where to make the project folder (default: here)");
    app.add_option("--seed", options->video.seed,
                   "random seed of the synthetic mouse's path and looks (default 1)");
    app.add_option("--frames", options->video.frames, "frames in the synthetic video (default 300)")
        ->check(CLI::Range(1, 1000000));
    app.add_option("--labeled-frames", options->labeled_frames,
                   "frames extracted by k-means and labeled from the ground truth (default 20)")
        ->check(CLI::Range(1, 100000));
    app.add_option("--threads", options->threads, "decoder threads (default: one per core)")
        ->check(CLI::NonNegativeNumber);
    app.footer(
        "Renders a video of a synthetic mouse (snout, ears, tail base) whose keypoints are known "
        "exactly, creates demo-labpose-<date>/ from it as `labpose create` would, extracts frames "
        "as `labpose extract-frames` would and labels them from the ground truth. Prints the path "
        "of config.yaml.");
    return [options]() {
      const auto start = std::chrono::steady_clock::now();
      console::info("making the synthetic demo project ({} frames of {}x{}, seed {})",
                    options->video.frames, options->video.width, options->video.height,
                    options->video.seed);
      const pipeline::DemoProject demo = pipeline::create_demo_project(*options);
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      console::info("made {} in {:.1f} s: video {}, {} labeled frames", demo.config.string(),
                    seconds, demo.video.filename().string(), demo.labeled_frames.size());
      std::cout << demo.config.string() << '\n';
      return 0;
    };
  };
  return command;
}

}  // namespace labpose::tools
