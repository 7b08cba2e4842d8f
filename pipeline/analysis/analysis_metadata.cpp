// The metadata files of a finished analysis, and the names of a video's outputs.
#include "pipeline/analysis/analysis_metadata.hpp"

#include <fmt/core.h>

#include <chrono>
#include <ctime>
#include <nlohmann/json.hpp>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "projects/layout.hpp"
#include "projects/pickle.hpp"

namespace labpose::pipeline {
namespace fs = std::filesystem;
using nlohmann::json;
using projects::PyValue;

namespace {

constexpr const char* kMetaFormat = "labpose analysis 1";

// pose_cfg.yaml's keys as DeepLabCut stores them under "DLC-model-config file".
PyValue pose_config_dict(const AnalysisModel& model) {
  PyValue::List joints, names;
  for (std::size_t j = 0; j < model.bodyparts.size(); ++j) {
    joints.push_back(PyValue::List{PyValue(static_cast<std::int64_t>(j))});
    names.push_back(PyValue(model.bodyparts[j]));
  }
  return PyValue::dict({{"all_joints", PyValue(joints)},
                        {"all_joints_names", PyValue(names)},
                        {"num_joints", PyValue(static_cast<std::int64_t>(model.bodyparts.size()))},
                        {"net_type", PyValue(model.net_type)},
                        {"stride", PyValue(static_cast<double>(model.stride))},
                        {"location_refinement", PyValue(model.location_refinement)},
                        {"locref_stdev", PyValue(model.locref_stdev)},
                        {"global_scale", PyValue(1.0)},
                        {"init_weights", PyValue(model.snapshot.string())},
                        {"snapshot", PyValue(model.snapshot.filename().string())}});
}

// DeepLabCut's _meta.pickle: {"data": {...}}.
std::string meta_pickle(const AnalysisModel& model, const VideoAnalysis& result,
                        const VideoInfo& info, const std::optional<projects::CropBox>& crop,
                        const AnalysisRun& run) {
  const projects::CropBox box = crop.value_or(projects::CropBox{0, info.width, 0, info.height});
  const PyValue data = PyValue::dict(
      {{"start", PyValue(run.started)},
       {"stop", PyValue(run.stopped)},
       {"run_duration", PyValue(run.stopped - run.started)},
       {"Scorer", PyValue(model.scorer)},
       {"DLC-model-config file", pose_config_dict(model)},
       {"fps", PyValue(info.fps)},
       {"batch_size", PyValue(static_cast<std::int64_t>(run.batch_size))},
       {"frame_dimensions", PyValue::tuple({PyValue(static_cast<std::int64_t>(info.height)),
                                            PyValue(static_cast<std::int64_t>(info.width))})},
       {"nframes", PyValue(result.frames)},
       {"iteration (active-learning)", PyValue(static_cast<std::int64_t>(run.iteration))},
       {"training set fraction", PyValue(model.training_fraction)},
       {"cropping", PyValue(crop.has_value())},
       {"cropping_parameters", PyValue(PyValue::List{PyValue(box.x1), PyValue(box.x2),
                                                     PyValue(box.y1), PyValue(box.y2)})}});
  return projects::pickle(PyValue::dict({{"data", data}}));
}

// labpose's _meta.json.
json meta_json(const AnalysisModel& model, const VideoAnalysis& result, const VideoInfo& info,
               const AnalysisIdentity& identity, const AnalysisRun& run) {
  json meta = {{"format", kMetaFormat},
               {"complete", true},
               {"identity", identity.to_json()},
               {"video", result.video.string()},
               {"frames", result.frames},
               {"fps", info.fps},
               {"width", info.width},
               {"height", info.height},
               {"variable_frame_rate", info.variable_frame_rate},
               {"codec", info.codec},
               {"scorer", model.scorer},
               {"net_type", model.net_type},
               {"snapshot", model.snapshot.string()},
               {"bodyparts", model.bodyparts},
               {"training_fraction", model.training_fraction},
               {"shuffle", model.shuffle},
               {"device", run.device},
               {"device_description", run.device_description},
               {"precision", run.precision},
               {"batch_size", run.batch_size},
               {"undecodable_frames", result.undecodable_frames},
               {"damaged_frames", result.damaged_frames},
               {"resumed_from_frame", result.resumed_from},
               {"seconds", result.seconds},
               {"frames_per_second", result.frames_per_second},
               {"started", run.started_text},
               {"finished", local_time_text()}};
  meta["crop"] = meta["identity"]["crop"];  // [x1, x2, y1, y2] or null
  meta["outputs"] = json::array({result.files.h5.filename().string()});
  if (run.csv) meta["outputs"].push_back(result.files.csv.filename().string());
  return meta;
}

}  // namespace

std::string local_time_text() {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S", &local);
  return text;
}

AnalysisRun finished_run(const nets::Backend& backend, int iteration, int batch_size, bool csv,
                         double seconds, std::string started_text) {
  AnalysisRun record;
  record.iteration = iteration;
  record.device = backend.name();
  record.device_description = backend.description();
  record.precision = nets::precision_name(backend.plan_precision());
  record.batch_size = batch_size;
  record.csv = csv;
  record.stopped =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  record.started = record.stopped - seconds;
  record.started_text = std::move(started_text);
  return record;
}

void write_analysis_metadata(const AnalysisModel& model, const VideoAnalysis& result,
                             const VideoInfo& info, const AnalysisIdentity& identity,
                             const AnalysisRun& run) {
  write_file_atomically(result.files.meta_pickle,
                        meta_pickle(model, result, info, identity.crop, run));
  write_file_atomically(result.files.meta_json,
                        meta_json(model, result, info, identity, run).dump(1) + "\n");
}

bool analysis_complete(const AnalysisFiles& files, const AnalysisIdentity& identity) {
  std::error_code error;
  if (!fs::exists(files.meta_json, error) || !fs::exists(files.h5, error)) return false;
  const json meta = json::parse(read_file(files.meta_json), nullptr, false);
  return !meta.is_discarded() && meta.is_object() && meta.value("format", "") == kMetaFormat &&
         meta.value("complete", false) && meta.contains("identity") &&
         identity.matches(meta["identity"], false);
}

void forget_analysis(const AnalysisFiles& files, const fs::path& journal) {
  std::error_code error;
  fs::remove(journal, error);
  fs::remove(files.meta_json, error);
  if (error) {
    throw Error(fmt::format("cannot remove {}: {}", files.meta_json.string(), error.message()),
                "check that its folder is writable, then run the command again");
  }
}

AnalysisFiles analysis_files(const fs::path& folder, const std::string& video_stem,
                             const std::string& scorer) {
  return {folder / projects::analysis_h5_name(video_stem, scorer),
          folder / projects::analysis_csv_name(video_stem, scorer),
          folder / projects::analysis_meta_pickle_name(video_stem, scorer),
          folder / projects::analysis_meta_json_name(video_stem, scorer),
          folder / projects::analysis_checkpoint_name(video_stem, scorer)};
}

std::optional<projects::CropBox> analysis_crop(const AnalysisFiles& files) {
  std::error_code error;
  if (!fs::exists(files.meta_json, error)) return std::nullopt;
  const json meta = json::parse(read_file(files.meta_json), nullptr, false);
  if (meta.is_discarded() || !meta.is_object() || !meta.contains("crop") ||
      !meta["crop"].is_array() || meta["crop"].size() != 4) {
    return std::nullopt;
  }
  const json& crop = meta["crop"];
  return projects::CropBox{crop[0].get<int>(), crop[1].get<int>(), crop[2].get<int>(),
                           crop[3].get<int>()};
}

std::optional<std::int64_t> analyzed_frame_count(const AnalysisFiles& files,
                                                 const fs::path& video) {
  std::error_code error;
  if (!fs::exists(files.meta_json, error)) return std::nullopt;
  const json meta = json::parse(read_file(files.meta_json), nullptr, false);
  if (meta.is_discarded() || !meta.is_object() || !meta.contains("format") ||
      meta["format"] != kMetaFormat || !meta.contains("identity") || !meta["identity"].is_object())
    return std::nullopt;
  const json& recorded = meta["identity"];
  const AnalysisIdentity now = AnalysisIdentity::of_video(video, 0, "", "", std::nullopt, 0);
  const auto holds = [&recorded](const char* key, const json& value) {
    return recorded.contains(key) && recorded[key] == value;
  };
  if (!holds("video", now.video) || !holds("video_bytes", now.video_bytes) ||
      !recorded.contains("frames") || !recorded["frames"].is_number_integer()) {
    return std::nullopt;
  }
  const auto frames = recorded["frames"].get<std::int64_t>();
  return frames > 0 ? std::optional<std::int64_t>(frames) : std::nullopt;
}

}  // namespace labpose::pipeline
