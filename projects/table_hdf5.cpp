// pandas' HDF5 "fixed" format through the HDF5 C API, with the attributes pandas 1.5 and PyTables
// write (so pandas.read_hdf, PyTables and h5py users see what they expect), and a reader that
// accepts any fixed-format DataFrame of numbers. The PyTables "table" format is recognised, not
// read.
#include <hdf5.h>

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <numeric>
#include <optional>
#include <regex>
#include <set>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "projects/table.hpp"

namespace labpose::projects {
namespace fs = std::filesystem;
namespace {

// RAII for an HDF5 identifier.
class Handle {
 public:
  Handle() = default;
  Handle(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {}
  ~Handle() { reset(); }
  Handle(Handle&& other) noexcept : id_(other.id_), close_(other.close_) { other.id_ = -1; }
  Handle& operator=(Handle&& other) noexcept {
    if (this != &other) {
      reset();
      id_ = other.id_;
      close_ = other.close_;
      other.id_ = -1;
    }
    return *this;
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  hid_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }
  /// Gives up ownership (the caller closes it).
  hid_t release() {
    const hid_t id = id_;
    id_ = -1;
    return id;
  }
  void reset() {
    if (id_ >= 0 && close_ != nullptr) close_(id_);
    id_ = -1;
  }

 private:
  hid_t id_ = -1;
  herr_t (*close_)(hid_t) = nullptr;
};

// Silences HDF5's own error printing while we turn its failures into Errors.
class QuietHdf5 {
 public:
  QuietHdf5() {
    H5Eget_auto2(H5E_DEFAULT, &function_, &data_);
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  }
  ~QuietHdf5() { H5Eset_auto2(H5E_DEFAULT, function_, data_); }
  QuietHdf5(const QuietHdf5&) = delete;
  QuietHdf5& operator=(const QuietHdf5&) = delete;

