// PyTorch checkpoints: the container formats (zip, legacy sequential, tar), each read into storages
// by key and a pickle; nets/torch_checkpoint_parts.cpp turns them into the state dict.
#include "nets/torch_checkpoint.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>

#include "core/atomic_file.hpp"
#include "nets/tar_archive.hpp"
#include "nets/torch_checkpoint_parts.hpp"
#include "nets/zip_archive.hpp"

namespace labpose::nets {
namespace {

constexpr std::uint64_t kMaxPickleBytes = std::uint64_t{256} << 20;  // data.pkl of the zip format
// torch.save's first pickle in the legacy format: the integer 0x1950a86a20f9469cfc6c,
// little-endian.
constexpr std::string_view kLegacyMagic{"\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19", 10};
constexpr std::int64_t kLegacyProtocolVersion = 1001;

TorchCheckpointView parse_zip(std::string_view bytes, const std::string& name, CrcCheck crc) {
  const ZipArchive archive(bytes, name, crc);
  std::optional<std::string> folder;
  for (const std::string& entry_name : archive.entry_names()) {
    const std::size_t slash = entry_name.find('/');
    if (slash == std::string::npos || entry_name.substr(slash) != "/data.pkl") continue;
    if (folder) {
      throw Error(fmt::format("{} holds two checkpoints ({}/data.pkl and {})", name,
                              printable(*folder, 80), printable(entry_name, 80)),
                  kCheckpointDamagedHint);
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
  const auto held = std::make_shared<CheckpointHeld>(fmt::format("{}: {}", name, pickle_name));
  CheckpointStorages& storages = held->storages;
  const Pickle pickle = unpickle(pickle_bytes, 0, {name, pickle_name},
                                 [&](const PickleValue& id, std::size_t offset) {
                                   return storages.from_id(id, offset, false);
                                 });
  for (CheckpointStorage& storage : storages.all()) {
    const std::string record = *folder + "/data/" + storage.key;
    const std::uint64_t expected = storage.elements * dtype_size(storage.dtype);
    // In place where the archive stores it uncompressed (torch.save does): no copy of the weights.
    const std::string_view data = archive.read_view(record, storage.owned, expected);
    if (data.size() != expected) {
      throw Error(fmt::format("{}: entry \"{}\" holds {} bytes but its storage is {} {} "
                              "elements ({} bytes)",
                              name, printable(record, 120), data.size(), storage.elements,
                              dtype_name(storage.dtype), expected),
                  kCheckpointDamagedHint);
    }
    storage.data = data;
  }
  return collect_state_dict(*pickle.root, held, bytes.size(), name, "zip");
}

TorchCheckpointView parse_legacy(std::string_view bytes, const std::string& name) {
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
                kCheckpointDamagedHint);
  }
  const Pickle system = unpickle(bytes, version.end, source, {});
  if (system.root->kind != PickleKind::dict) {
    throw Error(fmt::format("{}: byte {}: the checkpoint's system information is {}, not a dict",
                            name, version.end, describe(*system.root)),
                kCheckpointDamagedHint);
  }
  check_little_endian(*system.root, name);
  const auto held = std::make_shared<CheckpointHeld>(name);
  CheckpointStorages& storages = held->storages;
  const Pickle main =
      unpickle(bytes, system.end, source, [&](const PickleValue& id, std::size_t offset) {
        return storages.from_id(id, offset, true);
      });
  const Pickle keys = unpickle(bytes, main.end, source, {});
  if (keys.root->kind != PickleKind::list) {
    throw Error(fmt::format("{}: byte {}: the list of storage keys is {}", name, main.end,
                            describe(*keys.root)),
                kCheckpointDamagedHint);
  }
  // Each storage follows: its element count (8 bytes, little-endian) and its bytes.
  std::size_t at = keys.end;
  for (const PickleValue* key : keys.root->items) {
    const auto index = key->kind == PickleKind::text ? storages.find(key->text) : std::nullopt;
    if (!index || storages.all()[*index].root) {
      throw Error(fmt::format("{}: the list of storage keys names {}, which no tensor uses", name,
                              key->kind == PickleKind::text ? "\"" + printable(key->text, 80) + "\""
                                                            : describe(*key)),
                  kCheckpointDamagedHint);
    }
    CheckpointStorage& storage = storages.all()[*index];
    if (storage.data) {
      throw Error(
          fmt::format("{}: storage \"{}\" is listed twice", name, printable(storage.key, 80)),
          kCheckpointDamagedHint);
    }
    const std::size_t count_at = at;
    const std::uint64_t count = take_element_count(bytes, at, name, storage.key);
    if (count != storage.elements) {
      throw Error(
          fmt::format("{}: byte {}: storage \"{}\" says it has {} elements; the pickle said {}",
                      name, count_at, printable(storage.key, 80), count, storage.elements),
          kCheckpointDamagedHint);
    }
    take_storage_data(storage, bytes, at, name);
  }
  return collect_state_dict(*main.root, held, bytes.size(), name, "legacy");
}

// torch < 0.4: a tar archive. Its member storages holds a count, then per storage a pickled (key,
// location, storage type) followed by the element count and the data, then a pickled list of views
// (key, root key, offset, size); tensors holds a count, then per tensor a pickled (key, storage
// key, tensor type) followed by ndim (4 bytes and 4 unused), sizes, strides and the offset
// (8 bytes each); pickle holds the object, whose persistent ids are tensor or storage keys.
TorchCheckpointView parse_tar(std::string_view bytes, const std::string& name) {
  const auto members = tar_members(bytes, name);
  const auto member = [&](const std::string& part) {
    const auto found = members.find(part);
    if (found == members.end()) {
      throw Error(fmt::format("{} is a tar archive but not a PyTorch checkpoint: it has no member "
                              "\"{}\"",
                              name, part),
                  "labpose reads files written by torch.save");
    }
    return found->second;
  };
  if (members.contains("sys_info"))
    check_little_endian(*unpickle(member("sys_info"), 0, {name, "sys_info"}, {}).root, name);
  const auto bad = [&](const std::string& part, std::size_t at, const std::string& what) {
    return Error(fmt::format("{}: {}: byte {}: {}", name, part, at, what), kCheckpointDamagedHint);
  };
  const auto count = [&](const std::string& part, const Pickle& pickle) {
    if (pickle.root->kind != PickleKind::integer || pickle.root->integer < 0)
      throw bad(part, 0, fmt::format("the number of records is {}", describe(*pickle.root)));
    return pickle.root->integer;
  };
  const auto is_integer = [](const PickleValue* value) {
    return value->kind == PickleKind::integer && value->integer >= 0;
  };

  const auto held = std::make_shared<CheckpointHeld>(name);
  CheckpointStorages& storages = held->storages;
  const std::string_view storage_bytes = member("storages");
  const std::string storages_place = fmt::format("{}: storages", name);
  const Pickle storage_count = unpickle(storage_bytes, 0, {name, "storages"}, {});
  std::size_t at = storage_count.end;
  for (std::int64_t i = count("storages", storage_count); i > 0; --i) {
    const Pickle record = unpickle(storage_bytes, at, {name, "storages"}, {});
    const auto& items = record.root->items;
    if (record.root->kind != PickleKind::tuple || items.size() != 3 || !is_integer(items[0]) ||
        items[2]->kind != PickleKind::global || items[2]->role != GlobalRole::storage_type) {
      throw bad("storages", at,
                fmt::format("a storage record is {}, not (key, location, storage type)",
                            describe(*record.root)));
    }
    at = record.end;
    const std::string key = std::to_string(items[0]->integer);
    const std::uint64_t elements = take_element_count(storage_bytes, at, storages_place, key);
    const auto bad_here = [&](const std::string& what) { return bad("storages", at, what); };
    const std::size_t before = storages.all().size();
    const std::size_t index = storages.add(key, items[2]->dtype, elements, bad_here);
    if (index < before) throw bad_here(fmt::format("storage {} is recorded twice", key));
    take_storage_data(storages.all()[index], storage_bytes, at, storages_place);
  }
  const Pickle views = unpickle(storage_bytes, at, {name, "storages"}, {});
  if (views.root->kind != PickleKind::list)
    throw bad("storages", at, fmt::format("the storage views are {}", describe(*views.root)));
  for (const PickleValue* view : views.root->items) {
    const auto& items = view->items;
    const auto root = view->kind == PickleKind::tuple && items.size() == 4 &&
                              std::all_of(items.begin(), items.end(), is_integer)
                          ? storages.find(std::to_string(items[1]->integer))
                          : std::nullopt;
    if (!root) {
      throw bad("storages", at,
                fmt::format("a storage view is {}, not (key, root key, offset, size) of a stored "
                            "storage",
                            describe(*view)));
    }
    storages.add_view(*root, std::to_string(items[0]->integer),
                      static_cast<std::uint64_t>(items[2]->integer),
                      static_cast<std::uint64_t>(items[3]->integer),
                      [&](const std::string& what) { return bad("storages", at, what); });
  }

  std::map<std::string, TensorRecord> tensors;
  const std::string_view tensor_bytes = member("tensors");
  const Pickle tensor_count = unpickle(tensor_bytes, 0, {name, "tensors"}, {});
  at = tensor_count.end;
  for (std::int64_t i = count("tensors", tensor_count); i > 0; --i) {
    const Pickle record = unpickle(tensor_bytes, at, {name, "tensors"}, {});
    const auto& items = record.root->items;
    const auto storage = record.root->kind == PickleKind::tuple && items.size() == 3 &&
                                 is_integer(items[0]) && is_integer(items[1]) &&
                                 items[2]->kind == PickleKind::global &&
                                 items[2]->role == GlobalRole::tensor_type
                             ? storages.find(std::to_string(items[1]->integer))
                             : std::nullopt;
    if (!storage) {
      throw bad("tensors", at,
                fmt::format("a tensor record is {}, not (key, storage key, tensor type) of a "
                            "stored storage",
                            describe(*record.root)));
    }
    at = record.end;
    TensorRecord tensor;
    tensor.storage = *storage;
    tensor.dtype = storages.all()[*storage].dtype;
    const auto take = [&](std::size_t size) {
      if (tensor_bytes.size() - at < size) throw bad("tensors", at, "the tensor records end early");
      std::int64_t value = 0;  // little-endian, sign-extended from `size` bytes
      std::memcpy(&value, tensor_bytes.data() + at, size);
      if (size == 4) value = static_cast<std::int32_t>(value);
      at += size;
      if (value < 0) throw bad("tensors", at - size, fmt::format("a negative size {}", value));
      return value;
    };
    const std::int64_t dimensions = take(4);
    take(4);  // unused: older versions wrote ndim in 8 bytes
    if (dimensions > 64) throw bad("tensors", at, fmt::format("{} dimensions", dimensions));
    for (std::int64_t d = 0; d < dimensions; ++d) tensor.shape.push_back(take(8));
    for (std::int64_t d = 0; d < dimensions; ++d) tensor.stride.push_back(take(8));
    tensor.offset = take(8);
    if (!tensors.emplace(std::to_string(items[0]->integer), std::move(tensor)).second)
      throw bad("tensors", at, fmt::format("tensor {} is recorded twice", items[0]->integer));
  }

  const Pickle main = unpickle(
      member("pickle"), 0, {name, "pickle"}, [&](const PickleValue& id, std::size_t offset) {
        if (id.kind == PickleKind::text) {
          if (const auto tensor = tensors.find(id.text); tensor != tensors.end())
            return PersistentObject{tensor->second.storage, tensor->second.dtype, tensor->second};
          if (const auto storage = storages.find(id.text))
            return PersistentObject{*storage, storages.all()[*storage].dtype, std::nullopt};
        }
        throw bad("pickle", offset,
                  fmt::format("the persistent id {} names no tensor or storage of the file",
                              id.kind == PickleKind::text ? printable(id.text, 40) : describe(id)));
      });
  return collect_state_dict(*main.root, held, bytes.size(), name, "tar");
}

}  // namespace

TorchCheckpoint read_torch_checkpoint(const std::filesystem::path& file) {
  const std::string bytes = read_file(file);
  return parse_torch_checkpoint(bytes, file.string());
}

TorchCheckpoint parse_torch_checkpoint(std::string_view bytes, const std::string& name,
                                       CrcCheck crc) {
  TorchCheckpointView view = view_torch_checkpoint(bytes, name, crc);
  TorchCheckpoint out;
  for (const auto& [key, tensor] : view.tensors) {
    out.tensors.emplace(key, HostTensor{tensor.shape, std::vector<float>(tensor.values.begin(),
                                                                         tensor.values.end())});
  }
  out.skipped = std::move(view.skipped);
  out.format = std::move(view.format);
  return out;
}

TorchCheckpointView view_torch_checkpoint(std::string_view bytes, const std::string& name,
                                          CrcCheck crc) {
  if (bytes.empty()) {
    throw Error(fmt::format("{} is empty, not a PyTorch checkpoint", name),
                "the download or copy may have failed; fetch the file again");
  }
  if (bytes.starts_with("PK\x03\x04") || bytes.starts_with("PK\x05\x06"))
    return parse_zip(bytes, name, crc);
  if (looks_like_tar(bytes)) return parse_tar(bytes, name);
  if (bytes.starts_with("\x80")) return parse_legacy(bytes, name);
  throw Error(fmt::format("{} is not a PyTorch checkpoint: it is neither a zip archive nor a "
                          "pickle (it starts with byte 0x{:02x})",
                          name, static_cast<unsigned char>(bytes[0])),
              "labpose reads .pth/.pt files written by torch.save");
}

}  // namespace labpose::nets
