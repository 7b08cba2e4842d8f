// How a synthetic mouse walks on its own: a smooth random speed and turning rate drawn once from
// the seed, and the turn away from the walls. The single mouse's path is only this; the mice of a
// scene add their meetings and their bodies' contacts (pipeline/synthetic/mice_paths).
#pragma once

#include <random>

namespace labpose::pipeline::synthetic {

/// A uniform number in [low, high) from the top 53 bits of one draw.
double uniform(std::mt19937_64& random, double low, double high);

/// The angle in (-pi, pi].
double wrap_angle(double angle);

/// A mouse's own rhythm of speed and turning, drawn from `random` (six draws).
class Wander {
 public:
  explicit Wander(std::mt19937_64& random);
  /// The turn of frame `t` (radians) before any steering.
  double turn(int t) const;
  /// The speed of frame `t` as a fraction (0.3..1) of the full speed.
  double speed_fraction(int t) const;

 private:
  double speed_frequency_, speed_phase_;
  double turn_frequency_1_, turn_frequency_2_, turn_phase_1_, turn_phase_2_;
};

/// The turn towards the middle of a width x height arena for a mouse at (x, y) heading `heading`,
/// growing as it comes closer than `margin` pixels to a wall; 0 farther away.
double wall_turn(double x, double y, double heading, int width, int height, double margin);

}  // namespace labpose::pipeline::synthetic
