// Width and height of a PNG or JPEG image from its header, without decoding the pixels
// (checking a project's labels must not read every frame into memory).
#pragma once

#include <filesystem>
#include <optional>

namespace labpose::projects {

struct ImageSize {
  int width = 0, height = 0;
};

/// The size from a PNG or JPEG header; nullopt for other formats or a damaged header.
std::optional<ImageSize> read_image_size(const std::filesystem::path& image);

}  // namespace labpose::projects
