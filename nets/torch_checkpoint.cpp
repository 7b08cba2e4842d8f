// PyTorch checkpoints: the two container formats (zip, legacy sequential), storages by key, tensors
// rebuilt from (storage, offset, size, stride) with every extent checked without overflow, and the
// state dict found in what the pickle holds.
#include "nets/torch_checkpoint.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <optional>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/printable.hpp"
#include "nets/restricted_unpickler.hpp"
#include "nets/zip_archive.hpp"

namespace labpose::nets {
namespace {

static_assert(std::endian::native == std::endian::little, "storages are read as little-endian");

constexpr const char* kDamagedHint =
    "the file may be truncated, damaged or not a PyTorch checkpoint; re-save it with torch.save";
constexpr std::uint64_t kMaxPickleBytes = std::uint64_t{256} << 20;
// torch.save's first pickle in the legacy format: the integer 0x1950a86a20f9469cfc6c,
// little-endian.
constexpr std::string_view kLegacyMagic{"\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19", 10};
constexpr std::int64_t kLegacyProtocolVersion = 1001;
// Tensors may hold at most this many values per byte of the file (plus a constant): views that
// repeat elements (stride 0) are legal in torch but would let a small file ask for any memory.
constexpr std::uint64_t kValuesPerFileByte = 4;
constexpr std::uint64_t kExtraValues = std::uint64_t{1} << 20;

// A storage as a persistent id names it; a view (legacy format only) lies inside its root.
struct Storage {
  std::string key;
  TorchDtype dtype = TorchDtype::other;
  std::uint64_t elements = 0;
  std::optional<std::size_t> root;  // for a view: the root storage and where the view starts
  std::uint64_t root_offset = 0;    // in elements
  std::string owned;                // zip: the entry's bytes
  std::optional<std::string_view> data;
};

class Storages {
 public:
  explicit Storages(std::string file) : file_(std::move(file)) {}

  // The storage number of a persistent id: ('storage', type, key, location, numel) in the zip
  // format, ('storage', type, root_key, location, numel, view) in the legacy one.
  std::size_t from_id(const PickleValue& id, std::size_t offset, bool legacy) {
    const auto bad = [&](const std::string& what) {
      return Error(fmt::format("{}: byte {}: {}", file_, offset, what), kDamagedHint);
    };
    if (id.kind != PickleKind::tuple || id.items.empty() || id.items[0]->kind != PickleKind::text)
      throw bad(fmt::format("a persistent id is {}, not torch's storage tuple", describe(id)));
    if (id.items[0]->text == "module") {
      throw Error(fmt::format("{}: refuses to load: the checkpoint is a whole pickled model (a "
                              "Python class), not a state dict",
                              file_),
                  "load it in Python only if you trust it, and re-save its weights with "
                  "torch.save(model.state_dict(), file)");
    }
    const std::size_t expected = legacy ? 6 : 5;
    if (id.items[0]->text != "storage" || id.items.size() != expected ||
        id.items[1]->kind != PickleKind::global || id.items[2]->kind != PickleKind::text ||
        id.items[4]->kind != PickleKind::integer || id.items[4]->integer < 0 ||
        id.items[1]->role != GlobalRole::storage_type) {
      throw bad(
          fmt::format("a persistent id is {}, not torch's ('storage', type, key, location, "
                      "size{}) tuple",
                      describe(id), legacy ? ", view" : ""));
    }
    const TorchDtype dtype = id.items[1]->dtype;
    const std::size_t root =
        add(id.items[2]->text, dtype, static_cast<std::uint64_t>(id.items[4]->integer), bad);
    if (!legacy || id.items[5]->kind == PickleKind::none) return root;
    // A storage view: (view_key, offset, size) inside the root, in elements.
    const PickleValue& view = *id.items[5];
    if (view.kind != PickleKind::tuple || view.items.size() != 3 ||
        view.items[0]->kind != PickleKind::text || view.items[1]->kind != PickleKind::integer ||
        view.items[2]->kind != PickleKind::integer || view.items[1]->integer < 0 ||
        view.items[2]->integer < 0) {
      throw bad(fmt::format("a storage view is {}, not (key, offset, size)", describe(view)));
    }
    const auto view_offset = static_cast<std::uint64_t>(view.items[1]->integer);
    const auto view_elements = static_cast<std::uint64_t>(view.items[2]->integer);
    if (view_offset > storages_[root].elements ||
        view_elements > storages_[root].elements - view_offset) {
      throw bad(fmt::format("a storage view of elements [{}, +{}) lies outside its storage of {}",
                            view_offset, view_elements, storages_[root].elements));
    }
    const std::size_t index = add(view.items[0]->text, dtype, view_elements, bad);
    storages_[index].root = root;
    storages_[index].root_offset = view_offset;
    return index;
  }

