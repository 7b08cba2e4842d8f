// The pieces the container formats of PyTorch checkpoints (zip, legacy, tar) share: storages by
// key with their data, the little-endian storage records of the legacy and tar formats, and the
// state dict collected from what the pickle holds. Internal to nets/torch_checkpoint*.cpp; not an
// API of its own.
#pragma once

#include <fmt/core.h>

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "core/printable.hpp"
#include "nets/restricted_unpickler.hpp"
#include "nets/torch_checkpoint.hpp"

namespace labpose::nets {

inline constexpr const char* kCheckpointDamagedHint =
    "the file may be truncated, damaged or not a PyTorch checkpoint; re-save it with torch.save";

// A storage as a persistent id or record names it; a view (legacy and tar formats) lies inside
// its root.
struct CheckpointStorage {
  std::string key;
  TorchDtype dtype = TorchDtype::other;
  std::uint64_t elements = 0;
  std::optional<std::size_t> root;  // for a view: the root storage and where the view starts
  std::uint64_t root_offset = 0;    // in elements
  std::string owned;                // zip: the entry's bytes, where they had to be copied
  std::optional<std::string_view> data;
};

class CheckpointStorages {
 public:
  explicit CheckpointStorages(std::string file) : file_(std::move(file)) {}

  // The storage number of a persistent id: ('storage', type, key, location, numel) in the zip
  // format, ('storage', type, root_key, location, numel, view) in the legacy one.
  PersistentObject from_id(const PickleValue& id, std::size_t offset, bool legacy) {
    const auto bad = [&](const std::string& what) {
      return Error(fmt::format("{}: byte {}: {}", file_, offset, what), kCheckpointDamagedHint);
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
    if (!legacy || id.items[5]->kind == PickleKind::none) return {root, dtype, std::nullopt};
    // A storage view: (view_key, offset, size) inside the root, in elements.
    const PickleValue& view = *id.items[5];
    if (view.kind != PickleKind::tuple || view.items.size() != 3 ||
        view.items[0]->kind != PickleKind::text || view.items[1]->kind != PickleKind::integer ||
        view.items[2]->kind != PickleKind::integer || view.items[1]->integer < 0 ||
        view.items[2]->integer < 0) {
      throw bad(fmt::format("a storage view is {}, not (key, offset, size)", describe(view)));
    }
    const std::size_t index =
        add_view(root, view.items[0]->text, static_cast<std::uint64_t>(view.items[1]->integer),
                 static_cast<std::uint64_t>(view.items[2]->integer), bad);
    return {index, dtype, std::nullopt};
  }

  // A storage `key` of `elements` elements; `bad` makes the Error for a contradiction.
  template <typename Bad>
  std::size_t add(const std::string& key, TorchDtype dtype, std::uint64_t elements,
                  const Bad& bad) {
    if (const auto found = find(key)) {
      const CheckpointStorage& storage = storages_[*found];
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

  // A view `key`: elements [offset, offset + elements) of storage `root`.
  template <typename Bad>
  std::size_t add_view(std::size_t root, const std::string& key, std::uint64_t offset,
                       std::uint64_t elements, const Bad& bad) {
    if (storages_[root].root || offset > storages_[root].elements ||
        elements > storages_[root].elements - offset) {
      throw bad(fmt::format("a storage view of elements [{}, +{}) lies outside its storage of {}",
                            offset, elements, storages_[root].elements));
    }
    const std::size_t before = storages_.size();
    const std::size_t index = add(key, storages_[root].dtype, elements, bad);
    if (index < before && (storages_[index].root != root || storages_[index].root_offset != offset))
      throw bad(fmt::format("storage \"{}\" is named as two different things", printable(key, 80)));
    storages_[index].root = root;
    storages_[index].root_offset = offset;
    return index;
  }

  std::vector<CheckpointStorage>& all() { return storages_; }
  const std::vector<CheckpointStorage>& all() const { return storages_; }
  std::optional<std::size_t> find(const std::string& key) const {
    const auto found = by_key_.find(key);
    return found == by_key_.end() ? std::nullopt : std::optional(found->second);
  }

  // The bytes of storage `index` (a view's part of its root), or nullopt when it has no data yet.
  std::optional<std::string_view> bytes(std::size_t index) const {
    const CheckpointStorage& storage = storages_[index];
    if (!storage.root) return storage.data;
    const auto root = bytes(*storage.root);
    if (!root) return std::nullopt;
    const std::size_t size = dtype_size(storage.dtype);
    return root->substr(static_cast<std::size_t>(storage.root_offset) * size,
                        static_cast<std::size_t>(storage.elements) * size);
  }

 private:
  std::string file_;
  std::vector<CheckpointStorage> storages_;
  std::map<std::string, std::size_t> by_key_;
};

// What a checkpoint's tensor views point into besides the file's bytes: the zip entries that had
// to be copied out (compressed ones) and the tensors converted to float32. Made once, before the
// storages are filled, and never moved.
struct CheckpointHeld {
  explicit CheckpointHeld(std::string file) : storages(std::move(file)) {}
  CheckpointStorages storages;
  std::deque<std::vector<float>> converted;
};

/// The value of `key` in a pickled dict, or nullptr.
const PickleValue* dict_entry(const PickleValue& dict, std::string_view key);
/// Refuses a big-endian checkpoint from torch.save's sys_info dict (legacy and tar formats).
void check_little_endian(const PickleValue& system, const std::string& name);
/// The element count (8 bytes, little-endian) before a storage's data at `at`, which it passes.
std::uint64_t take_element_count(std::string_view bytes, std::size_t& at, const std::string& where,
                                 const std::string& key);
/// Points `storage` at its data at `at` (elements x element size bytes), which it passes.
void take_storage_data(CheckpointStorage& storage, std::string_view bytes, std::size_t& at,
                       const std::string& where);
/// The state dict in `root` (top level or under state_dict/model_state_dict/model), its tensors
/// read from `held`'s storages, which must all have their data, and kept by the view with them;
/// `file_bytes` bounds the values read.
TorchCheckpointView collect_state_dict(const PickleValue& root,
                                       std::shared_ptr<CheckpointHeld> held,
                                       std::uint64_t file_bytes, const std::string& file,
                                       std::string format);

}  // namespace labpose::nets
