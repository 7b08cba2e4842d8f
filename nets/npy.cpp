// .npy reading and writing.
#include "nets/npy.hpp"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <bit>
#include <cstring>
#include <set>
#include <string_view>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/printable.hpp"

namespace labpose::nets {

namespace {

// The header dictionary numpy writes, e.g. {'descr': '<f4', 'fortran_order': False, 'shape': (2,
// 3), }
struct NpyHeader {
  std::string descr;
  bool fortran_order = false;
  std::vector<std::int64_t> shape;
};

// Reads the header's Python literal: a dict of exactly descr (a string), fortran_order (True or
// False) and shape (a tuple of whole numbers). Not a Python parser: what numpy.save writes, with
// any spacing and either quote. `bad` makes the Error for a reason.
template <typename Bad>
NpyHeader parse_header(std::string_view text, const Bad& bad) {
  std::size_t at = 0;
  const auto skip_space = [&] {
    while (at < text.size() &&
           (text[at] == ' ' || text[at] == '\t' || text[at] == '\n' || text[at] == '\r')) {
      ++at;
    }
  };
  const auto next_is = [&](char c) {
    skip_space();
    if (at < text.size() && text[at] == c) {
      ++at;
      return true;
    }
    return false;
  };
  const auto expect = [&](char c, const char* where) {
    if (!next_is(c)) throw bad(fmt::format("its header dictionary lacks '{}' {}", c, where));
  };
  const auto read_string = [&](const char* what) {
    skip_space();
    const char quote = at < text.size() ? text[at] : '\0';
    if (quote != '\'' && quote != '"') throw bad(fmt::format("its header has no quoted {}", what));
    const std::size_t end = text.find(quote, at + 1);
    if (end == std::string_view::npos) throw bad(fmt::format("its header's {} is cut short", what));
    std::string value(text.substr(at + 1, end - at - 1));
    at = end + 1;
    return value;
  };
  const auto read_number = [&]() {
    skip_space();
    std::int64_t value = 0;
    const std::size_t first = at;
    while (at < text.size() && text[at] >= '0' && text[at] <= '9') {
      if (__builtin_mul_overflow(value, 10, &value) ||
          __builtin_add_overflow(value, text[at] - '0', &value)) {
        throw bad("its shape has a dimension too large to exist");
      }
      ++at;
    }
    if (at == first) throw bad("its shape is not a tuple of whole numbers");
    if (at < text.size() && text[at] == 'L') ++at;  // Python 2's long integers
    return value;
  };
  NpyHeader header;
  std::set<std::string> seen;
  expect('{', "at its start");
  while (!next_is('}')) {
    const std::string key = read_string("key");
    if (!seen.insert(key).second)
      throw bad(fmt::format("its header names '{}' twice", printable(key, 120)));
    expect(':', "after a key");
    skip_space();
    if (key == "descr") {
      if (at < text.size() && text[at] == '[')
        throw bad("it holds a structured array (several fields per element)");
      header.descr = read_string("descr");
    } else if (key == "fortran_order") {
      if (text.substr(at, 4) == "True") {
        header.fortran_order = true;
        at += 4;
      } else if (text.substr(at, 5) == "False") {
        at += 5;
      } else {
        throw bad("its fortran_order is neither True nor False");
      }
    } else if (key == "shape") {
      expect('(', "around the shape");
      while (!next_is(')')) {
        header.shape.push_back(read_number());
        if (!next_is(',')) {
          expect(')', "after the shape");
          break;
        }
      }
    } else {
      throw bad(fmt::format("its header has the unknown key '{}'", printable(key, 120)));
    }
    if (!next_is(',')) {
      expect('}', "at its end");
      break;
    }
  }
  skip_space();
  if (at != text.size()) throw bad("its header has text after the dictionary");
  for (const char* key : {"descr", "fortran_order", "shape"}) {
    if (seen.count(key) == 0) throw bad(fmt::format("its header has no '{}'", key));
  }
  return header;
}

std::size_t element_size_of(const std::string& descr) {
  if (descr == "<f4") return 4;
  if (descr == "<f8") return 8;
  if (descr == "|u1" || descr == "<u1") return 1;
  return 0;
}

}  // namespace

NpyArray read_npy(const std::filesystem::path& file) {
  return parse_npy(read_file(file), file.string());
}

NpyArray parse_npy(std::string_view bytes, const std::string& name) {
  const auto bad = [&](const std::string& what) {
    return Error(fmt::format("{} is not a NumPy .npy array labpose can read: {}", name, what),
                 "save it with numpy.save(path, numpy.ascontiguousarray(array, "
                 "dtype=numpy.float32))");
  };
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0)
    throw bad("it does not start with \\x93NUMPY");
  const int major = static_cast<unsigned char>(bytes[6]);
  std::size_t header_length = 0, header_start = 0;
  if (major == 1) {
    header_length = static_cast<unsigned char>(bytes[8]) |
                    (static_cast<std::size_t>(static_cast<unsigned char>(bytes[9])) << 8);
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) throw bad("the header is cut short");
    for (int i = 3; i >= 0; --i)
      header_length =
          (header_length << 8) | static_cast<unsigned char>(bytes[8 + static_cast<std::size_t>(i)]);
    header_start = 12;
  } else {
    throw bad(fmt::format("unknown format version {}", major));
  }
  if (header_length > bytes.size() - header_start) throw bad("the header is cut short");
  const NpyHeader header = parse_header(bytes.substr(header_start, header_length), bad);
  const std::size_t element_size = element_size_of(header.descr);
  if (element_size == 0) {
    const std::string shown = printable(header.descr, 120);
    throw bad(
        header.descr.starts_with('>')
            ? fmt::format("its values are big-endian ({}); labpose reads little-endian", shown)
            : fmt::format("dtype {} (expected float32 '<f4', float64 '<f8' or uint8 '|u1')",
                          shown));
  }
  if (header.fortran_order) throw bad("the array is in Fortran order");
  std::uint64_t elements = 1, data_bytes = 0;
  for (const std::int64_t dim : header.shape) {
    if (__builtin_mul_overflow(elements, static_cast<std::uint64_t>(dim), &elements))
      throw bad("its shape holds more values than can exist");
  }
  if (__builtin_mul_overflow(elements, element_size, &data_bytes))
    throw bad("its shape holds more values than can exist");
  const std::size_t data_start = header_start + header_length;
  const std::uint64_t available = bytes.size() - data_start;
  if (available != data_bytes) {
    throw bad(fmt::format("its shape ({}) needs {} bytes of data but the file has {}{}",
                          fmt::join(header.shape, ", "), data_bytes, available,
                          available < data_bytes ? " (it is cut short)" : ""));
  }
  NpyArray array;
  array.shape = header.shape;
  array.values.resize(static_cast<std::size_t>(elements));
  const char* data = bytes.data() + data_start;
  for (std::size_t i = 0; i < array.values.size(); ++i) {
    if (element_size == 4) {
      std::uint32_t bits;
      std::memcpy(&bits, data + 4 * i, 4);
      array.values[i] = std::bit_cast<float>(bits);
    } else if (element_size == 8) {
      std::uint64_t bits;
      std::memcpy(&bits, data + 8 * i, 8);
      array.values[i] = static_cast<float>(std::bit_cast<double>(bits));
    } else {
      array.values[i] = static_cast<unsigned char>(data[i]);
    }
  }
  return array;
}

