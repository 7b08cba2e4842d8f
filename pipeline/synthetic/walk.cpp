// A mouse's own walk: sums of slow sines for its speed and turning, and a turn away from the walls
// that grows as it approaches them.
#include "pipeline/synthetic/walk.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace labpose::pipeline::synthetic {

double uniform(std::mt19937_64& random, double low, double high) {
  return low + (high - low) * static_cast<double>(random() >> 11) * 0x1.0p-53;
}

double wrap_angle(double angle) {
  return std::remainder(angle, 2 * std::numbers::pi);
}

Wander::Wander(std::mt19937_64& random) {
  speed_frequency_ = uniform(random, 0.004, 0.012);
  speed_phase_ = uniform(random, 0, 7);
  turn_frequency_1_ = uniform(random, 0.003, 0.010);
  turn_frequency_2_ = uniform(random, 0.015, 0.030);
  turn_phase_1_ = uniform(random, 0, 7);
  turn_phase_2_ = uniform(random, 0, 7);
}

double Wander::turn(int t) const {
  const double tau = 2 * std::numbers::pi * t;
  return 0.055 * std::sin(tau * turn_frequency_1_ + turn_phase_1_) +
         0.03 * std::sin(tau * turn_frequency_2_ + turn_phase_2_);
}

double Wander::speed_fraction(int t) const {
  const double tau = 2 * std::numbers::pi * t;
  return 0.65 + 0.35 * std::sin(tau * speed_frequency_ + speed_phase_);
}

double wall_turn(double x, double y, double heading, int width, int height, double margin) {
  const double to_wall = std::min({x, y, width - 1 - x, height - 1 - y});
  if (to_wall >= margin) return 0;
  const double towards_middle = std::atan2(height / 2.0 - y, width / 2.0 - x);
  return 0.15 * wrap_angle(towards_middle - heading) * (1 - to_wall / margin);
}

}  // namespace labpose::pipeline::synthetic
