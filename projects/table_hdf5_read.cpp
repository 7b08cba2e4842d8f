// Reading pandas' HDF5 "fixed" format (any DataFrame of numbers under a string or integer index),
// hardened against damaged files: every size the file declares is checked against the file's own
// size, and against the other sizes, before anything is allocated or read. libhdf5 1.10 itself
// reads out of bounds on some damaged metadata before any check of ours can see it, so
// read_table_hdf5 runs the read in a child process and turns a crash there into an Error naming
// the file. The PyTables "table" format is recognised, not read.
#include <hdf5.h>

#include <fmt/core.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <optional>

#include "core/error.hpp"
#include "projects/child_process.hpp"
#include "projects/hdf5_support.hpp"
#include "projects/table.hpp"
#include "projects/table_wire.hpp"

namespace labpose::projects {
namespace fs = std::filesystem;
namespace {
using hdf5::Handle;

// libhdf5 failing on a file it opened: the file is damaged (or was cut short).
[[noreturn]] void failed(const fs::path& file, const std::string& what) {
  throw Error(fmt::format("{} is damaged: the HDF5 library failed while {}", file.string(), what),
              wire::kDamagedFileHint);
}

hid_t check(hid_t id, const fs::path& file, const std::string& what) {
  if (id < 0) failed(file, what);
  return id;
}

void check_status(herr_t status, const fs::path& file, const std::string& what) {
  if (status < 0) failed(file, what);
}

// zlib's largest compression ratio is about 1032:1; a compressed dataset may hold that much more
// data than the file has bytes.
constexpr std::uint64_t kMaxCompression = 1100;

// What the text of an index may add up to, per byte of file: level values are stored once and
// repeated in every row that uses them, and real labels are short (a row of a 3-level index costs
// its codes, 3 bytes or more).
constexpr std::uint64_t kTextPerFileByte = 64;

// a * b, or nullopt when it does not fit in 64 bits.
std::optional<std::uint64_t> product(std::uint64_t a, std::uint64_t b) {
  if (a != 0 && b > std::numeric_limits<std::uint64_t>::max() / a) return std::nullopt;
  return a * b;
}

// The file being read: its identifier, its size in bytes (the bound of every size it declares)
// and its name for messages.
struct Source {
  hid_t file = -1;
  std::uint64_t size = 0;
  const fs::path& name;
};

// One scalar attribute: its type and how many values it holds.
struct Attribute {
  Handle attribute;
  Handle type;
  H5T_class_t type_class = H5T_NO_CLASS;
  std::size_t type_size = 0;
  bool null_space = false;  // PyTables' empty string
  hssize_t points = 0;
};

class Reader {
 public:
  Reader(const Source& source, hid_t group, std::string key)
      : source_(source), group_(group), key_(std::move(key)) {}

  [[noreturn]] void unsupported(const std::string& what) const {
    throw Error(fmt::format("{}: the table under '{}' has {}, which labpose does not read",
                            source_.name.string(), key_, what),
                "DeepLabCut tables hold numbers only; re-save it from pandas with df.to_hdf(path, "
                "key=...)");
  }

  [[noreturn]] void damaged(const std::string& what) const {
    throw Error(fmt::format("{} is damaged: the table under '{}' has {}", source_.name.string(),
                            key_, what),
                wire::kDamagedFileHint);
  }

  // ---- attributes ----

