// Identity votes measured against the pieces of the tracklets that carry them.
#include "pipeline/tracking/identity_reliability.hpp"

#include <algorithm>
#include <vector>

#include "pipeline/tracking/piece.hpp"

namespace labpose::pipeline {

std::optional<IdentityReliability> identity_reliability(const Tracklets& tracklets, int individuals,
                                                        int min_length) {
  if (individuals < 2) return std::nullopt;
  std::size_t voted = 0, agreeing = 0;
  std::vector<std::size_t> votes(static_cast<std::size_t>(individuals));
  for (const auto& [id, tracklet] : tracklets.by_id) {
    for (const Piece& piece : split_at_gaps(piece_of(tracklet))) {
      if (piece.size() < static_cast<std::size_t>(min_length)) continue;
      std::fill(votes.begin(), votes.end(), 0);
      for (const TrackedAnimal& animal : piece.animals) {
        if (animal.identity >= 0 && animal.identity < individuals)
          ++votes[static_cast<std::size_t>(animal.identity)];
      }
      for (const std::size_t count : votes) voted += count;
      agreeing += *std::max_element(votes.begin(), votes.end());
    }
  }
  if (voted == 0) return std::nullopt;
  IdentityReliability reliability;
  reliability.frames = voted;
  reliability.agreement = static_cast<double>(agreeing) / static_cast<double>(voted);
  reliability.chance = 1.0 / individuals;
  reliability.weight = std::clamp(
      (reliability.agreement - reliability.chance) / (1.0 - reliability.chance), 0.0, 1.0);
  return reliability;
}

}  // namespace labpose::pipeline
