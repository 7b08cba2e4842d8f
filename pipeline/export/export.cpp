// labpose export: a snapshot, its settings and its calibration in a folder of their own.
#include "pipeline/export/export.hpp"

#include <fmt/core.h>
#include <fmt/ranges.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include "core/atomic_file.hpp"
#include "core/console.hpp"
#include "core/error.hpp"
#include "devices/devices.hpp"
#include "nets/models/models.hpp"
#include "nets/onnx/onnx_export.hpp"
#include "nets/safetensors.hpp"
#include "pipeline/analysis/int8_check.hpp"
#include "pipeline/analysis/model_choice.hpp"
#include "pipeline/export/exported_model.hpp"
#include "pipeline/pose/int8_calibration.hpp"
#include "pipeline/training/snapshot.hpp"

namespace labpose::pipeline {
namespace fs = std::filesystem;

namespace {

// A folder removed at the end of the scope unless released.
class ScratchFolder {
 public:
  explicit ScratchFolder(fs::path path) : path_(std::move(path)) {
    std::error_code error;
    fs::remove_all(path_, error);
    create_folder(path_);
  }
  ~ScratchFolder() {
    std::error_code error;
    if (!path_.empty()) fs::remove_all(path_, error);
  }
  ScratchFolder(const ScratchFolder&) = delete;
  ScratchFolder& operator=(const ScratchFolder&) = delete;
  const fs::path& path() const { return path_; }
  void release() { path_.clear(); }

 private:
  fs::path path_;
};

std::string readme_text(const ExportedModel& model, const std::string& folder, bool onnx,
                        bool decoding) {
  std::string text = fmt::format(
      "# {}\n\n"
      "A pose network ({}) exported by `labpose export` from {} ({} iterations),\n"
      "shuffle {}, trainset {:g} %, iteration {} of the project {} ({}).\nBodyparts: {}.\n\n"
      "- Track videos without the project: `labpose analyze --model {} video.mp4`\n"
      "  (outputs are named {}).\n"
      "- Closed-loop, frame by frame: `labpose live --model {} --camera /dev/video0`.\n"
      "- Python: `labpose.Predictor(\"{}\")`.\n",
      folder, model.net_type, model.snapshot, model.iterations, model.shuffle,
      model.training_fraction * 100, model.iteration, model.task, model.date,
      fmt::join(model.bodyparts, ", "), folder, model.scorer, folder, folder);
  if (onnx) {
    text += fmt::format(
        "- model.onnx (ONNX opset 17; ONNX Runtime, OpenVINO, TensorRT) takes `frames`, uint8\n"
        "  (N, H, W, 3) RGB of any size, and gives `scoremap` (logits, N x J x H/{0} x W/{0}) and\n"
        "  `locref` (N x 2J x ..., dx and dy of each bodypart){1}. A keypoint is the score map's\n"
        "  highest cell (row, col): x = col * {0} + {2} + dx * {3}, y likewise, likelihood =\n"
        "  sigmoid(score).\n",
        model.stride, decoding ? ", and `pose` (N x J x 3: x, y, likelihood)" : "",
        model.stride / 2, model.locref_stdev);
  }
  text += "\nmodel.safetensors holds the weights; pose_cfg.yaml what running them needs.\n";
  return text;
}

// Whether process `pid` is gone (so its scratch folders are left over from a kill).
bool process_gone(const std::string& pid) {
  char* end = nullptr;
  const long number = std::strtol(pid.c_str(), &end, 10);
  return end != pid.c_str() && *end == '\0' && number > 0 &&
         ::kill(static_cast<pid_t>(number), 0) != 0 && errno == ESRCH;
}

// What an export killed midway left beside `target` (in `parent`): its scratch folders
// (".<name>.partial-<pid>") are removed, and an earlier export it had moved aside
// ("<name>.old-<pid>") is put back when nothing replaced it.
void recover_interrupted_exports(const fs::path& parent, const fs::path& target) {
  const std::string name = target.filename().string();
  const std::string partial = "." + name + ".partial-", old = name + ".old-";
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(parent, error)) {
    const std::string entry_name = entry.path().filename().string();
    if (entry_name.rfind(partial, 0) == 0 && process_gone(entry_name.substr(partial.size()))) {
      fs::remove_all(entry.path(), error);
    } else if (entry_name.rfind(old, 0) == 0 && process_gone(entry_name.substr(old.size()))) {
      if (!fs::exists(target, error)) {
        fs::rename(entry.path(), target, error);
        console::warn("put back {}, which an interrupted export had moved aside", target.string());
      } else {
        fs::remove_all(entry.path(), error);
      }
    }
  }
}

// Replaces `target` (if any) with the finished `scratch` folder.
void move_into_place(ScratchFolder& scratch, const fs::path& target) {
  std::error_code error;
  fs::path old;
  if (fs::exists(target, error)) {
    old = fs::path(target).concat(fmt::format(".old-{}", ::getpid()));
    fs::rename(target, old, error);
    if (error) {
      throw Error(fmt::format("cannot replace {}: {}", target.string(), error.message()),
                  "close programs that use it, or export with --dest elsewhere");
    }
  }
  fs::rename(scratch.path(), target, error);
  if (error) {
    if (!old.empty()) fs::rename(old, target, error);
    throw Error(fmt::format("cannot make {}: {}", target.string(), error.message()),
                "check the folder's permissions and free space");
  }
  scratch.release();
  if (!old.empty()) fs::remove_all(old, error);
}

}  // namespace