  std::optional<Attribute> attribute(hid_t object, const std::string& name) const {
    if (H5Aexists(object, name.c_str()) <= 0) return std::nullopt;
    Attribute out;
    out.attribute = Handle(check(H5Aopen(object, name.c_str(), H5P_DEFAULT), source_.name,
                                 "opening attribute " + name),
                           H5Aclose);
    out.type =
        Handle(check(H5Aget_type(out.attribute.get()), source_.name, "reading a type"), H5Tclose);
    out.type_class = H5Tget_class(out.type.get());
    out.type_size = H5Tget_size(out.type.get());
    const Handle space(
        check(H5Aget_space(out.attribute.get()), source_.name, "reading a dataspace"), H5Sclose);
    out.null_space = H5Sget_simple_extent_type(space.get()) == H5S_NULL;
    out.points = out.null_space ? 0 : H5Sget_simple_extent_npoints(space.get());
    // One value, of a size the file can hold (H5Aread fills points * type_size bytes).
    if (!out.null_space && out.points != 1)
      damaged(fmt::format("an attribute '{}' with {} values instead of one", name, out.points));
    if (out.type_size == 0 || out.type_size > source_.size)
      damaged(fmt::format("an attribute '{}' of {} bytes", name, out.type_size));
    return out;
  }

  std::optional<std::string> string_attribute(hid_t object, const std::string& name) const {
    auto found = attribute(object, name);
    if (!found || found->type_class != H5T_STRING) return std::nullopt;
    if (found->null_space) return std::string();
    if (H5Tis_variable_str(found->type.get()) > 0) {
      char* text = nullptr;
      const Handle memory(check(H5Tcopy(H5T_C_S1), source_.name, "a string type"), H5Tclose);
      check_status(H5Tset_size(memory.get(), H5T_VARIABLE), source_.name, "a string type");
      check_status(H5Aread(found->attribute.get(), memory.get(), &text), source_.name,
                   "reading " + name);
      std::string value = text != nullptr ? text : "";
      H5free_memory(text);
      return value;
    }
    std::string value(found->type_size, '\0');
    check_status(H5Aread(found->attribute.get(), found->type.get(), value.data()), source_.name,
                 "reading " + name);
    value.resize(strnlen(value.data(), value.size()));
    return value;
  }

  std::optional<std::int64_t> int_attribute(hid_t object, const std::string& name) const {
    auto found = attribute(object, name);
    if (!found) return std::nullopt;
    if (found->type_class != H5T_INTEGER || found->null_space)
      damaged(fmt::format("an attribute '{}' that is not a whole number", name));
    std::int64_t value = 0;
    check_status(H5Aread(found->attribute.get(), H5T_NATIVE_INT64, &value), source_.name,
                 "reading " + name);
    return value;
  }

  bool flag_attribute(hid_t object, const std::string& name) const {
    auto found = attribute(object, name);
    if (!found || found->null_space) return false;
    if (found->type_size > 16 ||
        (found->type_class != H5T_INTEGER && found->type_class != H5T_BITFIELD &&
         found->type_class != H5T_ENUM)) {
      damaged(fmt::format("an attribute '{}' that is not a flag", name));
    }
    unsigned char bytes[16] = {};
    check_status(H5Aread(found->attribute.get(), found->type.get(), bytes), source_.name,
                 "reading " + name);
    return std::any_of(bytes, bytes + found->type_size, [](unsigned char b) { return b != 0; });
  }

  // ---- datasets ----

  Handle open(const std::string& name) const {
    if (H5Lexists(group_, name.c_str(), H5P_DEFAULT) <= 0) {
      throw Error(
          fmt::format(
              "{}: the table under '{}' has no '{}' dataset: the file is damaged or not written "
              "by pandas",
              source_.name.string(), key_, name),
          "use the CSV beside it if there is one");
    }
    return Handle(
        check(H5Dopen2(group_, name.c_str(), H5P_DEFAULT), source_.name, "opening " + name),
        H5Dclose);
  }

  // pandas' pickled shape of an empty array, "(I0\nI10\ntp0\n." (Python 2 ints "L10L" too).
  std::vector<std::uint64_t> pickled_shape(const std::string& text, const std::string& name) const {
    std::vector<std::uint64_t> dims;
    for (std::size_t i = 0; i < text.size(); ++i) {
      if ((text[i] != 'I' && text[i] != 'L') || i + 1 >= text.size() ||
          !std::isdigit(static_cast<unsigned char>(text[i + 1]))) {
        continue;
      }
      std::uint64_t number = 0;
      for (++i; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i) {
        const auto scaled = product(number, 10);
        if (!scaled || *scaled > (std::uint64_t{1} << 62))
          damaged(fmt::format("an impossible shape for '{}'", name));
        number = *scaled + static_cast<std::uint64_t>(text[i] - '0');
      }
      dims.push_back(number);
      if (dims.size() > 2) damaged(fmt::format("an impossible shape for '{}'", name));
    }
    return dims;
  }

