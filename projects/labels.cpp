// Label files: which to read, how to write, what their columns mean.
#include "projects/labels.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <set>
#include <vector>

#include "core/error.hpp"
#include "core/printable.hpp"
#include "projects/layout.hpp"

namespace labpose::projects {
namespace fs = std::filesystem;

bool LabelFiles::any_exists() const {
  std::error_code error;
  return fs::exists(csv, error) || fs::exists(h5, error);
}

LabelFiles label_files(const fs::path& folder, std::string_view scorer) {
  return {folder / collected_data_csv_name(scorer), folder / collected_data_h5_name(scorer)};
}

std::vector<std::string> label_scorers(const fs::path& folder) {
  std::set<std::string> scorers;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(folder, error)) {
    const std::string name = entry.path().filename().string();
    const std::string extension = entry.path().extension().string();
    if (name.starts_with("CollectedData_") && (extension == ".csv" || extension == ".h5")) {
      scorers.insert(
          entry.path().stem().string().substr(std::string_view("CollectedData_").size()));
    }
  }
  return {scorers.begin(), scorers.end()};
}

namespace {

// "<folder>/<image>" of a row, the same in both index styles.
std::string row_name(const Table& table, std::size_t row) {
  const ImageKey key = image_key(table, row);
  return key.stem + "/" + key.image;
}

std::string column_name(const Table& table, std::size_t column) {
  std::string name;
  for (std::size_t level = 1; level < table.columns[column].size(); ++level)
    name += (name.empty() ? "" : " ") + printable(table.columns[column][level], 80);
  return name;
}

// Where the .h5 (read) and the CSV beside it disagree by more than a thousandth of a pixel, or why
// the CSV cannot be read: the CSV edited by hand and not converted, or a damaged .h5 (HDF5 keeps
// no checksum of its values). Empty when they agree.
std::string difference(const Table& h5, const LabelFiles& files) {
  Table csv;
  try {
    csv = read_table_csv(files.csv);
  } catch (const Error& error) {
    return fmt::format(
        "{} cannot be read ({}); the .h5 beside it is used, as DeepLabCut does. If you edited the "
        "CSV by hand, fix it and make the .h5 from it with labpose convert-labels <config.yaml> "
        "--to h5",
        files.csv.filename().string(), error.what());
  }
  std::map<std::string, std::size_t> csv_rows, csv_columns;
  for (std::size_t r = 0; r < csv.row_count(); ++r) csv_rows.emplace(row_name(csv, r), r);
  for (std::size_t c = 0; c < csv.column_count(); ++c) csv_columns.emplace(column_name(csv, c), c);
  std::size_t count = 0;
  std::string first;
  // Counts a difference; only the first is described, so `describe` runs once.
  const auto differ = [&](const auto& describe) {
    if (count++ == 0) first = describe();
  };
  // Each .h5 column's name and its column in the CSV (SIZE_MAX where the CSV has none).
  std::vector<std::string> columns(h5.column_count());
  std::vector<std::size_t> csv_column_of(h5.column_count(), SIZE_MAX);
  for (std::size_t c = 0; c < h5.column_count(); ++c) {
    columns[c] = column_name(h5, c);
    const auto found = csv_columns.find(columns[c]);
    if (found != csv_columns.end()) {
      csv_column_of[c] = found->second;
    } else {
      differ([&] {
        return fmt::format("the column {} is in the .h5 and not in the CSV", columns[c]);
      });
    }
  }
  std::set<std::string> h5_rows;
  for (std::size_t r = 0; r < h5.row_count(); ++r) {
    const std::string row = row_name(h5, r);
    h5_rows.insert(row);
    const auto csv_row = csv_rows.find(row);
    if (csv_row == csv_rows.end()) {
      differ([&] {
        return fmt::format("{} has a row in the .h5 and none in the CSV", printable(row, 200));
      });
      continue;
    }
    for (std::size_t c = 0; c < h5.column_count(); ++c) {
      if (csv_column_of[c] == SIZE_MAX) continue;
      const double a = h5.at(r, c), b = csv.at(csv_row->second, csv_column_of[c]);
      if ((std::isnan(a) && std::isnan(b)) || std::fabs(a - b) <= 1e-3) continue;
      differ([&] {
        return fmt::format("{} {} is {} in the .h5 and {} in the CSV (line {})",
                           printable(row, 200), columns[c], a, b,
                           csv_row->second + csv.column_level_names.size() + 1);
      });
    }
  }
  for (std::size_t r = 0; r < csv.row_count(); ++r) {
    if (h5_rows.count(row_name(csv, r)) == 0) {
      differ([&] {
        return fmt::format("{} has a row in the CSV (line {}) and none in the .h5",
                           printable(row_name(csv, r), 200), r + csv.column_level_names.size() + 1);
      });
    }
  }
  if (count == 0) return {};
  return fmt::format(
      "{} and {} differ ({} value{}; first: {}); the .h5 is used, as DeepLabCut does. Make the "
      "CSV match with labpose convert-labels <config.yaml> --to csv, or, if you edited the CSV "
      "by hand, the .h5 from it with --to h5",
      files.h5.filename().string(), files.csv.filename().string(), count, count == 1 ? "" : "s",
      first);
}

}  // namespace

