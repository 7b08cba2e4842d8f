// Fuzz harness for the .npy reader (parse_npy, what read_npy runs on a file's bytes): any bytes
// give an array or an Error, never a crash, a hang or an allocation larger than the file. An array
// that was read has as many values as its shape says and reads back the same after writing
// (npy_bytes, what write_npy writes).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "core/error.hpp"
#include "nets/npy.hpp"
#include "tensor_checks.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace nets = labpose::nets;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  nets::NpyArray array;
  try {
    array = nets::parse_npy(bytes, "fuzz.npy");
  } catch (const labpose::Error&) {
    return 0;  // refused with a message: what a bad file must get
  }
  labpose::fuzz::trap_unless_sized_by_shape(array.shape, array.values);
  const nets::NpyArray again = nets::parse_npy(nets::npy_bytes(array), "round-trip.npy");
  if (again.shape != array.shape || again.values.size() != array.values.size() ||
      (!array.values.empty() && std::memcmp(again.values.data(), array.values.data(),
                                            array.values.size() * sizeof(float)) != 0)) {
    __builtin_trap();
  }
  return 0;
}