  // A dataset of `rank` dimensions, its shape checked against the file. `empty`: pandas stored an
  // empty array as a one-element placeholder and its real shape in the `shape` attribute.
  struct Array {
    Handle dataset;
    Handle type;
    H5T_class_t type_class = H5T_NO_CLASS;
    std::size_t type_size = 0;
    std::vector<std::uint64_t> dims;
    std::uint64_t count = 0;  // dims multiplied
    bool empty = false;
    bool variable_strings = false;
  };

  Array array(const std::string& name, int rank) const {
    Array out;
    out.dataset = open(name);
    if (const auto pickled = string_attribute(out.dataset.get(), "shape")) {
      out.empty = true;
      out.dims = pickled_shape(*pickled, name);
      if (out.dims.size() != static_cast<std::size_t>(rank) ||
          std::none_of(out.dims.begin(), out.dims.end(), [](std::uint64_t d) { return d == 0; })) {
        damaged(fmt::format("a placeholder '{}' whose shape is not empty", name));
      }
      return out;
    }
    const Handle space(check(H5Dget_space(out.dataset.get()), source_.name, "reading a dataspace"),
                       H5Sclose);
    if (H5Sget_simple_extent_ndims(space.get()) != rank)
      damaged(
          fmt::format("a '{}' of {} dimensions", name, H5Sget_simple_extent_ndims(space.get())));
    hsize_t dims[2] = {0, 0};
    check_status(H5Sget_simple_extent_dims(space.get(), dims, nullptr), source_.name,
                 "reading a dataspace");
    out.count = 1;
    for (int d = 0; d < rank; ++d) {
      out.dims.push_back(dims[d]);
      const auto count = product(out.count, dims[d]);
      if (!count) damaged(fmt::format("an impossible size of '{}'", name));
      out.count = *count;
    }
    out.type =
        Handle(check(H5Dget_type(out.dataset.get()), source_.name, "reading a type"), H5Tclose);
    out.type_class = H5Tget_class(out.type.get());
    out.type_size = H5Tget_size(out.type.get());
    out.variable_strings = out.type_class == H5T_STRING && H5Tis_variable_str(out.type.get()) > 0;
    if (out.type_size == 0) damaged(fmt::format("a '{}' with elements of 0 bytes", name));
    // A variable-length string takes 16 bytes in the dataset (length and heap reference).
    const auto bytes =
        product(out.count, out.variable_strings ? 16 : static_cast<std::uint64_t>(out.type_size));
    if (!bytes || *bytes > stored_limit(out.dataset.get())) {
      damaged(fmt::format("a '{}' of {} x {} bytes in a file of {} bytes", name, out.count,
                          out.type_size, source_.size));
    }
    return out;
  }

  // The most data bytes a dataset can hold in this file: its size, or more when compressed.
  std::uint64_t stored_limit(hid_t dataset) const {
    const Handle creation(H5Dget_create_plist(dataset), H5Pclose);
    if (creation.valid() && H5Pget_layout(creation.get()) == H5D_CHUNKED &&
        H5Pget_nfilters(creation.get()) > 0) {
      return product(source_.size, kMaxCompression).value_or(source_.size);
    }
    return source_.size;
  }

