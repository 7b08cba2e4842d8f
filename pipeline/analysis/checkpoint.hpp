// The resumable checkpoint of one video's analysis: a JSON header line (format, what the analysis
// is made from, columns), then per frame its row of values and a status as little-endian float64,
// appended batch by batch and flushed after each, so an interrupted video resumes where it
// stopped. Not the final outputs (.h5/.csv, written from it once the video is done) and not the
// metadata files (analysis_metadata.hpp).
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "projects/config.hpp"

namespace labpose::pipeline {

// Row status, stored after each row's values in the checkpoint.
constexpr double kRowOk = 0.0, kRowDamaged = 1.0, kRowUndecodable = 2.0;

/// What a checkpoint or a finished analysis was made from: a different video file (path and
/// size), model or crop makes it another analysis.
struct AnalysisIdentity {
  std::string video;  // absolute path
  std::uintmax_t video_bytes = 0;
  std::int64_t frames = 0;
  std::string scorer, snapshot;
  std::optional<projects::CropBox> crop;
  int batch_size = 0;
  std::string precision = "fp32";  // of the network's arithmetic

  /// The identity of analyzing `video` (its absolute path and present size) of `frames` frames.
  static AnalysisIdentity of_video(const std::filesystem::path& video, std::int64_t frames,
                                   std::string scorer, std::string snapshot,
                                   std::optional<projects::CropBox> crop, int batch_size);
  nlohmann::json to_json() const;
  /// The batch size and the precision matter to resuming (the same batches, computed the same way,
  /// as an uninterrupted run), not to whether a finished analysis is this one. A checkpoint written
  /// before the precision was recorded was fp32's.
  bool matches(const nlohmann::json& other, bool batch_size_too = true) const;
};

/// The frames an earlier run found bad, by their rows' statuses.
struct BadRows {
  std::vector<std::int64_t> undecodable, damaged;  // ascending
};

/// The first line of `file` as JSON, and its length with the newline in `bytes`: the header of a
/// checkpoint or a detection journal. Discarded (is_discarded()) when the file cannot be read, the
/// line is not JSON or it is longer than 1 MiB.
nlohmann::json read_header_line(const std::filesystem::path& file, std::uintmax_t& bytes);

/// What a checkpoint and a detection journal do on opening: when `file` exists, `usable()` says
/// how many of its records to keep (having cut the file to them); when none, the file is replaced
/// by the line `header` (header_bytes set to its length). Then `file` is opened for appending into
/// `handle`. Returns the records kept; throws Error naming the file when it cannot be written.
std::int64_t open_resumable(const std::filesystem::path& file, const std::string& header,
                            const std::function<std::int64_t()>& usable,
                            std::uintmax_t& header_bytes, std::FILE*& handle);

class Checkpoint {
 public:
  /// A checkpoint at `file` of rows of `columns` values (plus a status each).
  Checkpoint(std::filesystem::path file, std::size_t columns);
  ~Checkpoint();
  Checkpoint(const Checkpoint&) = delete;
  Checkpoint& operator=(const Checkpoint&) = delete;

  std::size_t columns() const { return columns_; }
  /// Doubles per stored row: the values and the status.
  std::size_t row_doubles() const { return columns_ + 1; }

  /// Opens the file for appending and returns the rows already in a checkpoint made for
  /// `identity`, rounded down to whole batches (so that the batches after it are those of an
  /// uninterrupted run); 0 when there is none or it is another analysis's (then it is replaced).
  /// Throws Error naming the file when it cannot be written.
  std::int64_t open(const AnalysisIdentity& identity);
  /// Appends `rows` rows of row_doubles() values each and flushes; throws Error when the disk is
  /// full or the file cannot be written.
  void append(const double* values, std::size_t rows);
  void close();

  /// Reads `count` rows from row `first`: values into `out` (columns each), statuses into
  /// `status`. Throws Error when the file holds fewer rows.
  void read(std::size_t first, std::size_t count, double* out, std::vector<double>& status) const;
  /// The undecodable and damaged rows among the first `rows`.
  BadRows bad_rows(std::int64_t rows) const;

 private:
  std::int64_t usable_rows(const AnalysisIdentity& identity);

  std::filesystem::path file_;
  std::size_t columns_;
  std::uintmax_t header_bytes_ = 0;
  std::FILE* handle_ = nullptr;
};

}  // namespace labpose::pipeline