 private:
  H5E_auto2_t function_ = nullptr;
  void* data_ = nullptr;
};

hid_t check(hid_t id, const fs::path& file, const std::string& what) {
  if (id < 0) throw Error(fmt::format("{}: HDF5 error while {}", file.string(), what));
  return id;
}

void check_status(herr_t status, const fs::path& file, const std::string& what) {
  if (status < 0) throw Error(fmt::format("{}: HDF5 error while {}", file.string(), what));
}

// ---- writing ----------------------------------------------------------------------------------

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
      for (const auto& tuple : tuples) numbers.push_back(std::stoll(tuple[0]));
      integer_index(group, key, numbers);
      return;
    }
    if (levels == 1) {
      string_attribute(group, (key + "_variety").c_str(), "regular");
      std::vector<std::string> labels;
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

// ---- reading ----------------------------------------------------------------------------------

std::optional<std::string> read_string_attribute(hid_t object, const char* name,
                                                 const fs::path& file) {
  if (H5Aexists(object, name) <= 0) return std::nullopt;
  Handle attribute(
      check(H5Aopen(object, name, H5P_DEFAULT), file, fmt::format("opening attribute {}", name)),
      H5Aclose);
  Handle type(check(H5Aget_type(attribute.get()), file, "reading an attribute type"), H5Tclose);
  if (H5Tget_class(type.get()) != H5T_STRING) return std::nullopt;
  Handle space(check(H5Aget_space(attribute.get()), file, "reading an attribute space"), H5Sclose);
  if (H5Sget_simple_extent_type(space.get()) == H5S_NULL) return std::string();
  if (H5Tis_variable_str(type.get()) > 0) {
    char* text = nullptr;
    Handle memory(check(H5Tcopy(H5T_C_S1), file, "a string type"), H5Tclose);
    H5Tset_size(memory.get(), H5T_VARIABLE);
    check_status(H5Aread(attribute.get(), memory.get(), &text), file,
                 fmt::format("reading {}", name));
    std::string value = text != nullptr ? text : "";
    H5free_memory(text);
    return value;
  }
  const std::size_t size = H5Tget_size(type.get());
  std::string value(size, '\0');
  check_status(H5Aread(attribute.get(), type.get(), value.data()), file,
               fmt::format("reading {}", name));
  value.resize(std::strlen(value.c_str()));
  return value;
}

std::optional<std::int64_t> read_int_attribute(hid_t object, const char* name,
                                               const fs::path& file) {
  if (H5Aexists(object, name) <= 0) return std::nullopt;
  Handle attribute(
      check(H5Aopen(object, name, H5P_DEFAULT), file, fmt::format("opening attribute {}", name)),
      H5Aclose);
  std::int64_t value = 0;
  check_status(H5Aread(attribute.get(), H5T_NATIVE_INT64, &value), file,
               fmt::format("reading {}", name));
  return value;
}

bool read_flag_attribute(hid_t object, const char* name, const fs::path& file) {
  if (H5Aexists(object, name) <= 0) return false;
  Handle attribute(
      check(H5Aopen(object, name, H5P_DEFAULT), file, fmt::format("opening attribute {}", name)),
      H5Aclose);
  Handle type(check(H5Aget_type(attribute.get()), file, "reading an attribute type"), H5Tclose);
  std::vector<unsigned char> bytes(std::max<std::size_t>(H5Tget_size(type.get()), 1));
  check_status(H5Aread(attribute.get(), type.get(), bytes.data()), file,
               fmt::format("reading {}", name));
  return std::any_of(bytes.begin(), bytes.end(), [](unsigned char b) { return b != 0; });
}

class Reader {
 public:
  Reader(hid_t group, const fs::path& file, std::string key)
      : group_(group), file_(file), key_(std::move(key)) {}

  [[noreturn]] void unsupported(const std::string& what) const {
    throw Error(fmt::format("{}: the table under '{}' has {}, which labpose does not read",
                            file_.string(), key_, what),
                "DeepLabCut tables hold numbers only; re-save it from pandas with df.to_hdf(path, "
                "key=...)");
  }

  Handle open(const std::string& name) const {
    if (H5Lexists(group_, name.c_str(), H5P_DEFAULT) <= 0) {
      throw Error(
          fmt::format(
              "{}: the table under '{}' has no '{}' dataset: the file is damaged or not written "
              "by pandas",
              file_.string(), key_, name),
          "use the CSV beside it if there is one");
    }
    return Handle(check(H5Dopen2(group_, name.c_str(), H5P_DEFAULT), file_, "opening " + name),
                  H5Dclose);
  }

  // The logical shape of a dataset, honouring pandas' empty-array placeholders.
  std::vector<hsize_t> shape(hid_t dataset, bool* empty) const {
    if (const auto pickled = read_string_attribute(dataset, "shape", file_)) {
      *empty = true;
      std::vector<hsize_t> dims;
      static const std::regex number("[IL](\\d+)");
      for (auto it = std::sregex_iterator(pickled->begin(), pickled->end(), number);
           it != std::sregex_iterator(); ++it) {
        dims.push_back(std::stoull((*it)[1].str()));
      }
      return dims;
    }
    *empty = false;
    Handle space(check(H5Dget_space(dataset), file_, "reading a dataspace"), H5Sclose);
    const int rank = H5Sget_simple_extent_ndims(space.get());
    std::vector<hsize_t> dims(static_cast<std::size_t>(std::max(rank, 0)));
    H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
    return dims;
  }

  std::vector<std::string> strings(const std::string& name) const {
    Handle dataset = open(name);
    bool empty = false;
    const std::vector<hsize_t> dims = shape(dataset.get(), &empty);
    if (empty) return {};
    const std::size_t count = dims.empty() ? 1 : static_cast<std::size_t>(dims[0]);
    Handle type(check(H5Dget_type(dataset.get()), file_, "reading a type"), H5Tclose);
    if (H5Tget_class(type.get()) != H5T_STRING)
      unsupported(fmt::format("non-text labels in '{}'", name));
    std::vector<std::string> out(count);
    if (H5Tis_variable_str(type.get()) > 0) {
      std::vector<char*> pointers(count, nullptr);
      Handle memory(check(H5Tcopy(H5T_C_S1), file_, "a string type"), H5Tclose);
      H5Tset_size(memory.get(), H5T_VARIABLE);
      check_status(
          H5Dread(dataset.get(), memory.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, pointers.data()),
          file_, "reading " + name);
      for (std::size_t i = 0; i < count; ++i) {
        out[i] = pointers[i] != nullptr ? pointers[i] : "";
        H5free_memory(pointers[i]);
      }
      return out;
    }
    const std::size_t width = H5Tget_size(type.get());
    std::vector<char> buffer(width * count + 1, '\0');
    check_status(H5Dread(dataset.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, buffer.data()),
                 file_, "reading " + name);
    for (std::size_t i = 0; i < count; ++i) {
      const char* start = &buffer[i * width];
      out[i] = std::string(start, strnlen(start, width));
    }
    return out;
  }

  std::vector<std::int64_t> integers(const std::string& name) const {
    Handle dataset = open(name);
    bool empty = false;
    const std::vector<hsize_t> dims = shape(dataset.get(), &empty);
    if (empty) return {};
    Handle type(check(H5Dget_type(dataset.get()), file_, "reading a type"), H5Tclose);
    if (H5Tget_class(type.get()) != H5T_INTEGER)
      unsupported(fmt::format("non-integer codes in '{}'", name));
    std::vector<std::int64_t> out(dims.empty() ? 1 : static_cast<std::size_t>(dims[0]));
    check_status(
        H5Dread(dataset.get(), H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()), file_,
        "reading " + name);
    return out;
  }

  std::string kind(const std::string& name) const {
    Handle dataset = open(name);
    return read_string_attribute(dataset.get(), "kind", file_).value_or("string");
  }

  std::optional<std::string> level_name(const std::string& name) const {
    Handle dataset = open(name);
    const auto text = read_string_attribute(dataset.get(), "name", file_);
    if (!text || *text == "N.") return std::nullopt;  // pickled None
    return text;
  }

  struct Index {
    std::vector<std::vector<std::string>> tuples;
    std::vector<std::string> names;
    std::size_t levels = 1;
    bool integers = false;
  };

  Index index(const std::string& key) const {
    Index out;
    const std::string variety =
        read_string_attribute(group_, (key + "_variety").c_str(), file_).value_or("regular");
    if (variety == "regular") {
      const std::string kind_of = kind(key);
      if (kind_of == "integer") {
        out.integers = true;
        for (std::int64_t number : integers(key)) out.tuples.push_back({std::to_string(number)});
      } else if (kind_of == "string" || kind_of == "unicode") {
        for (auto& label : strings(key)) out.tuples.push_back({std::move(label)});
      } else {
        unsupported(fmt::format("a '{}' index", kind_of));
      }
      if (auto name = level_name(key)) out.names.push_back(*name);
      return out;
    }
    if (variety != "multi") unsupported(fmt::format("a '{}' index", variety));
    const auto levels = read_int_attribute(group_, (key + "_nlevels").c_str(), file_);
    if (!levels || *levels < 1 || *levels > 16) unsupported("a MultiIndex without a level count");
    out.levels = static_cast<std::size_t>(*levels);
    std::vector<std::vector<std::string>> level_values(out.levels);
    std::vector<std::vector<std::int64_t>> codes(out.levels);
    for (std::size_t level = 0; level < out.levels; ++level) {
      const std::string level_key = fmt::format("{}_level{}", key, level);
      const std::string kind_of = kind(level_key);
      if (kind_of == "integer") {
        for (std::int64_t number : integers(level_key))
          level_values[level].push_back(std::to_string(number));
      } else {
        level_values[level] = strings(level_key);
      }
      codes[level] = integers(fmt::format("{}_label{}", key, level));
      out.names.push_back(level_name(level_key).value_or(""));
      if (codes[level].size() != codes[0].size())
        unsupported("MultiIndex levels of different lengths");
    }
    for (std::size_t i = 0; i < codes[0].size(); ++i) {
      std::vector<std::string> tuple;
      for (std::size_t level = 0; level < out.levels; ++level) {
        const std::int64_t code = codes[level][i];
        if (code < -1 || code >= static_cast<std::int64_t>(level_values[level].size())) {
          unsupported("MultiIndex codes outside their levels (a damaged file)");
        }
        tuple.push_back(code < 0 ? std::string()
                                 : level_values[level][static_cast<std::size_t>(code)]);
      }
      out.tuples.push_back(std::move(tuple));
    }
    return out;
  }

  // block<b>_values as (rows, items) doubles.
  std::vector<double> block_values(std::size_t block, std::size_t rows, std::size_t items) const {
    const std::string name = fmt::format("block{}_values", block);
    Handle dataset = open(name);
    bool empty = false;
    const std::vector<hsize_t> dims = shape(dataset.get(), &empty);
    if (empty || rows == 0 || items == 0) return std::vector<double>(rows * items, std::nan(""));
    Handle type(check(H5Dget_type(dataset.get()), file_, "reading a type"), H5Tclose);
    const H5T_class_t type_class = H5Tget_class(type.get());
    if (type_class != H5T_FLOAT && type_class != H5T_INTEGER)
      unsupported("columns that are not numbers");
    const bool transposed = read_flag_attribute(dataset.get(), "transposed", file_);
    if (dims.size() != 2) unsupported(fmt::format("a {}-dimensional value block", dims.size()));
    std::vector<double> raw(static_cast<std::size_t>(dims[0] * dims[1]));
    check_status(
        H5Dread(dataset.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, raw.data()), file_,
        "reading " + name);
    if (transposed) {
      if (dims[0] != rows || dims[1] != items)
        unsupported("a value block whose size does not match its index");
      return raw;
    }
    if (dims[0] != items || dims[1] != rows)
      unsupported("a value block whose size does not match its index");
    std::vector<double> out(rows * items);
    for (std::size_t i = 0; i < items; ++i) {
      for (std::size_t r = 0; r < rows; ++r) out[r * items + i] = raw[i * rows + r];
    }
    return out;
  }

 private:
  hid_t group_;
  const fs::path& file_;
  std::string key_;
};

struct OpenTable {
  Handle file;
  Handle group;
  std::string key;
};

OpenTable open_table(const fs::path& path, const std::string& requested_key) {
  std::error_code error;
  if (!fs::exists(path, error)) throw Error(fmt::format("{} does not exist", path.string()));
  if (fs::file_size(path, error) == 0) {
    throw Error(fmt::format("{} is empty (0 bytes)", path.string()),
                "the file was cut short; use the CSV beside it or a backup");
  }
  if (H5Fis_hdf5(path.c_str()) <= 0) {
    throw Error(fmt::format("{} is not an HDF5 file (or it is damaged)", path.string()),
                "use the CSV beside it, or check that the file was copied completely");
  }
  OpenTable open;
  open.file = Handle(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (!open.file.valid()) {
    throw Error(
        fmt::format("cannot open {} as HDF5 (damaged, or locked by another program)",
                    path.string()),
        "close programs that have it open (HDF5 files can be locked by a running Python session)");
  }
  open.key = requested_key;
  if (open.key.empty()) {
    // Like pandas.read_hdf without a key: the file must hold exactly one DataFrame.
    std::vector<std::string> names;
    H5G_info_t info{};
    if (H5Gget_info(open.file.get(), &info) >= 0) {
      for (hsize_t i = 0; i < info.nlinks; ++i) {
        const ssize_t length = H5Lget_name_by_idx(open.file.get(), ".", H5_INDEX_NAME, H5_ITER_INC,
                                                  i, nullptr, 0, H5P_DEFAULT);
        if (length <= 0) continue;
        std::string name(static_cast<std::size_t>(length) + 1, '\0');
        H5Lget_name_by_idx(open.file.get(), ".", H5_INDEX_NAME, H5_ITER_INC, i, name.data(),
                           name.size(), H5P_DEFAULT);
        name.resize(static_cast<std::size_t>(length));
        names.push_back(std::move(name));
      }
    }
    if (names.size() != 1) {
      throw Error(fmt::format("{} holds {} top-level objects; expected exactly one table",
                              path.string(), names.size()),
                  "DeepLabCut files hold one table under the key df_with_missing");
    }
    open.key = names[0];
  }
  if (H5Lexists(open.file.get(), open.key.c_str(), H5P_DEFAULT) <= 0) {
    throw Error(fmt::format("{} has no table under the key '{}'", path.string(), open.key),
                "DeepLabCut's label and analysis files use the key df_with_missing");
  }
  open.group = Handle(H5Gopen2(open.file.get(), open.key.c_str(), H5P_DEFAULT), H5Gclose);
  if (!open.group.valid())
    throw Error(fmt::format("{}: '{}' is not a table", path.string(), open.key));
  return open;
}

Hdf5Format format_of(const OpenTable& open, const fs::path& path) {
  const std::string type =
      read_string_attribute(open.group.get(), "pandas_type", path).value_or("");
  if (type == "frame") return Hdf5Format::fixed;
  if (type == "frame_table") return Hdf5Format::table;
  throw Error(fmt::format("{}: '{}' is not a pandas DataFrame (pandas_type \"{}\")", path.string(),
                          open.key, type),
              "labpose reads tables written by pandas.DataFrame.to_hdf");
}

}  // namespace

Hdf5Format probe_table_hdf5(const fs::path& file, const std::string& key) {
  const QuietHdf5 quiet;
  const OpenTable open = open_table(file, key);
  return format_of(open, file);
}

Table read_table_hdf5(const fs::path& file, const std::string& key) {
  const QuietHdf5 quiet;
  const OpenTable open = open_table(file, key);
  if (format_of(open, file) == Hdf5Format::table) {
    throw Error(
        fmt::format(
            "{} is in pandas' \"table\" format (written by DeepLabCut 2.0/2.1), which labpose "
            "does not read",
            file.string()),
        "keep the CSV beside it (labpose reads that), or re-save it in the fixed format: python -c "
        "\"import pandas as pd; p='" +
            file.string() + "'; pd.read_hdf(p).to_hdf(p, key='df_with_missing', mode='w')\"");
  }
  const Reader reader(open.group.get(), file, open.key);
  const auto blocks = read_int_attribute(open.group.get(), "nblocks", file).value_or(1);
  const auto ndim = read_int_attribute(open.group.get(), "ndim", file).value_or(2);
  if (ndim != 2) reader.unsupported(fmt::format("{} dimensions", ndim));

  Table table;
  const auto columns = reader.index("axis0");
  const auto rows = reader.index("axis1");
  table.columns = columns.tuples;
  table.column_level_names = columns.names;
  table.index = rows.tuples;
  table.index_levels = rows.levels;
  table.integer_index = rows.integers;
  table.values.assign(table.row_count() * table.column_count(), std::nan(""));

  std::map<std::vector<std::string>, std::size_t> position;
  for (std::size_t c = 0; c < table.columns.size(); ++c) position.emplace(table.columns[c], c);
  for (std::int64_t block = 0; block < blocks; ++block) {
    const auto items = reader.index(fmt::format("block{}_items", block));
    const auto values = reader.block_values(static_cast<std::size_t>(block), table.row_count(),
                                            items.tuples.size());
    for (std::size_t i = 0; i < items.tuples.size(); ++i) {
      const auto found = position.find(items.tuples[i]);
      if (found == position.end())
        reader.unsupported("a value block naming a column that is not in the table");
      for (std::size_t r = 0; r < table.row_count(); ++r) {
        table.at(r, found->second) = values[r * items.tuples.size() + i];
      }
    }
  }
  return table;
}

namespace {

// The one file layout of both writers: with `own_index` the table's index, otherwise the integer
// rows 0..row_count-1 (a streamed table); the values come from `source`.
void write_hdf5(const Table& table, std::size_t row_count, bool own_index, const RowSource& source,
                const fs::path& file, const std::string& key) {
  AtomicFile target(file);
  {
    const QuietHdf5 quiet;
    Handle handle(H5Fcreate(target.temp_path().c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT),
                  H5Fclose);
    if (!handle.valid()) {
      throw Error(fmt::format("cannot write {}: HDF5 could not create the file", file.string()),
                  "check the folder's permissions and the free disk space");
    }
    {
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
    }  // closes every dataset and group before the file
    const bool flushed = H5Fflush(handle.get(), H5F_SCOPE_GLOBAL) >= 0;
    if (H5Fclose(handle.release()) < 0 || !flushed) {
      throw Error(fmt::format("cannot write {}: HDF5 could not finish the file (disk full?)",
                              file.string()),
                  "free some disk space; the previous file is unchanged");
    }
  }
  target.commit();
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
