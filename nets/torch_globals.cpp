// The allowlist of Python globals and torch's element types, as tables.
#include "nets/torch_globals.hpp"

#include <array>

namespace labpose::nets {
namespace {

struct DtypeFacts {
  TorchDtype dtype;
  const char* name;
  std::size_t size;
};
constexpr std::array kDtypeFacts = {
    DtypeFacts{TorchDtype::float32, "float32", 4},   DtypeFacts{TorchDtype::float16, "float16", 2},
    DtypeFacts{TorchDtype::bfloat16, "bfloat16", 2}, DtypeFacts{TorchDtype::float64, "float64", 8},
    DtypeFacts{TorchDtype::int64, "int64", 8},       DtypeFacts{TorchDtype::int32, "int32", 4},
    DtypeFacts{TorchDtype::int16, "int16", 2},       DtypeFacts{TorchDtype::int8, "int8", 1},
    DtypeFacts{TorchDtype::uint8, "uint8", 1},       DtypeFacts{TorchDtype::boolean, "bool", 1},
};

struct NamedDtype {
  std::string_view name;
  TorchDtype dtype;
};
// torch.<X>Storage (persistent ids of both formats; torch.storage.UntypedStorage in torch >= 2).
constexpr std::array kStorageTypes = {
    NamedDtype{"FloatStorage", TorchDtype::float32},
    NamedDtype{"HalfStorage", TorchDtype::float16},
    NamedDtype{"BFloat16Storage", TorchDtype::bfloat16},
    NamedDtype{"DoubleStorage", TorchDtype::float64},
    NamedDtype{"LongStorage", TorchDtype::int64},
    NamedDtype{"IntStorage", TorchDtype::int32},
    NamedDtype{"ShortStorage", TorchDtype::int16},
    NamedDtype{"CharStorage", TorchDtype::int8},
    NamedDtype{"ByteStorage", TorchDtype::uint8},
    NamedDtype{"BoolStorage", TorchDtype::boolean},
    NamedDtype{"UntypedStorage", TorchDtype::uint8},
};
// torch.<dtype> (what _rebuild_tensor_v3 names; dtypes pickle as globals).
constexpr std::array kDtypes = {
    NamedDtype{"float32", TorchDtype::float32},   NamedDtype{"float", TorchDtype::float32},
    NamedDtype{"float16", TorchDtype::float16},   NamedDtype{"half", TorchDtype::float16},
    NamedDtype{"bfloat16", TorchDtype::bfloat16}, NamedDtype{"float64", TorchDtype::float64},
    NamedDtype{"double", TorchDtype::float64},    NamedDtype{"int64", TorchDtype::int64},
    NamedDtype{"long", TorchDtype::int64},        NamedDtype{"int32", TorchDtype::int32},
    NamedDtype{"int", TorchDtype::int32},         NamedDtype{"int16", TorchDtype::int16},
    NamedDtype{"short", TorchDtype::int16},       NamedDtype{"int8", TorchDtype::int8},
    NamedDtype{"uint8", TorchDtype::uint8},       NamedDtype{"bool", TorchDtype::boolean},
    NamedDtype{"complex64", TorchDtype::other},   NamedDtype{"complex128", TorchDtype::other},
    NamedDtype{"uint16", TorchDtype::other},      NamedDtype{"uint32", TorchDtype::other},
    NamedDtype{"uint64", TorchDtype::other},      NamedDtype{"float8_e4m3fn", TorchDtype::other},
    NamedDtype{"float8_e5m2", TorchDtype::other},
};
// torch.<X>Tensor (the tar format's tensor records).
constexpr std::array kTensorTypes = {
    NamedDtype{"FloatTensor", TorchDtype::float32},  NamedDtype{"HalfTensor", TorchDtype::float16},
    NamedDtype{"DoubleTensor", TorchDtype::float64}, NamedDtype{"LongTensor", TorchDtype::int64},
    NamedDtype{"IntTensor", TorchDtype::int32},      NamedDtype{"ShortTensor", TorchDtype::int16},
    NamedDtype{"CharTensor", TorchDtype::int8},      NamedDtype{"ByteTensor", TorchDtype::uint8},
};
// The functions REDUCE may "call" (never called: the unpickler builds what each would return).
constexpr std::array<std::string_view, 5> kTorchUtilsFunctions = {
    "_rebuild_tensor", "_rebuild_tensor_v2", "_rebuild_tensor_v3", "_rebuild_parameter",
    "_rebuild_parameter_with_state"};

const DtypeFacts* facts(TorchDtype dtype) {
  for (const DtypeFacts& entry : kDtypeFacts)
    if (entry.dtype == dtype) return &entry;
  return nullptr;
}

}  // namespace

std::size_t dtype_size(TorchDtype dtype) {
  const DtypeFacts* entry = facts(dtype);
  return entry != nullptr ? entry->size : 0;
}

bool is_floating(TorchDtype dtype) {
  return dtype == TorchDtype::float32 || dtype == TorchDtype::float16 ||
         dtype == TorchDtype::bfloat16 || dtype == TorchDtype::float64;
}

const char* dtype_name(TorchDtype dtype) {
  const DtypeFacts* entry = facts(dtype);
  return entry != nullptr ? entry->name : "another type";
}

std::optional<AllowedGlobal> allowed_global(std::string_view module, std::string_view name) {
  if (module == "collections" && name == "OrderedDict") return AllowedGlobal{};
  if (module == "torch._utils") {
    for (const std::string_view function : kTorchUtilsFunctions)
      if (name == function) return AllowedGlobal{};
  }
  if (module == "torch" || module == "torch.storage") {
    for (const NamedDtype& storage : kStorageTypes)
      if (name == storage.name) return AllowedGlobal{GlobalRole::storage_type, storage.dtype};
  }
  if (module == "torch") {
    for (const NamedDtype& dtype : kDtypes)
      if (name == dtype.name) return AllowedGlobal{GlobalRole::dtype, dtype.dtype};
    for (const NamedDtype& tensor : kTensorTypes)
      if (name == tensor.name) return AllowedGlobal{GlobalRole::tensor_type, tensor.dtype};
  }
  return std::nullopt;
}

}  // namespace labpose::nets
