// Turns the video arguments of create/add-videos (files and folders) into measured videos.
#pragma once

#include <string>
#include <vector>

#include "projects/project.hpp"

namespace labpose::tools {

/// Expands folders to the videos in them and probes every video; throws on the first one that
/// cannot be opened (nothing has been written at that point).
std::vector<projects::VideoInput> probe_video_arguments(const std::vector<std::string>& arguments);

}  // namespace labpose::tools