LoadedLabels read_labels(const LabelFiles& files) {
  std::error_code error;
  const bool has_csv = fs::exists(files.csv, error), has_h5 = fs::exists(files.h5, error);
  if (!has_csv && !has_h5) {
    throw Error(
        fmt::format("no labels: neither {} nor {} exists", files.h5.string(), files.csv.string()),
        "label frames first (labpose label), or check the scorer name in config.yaml");
  }
  LoadedLabels loaded;
  if (has_h5) {
    try {
      if (probe_table_hdf5(files.h5) == Hdf5Format::fixed) {
        loaded.table = read_table_hdf5(files.h5);
        loaded.source = files.h5;
        if (has_csv) {
          std::string note = difference(loaded.table, files);
          if (!note.empty()) loaded.notes.push_back(std::move(note));
        }
        return loaded;
      }
      if (!has_csv) {
        read_table_hdf5(files.h5);  // throws the "table format, keep the CSV" message
      }
      loaded.notes.push_back(
          fmt::format("{} is in pandas' old \"table\" format; read the CSV beside it",
                      files.h5.filename().string()));
    } catch (const Error& h5_error) {
      if (!has_csv) throw;
      if (loaded.notes.empty()) {
        loaded.notes.push_back(fmt::format("could not read {} ({}); read the CSV beside it",
                                           files.h5.filename().string(), h5_error.what()));
      }
    }
  }
  loaded.table = read_table_csv(files.csv);
  loaded.source = files.csv;
  return loaded;
}

void write_labels(const Table& table, const LabelFiles& files) {
  write_table_csv(table, files.csv);
  write_table_hdf5(table, files.h5);
}

std::vector<KeypointColumns> keypoint_columns(const Table& table, const fs::path& file) {
  const auto& levels = table.column_level_names;
  const bool single = levels == std::vector<std::string>{"scorer", "bodyparts", "coords"};
  const bool multi =
      levels == std::vector<std::string>{"scorer", "individuals", "bodyparts", "coords"};
  if (!single && !multi) {
    throw Error(fmt::format("{}: the column headers are [{}]; DeepLabCut label files have scorer, "
                            "bodyparts, coords "
                            "(and individuals in multi-animal projects)",
                            file.string(), printable_list(levels)),
                "is this a CollectedData file?");
  }
  const std::size_t bodypart_level = single ? 1 : 2, coord_level = single ? 2 : 3;
  std::vector<KeypointColumns> keypoints;
  std::map<std::pair<std::string, std::string>, std::size_t> position;
  for (std::size_t c = 0; c < table.column_count(); ++c) {
    const auto& column = table.columns[c];
    const std::string individual = multi ? column[1] : std::string();
    const std::string& bodypart = column[bodypart_level];
    const std::string& coord = column[coord_level];
    auto [it, inserted] = position.emplace(std::pair{individual, bodypart}, keypoints.size());
    if (inserted) keypoints.push_back({individual, bodypart, SIZE_MAX, SIZE_MAX, std::nullopt});
    KeypointColumns& keypoint = keypoints[it->second];
    const std::string where =
        fmt::format("{}: column {} ({}{} {})", file.string(), c + table.index_levels + 1,
                    individual.empty() ? "" : individual + " ", bodypart, coord);
    std::size_t* slot = nullptr;
    if (coord == "x") {
      slot = &keypoint.x;
    } else if (coord == "y") {
      slot = &keypoint.y;
    } else if (coord == "likelihood") {
      if (keypoint.likelihood)
        throw Error(where + ": this column appears twice", "delete the second copy");
      keypoint.likelihood = c;
      continue;
    } else {
      throw Error(
          fmt::format("{}: unknown coordinate \"{}\" (expected x, y or likelihood)", where, coord));
    }
    if (*slot != SIZE_MAX)
      throw Error(where + ": this column appears twice", "delete the second copy");
    *slot = c;
  }
  for (const auto& keypoint : keypoints) {
    if (keypoint.x == SIZE_MAX || keypoint.y == SIZE_MAX) {
      throw Error(fmt::format("{}: bodypart \"{}\" has {} but no {} column", file.string(),
                              keypoint.bodypart, keypoint.x == SIZE_MAX ? "y" : "x",
                              keypoint.x == SIZE_MAX ? "x" : "y"),
                  "every bodypart needs an x and a y column");
    }
  }
  return keypoints;
}