  std::vector<std::string> strings(const std::string& name) const {
    const Array data = array(name, 1);
    if (data.empty || data.count == 0) return {};
    if (data.type_class != H5T_STRING) unsupported(fmt::format("non-text labels in '{}'", name));
    const auto count = static_cast<std::size_t>(data.count);
    std::vector<std::string> out(count);
    if (data.variable_strings) {
      const Handle memory(check(H5Tcopy(H5T_C_S1), source_.name, "a string type"), H5Tclose);
      check_status(H5Tset_size(memory.get(), H5T_VARIABLE), source_.name, "a string type");
      // libhdf5 allocates every string: their total, from the heap's records, first.
      const Handle space(check(H5Dget_space(data.dataset.get()), source_.name, "a dataspace"),
                         H5Sclose);
      hsize_t total = 0;
      check_status(H5Dvlen_get_buf_size(data.dataset.get(), memory.get(), space.get(), &total),
                   source_.name, "sizing " + name);
      if (total > source_.size) damaged(fmt::format("labels in '{}' longer than the file", name));
      std::vector<char*> pointers(count, nullptr);
      check_status(
          H5Dread(data.dataset.get(), memory.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, pointers.data()),
          source_.name, "reading " + name);
      for (std::size_t i = 0; i < count; ++i) {
        out[i] = pointers[i] != nullptr ? pointers[i] : "";
        H5free_memory(pointers[i]);
      }
      return out;
    }
    const std::size_t width = data.type_size;
    std::vector<char> buffer(width * count);
    check_status(
        H5Dread(data.dataset.get(), data.type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, buffer.data()),
        source_.name, "reading " + name);
    for (std::size_t i = 0; i < count; ++i) {
      const char* start = buffer.data() + i * width;
      out[i] = std::string(start, strnlen(start, width));
    }
    return out;
  }

  std::vector<std::int64_t> integers(const std::string& name) const {
    const Array data = array(name, 1);
    if (data.empty || data.count == 0) return {};
    if (data.type_class != H5T_INTEGER) unsupported(fmt::format("non-integer codes in '{}'", name));
    std::vector<std::int64_t> out(static_cast<std::size_t>(data.count));
    check_status(
        H5Dread(data.dataset.get(), H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()),
        source_.name, "reading " + name);
    return out;
  }

  std::string kind(const std::string& name) const {
    const Handle dataset = open(name);
    return string_attribute(dataset.get(), "kind").value_or("string");
  }

  std::optional<std::string> level_name(const std::string& name) const {
    const Handle dataset = open(name);
    auto text = string_attribute(dataset.get(), "name");
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
    const std::string variety = string_attribute(group_, key + "_variety").value_or("regular");
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
    const auto levels = int_attribute(group_, key + "_nlevels");
    if (!levels || *levels < 1 || *levels > 16) unsupported("a MultiIndex without a level count");
    out.levels = static_cast<std::size_t>(*levels);
    std::vector<std::vector<std::string>> level_values(out.levels);
    std::vector<std::vector<std::int64_t>> codes(out.levels);
    for (std::size_t level = 0; level < out.levels; ++level) {
      const std::string level_key = fmt::format("{}_level{}", key, level);
      if (kind(level_key) == "integer") {
        for (std::int64_t number : integers(level_key))
          level_values[level].push_back(std::to_string(number));
      } else {
        level_values[level] = strings(level_key);
      }
      codes[level] = integers(fmt::format("{}_label{}", key, level));
      out.names.push_back(level_name(level_key).value_or(""));
      if (codes[level].size() != codes[0].size()) damaged("MultiIndex levels of different lengths");
    }
    // Each row repeats its level values: their total must stay in proportion to the file.
    const std::uint64_t text_limit =
        product(source_.size, kTextPerFileByte).value_or(std::numeric_limits<std::uint64_t>::max());
    std::uint64_t text = 0;
    out.tuples.reserve(codes[0].size());
    for (std::size_t i = 0; i < codes[0].size(); ++i) {
      std::vector<std::string> tuple;
      tuple.reserve(out.levels);
      for (std::size_t level = 0; level < out.levels; ++level) {
        const std::int64_t code = codes[level][i];
        if (code < -1 || code >= static_cast<std::int64_t>(level_values[level].size()))
          damaged("MultiIndex codes outside their levels");
        tuple.push_back(code < 0 ? std::string()
                                 : level_values[level][static_cast<std::size_t>(code)]);
        text += tuple.back().size() + 1;
      }
      if (text > text_limit) damaged("an index whose labels add up to more than the file holds");
      out.tuples.push_back(std::move(tuple));
    }
    return out;
  }

