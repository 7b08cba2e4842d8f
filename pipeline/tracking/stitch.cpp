// The TrackletStitcher's steps: pieces and residuals, the graph's links, the flow, the tracks.
#include "pipeline/tracking/stitch.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.hpp"
#include "pipeline/tracking/flow_paths.hpp"
#include "pipeline/tracking/piece.hpp"
#include "pipeline/tracking/residuals.hpp"

namespace labpose::pipeline {
namespace {

const char* const kStitchHint =
    "stitch_tracklets takes n_tracks >= 1 (the individuals of config.yaml), min_length >= 3 and "
    "max_gap >= 0 (0 = automatic)";

}  // namespace

void check_stitch_settings(const StitchSettings& settings) {
  if (settings.n_tracks < 1)
    throw Error("stitching: there must be at least one track to make (n_tracks is " +
                    std::to_string(settings.n_tracks) + ")",
                kStitchHint);
  if (settings.min_length < 3)
    throw Error("stitching: min_length must be 3 frames or more (found " +
                    std::to_string(settings.min_length) + ")",
                kStitchHint);
  if (settings.max_gap < 0)
    throw Error("stitching: max_gap must be 0 (automatic) or a number of frames (found " +
                    std::to_string(settings.max_gap) + ")",
                kStitchHint);
  if (!(settings.identity_weight >= 0.0 && settings.identity_weight <= 1.0))
    throw Error("stitching: the weight of identity votes must lie in [0, 1] (found " +
                    std::to_string(settings.identity_weight) + ")",
                kStitchHint);
}

namespace {

struct Sorted {
  std::vector<Piece> pieces;
  std::vector<Piece> residuals;
};

Sorted sort_pieces(const Tracklets& tracklets, const StitchSettings& settings) {
  Sorted sorted;
  for (const auto& [id, tracklet] : tracklets.by_id) {
    const Piece piece = piece_of(tracklet);
    if (piece.frames.empty()) continue;
    auto parts = settings.split_tracklets ? split_at_gaps(piece) : std::vector<Piece>{piece};
    for (auto& part : parts) {
      auto& into =
          static_cast<int>(part.size()) >= settings.min_length ? sorted.pieces : sorted.residuals;
      into.push_back(std::move(part));
    }
  }
  return sorted;
}

// compute_max_gap: per piece the smallest positive gap to a later-starting one; the largest.
int automatic_max_gap(const std::vector<Piece>& pieces) {
  int largest = 0;
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    int smallest = 0;
    for (std::size_t j = i + 1; j < pieces.size(); ++j) {
      const int gap = time_gap(pieces[i], pieces[j]);
      if (gap > 0 && (smallest == 0 || gap < smallest)) smallest = gap;
    }
    largest = std::max(largest, smallest);
  }
  return static_cast<int>(1.5 * largest);
}

std::vector<PieceLink> links_between(const std::vector<Piece>& pieces, int max_gap,
                                     const StitchSettings& settings) {
  std::vector<int> identity;
  for (const auto& piece : pieces)
    identity.push_back(settings.use_identity ? piece_identity(piece) : -1);
  const double same_identity = std::pow(0.01, settings.identity_weight);
  const bool with_identity =
      std::any_of(identity.begin(), identity.end(), [](int value) { return value != -1; });
  std::vector<PieceLink> links;
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    for (std::size_t j = i + 1; j < pieces.size(); ++j) {
      const int gap = pieces[j].start() - pieces[i].end();
      if (gap > max_gap) break;
      if (gap <= 0) continue;
      double weight = centroid_distance(pieces[i], pieces[j]);
      if (with_identity && identity[i] == identity[j]) weight *= same_identity;
      // DeepLabCut's int(100 * weight), bounded so that no sum of costs overflows.
      const double scaled = std::isfinite(weight) ? std::min(100.0 * weight, 1e9) : 1e9;
      links.push_back({i, j, static_cast<long long>(scaled)});
    }
  }
  return links;
}

// The chains of pieces; pieces on none join the residuals.
std::vector<Piece> chain_pieces(std::vector<Piece>& pieces, std::vector<Piece>& residuals,
                                const StitchSettings& settings) {
  const int max_gap = settings.max_gap > 0 ? settings.max_gap : automatic_max_gap(pieces);
  const auto links = links_between(pieces, max_gap, settings);
  auto paths = cover_with_paths(pieces.size(), links, settings.n_tracks);
  if (!paths) {
    // More pieces at once than tracks, or fewer pieces than tracks: keep the n_tracks chains that
    // cover the most frames instead of DeepLabCut's pruning heuristics.
    std::vector<long long> lengths;
    for (const auto& piece : pieces) lengths.push_back(static_cast<long long>(piece.size()));
    paths = longest_disjoint_paths(lengths, links, settings.n_tracks);
  }
  std::vector<bool> used(pieces.size(), false);
  std::vector<Piece> tracks;
  for (const auto& path : *paths) {
    Piece track;
    for (const auto index : path) {
      // A piece that carries two chains goes to the first only.
      if (used[index]) continue;
      track = track.frames.empty() ? pieces[index] : join(track, pieces[index]);
      used[index] = true;
    }
    if (!track.frames.empty()) tracks.push_back(std::move(track));
  }
  for (std::size_t i = 0; i < pieces.size(); ++i)
    if (!used[i]) residuals.push_back(std::move(pieces[i]));
  return tracks;
}

}  // namespace

Tracks stitch_tracklets(const Tracklets& tracklets, const StitchSettings& settings) {
  check_stitch_settings(settings);
  Tracks result;
  result.single = tracklets.single;
  result.tracks.resize(static_cast<std::size_t>(settings.n_tracks));
  auto [pieces, residuals] = sort_pieces(tracklets, settings);
  if (pieces.empty() && residuals.empty()) return result;
  if (pieces.empty()) {
    std::size_t longest = 0;
    for (const auto& residual : residuals) longest = std::max(longest, residual.size());
    throw Error(
        "stitching: no tracklet is at least min_length = " + std::to_string(settings.min_length) +
            " frames long (" + std::to_string(residuals.size()) + " tracklets, the longest " +
            std::to_string(longest) + " frames)",
        "lower min_length (3 at least), or check the video's assemblies: animals found "
        "in only a few frames in a row cannot be stitched");
  }
  if (settings.prestitch_residuals) residuals = prestitch_residuals(std::move(residuals));
  std::stable_sort(pieces.begin(), pieces.end(),
                   [](const Piece& a, const Piece& b) { return a.start() < b.start(); });
  auto tracks = chain_pieces(pieces, residuals, settings);
  for (auto& left : add_back_residuals(tracks, std::move(residuals)))
    result.left_over.push_back(tracklet_of(left));
  for (std::size_t t = 0; t < tracks.size() && t < result.tracks.size(); ++t)
    result.tracks[t] = tracklet_of(tracks[t]);
  return result;
}

}  // namespace labpose::pipeline
