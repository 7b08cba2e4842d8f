// LiveCsvWriter: the header rows, one row per pose or per animal, and the .part file renamed at the
// end.
#include "pipeline/live/live_csv.hpp"

#include <fmt/core.h>

#include <cmath>
#include <limits>

#include "core/error.hpp"
#include "projects/labels.hpp"
#include "projects/number_text.hpp"

namespace labpose::pipeline {
namespace fs = std::filesystem;

LiveCsvWriter::LiveCsvWriter(const fs::path& file, const std::string& scorer,
                             const std::vector<std::string>& bodyparts,
                             std::optional<std::size_t> animal_bodyparts)
    : file_(file),
      part_(fs::path(file).concat(".part")),
      bodyparts_(bodyparts.size()),
      animal_bodyparts_(animal_bodyparts) {
  LABPOSE_ASSERT(!animal_bodyparts || *animal_bodyparts <= bodyparts.size());
  out_.open(part_, std::ios::binary | std::ios::trunc);
  if (!out_) {
    throw Error(fmt::format("cannot write {}", part_.string()),
                "check that the folder exists and is writable, or pick another --output");
  }
  std::string scorers = "scorer", parts = "bodyparts", coords = "coords";
  const auto column = [&](const std::string& part, const std::string& coord) {
    scorers += "," + scorer;
    parts += "," + part;
    coords += "," + coord;
  };
  if (animal_bodyparts_) column("track", "id");
  for (const auto& bodypart : bodyparts) {
    for (const char* coord : {"x", "y", "likelihood"}) column(bodypart, coord);
  }
  for (const char* name : {"timestamp", "latency"}) column(name, "seconds");
  out_ << scorers << '\n' << parts << '\n' << coords << '\n';
}

LiveCsvWriter::~LiveCsvWriter() = default;

void LiveCsvWriter::write_row(const LivePose& pose, const std::string& track,
                              const std::vector<KeypointPrediction>& animal,
                              const std::vector<KeypointPrediction>& unique) {
  std::string row = std::to_string(pose.frame);
  if (animal_bodyparts_) row += "," + track;
  const auto cell = [&row](double value) {
    row += ',';
    if (!std::isnan(value)) row += projects::python_float_repr(value);
  };
  // Each of `keypoints`, and empty cells up to `count` keypoints.
  const auto cells = [&](const std::vector<KeypointPrediction>& keypoints, std::size_t count) {
    constexpr double kNone = std::numeric_limits<double>::quiet_NaN();
    for (std::size_t j = 0; j < count; ++j) {
      const bool known = j < keypoints.size();
      cell(known ? keypoints[j].x : kNone);
      cell(known ? keypoints[j].y : kNone);
      cell(known ? keypoints[j].likelihood : kNone);
    }
  };
  const std::size_t per_animal = animal_bodyparts_.value_or(0);
  cells(animal, per_animal);
  cells(unique, bodyparts_ - per_animal);
  cell(pose.timestamp);
  cell(pose.latency);
  row += '\n';
  out_ << row;
  // The rows reach the file at least every 64 rows, so a killed run keeps them in the .part file.
  if (++rows_ % 64 == 0) out_.flush();
}

void LiveCsvWriter::process(const LivePose& pose) {
  if (!animal_bodyparts_) {
    write_row(pose, "", {}, pose.keypoints);
    return;
  }
  for (const LiveAnimal& animal : pose.animals)
    write_row(pose, std::to_string(animal.track), animal.keypoints, {});
  const bool unique = bodyparts_ > *animal_bodyparts_;
  if (unique) write_row(pose, std::string(projects::kUniqueIndividual), {}, pose.keypoints);
  if (pose.animals.empty() && !unique) write_row(pose, "", {}, {});
}

void LiveCsvWriter::finish() {
  out_.flush();
  const bool written = static_cast<bool>(out_);
  out_.close();
  if (!written) {
    throw Error(fmt::format("could not write all rows to {} (is the disk full?)", part_.string()),
                "free some space; the rows written so far are in the .part file");
  }
  std::error_code error;
  fs::rename(part_, file_, error);
  if (error) {
    throw Error(
        fmt::format("cannot rename {} to {}: {}", part_.string(), file_.string(), error.message()),
        "the rows are in the .part file");
  }
}

}  // namespace labpose::pipeline
