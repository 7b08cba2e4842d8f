// The options that pick frames to label, shared by extract-frames and extract-outliers: --algo,
// --num, --crop, --cluster-resize-width, --cluster-color, --seed, --threads.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <optional>
#include <string>

#include "pipeline/frames/extract.hpp"

namespace labpose::tools {

struct FrameOptions {
  std::string algorithm = "kmeans";
  std::optional<int> frames;
  bool crop = false, cluster_color = false;
  int cluster_resize_width = 30, threads = 0;
  std::optional<std::uint64_t> seed;

  /// Adds the options; `algo_flag` names the selection option ("--algo" or "--extraction").
  void add_to(CLI::App& app, const std::string& algo_flag);
  /// The library's options; prints the seed when none was given (a new one is drawn).
  pipeline::ExtractFramesOptions resolve() const;
};

}  // namespace labpose::tools
