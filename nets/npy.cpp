// .npy reading and writing.
#include "nets/npy.hpp"

#include <fmt/core.h>

#include <bit>
#include <cstring>
#include <regex>

#include "core/atomic_file.hpp"
#include "core/error.hpp"

namespace labpose::nets {

NpyArray read_npy(const std::filesystem::path& file) {
  const std::string bytes = read_file(file);
  const auto bad = [&](const std::string& what) {
    return Error(
        fmt::format("{} is not a NumPy .npy array labpose can read: {}", file.string(), what),
        "save it with numpy.save(path, array.astype(numpy.float32)) in C order");
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
          (header_length << 8) | static_cast<unsigned char>(bytes[static_cast<std::size_t>(8 + i)]);
    header_start = 12;
  } else {
    throw bad(fmt::format("unknown format version {}", major));
  }
  if (header_start + header_length > bytes.size()) throw bad("the header is cut short");
  const std::string header = bytes.substr(header_start, header_length);
  std::smatch match;
  if (!std::regex_search(header, match, std::regex("'descr':\\s*'([^']*)'")))
    throw bad("no dtype in the header");
  const std::string descr = match[1].str();
  if (std::regex_search(header, std::regex("'fortran_order':\\s*True")))
    throw bad("the array is in Fortran order");
  if (!std::regex_search(header, match, std::regex("'shape':\\s*\\(([^)]*)\\)")))
    throw bad("no shape in the header");
  NpyArray array;
  std::int64_t elements = 1;
  const std::string dims = match[1].str();
  const std::regex number("\\d+");
  for (auto it = std::sregex_iterator(dims.begin(), dims.end(), number);
       it != std::sregex_iterator(); ++it) {
    array.shape.push_back(std::stoll(it->str()));
    elements *= array.shape.back();
  }
  std::size_t element_size = 0;
  if (descr == "<f4") {
    element_size = 4;
  } else if (descr == "<f8") {
    element_size = 8;
  } else if (descr == "|u1" || descr == "<u1") {
    element_size = 1;
  } else {
    throw bad(fmt::format("dtype {} (expected float32, float64 or uint8)", descr));
  }
  const std::size_t data_start = header_start + header_length;
  if (bytes.size() - data_start < static_cast<std::size_t>(elements) * element_size) {
    throw bad(fmt::format("it should hold {} values but is cut short", elements));
  }
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

void write_npy(const NpyArray& array, const std::filesystem::path& file) {
  std::string shape;
  for (std::size_t i = 0; i < array.shape.size(); ++i)
    shape += std::to_string(array.shape[i]) +
             (i + 1 < array.shape.size() || array.shape.size() == 1 ? "," : "");
  std::string header =
      fmt::format("{{'descr': '<f4', 'fortran_order': False, 'shape': ({}), }}", shape);
  header.append(64 - (10 + header.size() + 1) % 64, ' ');
  header += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xFF);
  out += static_cast<char>((header.size() >> 8) & 0xFF);
  out += header;
  out.append(reinterpret_cast<const char*>(array.values.data()),
             array.values.size() * sizeof(float));
  write_file_atomically(file, out);
}

}  // namespace labpose::nets
