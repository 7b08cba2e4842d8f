// Writing pandas' HDF5 "fixed" format through the HDF5 C API, with the attributes pandas 1.5 and
// PyTables write (so pandas.read_hdf, PyTables and h5py users see what they expect). The file goes
// through the write driver of hdf5_write_driver.hpp and AtomicFile: a failed write keeps the old
// file and never leaves libhdf5 half-closed. Reading is in table_hdf5_read.cpp.
#include <hdf5.h>

#include <fmt/core.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <mutex>
#include <numeric>
#include <optional>
#include <set>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "projects/hdf5_support.hpp"
#include "projects/hdf5_write_driver.hpp"
#include "projects/table.hpp"

namespace labpose::projects {
namespace fs = std::filesystem;

namespace hdf5 {

std::mutex& library_mutex() {
  static std::mutex mutex;
  return mutex;
}

}  // namespace hdf5

namespace {
using hdf5::Handle;

hid_t check(hid_t id, const fs::path& file, const std::string& what) {
  if (id < 0) throw Error(fmt::format("{}: HDF5 error while {}", file.string(), what));
  return id;
}

void check_status(herr_t status, const fs::path& file, const std::string& what) {
  if (status < 0) throw Error(fmt::format("{}: HDF5 error while {}", file.string(), what));
}

class Writer {
 public:
  explicit Writer(const fs::path& file) : file_(file) {}

  void string_attribute(hid_t object, const char* name, const std::string& value,
                        bool utf8 = true) {
    Handle type(check(H5Tcopy(H5T_C_S1), file_, "making a string type"), H5Tclose);
    check_status(H5Tset_size(type.get(), std::max<std::size_t>(value.size(), 1)), file_,
                 "sizing a string");
    check_status(H5Tset_strpad(type.get(), H5T_STR_NULLTERM), file_, "padding a string");
    check_status(H5Tset_cset(type.get(), utf8 ? H5T_CSET_UTF8 : H5T_CSET_ASCII), file_,
                 "a string charset");
    // PyTables writes an empty string as an attribute with a null dataspace.
    Handle space(check(H5Screate(value.empty() ? H5S_NULL : H5S_SCALAR), file_, "a dataspace"),
                 H5Sclose);
    Handle attribute(
        check(H5Acreate2(object, name, type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT), file_,
              fmt::format("creating attribute {}", name)),
        H5Aclose);
    if (!value.empty()) {
      check_status(H5Awrite(attribute.get(), type.get(), value.data()), file_,
                   fmt::format("writing {}", name));
    }
  }

  void int64_attribute(hid_t object, const char* name, std::int64_t value) {
    Handle space(check(H5Screate(H5S_SCALAR), file_, "a dataspace"), H5Sclose);
    Handle attribute(
        check(H5Acreate2(object, name, H5T_STD_I64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT), file_,
              fmt::format("creating attribute {}", name)),
        H5Aclose);
    check_status(H5Awrite(attribute.get(), H5T_NATIVE_INT64, &value), file_,
                 fmt::format("writing {}", name));
  }

  void bool_attribute(hid_t object, const char* name, bool value) {
    Handle space(check(H5Screate(H5S_SCALAR), file_, "a dataspace"), H5Sclose);
    Handle attribute(
        check(H5Acreate2(object, name, H5T_STD_B8LE, space.get(), H5P_DEFAULT, H5P_DEFAULT), file_,
              fmt::format("creating attribute {}", name)),
        H5Aclose);
    const std::uint8_t byte = value ? 1 : 0;
    check_status(H5Awrite(attribute.get(), H5T_NATIVE_B8, &byte), file_,
                 fmt::format("writing {}", name));
  }

  void group_decorations(hid_t group) {
    string_attribute(group, "CLASS", "GROUP");
    string_attribute(group, "TITLE", "");
    string_attribute(group, "VERSION", "1.0");
  }

