// Fuzz harness for the PyTorch checkpoint reader (parse_torch_checkpoint, what
// read_torch_checkpoint runs on a file's bytes; through it the zip wrapper and the restricted
// unpickler): any bytes give a state dict or an Error, never a crash, a hang, a read outside the
// input or an allocation far beyond the file's size. Tensors read are sized by their shapes and
// finite.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/error.hpp"
#include "nets/torch_checkpoint.hpp"
#include "tensor_checks.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace nets = labpose::nets;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  nets::TorchCheckpoint checkpoint;
  try {
    checkpoint = nets::parse_torch_checkpoint(bytes, "fuzz.pth");
  } catch (const labpose::Error&) {
    return 0;  // refused with a message: what a bad file must get
  }
  if (checkpoint.tensors.empty() && checkpoint.skipped.empty()) __builtin_trap();
  if (checkpoint.format != "zip" && checkpoint.format != "legacy" && checkpoint.format != "tar")
    __builtin_trap();
  for (const auto& [name, tensor] : checkpoint.tensors) {
    labpose::fuzz::trap_unless_sized_by_shape(tensor.shape, tensor.values);
    labpose::fuzz::trap_unless_finite(tensor.values);
    if (name.starts_with("module.")) __builtin_trap();
    if (std::find(checkpoint.skipped.begin(), checkpoint.skipped.end(), name) !=
        checkpoint.skipped.end())
      __builtin_trap();
  }
  return 0;
}
