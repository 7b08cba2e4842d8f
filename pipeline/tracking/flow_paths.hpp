// The global step of stitching: n_tracks paths through the pieces (sorted by start) by a min-cost
// flow, solved by LEMON's network simplex. Knows nothing of keypoints: pieces are numbers, links
// are costed arcs between them.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

namespace labpose::pipeline {

/// A possible succession: piece `from` followed by piece `to`, at `cost` (integer, >= 0).
struct PieceLink {
  std::size_t from = 0;
  std::size_t to = 0;
  long long cost = 0;
};

/// DeepLabCut's graph: every piece lies on exactly one of n_paths chains (a piece may carry two
/// where the flow needs it), at the least total link cost. Paths start with the earliest piece;
/// none when no such cover exists (more pieces at once than paths, or too few pieces).
std::optional<std::vector<std::vector<std::size_t>>> cover_with_paths(
    std::size_t pieces, const std::vector<PieceLink>& links, int n_paths);

/// The fallback: at most n_paths chains that share no piece, covering as many frames as possible
/// (lengths: frames per piece), then at the least link cost. Pieces on no chain are left out.
std::vector<std::vector<std::size_t>> longest_disjoint_paths(const std::vector<long long>& lengths,
                                                             const std::vector<PieceLink>& links,
                                                             int n_paths);

}  // namespace labpose::pipeline