  // A 1-D or 2-D array with PyTables' decorations. Empty arrays are stored as pandas does: a
  // one-element placeholder plus `value_type` and a pickled `shape`.
  void array(hid_t group, const std::string& name, hid_t file_type, hid_t memory_type,
             const void* data, std::vector<hsize_t> dims, const std::string& value_type) {
    const bool empty = std::any_of(dims.begin(), dims.end(), [](hsize_t d) { return d == 0; });
    std::vector<hsize_t> stored = empty ? std::vector<hsize_t>(dims.size(), 1) : dims;
    hid_t write_file_type = file_type, write_memory_type = memory_type;
    const double placeholder = 0.0;
    if (empty) {
      write_file_type = H5T_IEEE_F64LE;
      write_memory_type = H5T_NATIVE_DOUBLE;
      data = &placeholder;
    }
    Handle dataset = create_dataset(group, name, write_file_type, stored);
    check_status(H5Dwrite(dataset.get(), write_memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data),
                 file_, fmt::format("writing {}", name));
    decorate_array(dataset.get(), dims, value_type);
    last_ = std::move(dataset);
  }

  // A (rows, columns) float64 array filled from `source` a slice of rows at a time, so that a
  // table longer than memory can be written.
  void array_of_rows(hid_t group, const std::string& name, std::size_t rows, std::size_t columns,
                     const RowSource& source) {
    if (rows == 0 || columns == 0) {
      array(group, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, nullptr, {rows, columns}, "float64");
      return;
    }
    Handle dataset = create_dataset(group, name, H5T_IEEE_F64LE, {rows, columns});
    const std::size_t slice = std::max<std::size_t>(1, (1u << 20) / columns);  // ~8 MB
    std::vector<double> buffer(std::min(slice, rows) * columns);
    for (std::size_t first = 0; first < rows; first += slice) {
      const std::size_t count = std::min(slice, rows - first);
      source(first, count, buffer.data());
      const hsize_t memory_dims[2] = {count, columns};
      Handle memory(check(H5Screate_simple(2, memory_dims, nullptr), file_, "a dataspace"),
                    H5Sclose);
      Handle file_space(check(H5Dget_space(dataset.get()), file_, "a dataspace"), H5Sclose);
      const hsize_t start[2] = {first, 0};
      check_status(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start, nullptr,
                                       memory_dims, nullptr),
                   file_, "selecting rows");
      check_status(H5Dwrite(dataset.get(), H5T_NATIVE_DOUBLE, memory.get(), file_space.get(),
                            H5P_DEFAULT, buffer.data()),
                   file_, fmt::format("writing {}", name));
    }
    decorate_array(dataset.get(), {rows, columns}, "float64");
    last_ = std::move(dataset);
  }

  void strings(hid_t group, const std::string& name, const std::vector<std::string>& values) {
    std::size_t width = 1;
    for (const auto& value : values) width = std::max(width, value.size());
    std::vector<char> buffer(width * values.size(), '\0');
    for (std::size_t i = 0; i < values.size(); ++i)
      std::copy(values[i].begin(), values[i].end(), &buffer[i * width]);
    Handle type(check(H5Tcopy(H5T_C_S1), file_, "a string type"), H5Tclose);
    check_status(H5Tset_size(type.get(), width), file_, "sizing strings");
    check_status(H5Tset_strpad(type.get(), H5T_STR_NULLTERM), file_, "padding strings");
    array(group, name, type.get(), type.get(), buffer.data(), {values.size()},
          fmt::format("|S{}", width));
  }

  void codes(hid_t group, const std::string& name, const std::vector<std::int64_t>& values,
             std::size_t level_count) {
    // pandas stores MultiIndex codes in the smallest signed integer type that holds the level
    // count.
    if (level_count < 127) {
      std::vector<std::int8_t> narrow(values.begin(), values.end());
      array(group, name, H5T_STD_I8LE, H5T_NATIVE_INT8, narrow.data(), {values.size()}, "int8");
    } else if (level_count < 32767) {
      std::vector<std::int16_t> narrow(values.begin(), values.end());
      array(group, name, H5T_STD_I16LE, H5T_NATIVE_INT16, narrow.data(), {values.size()}, "int16");
    } else {
      std::vector<std::int32_t> narrow(values.begin(), values.end());
      array(group, name, H5T_STD_I32LE, H5T_NATIVE_INT32, narrow.data(), {values.size()}, "int32");
    }
  }

