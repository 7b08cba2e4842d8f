// learning_stats.csv: written whole (atomically) after each new row, read back row by row.
#include "pipeline/training/learning_stats.hpp"

#include <fmt/core.h>

#include <sstream>
#include <stdexcept>
#include <string>

#include "core/atomic_file.hpp"
#include "core/error.hpp"

namespace labpose::pipeline {

namespace {

constexpr const char* kStatsHeader = "iteration,loss,lr,test_error,seconds";
constexpr const char* kValidationHeader = "iteration,loss,lr,validation_error,seconds";

// The comma-separated cells of `line`; a trailing comma gives a last empty cell.
std::vector<std::string> cells_of(const std::string& line) {
  std::vector<std::string> fields;
  std::stringstream cells(line);
  std::string cell;
  while (std::getline(cells, cell, ',')) fields.push_back(cell);
  if (!line.empty() && line.back() == ',') fields.emplace_back();
  return fields;
}

// One row; throws std::exception when `fields` are not five numbers (the test error may be empty).
LearningStatsRow parse_row(const std::vector<std::string>& fields) {
  if (fields.size() != 5) throw std::invalid_argument("expected 5 fields");
  LearningStatsRow row;
  row.iteration = std::stoll(fields[0]);
  row.loss = std::stod(fields[1]);
  row.learning_rate = std::stod(fields[2]);
  if (!fields[3].empty()) row.test_error = std::stod(fields[3]);
  row.seconds = std::stod(fields[4]);
  return row;
}

}  // namespace

void write_learning_stats(const std::filesystem::path& file,
                          const std::vector<LearningStatsRow>& rows, HeldOutImages held_out) {
  std::string text =
      std::string(held_out == HeldOutImages::validation ? kValidationHeader : kStatsHeader) + "\n";
  for (const auto& row : rows) {
    text += fmt::format("{},{:.6g},{:.6g},{},{:.1f}\n", row.iteration, row.loss, row.learning_rate,
                        row.test_error ? fmt::format("{:.3f}", *row.test_error) : std::string(),
                        row.seconds);
  }
  write_file_atomically(file, text);
}

std::vector<LearningStatsRow> read_learning_stats(const std::filesystem::path& file) {
  std::istringstream in(read_file(file));
  std::vector<LearningStatsRow> rows;
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (number == 1 && (line == kStatsHeader || line == kValidationHeader)) continue;
    if (line.empty()) continue;
    try {
      rows.push_back(parse_row(cells_of(line)));
    } catch (const std::exception&) {
      throw Error(
          fmt::format("{}:{}: not a learning_stats.csv row: \"{}\"", file.string(), number, line),
          fmt::format("the header is {}; delete the damaged lines", kStatsHeader));
    }
  }
  return rows;
}

}  // namespace labpose::pipeline
