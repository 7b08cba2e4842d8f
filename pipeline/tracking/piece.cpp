// Pieces of tracklets and the measures between two of them.
#include "pipeline/tracking/piece.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "pipeline/tracking/box.hpp"

namespace labpose::pipeline {
namespace {

// nansum(xy * likelihood) / nansum(likelihood); the plain mean where no likelihood is positive.
std::array<double, 2> centroid_of(const TrackedAnimal& animal) {
  double x = 0.0, y = 0.0, weight = 0.0, plain_x = 0.0, plain_y = 0.0;
  int count = 0;
  for (const auto& keypoint : animal.keypoints) {
    if (!present(keypoint)) continue;
    plain_x += keypoint.x;
    plain_y += keypoint.y;
    ++count;
    if (!(keypoint.likelihood > 0.0)) continue;
    x += keypoint.x * keypoint.likelihood;
    y += keypoint.y * keypoint.likelihood;
    weight += keypoint.likelihood;
  }
  if (weight > 0.0) return {x / weight, y / weight};
  return {plain_x / count, plain_y / count};
}

Piece piece_from(std::vector<int> frames, std::vector<TrackedAnimal> animals) {
  Piece piece;
  piece.frames = std::move(frames);
  piece.animals = std::move(animals);
  for (const auto& animal : piece.animals) piece.centroid.push_back(centroid_of(animal));
  return piece;
}

Piece slice(const Piece& piece, std::size_t from, std::size_t to) {
  Piece part;
  const auto begin = static_cast<std::ptrdiff_t>(from), end = static_cast<std::ptrdiff_t>(to);
  part.frames.assign(piece.frames.begin() + begin, piece.frames.begin() + end);
  part.animals.assign(piece.animals.begin() + begin, piece.animals.begin() + end);
  part.centroid.assign(piece.centroid.begin() + begin, piece.centroid.begin() + end);
  return part;
}

double point_distance(const std::array<double, 2>& a, const std::array<double, 2>& b) {
  return std::hypot(a[0] - b[0], a[1] - b[1]);
}

}  // namespace

Piece piece_of(const Tracklet& tracklet) {
  std::vector<int> frames;
  std::vector<TrackedAnimal> animals;
  for (const auto& [frame, animal] : tracklet) {
    if (std::none_of(animal.keypoints.begin(), animal.keypoints.end(),
                     [](const KeypointPrediction& keypoint) { return present(keypoint); }))
      continue;
    frames.push_back(frame);
    animals.push_back(animal);
  }
  return piece_from(std::move(frames), std::move(animals));
}

std::vector<Piece> split_at_gaps(const Piece& piece) {
  std::vector<Piece> parts;
  std::size_t from = 0;
  for (std::size_t i = 1; i <= piece.size(); ++i) {
    if (i < piece.size() && piece.frames[i] == piece.frames[i - 1] + 1) continue;
    parts.push_back(slice(piece, from, i));
    from = i;
  }
  return parts;
}

Piece join(const Piece& a, const Piece& b) {
  Piece joined;
  std::size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    const bool from_a = j >= b.size() || (i < a.size() && a.frames[i] < b.frames[j]);
    const Piece& source = from_a ? a : b;
    std::size_t& k = from_a ? i : j;
    joined.frames.push_back(source.frames[k]);
    joined.animals.push_back(source.animals[k]);
    joined.centroid.push_back(source.centroid[k]);
    ++k;
  }
  return joined;
}

Tracklet tracklet_of(const Piece& piece) {
  Tracklet tracklet;
  for (std::size_t i = 0; i < piece.size(); ++i) tracklet[piece.frames[i]] = piece.animals[i];
  return tracklet;
}

bool overlap(const Piece& a, const Piece& b) {
  if (a.end() < b.start() || b.end() < a.start()) return false;
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (a.frames[i] == b.frames[j]) return true;
    if (a.frames[i] < b.frames[j])
      ++i;
    else
      ++j;
  }
  return false;
}

int time_gap(const Piece& a, const Piece& b) {
  if (overlap(a, b)) return 0;
  if (a.end() < b.start()) return b.start() - a.end();
  return a.start() - b.end();
}

double centroid_distance(const Piece& a, const Piece& b) {
  if (a.end() < b.start()) return point_distance(a.centroid.back(), b.centroid.front());
  if (b.end() < a.start()) return point_distance(a.centroid.front(), b.centroid.back());
  double sum = 0.0;
  int shared = 0;
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (a.frames[i] == b.frames[j]) {
      sum += point_distance(a.centroid[i++], b.centroid[j++]);
      ++shared;
    } else if (a.frames[i] < b.frames[j]) {
      ++i;
    } else {
      ++j;
    }
  }
  return shared > 0 ? sum / shared : point_distance(a.centroid.back(), b.centroid.front());
}

double box_overlap(const Piece& a, const Piece& b) {
  if (overlap(a, b)) return 0.0;
  const bool a_first = a.end() < b.start();
  const auto box_a = keypoint_box((a_first ? a.animals.back() : a.animals.front()).keypoints, 0.0);
  const auto box_b = keypoint_box((a_first ? b.animals.front() : b.animals.back()).keypoints, 0.0);
  if (!box_a || !box_b) return 0.0;
  return box_iou(*box_a, *box_b);
}

int piece_identity(const Piece& piece) {
  std::map<int, int> votes;
  for (const auto& animal : piece.animals)
    if (animal.identity >= 0) ++votes[animal.identity];
  int best = -1, best_count = 0;
  for (const auto& [identity, count] : votes) {
    if (count > best_count) {
      best = identity;
      best_count = count;
    }
  }
  return best;
}

}  // namespace labpose::pipeline
