// Listing the videos to analyze and taking this job's shard.
#include "pipeline/analysis/video_list.hpp"

#include <fmt/core.h>

#include <set>

#include "core/error.hpp"
#include "projects/layout.hpp"

namespace labpose::pipeline {
namespace fs = std::filesystem;

std::vector<fs::path> videos_to_analyze(const std::vector<fs::path>& inputs, int shard_index,
                                        int shard_count) {
  if (shard_count < 1 || shard_index < 0 || shard_index >= shard_count) {
    throw UsageError(
        fmt::format("--shard {}/{} is not a shard: i/n needs 0 <= i < n", shard_index, shard_count),
        "e.g. --shard 0/4 ... --shard 3/4 for four jobs (Slurm: --shard "
        "$SLURM_ARRAY_TASK_ID/4 with --array=0-3)");
  }
  std::set<fs::path> unique;
  for (const fs::path& input : inputs) {
    std::error_code error;
    if (fs::is_directory(input, error)) {
      const auto found = projects::videos_in_folder(input);
      if (found.empty()) {
        throw Error(fmt::format("{} holds no videos", input.string()),
                    "videos end in .mp4, .avi, .mov, .mkv, .mpg, .mpeg, .wmv, .flv or .m4v");
      }
      for (const auto& video : found) unique.insert(fs::absolute(video).lexically_normal());
    } else if (fs::is_regular_file(input, error)) {
      unique.insert(fs::absolute(input).lexically_normal());
    } else {
      throw Error(fmt::format("{} does not exist", input.string()),
                  "give video files or folders of videos");
    }
  }
  std::vector<fs::path> videos;
  std::size_t position = 0;
  for (const auto& video : unique) {
    if (position++ % static_cast<std::size_t>(shard_count) == static_cast<std::size_t>(shard_index))
      videos.push_back(video);
  }
  return videos;
}

}  // namespace labpose::pipeline
