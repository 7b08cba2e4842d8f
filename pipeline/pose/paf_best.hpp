// DeepLabCut's `paf_best` in a multi-animal shuffle's test/pose_cfg.yaml: the edges of
// partaffinityfield_graph (their indices) that assembly links animals through, chosen by
// `evaluate` (pipeline/evaluation/graph_selection.hpp). Absent: every edge. Written as DeepLabCut's
// edit_config leaves it, one line `paf_best: [i, j, ...]` at the end of the file (or in place of
// the line that was there); the rest of the file is kept byte for byte.
#pragma once

#include <filesystem>
#include <optional>
#include <vector>

namespace labpose::pipeline {

/// The `paf_best` of test/pose_cfg.yaml `file`, or nullopt when it has none. Throws Error (with
/// file:line) when it is not a list of distinct edge indices below `graph_edges`.
std::optional<std::vector<int>> read_paf_best(const std::filesystem::path& file, int graph_edges);

/// Sets `paf_best` in `file` to `edges`, atomically.
void write_paf_best(const std::filesystem::path& file, const std::vector<int>& edges);

}  // namespace labpose::pipeline
