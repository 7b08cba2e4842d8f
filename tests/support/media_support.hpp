// Test helpers that make media with the pipeline: synthetic videos, damaged AVI files and the demo
// project. Only the suites that test the pipeline, the labeling server and the CLI link them; the
// core, projects and nets suites do not (test_support.hpp has what every suite may use).
#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

namespace labpose::testing {

/// A copy in `destination` of one demo project (pipeline::create_demo_project with a 60-frame
/// video and 10 labeled frames, made once per test program); returns the copy's config.yaml.
std::filesystem::path copy_demo_project(const std::filesystem::path& destination);

/// A demo project made by the CLI in `dir` (a `frames`-frame video) with shuffle 1 of
/// mobilenet_v2_0.35 made and a snapshot-7 of seeded random weights; returns its config.yaml.
std::filesystem::path demo_with_random_snapshot(const std::filesystem::path& dir, int frames);

/// A snapshot of the demo's network (mobilenet_v2_0.35, its 4 bodyparts) with random weights from
/// `seed`, as training at `iteration` would write it.
void write_random_snapshot(const std::filesystem::path& file, std::int64_t iteration,
                           std::uint64_t seed);

/// Writes a small synthetic video (moving disk) with the project's VideoWriter.
void write_test_video(const std::filesystem::path& path, int frames = 12, int width = 96,
                      int height = 64);

/// Overwrites the data of the given frames' chunks ("00dc") in an AVI file from `from` (a fraction
/// of each chunk) to its end: zeros from the start make the frame undecodable, garbage in the
/// second half damages it.
void corrupt_avi_frames(const std::filesystem::path& path, const std::vector<int>& frames,
                        double from = 0.0);

}  // namespace labpose::testing
