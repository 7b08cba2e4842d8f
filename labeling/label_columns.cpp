// Keypoints, columns and rows of the label tables the labeling store edits.
#include "labeling/label_columns.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.hpp"
#include "projects/labels.hpp"

namespace labpose::labeling {
using projects::Table;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

bool is_multi_animal(const Table& table) {
  return table.column_level_names.size() == 4;
}

// Inserts x and y columns for `keypoint` before column `at`, NaN in every row.
void insert_columns(Table& table, std::size_t at, const std::string& scorer,
                    const Keypoint& keypoint) {
  const std::size_t old_columns = table.column_count();
  std::vector<double> values;
  values.reserve(table.row_count() * (old_columns + 2));
  for (std::size_t row = 0; row < table.row_count(); ++row) {
    const auto first = table.values.begin() + static_cast<std::ptrdiff_t>(row * old_columns);
    values.insert(values.end(), first, first + static_cast<std::ptrdiff_t>(at));
    values.push_back(kNaN);
    values.push_back(kNaN);
    values.insert(values.end(), first + static_cast<std::ptrdiff_t>(at),
                  first + static_cast<std::ptrdiff_t>(old_columns));
  }
  std::vector<std::vector<std::string>> columns;
  for (const char* coord : {"x", "y"}) {
    if (is_multi_animal(table)) {
      columns.push_back({scorer, keypoint.individual, keypoint.bodypart, coord});
    } else {
      columns.push_back({scorer, keypoint.bodypart, coord});
    }
  }
  table.columns.insert(table.columns.begin() + static_cast<std::ptrdiff_t>(at), columns.begin(),
                       columns.end());
  table.values = std::move(values);
}

}  // namespace

std::vector<Keypoint> config_keypoints(const projects::ConfigValues& values) {
  std::vector<Keypoint> keypoints;
  if (!values.multi_animal) {
    for (const auto& bodypart : values.bodyparts) keypoints.push_back({"", bodypart});
    return keypoints;
  }
  for (const auto& individual : values.individuals) {
    for (const auto& bodypart : values.multianimal_bodyparts)
      keypoints.push_back({individual, bodypart});
  }
  for (const auto& bodypart : values.unique_bodyparts)
    keypoints.push_back({std::string(projects::kUniqueIndividual), bodypart});
  return keypoints;
}

std::string describe(const Keypoint& keypoint) {
  if (keypoint.individual.empty()) return keypoint.bodypart;
  return fmt::format("{}'s {}", keypoint.individual, keypoint.bodypart);
}

std::map<Keypoint, projects::KeypointColumns> keypoint_columns_by_name(const Table& table) {
  std::map<Keypoint, projects::KeypointColumns> keypoints;
  for (auto& columns : projects::keypoint_columns(table, "CollectedData"))
    keypoints.emplace(Keypoint{columns.individual, columns.bodypart}, columns);
  return keypoints;
}

void add_missing_columns(Table& table, const std::string& scorer,
                         const std::vector<Keypoint>& wanted) {
  const Keypoint* previous = nullptr;
  for (const auto& keypoint : wanted) {
    const auto present = keypoint_columns_by_name(table);
    if (present.count(keypoint) == 0) {
      std::size_t at = table.column_count();
      if (is_multi_animal(table) && previous != nullptr) {
        const auto& before = present.at(*previous);
        at = std::max(before.x, before.y) + 1;
      } else if (is_multi_animal(table)) {
        // The first keypoint: before every other keypoint of config.yaml the table has.
        for (const auto& other : wanted) {
          const auto found = present.find(other);
          if (found != present.end()) at = std::min({at, found->second.x, found->second.y});
        }
      }
      insert_columns(table, at, scorer, keypoint);
    }
    previous = &keypoint;
  }
}

std::string table_scorer(const Table& table, const std::string& fallback) {
  return table.columns.empty() ? fallback : table.columns.front().front();
}

std::optional<std::size_t> find_row(const Table& table, std::string_view video,
                                    std::string_view image) {
  for (std::size_t row = 0; row < table.row_count(); ++row) {
    const auto key = projects::image_key(table, row);
    if (key.stem == video && key.image == image) return row;
  }
  return std::nullopt;
}

std::size_t insert_row(Table& table, std::string_view video, std::string_view image) {
  std::vector<std::string> key;
  if (table.index_levels == 3) {
    key = {"labeled-data", std::string(video), std::string(image)};
  } else {
    key = {fmt::format("labeled-data/{}/{}", video, image)};
  }
  const std::pair<std::string, std::string> wanted{std::string(video), std::string(image)};
  std::size_t position = table.row_count();
  for (std::size_t row = 0; row < table.row_count(); ++row) {
    const auto existing = projects::image_key(table, row);
    if (std::pair{existing.stem, existing.image} > wanted) {
      position = row;
      break;
    }
  }
  const std::size_t added = table.add_row(std::move(key));
  const std::size_t width = table.column_count();
  std::rotate(table.index.begin() + static_cast<std::ptrdiff_t>(position),
              table.index.begin() + static_cast<std::ptrdiff_t>(added), table.index.end());
  std::rotate(table.values.begin() + static_cast<std::ptrdiff_t>(position * width),
              table.values.begin() + static_cast<std::ptrdiff_t>(added * width),
              table.values.end());
  return position;
}

std::size_t merge_points(Table& base, const Table& other) {
  if (is_multi_animal(base) != is_multi_animal(other)) {
    throw Error(fmt::format("a {}-animal label table cannot be merged into a {}-animal one",
                            is_multi_animal(other) ? "multi" : "single",
                            is_multi_animal(base) ? "multi" : "single"));
  }
  const auto other_keypoints = keypoint_columns_by_name(other);
  const std::string scorer = table_scorer(base, table_scorer(other, ""));
  for (const auto& [keypoint, columns] : other_keypoints) {
    if (keypoint_columns_by_name(base).count(keypoint) == 0)
      insert_columns(base, base.column_count(), scorer, keypoint);
  }
  const auto base_keypoints = keypoint_columns_by_name(base);
  std::size_t added = 0;
  for (std::size_t row = 0; row < other.row_count(); ++row) {
    const auto key = projects::image_key(other, row);
    std::optional<std::size_t> target = find_row(base, key.stem, key.image);
    for (const auto& [keypoint, columns] : other_keypoints) {
      const double x = other.at(row, columns.x), y = other.at(row, columns.y);
      if (!std::isfinite(x) || !std::isfinite(y)) continue;
      if (!target) target = insert_row(base, key.stem, key.image);
      const auto& into = base_keypoints.at(keypoint);
      if (std::isfinite(base.at(*target, into.x)) && std::isfinite(base.at(*target, into.y)))
        continue;
      base.at(*target, into.x) = x;
      base.at(*target, into.y) = y;
      ++added;
    }
  }
  return added;
}

}  // namespace labpose::labeling
