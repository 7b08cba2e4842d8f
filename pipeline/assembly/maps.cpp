// Checks of the map views the assembly library reads.
#include "pipeline/assembly/maps.hpp"

#include <fmt/core.h>

#include "core/error.hpp"

namespace labpose::pipeline {

void check_map_stack(const MapStack& maps, std::string_view what) {
  if (maps.channels < 0 || maps.height < 0 || maps.width < 0) {
    throw Error(fmt::format(
        "{}: dimensions must not be negative (found {} channels of {} rows by {} columns)", what,
        maps.channels, maps.height, maps.width));
  }
  const std::size_t expected = static_cast<std::size_t>(maps.channels) *
                               static_cast<std::size_t>(maps.height) *
                               static_cast<std::size_t>(maps.width);
  if (maps.values.size() != expected) {
    throw Error(
        fmt::format("{}: {} channels of {} rows by {} columns need {} values (found {})", what,
                    maps.channels, maps.height, maps.width, expected, maps.values.size()),
        "pass one image's maps, channel-major and row-major (C, H, W)");
  }
}

void check_same_grid(const MapStack& maps, std::string_view what, const MapStack& reference,
                     std::string_view reference_what) {
  if (maps.height != reference.height || maps.width != reference.width) {
    throw Error(fmt::format("{} are {} rows by {} columns but {} are {} rows by {} columns: the "
                            "maps disagree in size",
                            what, maps.height, maps.width, reference_what, reference.height,
                            reference.width),
                "all maps of one image come from the same network output grid (stride 8)");
  }
}

}  // namespace labpose::pipeline