  // A one-level index of integers (frame numbers), unnamed.
  void integer_index(hid_t group, const std::string& key,
                     const std::vector<std::int64_t>& numbers) {
    string_attribute(group, (key + "_variety").c_str(), "regular");
    array(group, key, H5T_STD_I64LE, H5T_NATIVE_INT64, numbers.data(), {numbers.size()}, "int64");
    string_attribute(last_.get(), "kind", "integer");
    name_attributes(key, std::optional<std::string>());
  }

  // An index (axis0, axis1, block0_items): tuples of `levels` strings, or integers.
  void index(hid_t group, const std::string& key,
             const std::vector<std::vector<std::string>>& tuples,
             const std::vector<std::string>& level_names, std::size_t levels, bool integers) {
    if (levels == 1 && integers) {
      std::vector<std::int64_t> numbers;
      numbers.reserve(tuples.size());
      for (const auto& tuple : tuples) numbers.push_back(std::stoll(tuple[0]));
      integer_index(group, key, numbers);
      return;
    }
    if (levels == 1) {
      string_attribute(group, (key + "_variety").c_str(), "regular");
      std::vector<std::string> labels;
      labels.reserve(tuples.size());
      for (const auto& tuple : tuples) labels.push_back(tuple[0]);
      {
        strings(group, key, labels);
        string_attribute(last_.get(), "kind", "string");
      }
      name_attributes(key, level_names.empty() ? std::optional<std::string>() : level_names[0]);
      return;
    }
    string_attribute(group, (key + "_variety").c_str(), "multi");
    int64_attribute(group, (key + "_nlevels").c_str(), static_cast<std::int64_t>(levels));
    for (std::size_t level = 0; level < levels; ++level) {
      // Level values sorted and unique (as pandas stores them); codes give each entry's value.
      std::set<std::string> unique;
      for (const auto& tuple : tuples) unique.insert(tuple[level]);
      const std::vector<std::string> sorted(unique.begin(), unique.end());
      std::vector<std::int64_t> codes_of;
      codes_of.reserve(tuples.size());
      for (const auto& tuple : tuples) {
        codes_of.push_back(std::lower_bound(sorted.begin(), sorted.end(), tuple[level]) -
                           sorted.begin());
      }
      strings(group, fmt::format("{}_level{}", key, level), sorted);
      string_attribute(last_.get(), "kind", "string");
      name_attributes(key, level < level_names.size()
                               ? std::optional<std::string>(level_names[level])
                               : std::optional<std::string>());
      codes(group, fmt::format("{}_label{}", key, level), codes_of, sorted.size());
    }
  }

 private:
  Handle create_dataset(hid_t group, const std::string& name, hid_t file_type,
                        const std::vector<hsize_t>& dims) {
    Handle space(check(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), file_,
                       "a dataspace"),
                 H5Sclose);
    return Handle(check(H5Dcreate2(group, name.c_str(), file_type, space.get(), H5P_DEFAULT,
                                   H5P_DEFAULT, H5P_DEFAULT),
                        file_, fmt::format("creating {}", name)),
                  H5Dclose);
  }

  void decorate_array(hid_t dataset, const std::vector<hsize_t>& dims,
                      const std::string& value_type) {
    const bool empty = std::any_of(dims.begin(), dims.end(), [](hsize_t d) { return d == 0; });
    string_attribute(dataset, "CLASS", "ARRAY");
    string_attribute(dataset, "FLAVOR", "numpy");
    string_attribute(dataset, "TITLE", "");
    string_attribute(dataset, "VERSION", "2.4");
    bool_attribute(dataset, "transposed", !empty);
    if (empty) {
      string_attribute(dataset, "value_type", value_type);
      // pandas transposes non-empty arrays on write (hence `transposed`); empty ones keep its
      // in-memory layout, which for a value block is (columns, rows).
      std::string shape = "(";
      for (auto d = dims.rbegin(); d != dims.rend(); ++d) shape += fmt::format("I{}\n", *d);
      shape += "tp0\n.";
      string_attribute(dataset, "shape", shape,
                       false);  // a pickled tuple, ASCII so PyTables unpickles it
    }
  }

