// The shared pieces of the checkpoint formats: tensors rebuilt from (storage, offset, size,
// stride) with every extent checked without overflow, and the state dict found in the pickle.
#include "nets/torch_checkpoint_parts.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

namespace labpose::nets {
namespace {

static_assert(std::endian::native == std::endian::little, "storages are read as little-endian");

// Tensors may hold at most this many values per byte of the file (plus a constant): views that
// repeat elements (stride 0) are legal in torch but would let a small file ask for any memory.
constexpr std::uint64_t kValuesPerFileByte = 4;
constexpr std::uint64_t kExtraValues = std::uint64_t{1} << 20;
// The smallest double that rounds to float infinity: FLT_MAX plus half a unit in the last place.
constexpr double kFloatRoundsToInfinity = 0x1.ffffffp127;

// The dict that holds the weights: the top-level one, or one under a training checkpoint's key.
const PickleValue& state_dict(const PickleValue& root) {
  const PickleValue* dict = &root;
  for (int depth = 0; depth < 3 && dict->kind == PickleKind::dict; ++depth) {
    const PickleValue* inner = nullptr;
    for (const char* key : {"state_dict", "model_state_dict", "model"}) {
      const PickleValue* found = dict_entry(*dict, key);
      if (found != nullptr && found->kind == PickleKind::dict && inner == nullptr) inner = found;
    }
    if (inner == nullptr) break;
    dict = inner;
  }
  return *dict;
}

// Whether the view reads its elements in C order without gaps (dims of size 1 have any stride).
bool c_contiguous(const TensorRecord& record) {
  std::int64_t expected = 1;
  for (std::size_t d = record.shape.size(); d-- > 0;) {
    if (record.shape[d] != 1 && record.stride[d] != expected) return false;
    expected *= record.shape[d];
  }
  return true;
}

// The values of `record` as float32, after checking its extent in `storage` (a view's bytes): in
// place where they are float32 in C order, else converted into a new block of `converted`.
std::span<const float> tensor_values(const TensorRecord& record, std::string_view storage,
                                     std::uint64_t elements, const std::string& place,
                                     std::deque<std::vector<float>>& converted) {
  const auto bad = [&](const std::string& what) {
    return Error(fmt::format("{} {}", place, what), kCheckpointDamagedHint);
  };
  const std::size_t size = dtype_size(record.dtype);
  const std::uint64_t available = storage.size() / size;
  if (elements == 0) return {};
  // The last element the view reads: offset + sum((size_d - 1) * stride_d).
  std::uint64_t last = static_cast<std::uint64_t>(record.offset);
  for (std::size_t d = 0; d < record.shape.size(); ++d) {
    std::uint64_t reach = 0;
    if (__builtin_mul_overflow(static_cast<std::uint64_t>(record.shape[d] - 1),
                               static_cast<std::uint64_t>(record.stride[d]), &reach) ||
        __builtin_add_overflow(last, reach, &last) ||
        last > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      throw bad("has sizes and strides that reach beyond any storage");
    }
  }
  if (last >= available) {
    throw bad(fmt::format("reads element {} of its storage, which holds {} {} elements", last,
                          available, dtype_name(record.dtype)));
  }
  const auto convert = [&](std::uint64_t index) -> float {
    const char* at = storage.data() + index * size;
    switch (record.dtype) {
      case TorchDtype::float32: {
        float value;
        std::memcpy(&value, at, 4);
        return value;
      }
      case TorchDtype::float64: {
        double value;
        std::memcpy(&value, at, 8);
        // Beyond float's range a conversion is undefined in C++; IEEE (and torch) round to
        // infinity.
        constexpr float kInfinity = std::numeric_limits<float>::infinity();
        if (std::abs(value) >= kFloatRoundsToInfinity) return value > 0 ? kInfinity : -kInfinity;
        return static_cast<float>(value);
      }
      case TorchDtype::float16:
      case TorchDtype::bfloat16: {
        std::uint16_t bits;
        std::memcpy(&bits, at, 2);
        return record.dtype == TorchDtype::float16
                   ? half_to_float(bits)
                   : std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
      }
      default:
        LABPOSE_ASSERT(false);
    }
    return 0.0F;
  };
  if (record.dtype == TorchDtype::float32 && c_contiguous(record)) {
    // What torch.save writes for a state dict (the extent was checked above). Its records start at
    // multiples of 64 bytes, so the values are used where they lie: no copy of 100 MB.
    const char* first = storage.data() + static_cast<std::uint64_t>(record.offset) * size;
    if (reinterpret_cast<std::uintptr_t>(first) % alignof(float) == 0)
      return {reinterpret_cast<const float*>(first), static_cast<std::size_t>(elements)};
    std::vector<float>& values = converted.emplace_back(static_cast<std::size_t>(elements));
    std::memcpy(values.data(), first, values.size() * sizeof(float));
    return values;
  }
  std::vector<float>& values = converted.emplace_back(static_cast<std::size_t>(elements));
  // Walks the multi-index in C order; `at` follows it through the strides.
  std::vector<std::int64_t> index(record.shape.size(), 0);
  std::uint64_t at = static_cast<std::uint64_t>(record.offset);
  for (float& value : values) {
    value = convert(at);
    for (std::size_t d = record.shape.size(); d-- > 0;) {
      if (++index[d] < record.shape[d]) {
        at += static_cast<std::uint64_t>(record.stride[d]);
        break;
      }
      at -= static_cast<std::uint64_t>(record.stride[d]) *
            static_cast<std::uint64_t>(record.shape[d] - 1);
      index[d] = 0;
    }
  }
  return values;
}

}  // namespace

const PickleValue* dict_entry(const PickleValue& dict, std::string_view key) {
  for (const auto& [name, value] : dict.entries)
    if (name->kind == PickleKind::text && name->text == key) return value;
  return nullptr;
}

// The state dict's tensors, read from storages that now all have their data.
TorchCheckpointView collect_state_dict(const PickleValue& root,
                                       std::shared_ptr<CheckpointHeld> held,
                                       std::uint64_t file_bytes, const std::string& file,
                                       std::string format) {
  const CheckpointStorages& storages = held->storages;
  TorchCheckpointView out;
  out.format = std::move(format);
  const PickleValue& dict = state_dict(root);
  std::uint64_t budget = file_bytes * kValuesPerFileByte + kExtraValues;
  bool any_tensor = false;
  for (const auto& [key, value] : dict.entries) {
    if (value->kind != PickleKind::tensor) continue;
    any_tensor = true;
    if (key->kind != PickleKind::text) {
      throw Error(fmt::format("{}: a tensor of the state dict is named by {}, not a string", file,
                              describe(*key)),
                  kCheckpointDamagedHint);
    }
    std::string name = key->text;
    while (name.rfind("module.", 0) == 0) name.erase(0, 7);  // DataParallel's prefix
    const std::string place = fmt::format("{}: tensor \"{}\"", file, printable(name, 120));
    if (out.tensors.contains(name) ||
        std::find(out.skipped.begin(), out.skipped.end(), name) != out.skipped.end()) {
      throw Error(fmt::format("{} appears twice in the state dict", place), kCheckpointDamagedHint);
    }
    const TensorRecord& record = value->tensor;
    if (!is_floating(record.dtype)) {
      out.skipped.push_back(name);
      continue;
    }
    std::uint64_t elements = 1;
    for (const std::int64_t dim : record.shape) {
      if (__builtin_mul_overflow(elements, static_cast<std::uint64_t>(dim), &elements))
        throw Error(fmt::format("{} has a shape too large to exist", place),
                    kCheckpointDamagedHint);
    }
    if (elements > budget) {
      throw Error(fmt::format("{} has {} elements, more than the file could hold", place, elements),
                  kCheckpointDamagedHint);
    }
    budget -= elements;
    const auto bytes = storages.bytes(record.storage);
    if (!bytes) {
      throw Error(fmt::format("{} lies in storage \"{}\", whose data the file lacks", place,
                              printable(storages.all()[record.storage].key, 80)),
                  kCheckpointDamagedHint);
    }
    TensorView tensor;
    tensor.shape = record.shape;
    tensor.values = tensor_values(record, *bytes, elements, place, held->converted);
    check_finite(tensor.values, file, printable(name, 120),
                 "weights that are not numbers come from a diverged training run or a damaged "
                 "file; use another checkpoint");
    out.tensors.emplace(std::move(name), std::move(tensor));
  }
  if (!any_tensor) {
    throw Error(fmt::format("{} holds no state dict: it holds {}", file,
                            dict.kind == PickleKind::tensor ? "a single tensor, without a name"
                                                            : describe(dict) + " and no tensors"),
                "labpose reads state dicts (names -> tensors), also under \"state_dict\", "
                "\"model_state_dict\" or \"model\"; re-save the weights with "
                "torch.save(model.state_dict(), file)");
  }
  out.held = std::move(held);
  return out;
}

// torch.save's sys_info dict (legacy and tar formats) says whether the data is little-endian.
void check_little_endian(const PickleValue& system, const std::string& name) {
  if (const PickleValue* little = dict_entry(system, "little_endian");
      little != nullptr && !(little->kind == PickleKind::boolean && little->boolean)) {
    throw Error(fmt::format("{}: the checkpoint was written on a big-endian machine; labpose reads "
                            "little-endian checkpoints only",
                            name),
                "load and re-save it with torch.save on a little-endian machine (x86, ARM)");
  }
}

// In the legacy and tar formats a storage's data follows its record: the element count (8 bytes,
// little-endian), then the elements. `where` names the file or member for messages.
std::uint64_t take_element_count(std::string_view bytes, std::size_t& at, const std::string& where,
                                 const std::string& key) {
  if (bytes.size() - at < 8) {
    throw Error(fmt::format("{}: byte {}: the data ends before storage \"{}\"", where, at,
                            printable(key, 80)),
                kCheckpointDamagedHint);
  }
  std::uint64_t count = 0;
  std::memcpy(&count, bytes.data() + at, 8);
  at += 8;
  return count;
}

void take_storage_data(CheckpointStorage& storage, std::string_view bytes, std::size_t& at,
                       const std::string& where) {
  const std::uint64_t size = storage.elements * dtype_size(storage.dtype);  // bounded when added
  if (size > bytes.size() - at) {
    throw Error(fmt::format("{}: byte {}: storage \"{}\" needs {} bytes but only {} are left",
                            where, at, printable(storage.key, 80), size, bytes.size() - at),
                kCheckpointDamagedHint);
  }
  storage.data = bytes.substr(at, static_cast<std::size_t>(size));
  at += static_cast<std::size_t>(size);
}

}  // namespace labpose::nets
