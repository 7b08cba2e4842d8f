// A small table of several animals' tracks as labpose analyze writes it (DeepLabCut's _el.h5:
// scorer/individuals/bodyparts/coords, unique bodyparts under "single"), with values that a test
// can predict, so that filter, plots, labeled videos and outliers are tested without a network.
// Not a test itself.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "projects/table.hpp"

namespace labpose::pipeline {

/// Animal a's bodypart j at frame f: x = 100 a + 10 j + f, y = 50 + 20 a + 5 j + 2 f, likelihood
/// 0.9 (0.1 on frames divisible by 7); the unique bodyparts sit still at (300 + 10 j, 400).
inline projects::Table animal_tracks(const std::vector<std::string>& individuals,
                                     const std::vector<std::string>& bodyparts,
                                     const std::vector<std::string>& unique_bodyparts,
                                     std::size_t frames) {
  projects::Table table;
  table.column_level_names = {"scorer", "individuals", "bodyparts", "coords"};
  const std::string scorer = "DLC_resnet50_miceNov29shuffle1_4";
  for (const std::string& individual : individuals) {
    for (const std::string& bodypart : bodyparts) {
      for (const char* coord : {"x", "y", "likelihood"})
        table.columns.push_back({scorer, individual, bodypart, coord});
    }
  }
  for (const std::string& bodypart : unique_bodyparts) {
    for (const char* coord : {"x", "y", "likelihood"})
      table.columns.push_back({scorer, "single", bodypart, coord});
  }
  table.integer_index = true;
  for (std::size_t f = 0; f < frames; ++f) {
    const std::size_t row = table.add_row({std::to_string(f)});
    std::size_t c = 0;
    const double frame = static_cast<double>(f);
    for (std::size_t a = 0; a < individuals.size(); ++a) {
      for (std::size_t j = 0; j < bodyparts.size(); ++j) {
        table.at(row, c++) = 100.0 * static_cast<double>(a) + 10.0 * static_cast<double>(j) + frame;
        table.at(row, c++) =
            50.0 + 20.0 * static_cast<double>(a) + 5.0 * static_cast<double>(j) + 2.0 * frame;
        table.at(row, c++) = f % 7 == 0 ? 0.1 : 0.9;
      }
    }
    for (std::size_t j = 0; j < unique_bodyparts.size(); ++j) {
      table.at(row, c++) = 300.0 + 10.0 * static_cast<double>(j);
      table.at(row, c++) = 400.0;
      table.at(row, c++) = 0.95;
    }
  }
  return table;
}

}  // namespace labpose::pipeline
