// CLEAR MOT and identity scores of tracks against known animals.
#include "pipeline/evaluation/tracking_scores.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <optional>

#include "core/error.hpp"
#include "pipeline/analysis/tracks.hpp"
#include "pipeline/assembly/assignment.hpp"
#include "projects/labels.hpp"

namespace labpose::pipeline {
namespace {

using Animal = std::vector<ScoredPoint>;

bool present(const Animal& animal) {
  for (const ScoredPoint& point : animal) {
    if (std::isfinite(point.x) && std::isfinite(point.y)) return true;
  }
  return false;
}

// The mean distance over the bodyparts both have; NaN when they share none.
double mean_distance(const Animal& a, const Animal& b) {
  double sum = 0.0;
  int shared = 0;
  for (std::size_t part = 0; part < a.size(); ++part) {
    const ScoredPoint& p = a[part];
    const ScoredPoint& q = b[part];
    if (!std::isfinite(p.x) || !std::isfinite(p.y) || !std::isfinite(q.x) || !std::isfinite(q.y))
      continue;
    sum += std::hypot(p.x - q.x, p.y - q.y);
    ++shared;
  }
  return shared > 0 ? sum / shared : std::numeric_limits<double>::quiet_NaN();
}

void check_shapes(const AnimalFrames& truth, const AnimalFrames& tracks, double threshold) {
  if (!(threshold > 0.0)) {
    throw Error(fmt::format("the match threshold must be a positive distance in pixels, not {}",
                            threshold));
  }
  if (truth.size() != tracks.size()) {
    throw Error(fmt::format("the ground truth has {} frames but the tracks have {}", truth.size(),
                            tracks.size()),
                "score the tracks of the video the ground truth was made for");
  }
  std::optional<std::size_t> bodyparts;
  for (const AnimalFrames* side : {&truth, &tracks}) {
    for (const auto& frame : *side) {
      for (const Animal& animal : frame) {
        if (bodyparts && animal.size() != *bodyparts) {
          throw Error(fmt::format("animals of {} and of {} bodyparts cannot be compared",
                                  *bodyparts, animal.size()),
                      "the tracks and the ground truth must name the same bodyparts");
        }
        bodyparts = animal.size();
      }
    }
  }
}

// (frame's distances) distance[i * tracks + j] between animal i and track j, NaN when either is
// absent or beyond `threshold`.
std::vector<double> matchable(const std::vector<Animal>& truth, const std::vector<Animal>& tracks,
                              double threshold) {
  std::vector<double> distance(truth.size() * tracks.size(),
                               std::numeric_limits<double>::quiet_NaN());
  for (std::size_t i = 0; i < truth.size(); ++i) {
    for (std::size_t j = 0; j < tracks.size(); ++j) {
      const double d = mean_distance(truth[i], tracks[j]);
      if (d <= threshold) distance[i * tracks.size() + j] = d;
    }
  }
  return distance;
}

// The keypoint columns of the animals of `table` (x and y; a ground truth has no likelihood):
// not the unique bodyparts ("single") nor the bodyparts of a table without individuals.
std::vector<TrackColumns> animal_columns(const projects::Table& table,
                                         const std::filesystem::path& file) {
  std::vector<TrackColumns> columns;
  try {
    columns = track_position_columns(table);
  } catch (const Error& error) {
    throw Error(fmt::format("{}: {}", file.string(), error.what()), error.hint());
  }
  std::erase_if(columns, [](const TrackColumns& keypoint) {
    return keypoint.individual.empty() || keypoint.individual == projects::kUniqueIndividual;
  });
  return columns;
}

// Of the frames with an animal, the share where each animal present is matched by its `own` track.
double own_identity_share(const std::vector<std::vector<int>>& matched,
                          const std::vector<std::vector<bool>>& here, const std::vector<int>& own) {
  std::int64_t with_animals = 0, right = 0;
  for (std::size_t f = 0; f < here.size(); ++f) {
    bool any = false, all_own = true;
    for (std::size_t i = 0; i < here[f].size(); ++i) {
      if (!here[f][i]) continue;
      any = true;
      if (own[i] < 0 || matched[f][i] != own[i]) all_own = false;
    }
    with_animals += any ? 1 : 0;
    right += any && all_own ? 1 : 0;
  }
  return with_animals > 0 ? static_cast<double>(right) / static_cast<double>(with_animals) : 0.0;
}

}  // namespace

AnimalFrames animal_frames_of(const projects::Table& table,
                              const std::vector<std::string>& bodyparts,
                              const std::filesystem::path& file) {
  const std::vector<TrackColumns> keypoints = animal_columns(table, file);
  const std::vector<std::string> individuals = track_individuals(keypoints);
  if (individuals.empty()) {
    throw Error(
        fmt::format("{} has no individuals: it is not a table of several animals", file.string()),
        "score the tracks of a multi-animal project (<video><scorer>_el.h5)");
  }
  constexpr double kMissing = std::numeric_limits<double>::quiet_NaN();
  AnimalFrames frames(
      table.row_count(),
      std::vector<std::vector<ScoredPoint>>(
          individuals.size(), std::vector<ScoredPoint>(bodyparts.size(), {kMissing, kMissing})));
  for (const TrackColumns& keypoint : keypoints) {
    const auto individual = std::find(individuals.begin(), individuals.end(), keypoint.individual);
    const auto bodypart = std::find(bodyparts.begin(), bodyparts.end(), keypoint.bodypart);
    if (bodypart == bodyparts.end()) continue;
    const auto animal = static_cast<std::size_t>(individual - individuals.begin());
    const auto part = static_cast<std::size_t>(bodypart - bodyparts.begin());
    for (std::size_t row = 0; row < table.row_count(); ++row) {
      frames[row][animal][part] = {table.at(row, keypoint.x), table.at(row, keypoint.y)};
    }
  }
  return frames;
}

std::vector<std::string> animal_bodyparts_of(const projects::Table& table,
                                             const std::filesystem::path& file) {
  return track_bodyparts(animal_columns(table, file));
}

TrackingScores score_tracks(const AnimalFrames& truth, const AnimalFrames& tracks,
                            double threshold) {
  check_shapes(truth, tracks, threshold);
  TrackingScores scores;
  scores.frames = static_cast<std::int64_t>(truth.size());
  const std::size_t animals = truth.empty() ? 0 : truth.front().size();
  const std::size_t slots = tracks.empty() ? 0 : tracks.front().size();
  std::vector<int> before(animals, -1), last(animals, -1);  // the track matched last frame, ever
  std::vector<double> together(animals * slots, 0.0);       // frames within the threshold
  std::vector<std::vector<int>> matched(truth.size());      // per frame: animal i's track, or -1
  std::vector<std::vector<bool>> here(truth.size());        // per frame: animal i present
  double distance_sum = 0.0;
  for (std::size_t f = 0; f < truth.size(); ++f) {
    const auto& animals_here = truth[f];
    const auto& tracks_here = tracks[f];
    if (animals_here.size() != animals || tracks_here.size() != slots) {
      throw Error(fmt::format("frame {} has {} animals and {} tracks, the first frame {} and {}", f,
                              animals_here.size(), tracks_here.size(), animals, slots));
    }
    const std::vector<double> distance = matchable(animals_here, tracks_here, threshold);
    std::vector<int> now(animals, -1);
    std::vector<bool> taken(slots, false);
    for (std::size_t i = 0; i < animals; ++i) {  // matches that hold from the frame before
      const int j = before[i];
      if (j >= 0 && !std::isnan(distance[i * slots + static_cast<std::size_t>(j)])) {
        now[i] = j;
        taken[static_cast<std::size_t>(j)] = true;
      }
    }
    // The rest paired by least total distance among the most pairs: each possible pair weighs
    // more than all distances together, less its own distance.
    const double heavy = threshold * static_cast<double>(animals + slots + 1);
    std::vector<double> weights(animals * slots, 0.0);
    for (std::size_t i = 0; i < animals; ++i) {
      for (std::size_t j = 0; j < slots; ++j) {
        const double d = distance[i * slots + j];
        if (now[i] < 0 && !taken[j] && !std::isnan(d)) weights[i * slots + j] = heavy - d;
      }
    }
    for (const auto& [i, j] :
         max_weight_assignment(weights, static_cast<int>(animals), static_cast<int>(slots))) {
      const auto row = static_cast<std::size_t>(i), column = static_cast<std::size_t>(j);
      if (weights[row * slots + column] <= 0.0) continue;
      now[row] = j;
      if (last[row] >= 0 && last[row] != j) ++scores.switches;
    }
    for (std::size_t i = 0; i < animals; ++i) {
      if (present(animals_here[i])) ++scores.truth;
      if (now[i] < 0) {
        if (present(animals_here[i])) ++scores.misses;
        continue;
      }
      ++scores.matches;
      distance_sum += distance[i * slots + static_cast<std::size_t>(now[i])];
      last[i] = now[i];
    }
    for (std::size_t j = 0; j < slots; ++j) {
      if (present(tracks_here[j])) ++scores.tracked;
    }
    for (std::size_t k = 0; k < distance.size(); ++k) {
      if (!std::isnan(distance[k])) together[k] += 1.0;
    }
    matched[f] = now;
    for (const auto& animal : animals_here) here[f].push_back(present(animal));
    before = now;
  }
  scores.false_positives = scores.tracked - scores.matches;
  const auto truth_count = static_cast<double>(scores.truth);
  scores.mota =
      scores.truth > 0
          ? 1.0 - static_cast<double>(scores.misses + scores.false_positives + scores.switches) /
                      truth_count
          : 0.0;
  scores.mean_distance =
      scores.matches > 0 ? distance_sum / static_cast<double>(scores.matches) : 0.0;
  double identity_matches = 0.0;
  std::vector<int> own(animals, -1);  // the track IDF1 gives each animal
  for (const auto& [i, j] :
       max_weight_assignment(together, static_cast<int>(animals), static_cast<int>(slots))) {
    identity_matches += together[static_cast<std::size_t>(i) * slots + static_cast<std::size_t>(j)];
    own[static_cast<std::size_t>(i)] = j;
  }
  scores.own_identity_frames = own_identity_share(matched, here, own);
  const auto tracked = static_cast<double>(scores.tracked);
  if (scores.truth + scores.tracked > 0)
    scores.idf1 = 2.0 * identity_matches / (truth_count + tracked);
  if (scores.tracked > 0) scores.idp = identity_matches / tracked;
  if (scores.truth > 0) scores.idr = identity_matches / truth_count;
  if (scores.frames > 0)
    scores.switches_per_1000_frames =
        1000.0 * static_cast<double>(scores.switches) / static_cast<double>(scores.frames);
  return scores;
}

}  // namespace labpose::pipeline