  // block<b>_values as (rows, items) doubles, row-major.
  std::vector<double> block_values(std::size_t block, std::size_t rows, std::size_t items) const {
    const std::string name = fmt::format("block{}_values", block);
    const Array data = array(name, 2);
    if (data.empty) {
      if (rows != 0 && items != 0) damaged(fmt::format("an empty '{}' for {} rows", name, rows));
      return {};
    }
    if (data.type_class != H5T_FLOAT && data.type_class != H5T_INTEGER)
      unsupported("columns that are not numbers");
    const bool transposed = flag_attribute(data.dataset.get(), "transposed");
    const std::vector<std::uint64_t> expected = transposed
                                                    ? std::vector<std::uint64_t>{rows, items}
                                                    : std::vector<std::uint64_t>{items, rows};
    if (data.dims != expected) {
      damaged(fmt::format("a value block '{}' of {} x {} for {} rows and {} columns", name,
                          data.dims[0], data.dims[1], rows, items));
    }
    if (data.count == 0) return {};
    std::vector<double> raw(static_cast<std::size_t>(data.count));
    check_status(
        H5Dread(data.dataset.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, raw.data()),
        source_.name, "reading " + name);
    if (transposed) return raw;
    std::vector<double> out(raw.size());
    for (std::size_t i = 0; i < items; ++i) {
      for (std::size_t r = 0; r < rows; ++r) out[r * items + i] = raw[i * rows + r];
    }
    return out;
  }

