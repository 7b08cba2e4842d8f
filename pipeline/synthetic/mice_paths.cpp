// Several mice walking together: every frame each mouse turns by its own wander, away from walls,
// towards the current meeting place while its urge to meet is up, and away from a mouse just in
// front; then all step forward at once, and bodies that overlap more than allowed are pushed apart.
#include "pipeline/synthetic/mice_paths.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <random>

#include "core/error.hpp"
#include "pipeline/synthetic/stage.hpp"
#include "pipeline/synthetic/walk.hpp"

namespace labpose::pipeline::synthetic {
namespace {

constexpr int kMeetingFrames = 90;  // the meeting place moves this often
constexpr double kPullTurn = 0.2;   // the largest turn (radians per frame) towards it
constexpr double kAvoidUnits = 50;  // a mouse this close (body units) and ahead is avoided
constexpr double kAvoidTurn = 0.1;  // the largest turn away from it

struct Walker {
  Wander wander;
  double meet_frequency = 0, meet_phase = 0;  // the urge to meet, sin(2 pi f t + phase) > 0
  MousePose pose;
};

// Pushes apart every pair of mice whose body discs overlap by more than kAllowedOverlap, each mouse
// half the way, a few times over so that groups of three settle too.
void separate(std::vector<Walker>& walkers, double scale) {
  const std::vector<BodyDisc>& discs = body_discs();
  for (int pass = 0; pass < 4; ++pass) {
    for (std::size_t i = 0; i < walkers.size(); ++i) {
      for (std::size_t j = i + 1; j < walkers.size(); ++j) {
        MousePose& a = walkers[i].pose;
        MousePose& b = walkers[j].pose;
        for (const BodyDisc& disc_a : discs) {
          for (const BodyDisc& disc_b : discs) {
            const double dx = a.x + scale * disc_a.along * std::cos(a.heading) -
                              (b.x + scale * disc_b.along * std::cos(b.heading));
            const double dy = a.y + scale * disc_a.along * std::sin(a.heading) -
                              (b.y + scale * disc_b.along * std::sin(b.heading));
            const double distance = std::hypot(dx, dy);
            const double push =
                scale * (disc_a.radius + disc_b.radius - kAllowedOverlap) - distance;
            if (push <= 0) continue;
            const double ux = distance > 1e-9 ? dx / distance : 1.0;
            const double uy = distance > 1e-9 ? dy / distance : 0.0;
            a.x += ux * push / 2, a.y += uy * push / 2;
            b.x -= ux * push / 2, b.y -= uy * push / 2;
          }
        }
      }
    }
  }
}

// The turn of walker `i` in frame `t` (from everyone's poses of the frame before).
double turn_of(const std::vector<Walker>& walkers, std::size_t i, int t, double meet_x,
               double meet_y, const SyntheticVideoOptions& options, double scale) {
  const Walker& me = walkers[i];
  const MousePose& pose = me.pose;
  double turn = me.wander.turn(t) +
                wall_turn(pose.x, pose.y, pose.heading, options.width, options.height, 45 * scale);
  const double pull = std::sin(2 * std::numbers::pi * me.meet_frequency * t + me.meet_phase);
  if (pull > 0) {
    const double bearing = std::atan2(meet_y - pose.y, meet_x - pose.x);
    turn += kPullTurn * pull * wrap_angle(bearing - pose.heading) / std::numbers::pi;
  }
  for (std::size_t j = 0; j < walkers.size(); ++j) {
    if (j == i) continue;
    const MousePose& other = walkers[j].pose;
    const double distance = std::hypot(other.x - pose.x, other.y - pose.y);
    const double towards =
        wrap_angle(std::atan2(other.y - pose.y, other.x - pose.x) - pose.heading);
    if (distance < kAvoidUnits * scale && std::abs(towards) < std::numbers::pi / 3) {
      turn -= kAvoidTurn * (towards < 0 ? -1 : 1) * (1 - distance / (kAvoidUnits * scale));
    }
  }
  return turn;
}

}  // namespace

std::vector<std::vector<MousePose>> walk_together(const SyntheticVideoOptions& options,
                                                  int animals) {
  check_video_options(options);
  LABPOSE_ASSERT(animals >= 1);
  const int width = options.width, height = options.height;
  const double scale = body_scale(width, height);
  const double speed = 1.7 * scale, inner = 10 * scale;
  std::mt19937_64 random(options.seed);
  // The mice start spread around the middle of the arena, facing anywhere.
  std::vector<Walker> walkers;
  const double start_angle = uniform(random, -std::numbers::pi, std::numbers::pi);
  for (int i = 0; i < animals; ++i) {
    Walker walker{Wander(random), 0.0, 0.0, MousePose{}};
    walker.meet_frequency = uniform(random, 1.0 / 260, 1.0 / 140);
    walker.meet_phase = uniform(random, 0, 2 * std::numbers::pi);
    const double angle =
        start_angle + 2 * std::numbers::pi * i / animals + uniform(random, -0.3, 0.3);
    const double radius = 0.3 * std::min(width, height) * (animals > 1 ? 1 : 0);
    walker.pose = {width / 2.0 + radius * std::cos(angle), height / 2.0 + radius * std::sin(angle),
                   uniform(random, -std::numbers::pi, std::numbers::pi)};
    walkers.push_back(walker);
  }
  separate(walkers, scale);

  std::vector<std::vector<MousePose>> paths(static_cast<std::size_t>(animals));
  for (auto& path : paths) path.reserve(static_cast<std::size_t>(options.frames));
  double meet_x = width / 2.0, meet_y = height / 2.0;
  std::vector<double> turns(walkers.size());
  for (int t = 0; t < options.frames; ++t) {
    if (t % kMeetingFrames == 0) {
      meet_x = uniform(random, 0.3, 0.7) * width;
      meet_y = uniform(random, 0.3, 0.7) * height;
    }
    for (std::size_t i = 0; i < walkers.size(); ++i) {
      paths[i].push_back(walkers[i].pose);
      turns[i] = turn_of(walkers, i, t, meet_x, meet_y, options, scale);
    }
    for (std::size_t i = 0; i < walkers.size(); ++i) {
      MousePose& pose = walkers[i].pose;
      pose.heading = wrap_angle(pose.heading + turns[i]);
      const double step = speed * walkers[i].wander.speed_fraction(t);
      pose.x += step * std::cos(pose.heading);
      pose.y += step * std::sin(pose.heading);
    }
    separate(walkers, scale);
    for (Walker& walker : walkers) {
      walker.pose.x = std::clamp(walker.pose.x, inner, width - 1 - inner);
      walker.pose.y = std::clamp(walker.pose.y, inner, height - 1 - inner);
    }
  }
  return paths;
}

}  // namespace labpose::pipeline::synthetic
