// tar members: 512-byte headers (name, octal size, checksum, type), each followed by its data
// padded to 512 bytes, until a block of zeros or the end.
#include "nets/tar_archive.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cstdint>
#include <optional>

#include "core/error.hpp"
#include "core/printable.hpp"

namespace labpose::nets {
namespace {

constexpr std::size_t kBlock = 512;
constexpr const char* kDamagedHint =
    "the file may be truncated or damaged; download or copy it again";

// An octal field (NUL- or space-terminated), or nullopt when it is not one.
std::optional<std::uint64_t> octal(std::string_view field) {
  std::uint64_t value = 0;
  bool any = false;
  for (const char digit : field) {
    if (digit == '\0' || digit == ' ') {
      if (any) break;
      continue;
    }
    if (digit < '0' || digit > '7' || value > (std::uint64_t{1} << 60)) return std::nullopt;
    value = value * 8 + static_cast<std::uint64_t>(digit - '0');
    any = true;
  }
  return any ? std::optional(value) : std::nullopt;
}

bool checksum_matches(std::string_view header) {
  const auto stored = octal(header.substr(148, 8));
  if (!stored) return false;
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < kBlock; ++i)
    sum += i >= 148 && i < 156 ? std::uint64_t{' '} : static_cast<unsigned char>(header[i]);
  return sum == *stored;
}

std::string field_text(std::string_view field) {
  return std::string(field.substr(0, std::min(field.find('\0'), field.size())));
}

}  // namespace

bool looks_like_tar(std::string_view bytes) {
  return bytes.size() >= kBlock && checksum_matches(bytes.substr(0, kBlock));
}

std::map<std::string, std::string_view> tar_members(std::string_view bytes,
                                                    const std::string& name) {
  std::map<std::string, std::string_view> members;
  std::size_t at = 0;
  while (bytes.size() - at >= kBlock) {
    const std::string_view header = bytes.substr(at, kBlock);
    if (std::all_of(header.begin(), header.end(), [](char byte) { return byte == '\0'; })) break;
    const auto bad = [&](const std::string& what) {
      return Error(fmt::format("{}: byte {}: {}", name, at, what), kDamagedHint);
    };
    if (!checksum_matches(header)) throw bad("a tar header with a wrong checksum");
    const auto size = octal(header.substr(124, 12));
    if (!size) throw bad("a tar header without a valid size");
    const std::size_t data = at + kBlock;
    if (*size > bytes.size() - data) {
      throw bad(fmt::format("a tar member of {} bytes, but only {} bytes follow", *size,
                            bytes.size() - data));
    }
    std::string member = field_text(header.substr(0, 100));
    if (header.substr(257, 5) == "ustar" && header[345] != '\0')
      member = field_text(header.substr(345, 155)).append("/").append(member);
    const char type = header[156];
    if (type == '0' || type == '\0') {
      if (!members.emplace(member, bytes.substr(data, static_cast<std::size_t>(*size))).second)
        throw bad(fmt::format("the tar member \"{}\" appears twice", printable(member, 80)));
    }
    // Directories, links and pax headers ('x', 'g') carry nothing a checkpoint needs.
    const std::uint64_t padded = (*size + kBlock - 1) / kBlock * kBlock;
    if (padded > bytes.size() - data) break;
    at = data + static_cast<std::size_t>(padded);
  }
  return members;
}

}  // namespace labpose::nets
