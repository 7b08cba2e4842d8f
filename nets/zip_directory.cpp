// The zip format's end of central directory (with its ZIP64 form), the central directory's file
// headers (with their ZIP64 extra field) and the local headers, as PKWARE's APPNOTE describes
// them. Every offset is checked against the archive's size before it is read.
#include "nets/zip_directory.hpp"

#include <cstring>
#include <optional>

namespace labpose::nets {
namespace {

constexpr std::uint32_t kEndSignature = 0x06054b50;
constexpr std::uint32_t kZip64EndSignature = 0x06064b50;
constexpr std::uint32_t kZip64LocatorSignature = 0x07064b50;
constexpr std::uint32_t kCentralSignature = 0x02014b50;
constexpr std::uint32_t kLocalSignature = 0x04034b50;
constexpr std::size_t kEndBytes = 22, kLocatorBytes = 20, kZip64EndBytes = 56;
constexpr std::size_t kCentralBytes = 46, kLocalBytes = 30;
constexpr std::uint32_t kInZip64 = 0xffffffff;
constexpr std::uint16_t kZip64ExtraId = 0x0001;

// Little-endian fields at an offset checked by the caller.
class Fields {
 public:
  explicit Fields(std::string_view bytes) : bytes_(bytes) {}
  bool has(std::uint64_t at, std::uint64_t count) const {
    return at <= bytes_.size() && count <= bytes_.size() - at;
  }
  template <typename T>
  T get(std::uint64_t at) const {
    T value = 0;
    for (std::size_t byte = 0; byte < sizeof(T); ++byte) {
      value = static_cast<T>(
          value | static_cast<T>(static_cast<T>(static_cast<unsigned char>(bytes_[at + byte]))
                                 << (8 * byte)));
    }
    return value;
  }
  std::string_view text(std::uint64_t at, std::uint64_t count) const {
    return bytes_.substr(at, count);
  }

 private:
  std::string_view bytes_;
};

struct Directory {
  std::uint64_t entries = 0, offset = 0, size = 0;
};

// The central directory's place, from the end record (searched backwards past a comment).
std::optional<Directory> find_directory(const Fields& fields, std::uint64_t total) {
  if (total < kEndBytes) return std::nullopt;
  const std::uint64_t lowest = total > kEndBytes + 0xffff ? total - kEndBytes - 0xffff : 0;
  for (std::uint64_t at = total - kEndBytes;; --at) {
    if (fields.get<std::uint32_t>(at) == kEndSignature &&
        at + kEndBytes + fields.get<std::uint16_t>(at + 20) == total) {
      if (fields.get<std::uint16_t>(at + 4) != 0 || fields.get<std::uint16_t>(at + 6) != 0) {
        return std::nullopt;  // spans disks
      }
      Directory directory{fields.get<std::uint16_t>(at + 10), fields.get<std::uint32_t>(at + 16),
                          fields.get<std::uint32_t>(at + 12)};
      const bool zip64 =
          directory.entries == 0xffff || directory.offset == kInZip64 || directory.size == kInZip64;
      if (!zip64) return directory;
      if (at < kLocatorBytes ||
          fields.get<std::uint32_t>(at - kLocatorBytes) != kZip64LocatorSignature) {
        return std::nullopt;
      }
      const auto end64 = fields.get<std::uint64_t>(at - kLocatorBytes + 8);
      if (!fields.has(end64, kZip64EndBytes) ||
          fields.get<std::uint32_t>(end64) != kZip64EndSignature) {
        return std::nullopt;
      }
      return Directory{fields.get<std::uint64_t>(end64 + 32), fields.get<std::uint64_t>(end64 + 48),
                       fields.get<std::uint64_t>(end64 + 40)};
    }
    if (at == lowest) return std::nullopt;
  }
}

// The ZIP64 extra field's 64-bit sizes and offset, each present only where its 32-bit field says
// so, in APPNOTE's order.
bool read_zip64_extra(const Fields& fields, std::uint64_t extra, std::uint64_t extra_size,
                      std::uint64_t& size, std::uint64_t& compressed, std::uint64_t& local) {
  for (std::uint64_t at = extra; at + 4 <= extra + extra_size;) {
    const auto id = fields.get<std::uint16_t>(at);
    const auto length = fields.get<std::uint16_t>(at + 2);
    if (at + 4 + length > extra + extra_size) return false;
    if (id == kZip64ExtraId) {
      std::uint64_t field = at + 4;
      for (std::uint64_t* value : {&size, &compressed, &local}) {
        if (*value != kInZip64) continue;
        if (field + 8 > at + 4 + length) return false;
        *value = fields.get<std::uint64_t>(field);
        field += 8;
      }
      return true;
    }
    at += 4 + length;
  }
  return size != kInZip64 && compressed != kInZip64 && local != kInZip64;
}

}  // namespace

std::map<std::string, StoredZipEntry, std::less<>> stored_zip_entries(std::string_view archive) {
  std::map<std::string, StoredZipEntry, std::less<>> stored;
  const Fields fields(archive);
  const std::optional<Directory> directory = find_directory(fields, archive.size());
  if (!directory || !fields.has(directory->offset, directory->size)) return {};
  std::uint64_t at = directory->offset;
  const std::uint64_t end = directory->offset + directory->size;
  for (std::uint64_t index = 0; index < directory->entries; ++index) {
    if (at + kCentralBytes > end || fields.get<std::uint32_t>(at) != kCentralSignature) return {};
    const auto flags = fields.get<std::uint16_t>(at + 8);
    const auto method = fields.get<std::uint16_t>(at + 10);
    const auto crc = fields.get<std::uint32_t>(at + 16);
    std::uint64_t compressed = fields.get<std::uint32_t>(at + 20);
    std::uint64_t size = fields.get<std::uint32_t>(at + 24);
    const std::uint64_t name_size = fields.get<std::uint16_t>(at + 28);
    const std::uint64_t extra_size = fields.get<std::uint16_t>(at + 30);
    const std::uint64_t comment_size = fields.get<std::uint16_t>(at + 32);
    std::uint64_t local = fields.get<std::uint32_t>(at + 42);
    const std::uint64_t next = at + kCentralBytes + name_size + extra_size + comment_size;
    if (next > end) return {};
    const std::string_view name = fields.text(at + kCentralBytes, name_size);
    if (!read_zip64_extra(fields, at + kCentralBytes + name_size, extra_size, size, compressed,
                          local)) {
      return {};
    }
    at = next;
    const bool encrypted = (flags & 1) != 0;
    if (method != 0 || encrypted || compressed != size) continue;
    if (!fields.has(local, kLocalBytes) || fields.get<std::uint32_t>(local) != kLocalSignature ||
        fields.get<std::uint16_t>(local + 8) != 0 ||
        fields.get<std::uint16_t>(local + 26) != name_size ||
        fields.text(local + kLocalBytes, name_size) != name) {
      return {};
    }
    const std::uint64_t data =
        local + kLocalBytes + name_size + fields.get<std::uint16_t>(local + 28);
    if (!fields.has(data, size)) return {};
    stored.emplace(std::string(name), StoredZipEntry{fields.text(data, size), crc});
  }
  return stored;
}

}  // namespace labpose::nets
