// A small single-animal project for the labeling tests: config.yaml (4 bodyparts, a skeleton,
// scorer "Alice"), labeled-data/mouse/ with five 64x48 PNG frames, no labels yet.
#pragma once

#include <filesystem>
#include <string>

namespace labpose::testing {

/// Writes the project into `dir` and returns its config.yaml.
std::filesystem::path make_labeling_project(const std::filesystem::path& dir);

}  // namespace labpose::testing