 private:
  const Source& source_;
  hid_t group_;
  std::string key_;
};

struct OpenTable {
  Handle file;
  Handle group;
  std::string key;
};

// Opens the DataFrame's group: under `requested_key`, or the file's only top-level object.
OpenTable open_group(Handle file, const fs::path& path, const std::string& requested_key) {
  OpenTable open;
  open.file = std::move(file);
  open.key = requested_key;
  if (open.key.empty()) {
    // Like pandas.read_hdf without a key: the file must hold exactly one DataFrame.
    H5G_info_t info{};
    const hsize_t links = H5Gget_info(open.file.get(), &info) >= 0 ? info.nlinks : 0;
    if (links != 1) {
      throw Error(fmt::format("{} holds {} top-level objects; expected exactly one table",
                              path.string(), links),
                  "DeepLabCut files hold one table under the key df_with_missing");
    }
    const ssize_t length = H5Lget_name_by_idx(open.file.get(), ".", H5_INDEX_NAME, H5_ITER_INC, 0,
                                              nullptr, 0, H5P_DEFAULT);
    if (length <= 0 || static_cast<std::uint64_t>(length) > 4096) {
      throw Error(fmt::format("{} is damaged: its table has no readable name", path.string()),
                  wire::kDamagedFileHint);
    }
    open.key.assign(static_cast<std::size_t>(length) + 1, '\0');
    H5Lget_name_by_idx(open.file.get(), ".", H5_INDEX_NAME, H5_ITER_INC, 0, open.key.data(),
                       open.key.size(), H5P_DEFAULT);
    open.key.resize(strnlen(open.key.c_str(), static_cast<std::size_t>(length)));
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

Error not_hdf5(const fs::path& path) {
  return Error(fmt::format("{} is not an HDF5 file (or it is damaged)", path.string()),
               "use the CSV beside it, or check that the file was copied completely");
}

OpenTable open_file(const fs::path& path, const std::string& key) {
  if (H5Fis_hdf5(path.c_str()) <= 0) throw not_hdf5(path);
  Handle file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (!file.valid()) {
    throw Error(
        fmt::format("cannot open {} as HDF5 (damaged, or locked by another program)",
                    path.string()),
        "close programs that have it open (HDF5 files can be locked by a running Python session)");
  }
  return open_group(std::move(file), path, key);
}

// libhdf5's in-memory ("core") driver over a copy of the bytes.
OpenTable open_image(std::string_view bytes, const fs::path& name, const std::string& key) {
  const Handle access(check(H5Pcreate(H5P_FILE_ACCESS), name, "a property list"), H5Pclose);
  check_status(H5Pset_fapl_core(access.get(), 1 << 16, false), name, "the core driver");
  check_status(H5Pset_file_image(access.get(), const_cast<char*>(bytes.data()), bytes.size()), name,
               "a file image");
  // The core driver refuses an image under the name of a file that exists: give it a path that
  // cannot exist (/dev/null is not a folder).
  Handle file(H5Fopen("/dev/null/labpose-file-image.h5", H5F_ACC_RDONLY, access.get()), H5Fclose);
  if (!file.valid()) throw not_hdf5(name);
  return open_group(std::move(file), name, key);
}

Hdf5Format format_of(const Reader& reader, const OpenTable& open, const fs::path& path) {
  const std::string type = reader.string_attribute(open.group.get(), "pandas_type").value_or("");
  if (type == "frame") return Hdf5Format::fixed;
  if (type == "frame_table") return Hdf5Format::table;
  throw Error(fmt::format("{}: '{}' is not a pandas DataFrame (pandas_type \"{}\")", path.string(),
                          open.key, type),
              "labpose reads tables written by pandas.DataFrame.to_hdf");
}

Table read_frame(const Reader& reader, const OpenTable& open, const fs::path& path) {
  if (format_of(reader, open, path) == Hdf5Format::table) {
    throw Error(
        fmt::format(
            "{} is in pandas' \"table\" format (written by DeepLabCut 2.0/2.1), which labpose "
            "does not read",
            path.string()),
        "keep the CSV beside it (labpose reads that), or re-save it in the fixed format: python -c "
        "\"import pandas as pd; p='" +
            path.string() + "'; pd.read_hdf(p).to_hdf(p, key='df_with_missing', mode='w')\"");
  }
  const auto ndim = reader.int_attribute(open.group.get(), "ndim").value_or(2);
  if (ndim != 2) reader.unsupported(fmt::format("{} dimensions", ndim));

  Table table;
  auto columns = reader.index("axis0");
  auto rows = reader.index("axis1");
  table.columns = std::move(columns.tuples);
  table.column_level_names = std::move(columns.names);
  table.index = std::move(rows.tuples);
  table.index_levels = rows.levels;
  table.integer_index = rows.integers;

  // pandas' blocks partition the columns; with that checked, the values add up to what the blocks
  // hold, which their sizes in the file bound.
  const auto blocks = reader.int_attribute(open.group.get(), "nblocks").value_or(1);
  if (blocks < 0 ||
      static_cast<std::uint64_t>(blocks) > std::max<std::size_t>(table.column_count(), 1))
    reader.damaged(fmt::format("{} value blocks for {} columns", blocks, table.column_count()));
  std::map<std::vector<std::string>, std::size_t> position;
  for (std::size_t c = 0; c < table.columns.size(); ++c) {
    if (!position.emplace(table.columns[c], c).second)
      reader.damaged(fmt::format("column {} twice", c + 1));
  }
  std::vector<std::vector<std::size_t>> block_columns(static_cast<std::size_t>(blocks));
  std::vector<bool> covered(table.column_count(), false);
  for (std::size_t block = 0; block < block_columns.size(); ++block) {
    for (const auto& item : reader.index(fmt::format("block{}_items", block)).tuples) {
      const auto found = position.find(item);
      if (found == position.end())
        reader.damaged("a value block naming a column that is not in the table");
      if (covered[found->second]) reader.damaged("a column in two value blocks");
      covered[found->second] = true;
      block_columns[block].push_back(found->second);
    }
  }
  if (std::find(covered.begin(), covered.end(), false) != covered.end())
    reader.damaged("a column that no value block holds");

  table.values.assign(table.row_count() * table.column_count(), std::nan(""));
  for (std::size_t block = 0; block < block_columns.size(); ++block) {
    const auto& items = block_columns[block];
    const auto values = reader.block_values(block, table.row_count(), items.size());
    for (std::size_t i = 0; i < items.size() && !values.empty(); ++i) {
      for (std::size_t r = 0; r < table.row_count(); ++r)
        table.at(r, items[i]) = values[r * items.size() + i];
    }
  }
  return table;
}

// The checks that need no libhdf5, done in this process: the file exists, is a file, is not empty.
std::uint64_t readable_size(const fs::path& file) {
  std::error_code error;
  const auto status = fs::status(file, error);
  if (!fs::exists(status)) throw Error(fmt::format("{} does not exist", file.string()));
  if (fs::is_directory(status))
    throw Error(fmt::format("cannot read {}: it is a folder, not a file", file.string()));
  const auto size = fs::file_size(file, error);
  if (error) throw Error(fmt::format("cannot read {}: {}", file.string(), error.message()));
  if (size == 0) {
    throw Error(fmt::format("{} is empty (0 bytes)", file.string()),
                "the file was cut short; use the CSV beside it or a backup");
  }
  return size;
}

// Opens `file` in a child process, runs `read` on it there (it returns the table, or the format,
// encoded) and returns its answer; a child that crashed, hung or was killed becomes an Error naming
// the file.
template <typename Read>
std::string read_in_child(const fs::path& file, const std::string& key, Read read) {
  const std::uint64_t size = readable_size(file);
  // Reading a table is quick (a 100 MB track table: about a second); a child still running long
  // after that is in an endless loop on damaged metadata.
  const auto deadline = std::chrono::seconds(60) + std::chrono::seconds(size >> 20);
  const ChildResult result = run_in_child(
      [&] {
        const hdf5::QuietErrors quiet;
        try {
          const OpenTable open = open_file(file, key);
          const Source source{open.file.get(), size, file};
          return read(Reader(source, open.group.get(), open.key), open);
        } catch (const Error& error) {
          return wire::encode_error(error);
        } catch (const std::bad_alloc&) {
          return wire::encode_error(
              Error(fmt::format("{}: not enough memory to read it", file.string()),
                    "close other programs, or read the CSV beside it"));
        } catch (const std::exception& other) {
          return wire::encode_error(
              Error(fmt::format("cannot read {}: {}", file.string(), other.what()),
                    wire::kDamagedFileHint));
        }
      },
      deadline, &hdf5::library_mutex());
  if (result.status != ChildResult::Status::finished)
    throw wire::failed_read(file, result, deadline);
  return result.output;
}

}  // namespace

Hdf5Format probe_table_hdf5(const fs::path& file, const std::string& key) {
  return wire::decode_format(
      read_in_child(file, key, [&](const Reader& reader, const OpenTable& open) {
        return wire::encode_format(format_of(reader, open, file));
      }));
}

Table read_table_hdf5(const fs::path& file, const std::string& key) {
  return wire::decode_table(
      read_in_child(file, key, [&](const Reader& reader, const OpenTable& open) {
        return wire::encode_table(read_frame(reader, open, file));
      }));
}

Table parse_table_hdf5(std::string_view bytes, const fs::path& file_for_messages,
                       const std::string& key) {
  if (bytes.empty()) throw Error(fmt::format("{} is empty (0 bytes)", file_for_messages.string()));
  const std::lock_guard lock(hdf5::library_mutex());
  const hdf5::QuietErrors quiet;
  const OpenTable open = open_image(bytes, file_for_messages, key);
  const Source source{open.file.get(), bytes.size(), file_for_messages};
  const Reader reader(source, open.group.get(), open.key);
  return read_frame(reader, open, file_for_messages);
}

}  // namespace labpose::projects