std::string npy_bytes(const NpyArray& array) {
  std::string shape;
  for (std::size_t i = 0; i < array.shape.size(); ++i)
    shape += std::to_string(array.shape[i]) +
             (i + 1 < array.shape.size() || array.shape.size() == 1 ? "," : "");
  std::string header =
      fmt::format("{{'descr': '<f4', 'fortran_order': False, 'shape': ({}), }}", shape);
  // As numpy.save: version 1.0 has a 16-bit header length, 2.0 a 32-bit one; the data starts at a
  // multiple of 64 bytes.
  const bool wide = header.size() + 1 + 64 > 0xFFFF;
  const std::size_t prefix = wide ? 12 : 10;
  header.append(63 - (prefix + header.size()) % 64, ' ');
  header += '\n';
  std::string out = "\x93NUMPY";
  out += wide ? '\x02' : '\x01';
  out += '\x00';
  for (std::size_t i = 0; i < prefix - 8; ++i)
    out += static_cast<char>((header.size() >> (8 * i)) & 0xFF);
  out += header;
  out.append(reinterpret_cast<const char*>(array.values.data()),
             array.values.size() * sizeof(float));
  return out;
}

void write_npy(const NpyArray& array, const std::filesystem::path& file) {
  write_file_atomically(file, npy_bytes(array));
}

}  // namespace labpose::nets