std::vector<Finding> check_label_columns(const Table& table, const ProjectConfig& config,
                                         const fs::path& file, std::string_view expected_scorer) {
  std::vector<Finding> findings;
  const auto error = [&](std::string message, std::string hint = {}) {
    findings.push_back({Finding::Severity::error, std::move(message), std::move(hint)});
  };
  const auto warning = [&](std::string message, std::string hint = {}) {
    findings.push_back({Finding::Severity::warning, std::move(message), std::move(hint)});
  };
  const ConfigValues& values = config.values();
  const bool multi = table.column_level_names.size() == 4;
  if (multi != values.multi_animal) {
    error(fmt::format(
              "{}: this is a {}-animal label file but config.yaml describes a {}-animal project",
              file.string(), multi ? "multi" : "single", values.multi_animal ? "multi" : "single"),
          "check multianimalproject in config.yaml");
    return findings;
  }
  const auto keypoints = keypoint_columns(table, file);
  std::set<std::string> scorers;
  for (const auto& column : table.columns) scorers.insert(column[0]);
  if (scorers.size() > 1) {
    error(fmt::format("{}: the scorer row names several scorers ({})", file.string(),
                      printable_list({scorers.begin(), scorers.end()})),
          "a label file belongs to one scorer; merge files with labpose label instead of pasting "
          "columns");
  } else if (!scorers.empty() && *scorers.begin() != expected_scorer) {
    warning(
        fmt::format("{}: the scorer row says \"{}\" but the file name says \"{}\"", file.string(),
                    printable(*scorers.begin(), 80), printable(expected_scorer, 80)),
        "DeepLabCut's create_training_dataset skips such files; rename the scorer in the file "
        "to match");
  }
  const std::vector<std::string> known = config.keypoint_names();
  std::set<std::string> present;
  for (const auto& keypoint : keypoints) {
    present.insert(keypoint.bodypart);
    if (std::find(known.begin(), known.end(), keypoint.bodypart) == known.end()) {
      error(fmt::format("{}: column {}: unknown bodypart \"{}\" (config.yaml lists {})",
                        file.string(), keypoint.x + table.index_levels + 1,
                        printable(keypoint.bodypart, 80), printable_list(known)),
            "add it to bodyparts in config.yaml, or fix the name in the label file");
    }
    if (multi && keypoint.individual != kUniqueIndividual &&
        std::find(values.individuals.begin(), values.individuals.end(), keypoint.individual) ==
            values.individuals.end()) {
      error(fmt::format("{}: unknown individual \"{}\" (config.yaml lists {})", file.string(),
                        printable(keypoint.individual, 80), printable_list(values.individuals)));
    }
  }
  for (const auto& name : known) {
    if (present.count(name) == 0) {
      warning(fmt::format("{}: config.yaml lists bodypart \"{}\" but the file has no column for it",
                          file.string(), printable(name, 80)),
              "a bodypart added after labeling is treated as not labeled in these frames");
    }
  }
  return findings;
}

ImageKey image_key(const Table& table, std::size_t row) {
  const auto& key = table.index[row];
  if (key.size() == 3) return {key[0], key[1], key[2]};
  std::string path = key[0];
  std::replace(path.begin(), path.end(), '\\', '/');
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= path.size()) {
    const std::size_t slash = path.find('/', start);
    parts.push_back(
        path.substr(start, slash == std::string::npos ? std::string::npos : slash - start));
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  if (parts.size() >= 3) {
    return {parts[parts.size() - 3], parts[parts.size() - 2], parts.back()};
  }
  if (parts.size() == 2) return {"labeled-data", parts[0], parts[1]};
  return {"labeled-data", "", parts.back()};
}

Table make_label_table(std::string_view scorer, const std::vector<std::string>& bodyparts) {
  Table table;
  table.column_level_names = {"scorer", "bodyparts", "coords"};
  for (const auto& bodypart : bodyparts) {
    table.columns.push_back({std::string(scorer), bodypart, "x"});
    table.columns.push_back({std::string(scorer), bodypart, "y"});
  }
  table.index_levels = 3;
  return table;
}

Table make_multi_animal_label_table(std::string_view scorer,
                                    const std::vector<std::string>& individuals,
                                    const std::vector<std::string>& multianimal_bodyparts,
                                    const std::vector<std::string>& unique_bodyparts) {
  Table table;
  table.column_level_names = {"scorer", "individuals", "bodyparts", "coords"};
  const auto add = [&](const std::string& individual, const std::vector<std::string>& bodyparts) {
    for (const auto& bodypart : bodyparts) {
      for (const char* coord : {"x", "y"})
        table.columns.push_back({std::string(scorer), individual, bodypart, coord});
    }
  };
  for (const auto& individual : individuals) add(individual, multianimal_bodyparts);
  add(std::string(kUniqueIndividual), unique_bodyparts);
  table.index_levels = 3;
  return table;
}

}  // namespace labpose::projects
