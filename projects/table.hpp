// A pandas DataFrame as DeepLabCut stores label and track tables: float64 values under a
// MultiIndex of columns (scorer/bodyparts/coords, or with individuals) and string or integer rows.
// Read and written as DeepLabCut's CSV (pandas' to_csv) and HDF5 (pandas' "fixed" format).
// Not a general DataFrame: one dtype (float64), no arithmetic.
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace labpose::projects {

struct Table {
  std::vector<std::string> column_level_names;    // e.g. {"scorer", "bodyparts", "coords"}
  std::vector<std::vector<std::string>> columns;  // one tuple per column, one entry per level
  std::size_t index_levels = 1;  // 1 (path or frame number) or 3 (labeled-data, stem, image)
  bool integer_index = false;    // rows are frame numbers (analysis outputs)
  std::vector<std::vector<std::string>> index;  // one key per row, index_levels entries each
  std::vector<double> values;  // row-major: values[row * columns.size() + column]; NaN = missing

  std::size_t row_count() const { return index.size(); }
  std::size_t column_count() const { return columns.size(); }
  double& at(std::size_t row, std::size_t column) { return values[row * columns.size() + column]; }
  double at(std::size_t row, std::size_t column) const {
    return values[row * columns.size() + column];
  }
  /// Appends a row of NaN values and returns its number.
  std::size_t add_row(std::vector<std::string> key);
  /// The row key joined with '/', e.g. "labeled-data/m4s1/img0000.png".
  std::string row_path(std::size_t row) const;
};

/// True when both tables have the same labels and the same values (NaN equal to NaN).
bool same_table(const Table& a, const Table& b);

// CSV as pandas writes it: one header row per column level (level name first, one empty cell per
// extra index level), then one row per index key; NaN is an empty cell, floats as Python's repr.
Table read_table_csv(const std::filesystem::path& file);
Table parse_table_csv(std::string_view text, const std::filesystem::path& file_for_messages);
std::string table_to_csv(const Table& table);
void write_table_csv(const Table& table, const std::filesystem::path& file);  // atomic

/// How pandas stored a DataFrame in an HDF5 file.
enum class Hdf5Format { fixed, table };
// The readers below run libhdf5 in a child process (it crashes on some damaged files): a damaged
// file gives an Error naming it, whatever its bytes. Each read costs a fork (about a millisecond).
/// The format of the single DataFrame in `file` (under `key`, or the only top-level group).
Hdf5Format probe_table_hdf5(const std::filesystem::path& file, const std::string& key = {});
/// Reads pandas' fixed format. The "table" format (old DeepLabCut files) is refused with a message
/// that says to use the CSV beside it.
Table read_table_hdf5(const std::filesystem::path& file, const std::string& key = {});
/// What read_table_hdf5 does, on the bytes of a file and in this process: without its protection
/// from a crash inside libhdf5. For the fuzz harness; labpose itself reads with read_table_hdf5.
Table parse_table_hdf5(std::string_view bytes, const std::filesystem::path& file_for_messages,
                       const std::string& key = {});
/// Writes pandas' fixed format under `key`, attribute for attribute as pandas 1.5 + PyTables do.
void write_table_hdf5(const Table& table, const std::filesystem::path& file,
                      const std::string& key = "df_with_missing");  // atomic

/// Fills `count` rows starting at row `first` into `out` (row-major, column_count() values each).
using RowSource = std::function<void(std::size_t first, std::size_t count, double* out)>;

// Tables longer than memory (hours of video): `header` gives the column labels (its rows are
// ignored), the rows are the frame numbers 0..rows-1 and their values come from `source` a slice at
// a time. The files are those write_table_csv / write_table_hdf5 write for the whole table.
void write_frames_table_csv(const Table& header, std::size_t rows, const RowSource& source,
                            const std::filesystem::path& file);  // atomic
void write_frames_table_hdf5(const Table& header, std::size_t rows, const RowSource& source,
                             const std::filesystem::path& file,
                             const std::string& key = "df_with_missing");  // atomic

}  // namespace labpose::projects
