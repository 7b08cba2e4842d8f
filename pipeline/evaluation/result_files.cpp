// Evaluation result files.
#include "pipeline/evaluation/result_files.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>
#include <tuple>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "projects/labels.hpp"
#include "projects/number_text.hpp"

namespace labpose::pipeline {
namespace fs = std::filesystem;

namespace {

constexpr const char* kResultsHeader =
    ",Training iterations:,%Training dataset,Shuffle number, Train error(px), Test error(px),"
    "p-cutoff used,Train error with p-cutoff,Test error with p-cutoff";

// pandas writes NaN as an empty field and floats as Python's repr.
std::string number_field(double value) {
  return std::isnan(value) ? std::string() : projects::python_float_repr(value);
}

// The fields after the index column.
std::vector<std::string> row_fields(const EvaluationRow& row) {
  return {std::to_string(row.iterations),
          std::to_string(row.percent),
          std::to_string(row.shuffle),
          number_field(round_to_hundredths(row.train_error)),
          number_field(round_to_hundredths(row.test_error)),
          number_field(row.pcutoff),
          number_field(round_to_hundredths(row.train_error_pcutoff)),
          number_field(round_to_hundredths(row.test_error_pcutoff))};
}

std::vector<std::string> split_fields(const std::string& line) {
  std::vector<std::string> fields;
  std::stringstream stream(line);
  for (std::string field; std::getline(stream, field, ',');) fields.push_back(field);
  if (!line.empty() && line.back() == ',') fields.emplace_back();
  return fields;
}

std::string csv_text(const std::vector<std::vector<std::string>>& rows) {
  std::string out = std::string(kResultsHeader) + "\n";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    out += std::to_string(i);
    for (const auto& field : rows[i]) out += "," + field;
    out += "\n";
  }
  return out;
}

}  // namespace

double round_to_hundredths(double value) {
  return std::nearbyint(value * 100.0) / 100.0;  // numpy: rint(value * 10**2) / 10**2
}

std::string evaluation_results_csv(const std::vector<EvaluationRow>& rows) {
  std::vector<std::vector<std::string>> fields;
  fields.reserve(rows.size());
  for (const auto& row : rows) fields.push_back(row_fields(row));
  return csv_text(fields);
}

