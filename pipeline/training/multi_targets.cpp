// Multi-animal score maps, location refinement, PAFs and identity maps, DeepLabCut's way.
#include "pipeline/training/multi_targets.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <string_view>

#include "core/error.hpp"
#include "pipeline/training/targets.hpp"

namespace labpose::pipeline {
namespace {

constexpr std::string_view kWhat = "multi-animal targets";

bool visible(const CropPoint& p) {
  return std::isfinite(p.x) && std::isfinite(p.y);
}

void check_size(std::span<float> values, std::string_view name, std::size_t channels,
                const MultiTargetLayout& layout) {
  const std::size_t expected = channels * layout.plane();
  if (values.size() != expected) {
    throw Error(
        fmt::format("{}: {} has {} values, but the layout needs {} ({} channels of {} rows "
                    "by {} columns)",
                    kWhat, name, values.size(), expected, channels, layout.height, layout.width),
        "size each array from MultiTargetLayout (score_values(), locref_values(), ...)");
  }
}

void check_inputs(std::span<const std::vector<CropPoint>> animals,
                  std::span<const CropPoint> unique, const MultiTargetLayout& layout,
                  const MultiTargetSettings& settings, const MultiTargetMaps& maps) {
  if (layout.height <= 0 || layout.width <= 0) {
    throw Error(
        fmt::format("{}: the output grid must have at least one row and one column (found "
                    "{} rows by {} columns)",
                    kWhat, layout.height, layout.width));
  }
  if (layout.multi_bodyparts < 0 || layout.unique_bodyparts < 0 || layout.identity_channels < 0) {
    throw Error(fmt::format(
        "{}: bodypart and identity counts must not be negative (found {} "
        "multi-animal, {} unique bodyparts, {} identity channels)",
        kWhat, layout.multi_bodyparts, layout.unique_bodyparts, layout.identity_channels));
  }
  if (settings.stride <= 0 || !(settings.scale > 0) || !(settings.radius() > 0) ||
      !(settings.locref_stdev > 0) || !(settings.pafwidth > 0)) {
    throw Error(
        fmt::format("{}: stride, scale, pos_dist_thresh, locref_stdev and pafwidth must be "
                    "positive (found {}, {}, {}, {}, {})",
                    kWhat, settings.stride, settings.scale, settings.pos_dist_thresh,
                    settings.locref_stdev, settings.pafwidth));
  }
  check_graph(layout.graph, layout.multi_bodyparts);
  for (std::size_t a = 0; a < animals.size(); ++a) {
    if (animals[a].size() != static_cast<std::size_t>(layout.multi_bodyparts)) {
      throw Error(fmt::format("{}: animal {} has {} keypoints, but there are {} multi-animal "
                              "bodyparts",
                              kWhat, a, animals[a].size(), layout.multi_bodyparts),
                  "give every animal one keypoint per multi-animal bodyparts, NaN where missing");
    }
  }
  if (!unique.empty() && unique.size() != static_cast<std::size_t>(layout.unique_bodyparts)) {
    throw Error(fmt::format("{}: {} unique-bodypart keypoints, but there are {} unique bodyparts",
                            kWhat, unique.size(), layout.unique_bodyparts),
                "give one keypoint per unique bodypart (NaN where missing), or none");
  }
  if (layout.identity_channels > 0 &&
      animals.size() > static_cast<std::size_t>(layout.identity_channels)) {
    throw Error(fmt::format("{}: {} animals, but only {} identity channels (one per individual)",
                            kWhat, animals.size(), layout.identity_channels),
                "animal i is individual i: give at most one animal per individual");
  }
  const auto bodyparts = static_cast<std::size_t>(layout.bodyparts());
  const auto identity = static_cast<std::size_t>(layout.identity_channels);
  check_size(maps.score, "score", bodyparts, layout);
  check_size(maps.score_weights, "score_weights", bodyparts, layout);
  check_size(maps.locref, "locref", 2 * bodyparts, layout);
  check_size(maps.locref_weights, "locref_weights", 2 * bodyparts, layout);
  check_size(maps.pafs, "pafs", 2 * layout.graph.size(), layout);
  check_size(maps.paf_weights, "paf_weights", 2 * layout.graph.size(), layout);
  check_size(maps.identity, "identity", identity, layout);
  check_size(maps.identity_weights, "identity_weights", identity, layout);
}

// Score map and location refinement of bodypart `part` (an index over all J bodyparts).
void draw_keypoint(const CropPoint& p, int part, const MultiTargetLayout& layout,
                   const MultiTargetSettings& settings, const MultiTargetMaps& maps) {
  const std::size_t plane = layout.plane(), j = static_cast<std::size_t>(part);
  float* score = maps.score.data() + j * plane;
  float* dx_map = maps.locref.data() + 2 * j * plane;
  float* dy_map = dx_map + plane;
  float* dx_weight = maps.locref_weights.data() + 2 * j * plane;
  float* dy_weight = dx_weight + plane;
  for_each_disk_cell(p.x, p.y, settings.radius(), settings.stride, layout.height, layout.width,
                     [&](std::size_t cell, double dx, double dy) {
                       score[cell] = 1.0F;
                       dx_map[cell] = static_cast<float>(dx / settings.locref_stdev);
                       dy_map[cell] = static_cast<float>(dy / settings.locref_stdev);
                       if (settings.weigh_only_present_joints)
                         dx_weight[cell] = dy_weight[cell] = 1.0F;
                     });
}

// The PAF of graph edge `edge` for one animal's limb from `source` to `target` (both visible).
void draw_limb(const CropPoint& source, const CropPoint& target, std::size_t edge,
               const MultiTargetLayout& layout, const MultiTargetSettings& settings,
               const MultiTargetMaps& maps) {
  const double length = std::sqrt((target.x - source.x) * (target.x - source.x) +
                                  (target.y - source.y) * (target.y - source.y));
  if (!(length > 0)) return;  // coincident ends have no direction: DeepLabCut draws nothing
  const double ux = (target.x - source.x) / length, uy = (target.y - source.y) / length;
  // Positions along the limb (projections on u) and across it (on the normal (-uy, ux)),
  // computed in DeepLabCut's order so that cells on the band's edge fall the same way.
  const double along_source = ux * source.x + uy * source.y;
  const double along_target = ux * target.x + uy * target.y;
  const double along_low = std::min(along_source, along_target);
  const double along_high = std::max(along_source, along_target);
  const double across_line = source.y * ux - source.x * uy;

  const std::size_t plane = layout.plane();
  float* x_map = maps.pafs.data() + 2 * edge * plane;
  float* y_map = x_map + plane;
  float* x_weight = maps.paf_weights.data() + 2 * edge * plane;
  float* y_weight = x_weight + plane;
  const int stride = settings.stride;
  const double half = stride / 2, reach = settings.paf_half_width() + stride;
  const CellRange rows = cells_near(std::min(source.y, target.y), std::max(source.y, target.y),
                                    reach, stride, layout.height);
  const CellRange cols = cells_near(std::min(source.x, target.x), std::max(source.x, target.x),
                                    reach, stride, layout.width);
  for (int r = rows.first; r <= rows.last; ++r) {
    const double y = r * stride + half;
    for (int c = cols.first; c <= cols.last; ++c) {
      const double x = c * stride + half;
      const double along = ux * x + uy * y;
      if (along < along_low || along > along_high) continue;
      // DeepLabCut: distance / pafwidth * scale, so the band reaches pafwidth / scale pixels.
      const double across =
          std::abs(((y * ux - x * uy) - across_line) / settings.pafwidth * settings.scale);
      if (across > 1) continue;
      const std::size_t cell =
          static_cast<std::size_t>(r) * static_cast<std::size_t>(layout.width) +
          static_cast<std::size_t>(c);
      x_map[cell] = static_cast<float>(ux * (1 - across));
      y_map[cell] = static_cast<float>(uy * (1 - across));
      if (settings.weigh_only_present_joints) x_weight[cell] = y_weight[cell] = 1.0F;
    }
  }
}

}  // namespace

void build_multi_targets(std::span<const std::vector<CropPoint>> animals,
                         std::span<const CropPoint> unique, const MultiTargetLayout& layout,
                         const MultiTargetSettings& settings, const MultiTargetMaps& maps) {
  check_inputs(animals, unique, layout, settings, maps);
  const std::size_t plane = layout.plane();
  // DeepLabCut applies score weights only with weigh_part_predictions; they are then 1 on the
  // channels of the bodyparts present and 0 elsewhere, identity channels included.
  const bool present_only = settings.weigh_part_predictions && settings.weigh_only_present_joints;
  const float everywhere = settings.weigh_only_present_joints ? 0.0F : 1.0F;
  std::ranges::fill(maps.score, 0.0F);
  std::ranges::fill(maps.score_weights, present_only ? 0.0F : 1.0F);
  std::ranges::fill(maps.locref, 0.0F);
  std::ranges::fill(maps.locref_weights, everywhere);
  std::ranges::fill(maps.pafs, 0.0F);
  std::ranges::fill(maps.paf_weights, everywhere);
  std::ranges::fill(maps.identity, 0.0F);
  std::ranges::fill(maps.identity_weights, present_only ? 0.0F : 1.0F);

  const auto mark_present = [&](int part) {
    if (!present_only) return;
    const auto first = maps.score_weights.begin() +
                       static_cast<std::ptrdiff_t>(static_cast<std::size_t>(part) * plane);
    std::fill(first, first + static_cast<std::ptrdiff_t>(plane), 1.0F);
  };
  // Animals in order, then the unique bodyparts: a later animal overwrites an earlier one's
  // location refinement where their disks overlap.
  for (const std::vector<CropPoint>& animal : animals) {
    for (int j = 0; j < layout.multi_bodyparts; ++j) {
      if (!visible(animal[static_cast<std::size_t>(j)])) continue;
      draw_keypoint(animal[static_cast<std::size_t>(j)], j, layout, settings, maps);
      mark_present(j);
    }
  }
  for (std::size_t u = 0; u < unique.size(); ++u) {
    if (!visible(unique[u])) continue;
    const int part = layout.multi_bodyparts + static_cast<int>(u);
    draw_keypoint(unique[u], part, layout, settings, maps);
    mark_present(part);
  }
  for (std::size_t i = 0; i < animals.size() && layout.identity_channels > 0; ++i) {
    float* identity = maps.identity.data() + i * plane;
    for (const CropPoint& p : animals[i]) {
      if (!visible(p)) continue;
      for_each_disk_cell(p.x, p.y, settings.radius(), settings.stride, layout.height, layout.width,
                         [&](std::size_t cell, double, double) { identity[cell] = 1.0F; });
    }
  }
  for (const std::vector<CropPoint>& animal : animals) {
    for (std::size_t e = 0; e < layout.graph.size(); ++e) {
      const CropPoint& source = animal[static_cast<std::size_t>(layout.graph[e].source)];
      const CropPoint& target = animal[static_cast<std::size_t>(layout.graph[e].target)];
      if (visible(source) && visible(target)) {
        draw_limb(source, target, e, layout, settings, maps);
      }
    }
  }
}

}  // namespace labpose::pipeline
