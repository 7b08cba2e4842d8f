// Video argument expansion and probing.
#include "tools/labpose/video_inputs.hpp"

#include <fmt/core.h>

#include "core/console.hpp"
#include "core/error.hpp"
#include "pipeline/video/probe.hpp"
#include "projects/layout.hpp"

namespace labpose::tools {
namespace fs = std::filesystem;

std::vector<projects::VideoInput> probe_video_arguments(const std::vector<std::string>& arguments) {
  std::vector<fs::path> paths;
  for (const auto& argument : arguments) {
    std::error_code error;
    if (fs::is_directory(argument, error)) {
      const auto found = projects::videos_in_folder(argument);
      if (found.empty()) {
        throw UsageError(
            fmt::format("the folder {} holds no videos", argument),
            "labpose looks for .mp4 .avi .mov .mkv .mpg .mpeg .m4v .wmv .flv .qt .yuv files");
      }
      paths.insert(paths.end(), found.begin(), found.end());
    } else {
      paths.emplace_back(argument);
    }
  }
  std::vector<projects::VideoInput> videos;
  for (const auto& path : paths) {
    const pipeline::VideoInfo info = pipeline::probe_video(path);
    console::info(
        "video {}: {}x{}, {:.2f} fps, {} frames{}, {}", path.string(), info.width, info.height,
        info.fps, info.frame_count,
        info.frame_count_source == pipeline::FrameCountSource::estimated ? " (estimated)" : "",
        info.codec);
    videos.push_back({fs::absolute(path).lexically_normal(), info.width, info.height});
  }
  return videos;
}

}  // namespace labpose::tools