  std::vector<Storage>& all() { return storages_; }
  const std::vector<Storage>& all() const { return storages_; }
  std::optional<std::size_t> find(const std::string& key) const {
    const auto found = by_key_.find(key);
    return found == by_key_.end() ? std::nullopt : std::optional(found->second);
  }

  // The bytes of storage `index` (a view's part of its root), or nullopt when it has no data yet.
  std::optional<std::string_view> bytes(std::size_t index) const {
    const Storage& storage = storages_[index];
    if (!storage.root) return storage.data;
    const auto root = bytes(*storage.root);
    if (!root) return std::nullopt;
    const std::size_t size = dtype_size(storage.dtype);
    return root->substr(static_cast<std::size_t>(storage.root_offset) * size,
                        static_cast<std::size_t>(storage.elements) * size);
  }

 private:
  template <typename Bad>
  std::size_t add(const std::string& key, TorchDtype dtype, std::uint64_t elements,
                  const Bad& bad) {
    if (const auto found = find(key)) {
      const Storage& storage = storages_[*found];
      if (storage.dtype != dtype || storage.elements != elements) {
        throw bad(
            fmt::format("storage \"{}\" is named again with another type or size ({} of {}, "
                        "then {} of {})",
                        printable(key, 80), storage.elements, dtype_name(storage.dtype), elements,
                        dtype_name(dtype)));
      }
      return *found;
    }
    if (dtype_size(dtype) != 0 && elements > (std::uint64_t{1} << 62) / dtype_size(dtype))
      throw bad(fmt::format("storage \"{}\" claims {} elements", printable(key, 80), elements));
    storages_.push_back({key, dtype, elements, std::nullopt, 0, {}, std::nullopt});
    by_key_.emplace(key, storages_.size() - 1);
    return storages_.size() - 1;
  }

