// table_wire.hpp: a tag byte ('T' table, 'F' format, 'E' error), then lengths as uint64 followed
// by their bytes.
#include "projects/table_wire.hpp"

#include <fmt/core.h>

#include <cstdint>
#include <cstring>

namespace labpose::projects::wire {
namespace {

void put_number(std::string& out, std::uint64_t number) {
  out.append(reinterpret_cast<const char*>(&number), sizeof number);
}

void put_text(std::string& out, std::string_view text) {
  put_number(out, text.size());
  out.append(text);
}

void put_texts(std::string& out, const std::vector<std::string>& texts) {
  put_number(out, texts.size());
  for (const auto& text : texts) put_text(out, text);
}

void put_tuples(std::string& out, const std::vector<std::vector<std::string>>& tuples) {
  put_number(out, tuples.size());
  for (const auto& tuple : tuples) put_texts(out, tuple);
}

// Reads what the put_* functions wrote; a short or inconsistent answer is a labpose bug.
class Cursor {
 public:
  explicit Cursor(std::string_view bytes) : bytes_(bytes) {}

  // Consumes the tag: `expected`, or 'E' whose Error is thrown again.
  void expect(char expected) {
    LABPOSE_ASSERT(!bytes_.empty());
    const char tag = bytes_.front();
    bytes_.remove_prefix(1);
    if (tag == 'E') {
      const auto kind = static_cast<ErrorKind>(number());
      std::string message = text();
      std::string hint = text();
      throw Error(message, std::move(hint), kind);
    }
    LABPOSE_ASSERT(tag == expected);
  }
  std::uint64_t number() {
    LABPOSE_ASSERT(bytes_.size() >= sizeof(std::uint64_t));
    std::uint64_t number = 0;
    std::memcpy(&number, bytes_.data(), sizeof number);
    bytes_.remove_prefix(sizeof number);
    return number;
  }
  std::string text() {
    const std::uint64_t size = number();
    LABPOSE_ASSERT(size <= bytes_.size());
    std::string text(bytes_.substr(0, size));
    bytes_.remove_prefix(size);
    return text;
  }
  std::vector<std::string> texts() {
    const std::uint64_t count = number();
    LABPOSE_ASSERT(count <= bytes_.size() / sizeof(std::uint64_t));
    std::vector<std::string> texts;
    texts.reserve(count);
    for (std::uint64_t i = 0; i < count; ++i) texts.push_back(text());
    return texts;
  }
  std::vector<std::vector<std::string>> tuples() {
    const std::uint64_t count = number();
    LABPOSE_ASSERT(count <= bytes_.size() / sizeof(std::uint64_t));
    std::vector<std::vector<std::string>> tuples;
    tuples.reserve(count);
    for (std::uint64_t i = 0; i < count; ++i) tuples.push_back(texts());
    return tuples;
  }
  std::vector<double> doubles() {
    const std::uint64_t count = number();
    LABPOSE_ASSERT(count <= bytes_.size() / sizeof(double));
    std::vector<double> values(count);
    if (count > 0)  // an empty vector's data() may be null, which memcpy must not get
      std::memcpy(values.data(), bytes_.data(), count * sizeof(double));
    bytes_.remove_prefix(count * sizeof(double));
    return values;
  }
  bool done() const { return bytes_.empty(); }

 private:
  std::string_view bytes_;
};

}  // namespace

std::string encode_table(const Table& table) {
  std::string out(1, 'T');
  put_texts(out, table.column_level_names);
  put_tuples(out, table.columns);
  put_number(out, table.index_levels);
  put_number(out, table.integer_index ? 1 : 0);
  put_tuples(out, table.index);
  put_number(out, table.values.size());
  out.append(reinterpret_cast<const char*>(table.values.data()),
             table.values.size() * sizeof(double));
  return out;
}

std::string encode_format(Hdf5Format format) {
  std::string out(1, 'F');
  put_number(out, format == Hdf5Format::fixed ? 0 : 1);
  return out;
}

std::string encode_error(const Error& error) {
  std::string out(1, 'E');
  put_number(out, static_cast<std::uint64_t>(error.kind()));
  put_text(out, error.what());
  put_text(out, error.hint());
  return out;
}

Table decode_table(std::string_view bytes) {
  Cursor cursor(bytes);
  cursor.expect('T');
  Table table;
  table.column_level_names = cursor.texts();
  table.columns = cursor.tuples();
  table.index_levels = cursor.number();
  table.integer_index = cursor.number() != 0;
  table.index = cursor.tuples();
  table.values = cursor.doubles();
  LABPOSE_ASSERT(cursor.done());
  LABPOSE_ASSERT(table.values.size() == table.row_count() * table.column_count());
  return table;
}

Hdf5Format decode_format(std::string_view bytes) {
  Cursor cursor(bytes);
  cursor.expect('F');
  return cursor.number() == 0 ? Hdf5Format::fixed : Hdf5Format::table;
}

const char* const kDamagedFileHint =
    "use the CSV beside it if there is one, or a backup (the .bak beside it); an analysis result "
    "can be made again with labpose analyze";

Error failed_read(const std::filesystem::path& file, const ChildResult& result,
                  std::chrono::seconds deadline) {
  switch (result.status) {
    case ChildResult::Status::crashed:
      return Error(
          fmt::format("{} is damaged (the HDF5 library crashed reading it: {})", file.string(),
                      result.signal != 0 ? describe_signal(result.signal)
                                         : fmt::format("exit status {}", result.exit_code)),
          kDamagedFileHint);
    case ChildResult::Status::timed_out:
      return Error(fmt::format("{} is damaged (the HDF5 library was still reading it after {} s)",
                               file.string(), deadline.count()),
                   kDamagedFileHint);
    case ChildResult::Status::killed:
      return Error(fmt::format("reading {} was stopped (SIGKILL: out of memory?)", file.string()),
                   "a damaged file can claim a huge size; use the CSV beside it or a backup");
    case ChildResult::Status::interrupted:
      return Error(fmt::format("reading {} was interrupted", file.string()), "",
                   ErrorKind::interrupted);
    case ChildResult::Status::finished:
      break;
  }
  throw_internal_error("failed_read() of a child that answered", __FILE__, __LINE__);
}

}  // namespace labpose::projects::wire
