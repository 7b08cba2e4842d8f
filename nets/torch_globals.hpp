// The Python globals a PyTorch state dict may name, and torch's element types: the allowlist of the
// restricted unpickler (collections.OrderedDict, torch's tensor and parameter rebuild functions,
// storage types, dtypes, the tensor types of torch < 0.4). Not a model of torch: everything else is
// refused by name.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace labpose::nets {

/// Element types of torch storages and tensors, as far as a checkpoint reader cares.
enum class TorchDtype {
  float32,
  float16,
  bfloat16,
  float64,
  int64,
  int32,
  int16,
  int8,
  uint8,
  boolean,
  other  // complex, quantized, float8, unsigned 16-64 bits: never converted
};

/// Bytes per element of `dtype` (0 for `other`).
std::size_t dtype_size(TorchDtype dtype);
/// True for the floating types read as float32.
bool is_floating(TorchDtype dtype);
/// "float32", "int64", ... for messages.
const char* dtype_name(TorchDtype dtype);

/// What an allowed global is: a function REDUCE may "call", a storage type, a dtype, or a tensor
/// type (torch.FloatTensor: the tar format of torch < 0.4 names them).
enum class GlobalRole { function, storage_type, dtype, tensor_type };
struct AllowedGlobal {
  GlobalRole role = GlobalRole::function;
  TorchDtype dtype = TorchDtype::other;  // storage types, dtypes and tensor types
};

/// The allowed global `module`.`name`, or nullopt for every other one.
std::optional<AllowedGlobal> allowed_global(std::string_view module, std::string_view name);

}  // namespace labpose::nets
