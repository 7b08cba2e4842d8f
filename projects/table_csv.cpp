// DeepLabCut's multi-header CSV tables, byte for byte as pandas' to_csv writes them.
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <vector>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "projects/number_text.hpp"
#include "projects/table.hpp"

namespace labpose::projects {
namespace {

struct Record {
  std::vector<std::string> fields;
  std::size_t line = 0;  // 1-based line where the record starts
};

// RFC 4180 records: quoted fields may hold commas, quotes ("") and newlines; \r\n is accepted.
std::vector<Record> split_records(std::string_view text, const std::filesystem::path& file) {
  std::vector<Record> records;
  if (text.substr(0, 3) == "\xEF\xBB\xBF")
    text.remove_prefix(3);  // a UTF-8 BOM from spreadsheet programs
  std::size_t line = 1, i = 0;
  while (i < text.size()) {
    Record record;
    record.line = line;
    std::string field;
    bool in_quotes = false, end_of_record = false;
    while (i < text.size() && !end_of_record) {
      const char c = text[i];
      if (in_quotes) {
        if (c == '"') {
          if (i + 1 < text.size() && text[i + 1] == '"') {
            field += '"';
            ++i;
          } else {
            in_quotes = false;
          }
        } else {
          if (c == '\n') ++line;
          field += c;
        }
      } else if (c == '"') {
        in_quotes = true;
      } else if (c == ',') {
        record.fields.push_back(std::move(field));
        field.clear();
      } else if (c == '\n' || c == '\r') {
        if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
        ++line;
        end_of_record = true;
      } else {
        field += c;
      }
      ++i;
    }
    if (in_quotes) {
      throw Error(fmt::format("{}:{}: a quoted field is never closed", file.string(), record.line),
                  "the file may be cut short; restore it from the .h5 beside it or a backup");
    }
    record.fields.push_back(std::move(field));
    const bool blank = record.fields.size() == 1 && record.fields[0].empty();
    if (!blank) records.push_back(std::move(record));
  }
  return records;
}

bool is_header_name(const std::string& name) {
  return name == "scorer" || name == "individuals" || name == "bodyparts" || name == "coords";
}

bool is_integer(const std::string& text) {
  if (text.empty()) return false;
  std::size_t start = text[0] == '-' ? 1 : 0;
  if (start == text.size()) return false;
  for (std::size_t i = start; i < text.size(); ++i) {
    if (text[i] < '0' || text[i] > '9') return false;
  }
  return true;
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

}  // namespace

std::size_t Table::add_row(std::vector<std::string> key) {
  index.push_back(std::move(key));
  values.resize(values.size() + columns.size(), std::nan(""));
  return index.size() - 1;
}

std::string Table::row_path(std::size_t row) const {
  std::string path;
  for (const auto& part : index[row]) {
    if (!path.empty()) path += '/';
    path += part;
  }
  return path;
}

bool same_table(const Table& a, const Table& b) {
  if (a.column_level_names != b.column_level_names || a.columns != b.columns ||
      a.index != b.index || a.values.size() != b.values.size()) {
    return false;
  }
  for (std::size_t i = 0; i < a.values.size(); ++i) {
    const bool both_nan = std::isnan(a.values[i]) && std::isnan(b.values[i]);
    if (!both_nan && a.values[i] != b.values[i]) return false;
  }
  return true;
}

Table parse_table_csv(std::string_view text, const std::filesystem::path& file) {
  const std::vector<Record> records = split_records(text, file);
  const std::string name = file.string();
  if (records.empty()) {
    throw Error(fmt::format("{} is empty", name),
                "restore it from the .h5 beside it or from a backup");
  }
  if (records[0].fields[0] != "scorer") {
    throw Error(
        fmt::format(
            "{}:1: this is not a DeepLabCut table: the first line must start with \"scorer\" "
            "(found \"{}\")",
            name, records[0].fields[0]),
        "label files start with three header lines: scorer, bodyparts, coords");
  }
  std::size_t header_rows = 0;
  while (header_rows < records.size() && is_header_name(records[header_rows].fields[0]))
    ++header_rows;

  Table table;
  const std::vector<std::string>& first = records[0].fields;
  std::size_t index_levels = 1;
  while (index_levels < first.size() && first[index_levels].empty()) ++index_levels;
  if (index_levels == first.size()) {
    throw Error(fmt::format("{}:1: the header names no columns", name),
                "label files list the scorer once per column: scorer,Pranav,Pranav,...");
  }
  table.index_levels = index_levels;
  const std::size_t width = first.size();
  const std::size_t column_count = width - index_levels;
  table.columns.assign(column_count, std::vector<std::string>(header_rows));
  for (std::size_t h = 0; h < header_rows; ++h) {
    const Record& record = records[h];
    if (record.fields.size() != width) {
      throw Error(
          fmt::format("{}:{}: header line \"{}\" has {} cells but the first header line has {}",
                      name, record.line, record.fields[0], record.fields.size(), width),
          "every header line needs one cell per column");
    }
    table.column_level_names.push_back(record.fields[0]);
    for (std::size_t c = 0; c < column_count; ++c)
      table.columns[c][h] = record.fields[index_levels + c];
  }
  for (std::size_t r = header_rows; r < records.size(); ++r) {
    const Record& record = records[r];
    if (record.fields.size() != width) {
      throw Error(
          fmt::format("{}:{}: this row has {} cells but the header has {} ({} for the image and {} "
                      "values)",
                      name, record.line, record.fields.size(), width, index_levels, column_count),
          "a row must have a value (or an empty cell) for every column; fix or delete that line");
    }
    const std::size_t row = table.add_row(std::vector<std::string>(
        record.fields.begin(), record.fields.begin() + static_cast<long>(index_levels)));
    for (std::size_t c = 0; c < column_count; ++c) {
      const std::string& cell = record.fields[index_levels + c];
      if (cell.empty()) continue;
      const auto value = parse_double(cell);
      if (!value) {
        throw Error(fmt::format("{}:{}:{}: \"{}\" is not a number (column {} {})", name,
                                record.line, index_levels + c + 1, cell,
                                table.columns[c].size() > 1 ? table.columns[c][1] : "",
                                table.columns[c].back()),
                    "coordinates are numbers in pixels; leave the cell empty for a missing label");
      }
      table.at(row, c) = *value;
    }
  }
  table.integer_index = index_levels == 1 && !table.index.empty() &&
                        std::all_of(table.index.begin(), table.index.end(),
                                    [](const auto& key) { return is_integer(key[0]); });
  return table;
}

Table read_table_csv(const std::filesystem::path& file) {
  return parse_table_csv(read_file(file), file);
}

namespace {

std::string csv_header(const Table& table) {
  std::string out;
  for (std::size_t h = 0; h < table.column_level_names.size(); ++h) {
    out += csv_field(table.column_level_names[h]);
    for (std::size_t i = 1; i < table.index_levels; ++i) out += ',';
    for (const auto& column : table.columns) out += ',' + csv_field(column[h]);
    out += '\n';
  }
  return out;
}

// The values of one row after its index cells: ",x,y,..." with NaN as an empty cell.
void append_csv_values(const double* values, std::size_t count, std::string& out) {
  for (std::size_t c = 0; c < count; ++c) {
    out += ',';
    if (!std::isnan(values[c])) out += python_float_repr(values[c]);
  }
  out += '\n';
}

}  // namespace

std::string table_to_csv(const Table& table) {
  std::string out = csv_header(table);
  for (std::size_t r = 0; r < table.row_count(); ++r) {
    for (std::size_t i = 0; i < table.index_levels; ++i) {
      if (i > 0) out += ',';
      out += csv_field(table.index[r][i]);
    }
    append_csv_values(&table.values[r * table.column_count()], table.column_count(), out);
  }
  return out;
}

void write_frames_table_csv(const Table& header, std::size_t rows, const RowSource& source,
                            const std::filesystem::path& file) {
  AtomicFile target(file);
  {
    std::ofstream out(target.temp_path(), std::ios::binary);
    if (!out) throw write_error(file, errno != 0 ? errno : EIO);
    Table one_level = header;
    one_level.index_levels = 1;
    out << csv_header(one_level);
    const std::size_t columns = header.column_count();
    const std::size_t slice = std::max<std::size_t>(1, 65536 / std::max<std::size_t>(columns, 1));
    std::vector<double> values(slice * columns);
    std::string text;
    for (std::size_t first = 0; first < rows; first += slice) {
      const std::size_t count = std::min(slice, rows - first);
      source(first, count, values.data());
      text.clear();
      for (std::size_t r = 0; r < count; ++r) {
        text += std::to_string(first + r);
        append_csv_values(&values[r * columns], columns, text);
      }
      errno = 0;
      out.write(text.data(), static_cast<std::streamsize>(text.size()));
      if (!out) throw write_error(file, errno != 0 ? errno : EIO);
    }
    errno = 0;
    out.flush();
    if (!out) throw write_error(file, errno != 0 ? errno : EIO);
  }
  target.commit();
}

void write_table_csv(const Table& table, const std::filesystem::path& file) {
  write_file_atomically(file, table_to_csv(table));
}

}  // namespace labpose::projects