  std::string file_;
  std::vector<Storage> storages_;
  std::map<std::string, std::size_t> by_key_;
};

bool starts_with(std::string_view bytes, std::string_view prefix) {
  return bytes.substr(0, prefix.size()) == prefix;
}

const PickleValue* entry(const PickleValue& dict, std::string_view key) {
  for (const auto& [name, value] : dict.entries)
    if (name->kind == PickleKind::text && name->text == key) return value;
  return nullptr;
}

// The dict that holds the weights: the top-level one, or one under a training checkpoint's key.
const PickleValue& state_dict(const PickleValue& root) {
  const PickleValue* dict = &root;
  for (int depth = 0; depth < 3 && dict->kind == PickleKind::dict; ++depth) {
    const PickleValue* inner = nullptr;
    for (const char* key : {"state_dict", "model_state_dict", "model"}) {
      const PickleValue* found = entry(*dict, key);
      if (found != nullptr && found->kind == PickleKind::dict && inner == nullptr) inner = found;
    }
    if (inner == nullptr) break;
    dict = inner;
  }
  return *dict;
}

// The values of `record` as float32, after checking its extent in `storage` (a view's bytes).
std::vector<float> tensor_values(const TensorRecord& record, std::string_view storage,
                                 std::uint64_t elements, const std::string& place) {
  const auto bad = [&](const std::string& what) {
    return Error(fmt::format("{} {}", place, what), kDamagedHint);
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
  std::vector<float> values(static_cast<std::size_t>(elements));
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

// The state dict's tensors, read from storages that now all have their data.
TorchCheckpoint collect(const PickleValue& root, const Storages& storages, std::uint64_t file_bytes,
                        const std::string& file, std::string format) {
  TorchCheckpoint out;
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
                  kDamagedHint);
    }
    std::string name = key->text;
    while (name.rfind("module.", 0) == 0) name.erase(0, 7);  // DataParallel's prefix
    const std::string place = fmt::format("{}: tensor \"{}\"", file, printable(name, 120));
    if (out.tensors.contains(name) ||
        std::find(out.skipped.begin(), out.skipped.end(), name) != out.skipped.end()) {
      throw Error(fmt::format("{} appears twice in the state dict", place), kDamagedHint);
    }
    const TensorRecord& record = value->tensor;
    if (!is_floating(record.dtype)) {
      out.skipped.push_back(name);
      continue;
    }
    std::uint64_t elements = 1;
    for (const std::int64_t dim : record.shape) {
      if (__builtin_mul_overflow(elements, static_cast<std::uint64_t>(dim), &elements))
        throw Error(fmt::format("{} has a shape too large to exist", place), kDamagedHint);
    }
    if (elements > budget) {
      throw Error(fmt::format("{} has {} elements, more than the file could hold", place, elements),
                  kDamagedHint);
    }
    budget -= elements;
    const auto bytes = storages.bytes(record.storage);
    if (!bytes) {
      throw Error(fmt::format("{} lies in storage \"{}\", whose data the file lacks", place,
                              printable(storages.all()[record.storage].key, 80)),
                  kDamagedHint);
    }
    HostTensor tensor;
    tensor.shape = record.shape;
    tensor.values = tensor_values(record, *bytes, elements, place);
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
  return out;
}

TorchCheckpoint parse_zip(std::string_view bytes, const std::string& name) {
  const ZipArchive archive(bytes, name);
  std::optional<std::string> folder;
  for (const std::string& entry_name : archive.entry_names()) {
    const std::size_t slash = entry_name.find('/');
    if (slash == std::string::npos || entry_name.substr(slash) != "/data.pkl") continue;
    if (folder) {
      throw Error(fmt::format("{} holds two checkpoints ({}/data.pkl and {})", name,
                              printable(*folder, 80), printable(entry_name, 80)),
                  kDamagedHint);
    }
    folder = entry_name.substr(0, slash);
  }
  if (!folder) {
    throw Error(fmt::format("{} is a zip archive but not a PyTorch checkpoint: it has no "
                            "<folder>/data.pkl",
                            name),
                "torch.save writes checkpoints with a data.pkl; was another file given?");
  }
  if (archive.contains(*folder + "/byteorder")) {
    const std::string order = archive.read(*folder + "/byteorder", 16);
    if (order != "little") {
      throw Error(fmt::format("{}: the checkpoint's byte order is \"{}\"; labpose reads "
                              "little-endian checkpoints only",
                              name, printable(order, 16)),
                  "load and re-save it with torch.save on a little-endian machine (x86, ARM)");
    }
  }
  const std::string pickle_name = *folder + "/data.pkl";
  const std::string pickle_bytes = archive.read(pickle_name, kMaxPickleBytes);
  Storages storages(fmt::format("{}: {}", name, pickle_name));
  const Pickle pickle = unpickle(pickle_bytes, 0, {name, pickle_name},
                                 [&](const PickleValue& id, std::size_t offset) {
                                   return storages.from_id(id, offset, false);
                                 });
  for (Storage& storage : storages.all()) {
    const std::string record = *folder + "/data/" + storage.key;
    const std::uint64_t expected = storage.elements * dtype_size(storage.dtype);
    storage.owned = archive.read(record, expected);
    if (storage.owned.size() != expected) {
      throw Error(fmt::format("{}: entry \"{}\" holds {} bytes but its storage is {} {} "
                              "elements ({} bytes)",
                              name, printable(record, 120), storage.owned.size(), storage.elements,
                              dtype_name(storage.dtype), expected),
                  kDamagedHint);
    }
    storage.data = storage.owned;
  }
  return collect(*pickle.root, storages, bytes.size(), name, "zip");
}

TorchCheckpoint parse_legacy(std::string_view bytes, const std::string& name) {
  const PickleSource source{name, ""};
  const Pickle magic = unpickle(bytes, 0, source, {});
  if (magic.root->kind != PickleKind::big_integer || magic.root->text != kLegacyMagic) {
    throw Error(fmt::format("{} is not a PyTorch checkpoint: it is a pickle that does not start "
                            "with torch.save's magic number",
                            name),
                "labpose reads files written by torch.save");
  }
  const Pickle version = unpickle(bytes, magic.end, source, {});
  if (version.root->kind != PickleKind::integer ||
      version.root->integer != kLegacyProtocolVersion) {
    throw Error(fmt::format("{}: byte {}: the checkpoint's protocol version is {}, not 1001", name,
                            magic.end, describe(*version.root)),
                kDamagedHint);
  }
  const Pickle system = unpickle(bytes, version.end, source, {});
  if (system.root->kind != PickleKind::dict) {
    throw Error(fmt::format("{}: byte {}: the checkpoint's system information is {}, not a dict",
                            name, version.end, describe(*system.root)),
                kDamagedHint);
  }
  if (const PickleValue* little = entry(*system.root, "little_endian");
      little != nullptr && !(little->kind == PickleKind::boolean && little->boolean)) {
    throw Error(fmt::format("{}: the checkpoint was written on a big-endian machine; labpose reads "
                            "little-endian checkpoints only",
                            name),
                "load and re-save it with torch.save on a little-endian machine (x86, ARM)");
  }
  Storages storages(name);
  const Pickle main =
      unpickle(bytes, system.end, source, [&](const PickleValue& id, std::size_t offset) {
        return storages.from_id(id, offset, true);
      });
  const Pickle keys = unpickle(bytes, main.end, source, {});
  if (keys.root->kind != PickleKind::list) {
    throw Error(fmt::format("{}: byte {}: the list of storage keys is {}", name, main.end,
                            describe(*keys.root)),
                kDamagedHint);
  }
  // Each storage follows: its element count (8 bytes, little-endian) and its bytes.
  std::size_t at = keys.end;
  for (const PickleValue* key : keys.root->items) {
    const auto index = key->kind == PickleKind::text ? storages.find(key->text) : std::nullopt;
    if (!index || storages.all()[*index].root) {
      throw Error(fmt::format("{}: the list of storage keys names {}, which no tensor uses", name,
                              key->kind == PickleKind::text ? "\"" + printable(key->text, 80) + "\""
                                                            : describe(*key)),
                  kDamagedHint);
    }
    Storage& storage = storages.all()[*index];
    if (storage.data) {
      throw Error(
          fmt::format("{}: storage \"{}\" is listed twice", name, printable(storage.key, 80)),
          kDamagedHint);
    }
    if (bytes.size() - at < 8) {
      throw Error(fmt::format("{}: byte {}: the file ends before storage \"{}\"", name, at,
                              printable(storage.key, 80)),
                  kDamagedHint);
    }
    std::uint64_t count = 0;
    std::memcpy(&count, bytes.data() + at, 8);
    at += 8;
    if (count != storage.elements) {
      throw Error(
          fmt::format("{}: byte {}: storage \"{}\" says it has {} elements; the pickle said "
                      "{}",
                      name, at - 8, printable(storage.key, 80), count, storage.elements),
          kDamagedHint);
    }
    const std::uint64_t size = count * dtype_size(storage.dtype);  // bounded when it was added
    if (size > bytes.size() - at) {
      throw Error(fmt::format("{}: byte {}: storage \"{}\" needs {} bytes but the file has {} left",
                              name, at, printable(storage.key, 80), size, bytes.size() - at),
                  kDamagedHint);
    }
    storage.data = bytes.substr(at, static_cast<std::size_t>(size));
    at += static_cast<std::size_t>(size);
  }
  return collect(*main.root, storages, bytes.size(), name, "legacy");
}

}  // namespace

TorchCheckpoint read_torch_checkpoint(const std::filesystem::path& file) {
  const std::string bytes = read_file(file);
  return parse_torch_checkpoint(bytes, file.string());
}

TorchCheckpoint parse_torch_checkpoint(std::string_view bytes, const std::string& name) {
  if (bytes.empty()) {
    throw Error(fmt::format("{} is empty, not a PyTorch checkpoint", name),
                "the download or copy may have failed; fetch the file again");
  }
  if (starts_with(bytes, "PK\x03\x04") || starts_with(bytes, "PK\x05\x06"))
    return parse_zip(bytes, name);
  if (bytes.size() > 262 && bytes.substr(257, 5) == "ustar") {
    throw Error(fmt::format("{} is a PyTorch checkpoint in the tar format of torch < 0.4, which "
                            "labpose does not read",
                            name),
                "re-save it with a newer torch: torch.save(torch.load(old_file), new_file)");
  }
  if (starts_with(bytes, "\x80")) return parse_legacy(bytes, name);
  throw Error(fmt::format("{} is not a PyTorch checkpoint: it is neither a zip archive nor a "
                          "pickle (it starts with byte 0x{:02x})",
                          name, static_cast<unsigned char>(bytes[0])),
              "labpose reads .pth/.pt files written by torch.save");
}

}  // namespace labpose::nets