namespace {

using CombinedKey = std::tuple<long long, long long, long long>;  // percent, shuffle, iterations

// The rows of an existing CombinedEvaluation-results.csv (fields after the index column).
std::map<CombinedKey, std::vector<std::string>> read_combined_evaluation(const fs::path& file) {
  std::map<CombinedKey, std::vector<std::string>> rows;
  std::error_code error;
  if (!fs::exists(file, error)) return rows;
  std::stringstream text(read_file(file));
  std::string line;
  const std::string hint =
      "labpose keeps DeepLabCut's layout in this file; move it away and evaluate again";
  std::getline(text, line);
  if (!line.empty() && line.back() == '\r') line.pop_back();
  if (line != kResultsHeader) {
    throw Error(fmt::format("{}: the first line is not DeepLabCut's evaluation header \"{}\"",
                            file.string(), kResultsHeader),
                hint);
  }
  for (std::size_t number = 2; std::getline(text, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    std::vector<std::string> fields = split_fields(line);
    const auto whole = [](const std::string& field) { return projects::parse_double(field); };
    if (fields.size() != 9 || !whole(fields[1]) || !whole(fields[2]) || !whole(fields[3])) {
      throw Error(fmt::format("{}:{}: expected 9 fields with the iterations, training fraction "
                              "and shuffle as numbers",
                              file.string(), number),
                  hint);
    }
    const CombinedKey key{static_cast<long long>(*whole(fields[2])),
                          static_cast<long long>(*whole(fields[3])),
                          static_cast<long long>(*whole(fields[1]))};
    rows[key] = std::vector<std::string>(fields.begin() + 1, fields.end());
  }
  return rows;
}

}  // namespace

void check_combined_evaluation(const fs::path& file) {
  read_combined_evaluation(file);
}

void merge_combined_evaluation(const fs::path& file, const std::vector<EvaluationRow>& rows) {
  std::map<CombinedKey, std::vector<std::string>> merged = read_combined_evaluation(file);
  for (const auto& row : rows)
    merged[CombinedKey{row.percent, row.shuffle, row.iterations}] = row_fields(row);
  std::vector<std::vector<std::string>> ordered;
  ordered.reserve(merged.size());
  for (auto& [key, fields] : merged) ordered.push_back(std::move(fields));
  write_file_atomically(file, csv_text(ordered));
}

std::string keypoint_results_csv(const std::vector<std::string>& bodyparts,
                                 const ErrorSummary& train, const ErrorSummary& test) {
  std::string out = "Error Type";
  for (const auto& name : bodyparts) out += "," + name;
  out += "\n";
  const auto row = [&](const char* label, const std::vector<double>& values) {
    out += label;
    for (const double value : values) out += "," + number_field(value);
    out += "\n";
  };
  row("Train error (px)", train.per_bodypart);
  row("Test error (px)", test.per_bodypart);
  row("Train error (px) with p-cutoff", train.per_bodypart_pcutoff);
  row("Test error (px) with p-cutoff", test.per_bodypart_pcutoff);
  return out;
}

std::string assembly_results_csv(const EvaluationRow& row, const AssemblyScores& train,
                                 const AssemblyScores& test) {
  return fmt::format(
      ",Training iterations:,%Training dataset,Shuffle number,train mAP,train mAR,test mAP,"
      "test mAR\n0,{},{},{},{},{},{},{}\n",
      row.iterations, row.percent, row.shuffle, number_field(train.mean_average_precision),
      number_field(train.mean_average_recall), number_field(test.mean_average_precision),
      number_field(test.mean_average_recall));
}

projects::Table predictions_table(const Dataset& dataset,
                                  const std::vector<std::vector<KeypointPrediction>>& predictions,
                                  const std::string& scorer) {
  LABPOSE_ASSERT(predictions.size() == dataset.images.size());
  projects::Table table;
  std::vector<std::size_t> slots;  // the slot of each column triple
  if (dataset.multi_animal()) {
    table.column_level_names = {"scorer", "individuals", "bodyparts", "coords"};
    const std::size_t bodyparts = dataset.bodyparts.size();
    for (std::size_t i = 0; i < dataset.individuals.size(); ++i) {
      const bool single = dataset.individuals[i] == projects::kUniqueIndividual;
      for (std::size_t j = single ? dataset.multi_bodyparts : 0;
           j < (single ? bodyparts : dataset.multi_bodyparts); ++j) {
        for (const char* coordinate : {"x", "y", "likelihood"})
          table.columns.push_back(
              {scorer, dataset.individuals[i], dataset.bodyparts[j], coordinate});
        slots.push_back(i * bodyparts + j);
      }
    }
  } else {
    table.column_level_names = {"scorer", "bodyparts", "coords"};
    for (std::size_t j = 0; j < dataset.bodyparts.size(); ++j) {
      for (const char* coordinate : {"x", "y", "likelihood"})
        table.columns.push_back({scorer, dataset.bodyparts[j], coordinate});
      slots.push_back(j);
    }
  }
  table.index_levels = 3;
  for (std::size_t i = 0; i < dataset.images.size(); ++i) {
    const std::string& path = dataset.images[i].path;  // labeled-data/<video>/<image>
    const std::size_t slash = path.rfind('/');
    const std::size_t row =
        table.add_row({"labeled-data", path.substr(13, slash - 13), path.substr(slash + 1)});
    for (std::size_t c = 0; c < slots.size(); ++c) {
      const KeypointPrediction& p = predictions[i][slots[c]];
      table.at(row, 3 * c) = p.x;
      table.at(row, 3 * c + 1) = p.y;
      table.at(row, 3 * c + 2) = p.likelihood;
    }
  }
  return table;
}

}  // namespace labpose::pipeline
