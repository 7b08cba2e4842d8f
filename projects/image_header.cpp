// PNG: the IHDR chunk right after the signature. JPEG: the first start-of-frame marker.
#include "projects/image_header.hpp"

#include <array>
#include <cstdint>
#include <fstream>

namespace labpose::projects {
namespace {

std::uint32_t big_endian(const unsigned char* bytes, int count) {
  std::uint32_t value = 0;
  for (int i = 0; i < count; ++i) value = (value << 8) | bytes[i];
  return value;
}

std::optional<ImageSize> jpeg_size(std::ifstream& in) {
  unsigned char marker[4];
  in.seekg(2);
  while (in.read(reinterpret_cast<char*>(marker), 4)) {
    if (marker[0] != 0xFF) return std::nullopt;
    const int type = marker[1];
    const std::uint32_t length = big_endian(marker + 2, 2);
    const bool start_of_frame =
        type >= 0xC0 && type <= 0xCF && type != 0xC4 && type != 0xC8 && type != 0xCC;
    if (start_of_frame) {
      unsigned char frame[5];
      if (!in.read(reinterpret_cast<char*>(frame), 5)) return std::nullopt;
      return ImageSize{static_cast<int>(big_endian(frame + 3, 2)),
                       static_cast<int>(big_endian(frame + 1, 2))};
    }
    if (length < 2) return std::nullopt;
    in.seekg(length - 2, std::ios::cur);
  }
  return std::nullopt;
}

}  // namespace

std::optional<ImageSize> read_image_size(const std::filesystem::path& image) {
  std::ifstream in(image, std::ios::binary);
  std::array<unsigned char, 24> head{};
  if (!in.read(reinterpret_cast<char*>(head.data()), head.size())) return std::nullopt;
  static constexpr std::array<unsigned char, 8> kPng = {0x89, 'P',  'N',  'G',
                                                        '\r', '\n', 0x1A, '\n'};
  if (std::equal(kPng.begin(), kPng.end(), head.begin())) {
    if (head[12] != 'I' || head[13] != 'H' || head[14] != 'D' || head[15] != 'R')
      return std::nullopt;
    return ImageSize{static_cast<int>(big_endian(&head[16], 4)),
                     static_cast<int>(big_endian(&head[20], 4))};
  }
  if (head[0] == 0xFF && head[1] == 0xD8) return jpeg_size(in);
  return std::nullopt;
}

}  // namespace labpose::projects
