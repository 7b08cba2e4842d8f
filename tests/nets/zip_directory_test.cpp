// The stored entries of zip archives in memory, read in place: archives written by Python's
// zipfile (stored and deflated entries, ZIP64 records, an archive comment), their entries found
// where they lie and checked as libzip checks a copy.
#include "nets/zip_directory.hpp"

#include <gtest/gtest.h>
#include <zlib.h>

#include "core/atomic_file.hpp"
#include "nets/zip_archive.hpp"
#include "tests/support/test_support.hpp"

namespace labpose::nets {
namespace {
namespace fs = std::filesystem;

// An archive written by /usr/bin/python3's zipfile: "stored.bin" (1000 bytes, stored),
// "deflated.txt" (deflated), "big/stored64.bin" (stored), and a comment after the directory. With
// `zip64`, as torch.save writes its archives: the last entry's local header holds ZIP64 sizes, and
// the directory is found through ZIP64 end records (the classic one saying "see ZIP64").
std::string python_archive(const fs::path& dir, bool zip64) {
  const fs::path file = dir / (zip64 ? "zip64.zip" : "plain.zip");
  const std::string script =
      "import sys, zipfile\n"
      "with zipfile.ZipFile(sys.argv[1], 'w') as z:\n"
      "    z.writestr('stored.bin', bytes(i % 251 for i in range(1000)), zipfile.ZIP_STORED)\n"
      "    z.writestr('deflated.txt', b'mouse ' * 500, zipfile.ZIP_DEFLATED)\n"
      "    with z.open('big/stored64.bin', 'w', force_zip64=sys.argv[2] == '1') as f:\n"
      "        f.write(bytes(i % 13 for i in range(4096)))\n"
      "    z.comment = b'written by the test'\n"
      "if sys.argv[2] == '1':\n"
      "    import struct\n"
      "    data = open(sys.argv[1], 'rb').read()\n"
      "    end = data.rfind(b'PK\\x05\\x06')\n"
      "    count, size, offset = struct.unpack('<HII', data[end + 10:end + 20])\n"
      "    end64 = struct.pack('<IQHHIIQQQQ', 0x06064b50, 44, 45, 45, 0, 0, count, count, size, "
      "offset)\n"
      "    locator = struct.pack('<IIQI', 0x07064b50, 0, end, 1)\n"
      "    classic = struct.pack('<IHHHHIIH', 0x06054b50, 0, 0, 0xffff, 0xffff, 0xffffffff,\n"
      "                          0xffffffff, len(z.comment)) + z.comment\n"
      "    open(sys.argv[1], 'wb').write(data[:end] + end64 + locator + classic)\n";
  testing::write_text(dir / "write.py", script);
  const auto result =
      testing::run("/usr/bin/python3 " + testing::shell_quote((dir / "write.py").string()) + " " +
                   testing::shell_quote(file.string()) + (zip64 ? " 1" : " 0"));
  EXPECT_EQ(result.exit_code, 0) << result.output;
  return read_file(file);
}

std::uint32_t crc_of(std::string_view bytes) {
  return static_cast<std::uint32_t>(
      crc32_z(0, reinterpret_cast<const Bytef*>(bytes.data()), bytes.size()));
}

bool inside(std::string_view part, std::string_view whole) {
  return part.data() >= whole.data() && part.data() + part.size() <= whole.data() + whole.size();
}

TEST(ZipDirectory, FindsStoredEntriesInPlaceThroughClassicAndZip64Records) {
  const testing::TempDir dir;
  for (const bool zip64 : {false, true}) {
    const std::string archive = python_archive(dir.path(), zip64);
    const auto stored = stored_zip_entries(archive);
    ASSERT_EQ(stored.size(), 2U) << "zip64 " << zip64;
    const StoredZipEntry& small = stored.at("stored.bin");
    ASSERT_EQ(small.bytes.size(), 1000U);
    EXPECT_EQ(static_cast<unsigned char>(small.bytes[300]), 300U % 251U);
    EXPECT_EQ(small.crc32, crc_of(small.bytes));
    EXPECT_TRUE(inside(small.bytes, archive));
    const StoredZipEntry& big = stored.at("big/stored64.bin");
    ASSERT_EQ(big.bytes.size(), 4096U);
    EXPECT_EQ(static_cast<unsigned char>(big.bytes[4095]), 4095U % 13U);
    EXPECT_EQ(big.crc32, crc_of(big.bytes));
    EXPECT_FALSE(stored.contains("deflated.txt")) << "deflated entries are copied through libzip";

    // Through ZipArchive: the same content as a copy, in place where stored.
    const ZipArchive opened(archive, "archive.zip");
    std::string copy;
    const std::string_view view = opened.read_view("stored.bin", copy);
    EXPECT_TRUE(inside(view, archive));
    EXPECT_TRUE(copy.empty());
    EXPECT_EQ(view, opened.read("stored.bin"));
    const std::string_view deflated = opened.read_view("deflated.txt", copy);
    EXPECT_EQ(deflated.data(), copy.data());
    EXPECT_EQ(deflated.size(), 3000U);
    EXPECT_TRUE(testing::contains(
        testing::error_text([&] { opened.read_view("stored.bin", copy, 999); }),
        "archive.zip: entry \"stored.bin\" declares 1000 bytes, more than the 999 this reader "
        "accepts"));
  }
}

TEST(ZipDirectory, AChangedStoredByteFailsItsCrcAndDamagedDirectoriesPlaceNothing) {
  const testing::TempDir dir;
  const std::string archive = python_archive(dir.path(), false);
  const std::size_t at = static_cast<std::size_t>(
      stored_zip_entries(archive).at("stored.bin").bytes.data() - archive.data());
  std::string changed = archive;
  changed[at + 10] = static_cast<char>(changed[at + 10] ^ 1);
  const ZipArchive opened(changed, "changed.zip");
  std::string copy;
  EXPECT_TRUE(testing::contains(testing::error_text([&] { opened.read_view("stored.bin", copy); }),
                                "changed.zip: entry \"stored.bin\" cannot be read (CRC error)"));
  // Bytes whose SHA-256 was checked against a published digest: the CRC is not computed again.
  const ZipArchive verified(changed, "verified.zip", CrcCheck::skip_digest_verified);
  EXPECT_EQ(verified.read_view("stored.bin", copy).size(), 1000U);
  // Cut anywhere, or its directory's offset pointed elsewhere: nothing is placed, nothing read
  // out of bounds (libzip then decides what can be read).
  for (std::size_t size = 0; size < archive.size(); size += 7) {
    EXPECT_TRUE(stored_zip_entries(std::string_view(archive).substr(0, size)).empty()) << size;
  }
  std::string moved = archive;
  const std::size_t end = moved.rfind("PK\x05\x06");
  ASSERT_NE(end, std::string::npos);
  moved[end + 16] = static_cast<char>(moved[end + 16] + 3);
  EXPECT_TRUE(stored_zip_entries(moved).empty());
}

}  // namespace
}  // namespace labpose::nets