ExportResult export_model(const projects::ProjectConfig& config, const ExportOptions& options) {
  const AnalysisModel model =
      find_analysis_model(config, options.shuffle, options.training_fraction,
                          options.snapshot_index, options.best_snapshot);
  ExportedModel exported;
  exported.net_type = model.net_type;
  exported.bodyparts = model.bodyparts;
  exported.scorer = model.scorer;
  exported.snapshot = model.snapshot.filename().string();
  exported.iterations = model.iterations;
  exported.task = config.values().task;
  exported.date = config.values().date;
  exported.iteration = model.iteration;
  exported.shuffle = model.shuffle;
  exported.training_fraction = model.training_fraction;
  exported.stride = model.stride;
  exported.locref_stdev = model.locref_stdev;
  exported.location_refinement = model.location_refinement;
  exported.pcutoff = model.pcutoff;
  exported.batch_size = model.batch_size;
  std::tie(exported.mean_pixel, exported.std_pixel) = nets::input_normalization(model.net_type);

  const fs::path parent = options.dest.value_or(config.project_dir() / "exported-models");
  const std::string name = exported_folder_name(exported);
  const fs::path target = parent / name;
  std::error_code error;
  if (fs::is_directory(parent, error)) recover_interrupted_exports(parent, target);
  if (fs::exists(target, error) && !options.overwrite) {
    throw UsageError(fmt::format("{} exists already", target.string()),
                     "add --overwrite to replace it, or --dest to export elsewhere");
  }
  create_folder(parent);
  ScratchFolder scratch(parent / fmt::format(".{}.partial-{}", name, ::getpid()));
  ExportResult result;
  result.folder = target;

  // The weights without the optimizer's state or the trainer's.
  LoadedSnapshot loaded = read_snapshot(model.snapshot);
  SnapshotMetadata metadata = loaded.metadata;
  metadata.extra = {{"exported_from", exported.snapshot}};
  const fs::path weights = exported_weights_file(scratch.path());
  nets::SafetensorsFile contents = loaded.file;
  contents.metadata = snapshot_metadata_entries(metadata);
  nets::write_safetensors(contents, weights);
  result.files.push_back(weights.filename());

  // The int8 calibration, measured now on the project's training images, as analyze would.
  const auto backend = devices::make_backend("cpu");
  const auto net = load_snapshot_network(*backend, loaded, weights);
  try {
    calibrate_for_int8(*net, weights, calibration_images(model.snapshot, model.project));
    result.files.push_back(int8_calibration_file(weights).filename());
    result.calibrated = true;
  } catch (const Error& calibration_error) {
    if (calibration_error.kind() == ErrorKind::interrupted) throw;
    console::warn("the export has no int8 calibration ({}); it runs in fp32 and bf16",
                  calibration_error.what());
  }
  if (result.calibrated) {
    // And int8's check against fp32 on the project's labeled frames and videos, for --precision
    // auto.
    AnalysisModel in_export = model;
    in_export.snapshot = weights;
    in_export.exported_folder = scratch.path();
    try {
      int8_check(in_export, int8_check_images(model), int8_check_videos(model));
      result.files.push_back(int8_check_file(weights).filename());
    } catch (const Error& check_error) {
      if (check_error.kind() == ErrorKind::interrupted) throw;
      console::warn("the export has no int8 check ({}); --precision auto will not take int8 for it",
                    check_error.what());
    }
  }

  if (options.onnx) {
    nets::OnnxExportOptions onnx;
    onnx.with_decoding = options.onnx_decoding;
    onnx.stride = model.stride;
    onnx.locref_stdev = static_cast<float>(model.locref_stdev);
    onnx.location_refinement = model.location_refinement;
    onnx.producer_version = options.producer_version;
    onnx.metadata = {{"net_type", model.net_type},
                     {"bodyparts", fmt::format("{}", fmt::join(model.bodyparts, ","))},
                     {"scorer", model.scorer},
                     {"snapshot", exported.snapshot}};
    nets::write_onnx(net->fuse(true), exported_onnx_file(scratch.path()), onnx);
    result.files.push_back(exported_onnx_file(scratch.path()).filename());
  }

  write_file_atomically(exported_pose_config_file(scratch.path()),
                        exported_pose_config_text(exported));
  result.files.push_back("pose_cfg.yaml");
  write_file_atomically(scratch.path() / "README.md",
                        readme_text(exported, name, options.onnx, options.onnx_decoding));
  result.files.push_back("README.md");
  move_into_place(scratch, target);
  return result;
}

}  // namespace labpose::pipeline
