// Training snapshots: labpose-models/.../train/snapshot-<iteration>.safetensors (and
// snapshot-best-<iteration>.safetensors). One file holds the network's parameters under their
// names, the optimizer state under "optimizer.*", and in its metadata everything needed to rebuild
// the network and to continue training exactly (iteration, architecture, bodyparts, RNG state). Not
// DeepLabCut's checkpoint format: DeepLabCut cannot load these, and labpose never writes .pt.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "nets/net.hpp"
#include "nets/safetensors.hpp"
#include "pipeline/pose/multi_animal_model.hpp"
#include "projects/config.hpp"

namespace labpose::pipeline {

struct SnapshotMetadata {
  std::int64_t iteration = 0;  // training steps done
  std::string architecture;    // a nets::pose_architectures() name
  std::vector<std::string> bodyparts;
  double training_fraction = 0.0;
  int shuffle = 1;
  std::optional<double> test_rmse;  // mean test error (pixels) at this iteration, if evaluated
  std::optional<MultiAnimalModel> multi_animal;  // the heads of a multi-animal network
  std::map<std::string, std::string> extra;      // trainer state (optimizer, RNG, schedule)
};

struct SnapshotFile {
  std::filesystem::path path;
  std::int64_t iteration = 0;
  bool best = false;
};

/// The snapshots in a train/ folder sorted by iteration, with the best one (if any) moved last, as
/// DeepLabCut orders its PyTorch snapshots (so index -1 selects the best model when there is one).
std::vector<SnapshotFile> list_snapshots(const std::filesystem::path& train_dir);

/// Picks one snapshot: `index` as in config.yaml's snapshotindex (-1 = last in list_snapshots()
/// order). Throws when there are none or the index is out of range.
const SnapshotFile& select_snapshot(const std::vector<SnapshotFile>& snapshots, int index,
                                    const std::filesystem::path& train_dir);

/// The snapshot marked best (snapshot-best-<iteration>). Throws Error naming `train_dir`, with
/// `hint`, when there is none.
const SnapshotFile& best_snapshot(const std::vector<SnapshotFile>& snapshots,
                                  const std::filesystem::path& train_dir, const std::string& hint);

/// Writes a snapshot atomically: every parameter of `net`, `optimizer_state` tensors prefixed
/// "optimizer.", and `metadata`.
void write_snapshot(const std::filesystem::path& file, const nets::Net& net,
                    const std::map<std::string, nets::HostTensor>& optimizer_state,
                    const SnapshotMetadata& metadata);

/// The safetensors metadata of a snapshot: `metadata.extra` (the trainer's state) and the keys
/// read_snapshot() requires.
std::map<std::string, std::string> snapshot_metadata_entries(const SnapshotMetadata& metadata);

struct LoadedSnapshot {
  SnapshotMetadata metadata;
  nets::SafetensorsFile file;  // the parameters (optimizer tensors removed) and the optimizer state
  std::map<std::string, nets::HostTensor> optimizer_state;
};

/// Reads a snapshot; errors name the file (damaged, not a labpose snapshot, missing metadata).
LoadedSnapshot read_snapshot(const std::filesystem::path& file);
/// The same for a file already read (`file` names it in errors).
LoadedSnapshot snapshot_from(nets::SafetensorsFile contents, const std::filesystem::path& file);

/// Builds the snapshot's network on `backend` and loads its parameters (for evaluation and
/// analysis).
std::unique_ptr<nets::Net> load_snapshot_network(nets::Backend& backend,
                                                 const LoadedSnapshot& snapshot,
                                                 const std::filesystem::path& file);

/// A double for snapshot metadata that reads back exactly (hexadecimal floating point), so a
/// resumed run continues as an uninterrupted one.
std::string exact_number(double value);
/// The double under `key` of snapshot metadata (written by exact_number), or `fallback` when
/// absent.
double exact_number(const std::map<std::string, std::string>& metadata, const std::string& key,
                    double fallback);
/// A list of doubles for snapshot metadata: exact_number's, comma-separated ("" when empty).
std::string exact_numbers(const std::vector<double>& values);
/// The list under `key` (written by exact_numbers); empty when absent.
std::vector<double> exact_numbers(const std::map<std::string, std::string>& metadata,
                                  const std::string& key);

}  // namespace labpose::pipeline