  // pandas' `name` attribute plus its `<key>_name<name>` twin; None is pickled ("N.", ASCII).
  void name_attributes(const std::string& key, const std::optional<std::string>& name) {
    if (name) {
      string_attribute(last_.get(), (key + "_name" + *name).c_str(), *name);
      string_attribute(last_.get(), "name", *name);
    } else {
      string_attribute(last_.get(), (key + "_nameNone").c_str(), "N.", false);
      string_attribute(last_.get(), "name", "N.", false);
    }
  }

  const fs::path& file_;
  Handle last_;
};

// The one file layout of both writers: with `own_index` the table's index, otherwise the integer
// rows 0..row_count-1 (a streamed table); the values come from `source`.

void write_hdf5(const Table& table, std::size_t row_count, bool own_index, const RowSource& source,
                const fs::path& file, const std::string& key) {
  AtomicFile target(file);
  hdf5::WriteStatus status;
  {
    const std::lock_guard lock(hdf5::library_mutex());
    const hdf5::QuietErrors quiet;
    const Handle access(hdf5::write_access(&status), H5Pclose);
    if (!access.valid()) throw Error(fmt::format("cannot write {}: HDF5 error", file.string()));
    Handle handle(H5Fcreate(target.temp_path().c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, access.get()),
                  H5Fclose);
    if (!handle.valid()) {
      throw Error(fmt::format("cannot write {}: HDF5 could not create the file", file.string()),
                  "check the folder's permissions and the free disk space");
    }
    try {
      Writer writer(file);
      writer.string_attribute(handle.get(), "CLASS", "GROUP");
      writer.string_attribute(handle.get(), "PYTABLES_FORMAT_VERSION", "2.1");
      writer.string_attribute(handle.get(), "TITLE", "");
      writer.string_attribute(handle.get(), "VERSION", "1.0");
      Handle group(
          check(H5Gcreate2(handle.get(), key.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), file,
                "creating the table group"),
          H5Gclose);
      writer.group_decorations(group.get());
      writer.string_attribute(group.get(), "pandas_type", "frame");
      writer.string_attribute(group.get(), "pandas_version", "0.15.2");
      writer.string_attribute(group.get(), "encoding", "UTF-8");
      writer.string_attribute(group.get(), "errors", "strict");
      writer.int64_attribute(group.get(), "ndim", 2);
      writer.int64_attribute(group.get(), "nblocks", 1);
      const std::size_t column_levels = table.column_level_names.size();
      writer.index(group.get(), "axis0", table.columns, table.column_level_names, column_levels,
                   false);
      if (own_index) {
        writer.index(group.get(), "axis1", table.index, {}, table.index_levels,
                     table.integer_index);
      } else {
        std::vector<std::int64_t> numbers(row_count);
        std::iota(numbers.begin(), numbers.end(), std::int64_t{0});
        writer.integer_index(group.get(), "axis1", numbers);
      }
      writer.index(group.get(), "block0_items", table.columns, table.column_level_names,
                   column_levels, false);
      writer.array_of_rows(group.get(), "block0_values", row_count, table.column_count(), source);
    } catch (const Error&) {
      // Every dataset and group is closed by now; the file closes cleanly even after a failed
      // write (the driver dropped the writes that followed it). The disk's error says more than
      // libhdf5's.
      handle.reset();
      if (status.error_number != 0) throw write_error(file, status.error_number);
      throw;
    }
    const bool closed = H5Fclose(handle.release()) >= 0;
    if (status.error_number != 0) throw write_error(file, status.error_number);
    if (!closed) {
      throw Error(fmt::format("cannot write {}: HDF5 could not finish the file", file.string()),
                  "the previous file is unchanged");
    }
  }
  target.commit();  // fsync and rename: a full disk that shows only now is reported here
}

}  // namespace

void write_table_hdf5(const Table& table, const fs::path& file, const std::string& key) {
  LABPOSE_ASSERT(table.values.size() == table.row_count() * table.column_count());
  const std::size_t columns = table.column_count();
  write_hdf5(
      table, table.row_count(), true,
      [&](std::size_t first, std::size_t count, double* out) {
        std::copy_n(table.values.data() + first * columns, count * columns, out);
      },
      file, key);
}

void write_frames_table_hdf5(const Table& header, std::size_t rows, const RowSource& source,
                             const fs::path& file, const std::string& key) {
  write_hdf5(header, rows, false, source, file, key);
}

}  // namespace labpose::projects
