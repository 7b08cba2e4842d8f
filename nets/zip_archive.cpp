// ZipArchive over libzip: every libzip failure becomes an Error naming the archive and the entry.
#include "nets/zip_archive.hpp"

#include <fmt/core.h>
#include <zip.h>
#include <zlib.h>

#include <algorithm>
#include <memory>
#include <system_error>
#include <vector>

#include "core/error.hpp"
#include "core/printable.hpp"

namespace labpose::nets {
namespace {

constexpr const char* kDamagedHint =
    "the file may be truncated or damaged; download or copy it again";

std::string libzip_message(int code) {
  zip_error_t error;
  zip_error_init_with_code(&error, code);
  std::string text = zip_error_strerror(&error);
  zip_error_fini(&error);
  return text;
}

std::string archive_message(zip* archive) {
  return zip_error_strerror(zip_get_error(archive));
}

// What read() sets aside before reading, at most: the declared size, but no more than the archive's
// own size or this, whichever is larger. A deflated entry may hold more than its archive and grows
// by doubling as its bytes come.
constexpr std::uint64_t kReserveAtLeast = std::uint64_t{1} << 20;

// Open files are checked for consistency (central directory against local headers).
constexpr int kOpenFlags = ZIP_RDONLY | ZIP_CHECKCONS;

// How messages name an entry of the archive `archive`.
std::string entry_place(const std::string& archive, const std::string& entry) {
  return fmt::format("{}: entry \"{}\"", archive, printable(entry, 200));
}

Error larger_than_accepted(const std::string& place, std::uint64_t declared,
                           std::uint64_t max_bytes) {
  return Error(fmt::format("{} declares {} bytes, more than the {} this reader accepts", place,
                           declared, max_bytes),
               kDamagedHint);
}

struct EntryCloser {
  void operator()(zip_file_t* file) const { zip_fclose(file); }
};

}  // namespace

ZipArchive::ZipArchive(const std::filesystem::path& file) : name_(file.string()) {
  std::error_code error;
  archive_bytes_ = std::filesystem::file_size(file, error);  // 0 when unknown: libzip says why
  int code = 0;
  archive_ = zip_open(name_.c_str(), kOpenFlags, &code);
  if (archive_ == nullptr) {
    throw Error(fmt::format("{} is not a readable zip archive ({})", name_, libzip_message(code)),
                kDamagedHint);
  }
}

ZipArchive::ZipArchive(std::string_view bytes, std::string name, CrcCheck crc)
    : name_(std::move(name)), archive_bytes_(bytes.size()), crc_(crc) {
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* source = zip_source_buffer_create(bytes.data(), bytes.size(), 0, &error);
  if (source != nullptr) {
    archive_ = zip_open_from_source(source, kOpenFlags, &error);
    if (archive_ == nullptr) zip_source_free(source);  // not taken over when opening fails
  }
  if (archive_ == nullptr) {
    const std::string why = zip_error_strerror(&error);
    zip_error_fini(&error);
    throw Error(fmt::format("{} is not a readable zip archive ({})", name_, why), kDamagedHint);
  }
  zip_error_fini(&error);
  stored_ = stored_zip_entries(bytes);
}

ZipArchive::~ZipArchive() {
  zip_discard(archive_);  // read-only: nothing to write back
}

std::vector<std::string> ZipArchive::entry_names() const {
  std::vector<std::string> names;
  const zip_int64_t count = zip_get_num_entries(archive_, 0);
  for (zip_int64_t index = 0; index < count; ++index) {
    const char* entry = zip_get_name(archive_, static_cast<zip_uint64_t>(index), ZIP_FL_ENC_RAW);
    if (entry == nullptr) {
      throw Error(fmt::format("{}: cannot read the name of entry {} ({})", name_, index,
                              archive_message(archive_)),
                  kDamagedHint);
    }
    names.emplace_back(entry);
  }
  return names;
}

bool ZipArchive::contains(const std::string& entry) const {
  return zip_name_locate(archive_, entry.c_str(), ZIP_FL_ENC_RAW) >= 0;
}

std::string ZipArchive::read(const std::string& entry, std::uint64_t max_bytes) const {
  const std::string place = entry_place(name_, entry);
  const zip_int64_t index = zip_name_locate(archive_, entry.c_str(), ZIP_FL_ENC_RAW);
  if (index < 0) throw Error(fmt::format("{} is missing", place), kDamagedHint);
  zip_stat_t stat;
  zip_stat_init(&stat);
  if (zip_stat_index(archive_, static_cast<zip_uint64_t>(index), 0, &stat) != 0 ||
      (stat.valid & ZIP_STAT_SIZE) == 0) {
    throw Error(fmt::format("{} cannot be examined ({})", place, archive_message(archive_)),
                kDamagedHint);
  }
  if (stat.size > max_bytes) throw larger_than_accepted(place, stat.size, max_bytes);
  const std::unique_ptr<zip_file_t, EntryCloser> file(
      zip_fopen_index(archive_, static_cast<zip_uint64_t>(index), 0));
  if (!file) {
    throw Error(fmt::format("{} cannot be opened ({})", place, archive_message(archive_)),
                kDamagedHint);
  }
  // The declared size is only a header field: a small file may declare gigabytes, so memory is set
  // aside up to the archive's own size and then grows with what is really read. The bytes go
  // straight into the content (no chunk in between), and reading to the end is what makes libzip
  // check the CRC.
  std::string content(
      static_cast<std::size_t>(std::min(stat.size, std::max(archive_bytes_, kReserveAtLeast))),
      '\0');
  std::size_t filled = 0;
  const auto read_failed = [&] {
    return Error(fmt::format("{} cannot be read ({})", place,
                             zip_error_strerror(zip_file_get_error(file.get()))),
                 kDamagedHint);
  };
  for (;;) {
    if (filled == content.size()) {
      if (content.size() == stat.size) break;
      content.resize(static_cast<std::size_t>(
          std::min<std::uint64_t>(stat.size, std::max<std::uint64_t>(2 * content.size(), 1))));
    }
    const zip_int64_t got = zip_fread(file.get(), content.data() + filled, content.size() - filled);
    if (got < 0) throw read_failed();
    if (got == 0) break;
    filled += static_cast<std::size_t>(got);
  }
  if (filled == stat.size) {
    char beyond = 0;  // the end must come at the declared size
    const zip_int64_t more = zip_fread(file.get(), &beyond, 1);
    if (more < 0) throw read_failed();
    if (more > 0) {
      throw Error(fmt::format("{} holds more than the {} bytes it declares", place, stat.size),
                  kDamagedHint);
    }
  } else {
    throw Error(fmt::format("{} holds {} bytes but declares {}", place, filled, stat.size),
                kDamagedHint);
  }
  return content;
}

std::string_view ZipArchive::read_view(const std::string& entry, std::string& copy,
                                       std::uint64_t max_bytes) const {
  const auto stored = stored_.find(entry);
  if (stored == stored_.end()) {
    copy = read(entry, max_bytes);
    return copy;
  }
  const std::string place = entry_place(name_, entry);
  const std::string_view bytes = stored->second.bytes;
  if (bytes.size() > max_bytes) throw larger_than_accepted(place, bytes.size(), max_bytes);
  if (crc_ == CrcCheck::skip_digest_verified) return bytes;
  // The CRC-32 that libzip checks when it copies an entry.
  if (crc32_z(0L, reinterpret_cast<const Bytef*>(bytes.data()), bytes.size()) !=
      stored->second.crc32) {
    throw Error(fmt::format("{} cannot be read (CRC error)", place), kDamagedHint);
  }
  return bytes;
}

}  // namespace labpose::nets
