// Reading back DeepLabCut's pickles of a multi-animal analysis, as labpose and DeepLabCut write
// them (reference/dlc-format.md §3.3): _assemblies.pickle for the tracking step, the tracklets
// _el.pickle (_bx.pickle) for the stitching step and the candidates of _full.pickle for labeled
// videos, through the restricted unpickler, which runs nothing. Not the writers
// (multi_animal_files.hpp) and not the steps (multi_animal_tracking.hpp).
#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

#include "pipeline/assembly/assemble.hpp"
#include "pipeline/assembly/candidates.hpp"
#include "pipeline/tracking/tracklets.hpp"

namespace labpose::pipeline {

/// The animals of each frame in a video's _assemblies.pickle `file`: {frame: (animals, bodyparts,
/// 3 or 4) float array, "single": {frame: (unique bodyparts, 3)}}. frames[i] is frame i, for at
/// least `frames` frames. A NaN keypoint is missing, an animal without keypoints is left out, and
/// the identity column (4th, -1 = none) becomes Assembly::identity where a keypoint has one. Throws
/// Error naming the file when it is missing (with the hint to run labpose analyze), damaged, or its
/// arrays hold other than `multi_bodyparts` (and `unique_bodyparts`) bodyparts.
std::vector<Assemblies> read_assemblies_pickle(const std::filesystem::path& file,
                                               std::int64_t frames, int multi_bodyparts,
                                               int unique_bodyparts);

/// The tracklets in `file` (_el.pickle): {tracklet id: {"frameNNN": (bodyparts, 3 or 4) float
/// array of x, y, likelihood[, identity]}, "single": {frame: (unique bodyparts, 3)}, "header":
/// anything}. Throws Error naming the file when it is missing (with the hint to run labpose track),
/// damaged, or holds other than `multi_bodyparts` bodyparts per animal.
Tracklets read_tracklets_pickle(const std::filesystem::path& file, int multi_bodyparts,
                                int unique_bodyparts);

/// The candidates of each frame in a video's _full.pickle `file`: {"frameNNN": {"coordinates":
/// ([(n, 2) array of x, y per bodypart],), "confidence": [(n, 1) array per bodypart], ...},
/// "metadata": anything}. frames[i][j] is bodypart j's candidates in frame i (position and
/// confidence; no cell), for at least `frames` frames; a frame without an entry has none. Throws
/// Error naming the file when it is missing (with the hint to run labpose analyze), damaged, or a
/// frame holds other than `bodyparts` bodyparts.
std::vector<Candidates> read_full_pickle_candidates(const std::filesystem::path& file,
                                                    std::int64_t frames, int bodyparts);

}  // namespace labpose::pipeline
