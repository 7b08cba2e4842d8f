// Video analysis, one video after another: skip a finished video, resume from its checkpoint,
// run its frames through the stages (runner.hpp), then write DeepLabCut's tracks and the metadata
// from the checkpoint.
#include "pipeline/analysis/analyze.hpp"

#include <fmt/core.h>
#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <set>

#include "core/atomic_file.hpp"
#include "core/console.hpp"
#include "core/error.hpp"
#include "core/interrupt.hpp"
#include "core/progress.hpp"
#include "devices/devices.hpp"
#include "pipeline/analysis/analysis_backend.hpp"
#include "pipeline/analysis/analysis_metadata.hpp"
#include "pipeline/analysis/checkpoint.hpp"
#include "pipeline/analysis/device_slots.hpp"
#include "pipeline/analysis/multi_animal_analysis.hpp"
#include "pipeline/analysis/predictor.hpp"
#include "pipeline/analysis/runner.hpp"
#include "pipeline/analysis/stages.hpp"
#include "pipeline/pose/pose_runner.hpp"
#include "pipeline/training/snapshot.hpp"
#include "pipeline/video/reader.hpp"
#include "projects/layout.hpp"
#include "projects/table.hpp"

namespace labpose::pipeline {
namespace fs = std::filesystem;

namespace {

// What every video of one analyze_videos call shares.
struct VideoRun {
  const AnalysisModel& model;
  const AnalyzeOptions& options;
  nets::Backend& backend;
  const DeviceSlots& slots;  // the first is backend's
  int batch_size;
};

// The slots of `backend` (with `net`) for `options`.
DeviceSlots analysis_slots(nets::Backend& backend, const nets::Net& net, const AnalysisModel& model,
                           const AnalyzeOptions& options) {
  return DeviceSlots(backend, net, options.slots > 0 ? options.slots : default_slot_count(backend),
                     [&model](nets::Backend& other) { return load_model_network(other, model); });
}

projects::Table track_table_header(const AnalysisModel& model) {
  projects::Table table;
  table.column_level_names = {"scorer", "bodyparts", "coords"};
  for (const auto& bodypart : model.bodyparts) {
    for (const char* coord : {"x", "y", "likelihood"})
      table.columns.push_back({model.scorer, bodypart, coord});
  }
  table.integer_index = true;
  return table;
}

// The crop of the video the network sees: --crop, else config.yaml's when cropping is on.
std::optional<projects::CropBox> chosen_crop(const VideoRun& run) {
  return run.options.crop ? run.options.crop : run.model.crop;
}

VideoReaderOptions reader_options(const VideoRun& run,
                                  const std::optional<projects::CropBox>& crop) {
  return analysis_reading(run.backend, run.options.decoder_threads, run.options.decode_on_gpu,
                          crop_region(crop));
}

// A finished video: only a missing CSV is made, from the .h5.
void report_finished(const VideoRun& run, const VideoAnalysis& result) {
  std::error_code error;
  const std::string name = result.video.filename().string();
  if (run.options.csv && !fs::exists(result.files.csv, error)) {
    projects::write_table_csv(projects::read_table_hdf5(result.files.h5), result.files.csv);
    console::info("{}: already analyzed; wrote the missing {}", name,
                  result.files.csv.filename().string());
  } else {
    console::info("{}: already analyzed ({}); --overwrite analyzes it again", name,
                  result.files.h5.filename().string());
  }
}

// The bad frames of this run and, from the statuses in the checkpoint, of an earlier one.
void record_bad_frames(const Checkpoint& checkpoint, const RowWriter& writer,
                       VideoAnalysis& result) {
  const BadRows earlier = checkpoint.bad_rows(result.resumed_from);
  std::set<std::int64_t> bad(writer.undecodable_frames().begin(),
                             writer.undecodable_frames().end());
  std::set<std::int64_t> concealed(writer.damaged_frames().begin(), writer.damaged_frames().end());
  bad.insert(earlier.undecodable.begin(), earlier.undecodable.end());
  concealed.insert(earlier.damaged.begin(), earlier.damaged.end());
  result.undecodable_frames.assign(bad.begin(), bad.end());
  result.damaged_frames.assign(concealed.begin(), concealed.end());
}

// Every frame after the resumed rows into the checkpoint, then the checkpoint closed and the
// result's timing and bad frames set. Returns when it started, in local time. Throws Error of kind
// interrupted when stopped by Ctrl-C/SIGTERM (the checkpoint is kept).
std::string analyze_frames(const VideoRun& run, VideoReader& reader, Checkpoint& checkpoint,
                           VideoAnalysis& result) {
  const std::int64_t frames = reader.frame_count(), resumed = result.resumed_from;
  const DecodeSettings settings{run.model.stride, run.model.locref_stdev,
                                run.model.location_refinement};
  const auto runners = run.slots.runners(settings, run.batch_size, reader.height(), reader.width());
  const std::vector<PoseSlot> slots = pose_slots(runners);
  FrameDecoder decoder(reader, runners.front()->batch_size());

  const auto start = std::chrono::steady_clock::now();
  std::string started_text = local_time_text();
  Progress progress(result.video.filename().string(), frames - resumed, "frames");
  RowWriter writer(checkpoint, resumed, [&](std::int64_t batch_frames, std::int64_t rows) {
    progress.advance(batch_frames);
    if (run.options.on_batch) run.options.on_batch(rows);
  });
  const BatchShape shape{static_cast<std::size_t>(decoder.batch_size()), decoder.frame_bytes(),
                         writer.joints()};
  const bool done = run_analysis_stages(
      shape, [&decoder](FrameBatch& batch) { return decoder.fill(batch); }, slots,
      [&writer](const FrameBatch& batch) { writer.write(batch); }, run.backend.host_memory());
  progress.finish();
  if (!done) {
    throw Error(fmt::format("analysis stopped by {} at frame {} of {} in {}", interrupt_reason(),
                            writer.rows(), frames, result.video.filename().string()),
                "run the same command again: it resumes from " +
                    result.files.checkpoint.filename().string(),
                ErrorKind::interrupted);
  }
  writer.finish(frames);  // one row per frame, always: also for frames missing at the end
  checkpoint.close();
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.frames = frames;
  result.frames_per_second =
      result.seconds > 0 ? static_cast<double>(frames - resumed) / result.seconds : 0.0;
  record_bad_frames(checkpoint, writer, result);
  return started_text;
}

// The tracks (.h5, .csv on request) from the checkpoint, the metadata files, the checkpoint gone.
void write_outputs(const VideoRun& run, const VideoAnalysis& result, const VideoInfo& info,
                   const AnalysisIdentity& identity, const Checkpoint& checkpoint,
                   std::string started_text) {
  const projects::Table header = track_table_header(run.model);
  const projects::RowSource rows = [&](std::size_t first, std::size_t count, double* out) {
    std::vector<double> ignored;
    checkpoint.read(first, count, out, ignored);
  };
  const auto frames = static_cast<std::size_t>(result.frames);
  projects::write_frames_table_hdf5(header, frames, rows, result.files.h5);
  if (run.options.csv) projects::write_frames_table_csv(header, frames, rows, result.files.csv);
  const AnalysisRun record = finished_run(run.backend, run.model.iteration, run.batch_size,
                                          run.options.csv, result.seconds, std::move(started_text));
  write_analysis_metadata(run.model, result, info, identity, record);
  std::error_code error;
  fs::remove(result.files.checkpoint, error);
}

VideoAnalysis analyze_one(const VideoRun& run, const fs::path& video, const fs::path& folder) {
  VideoAnalysis result;
  result.video = video;
  result.files = analysis_files(folder, projects::video_stem(video.string()), run.model.scorer);
  const std::optional<projects::CropBox> crop = chosen_crop(run);
  VideoReader reader(video, reader_options(run, crop));  // checks that the crop fits
  const std::int64_t frames = reader.frame_count();
  if (!reader.exact_frame_numbers()) {
    console::warn("{} has no usable timestamps: frames are numbered in decoding order",
                  video.string());
  }
  AnalysisIdentity identity =
      AnalysisIdentity::of_video(video, frames, run.model.scorer,
                                 run.model.snapshot.filename().string(), crop, run.batch_size);
  identity.precision = nets::precision_name(run.backend.plan_precision());
  if (!run.options.overwrite && analysis_complete(result.files, identity)) {
    report_finished(run, result);
    result.outcome = VideoAnalysis::Outcome::skipped;
    result.frames = frames;
    return result;
  }
  if (run.options.overwrite) forget_analysis(result.files, result.files.checkpoint);

  Checkpoint checkpoint(result.files.checkpoint, 3 * run.model.bodyparts.size());
  result.resumed_from = checkpoint.open(identity);
  if (result.resumed_from > 0) {
    console::info("{}: resuming at frame {} of {}", video.filename().string(), result.resumed_from,
                  frames);
    reader.seek(result.resumed_from);
  }
  std::string started_text = analyze_frames(run, reader, checkpoint, result);
  write_outputs(run, result, reader.info(), identity, checkpoint, std::move(started_text));
  if (!result.undecodable_frames.empty()) {
    console::warn("{}: {} frame{} could not be decoded (NaN rows), the first at frame {}",
                  video.filename().string(), result.undecodable_frames.size(),
                  result.undecodable_frames.size() == 1 ? "" : "s",
                  result.undecodable_frames.front());
  }
  return result;
}

// The same network in fp32 on the same device, for --against-fp32: it analyzes a video again into
// a temporary folder beside the outputs, compares the tracks and removes the folder.
class Fp32Reference {
 public:
  explicit Fp32Reference(const VideoRun& reduced)
      : backend_(devices::make_backend(reduced.options.device)),
        net_(load_model_network(*backend_, reduced.model)),
        options_(reduced.options),
        slots_(analysis_slots(*backend_, *net_, reduced.model, options_)),
        run_{reduced.model, options_, *backend_, slots_, reduced.batch_size},
        precision_(nets::precision_name(reduced.backend.plan_precision())) {
    options_.overwrite = true;
    options_.csv = false;
    options_.on_batch = nullptr;
  }

  void compare(VideoAnalysis& result, const fs::path& folder) {
    const fs::path temporary =
        folder / fmt::format(".labpose-fp32-{}-{}", ::getpid(), result.video.stem().string());
    create_folder(temporary);
    const TemporaryFolder removed{temporary};
    console::info("{}: analyzing it again in fp32, to compare (--against-fp32)",
                  result.video.filename().string());
    const VideoAnalysis fp32 = analyze_one(run_, result.video, temporary);
    PrecisionComparison comparison =
        compare_tracks(result.files.h5, fp32.files.h5, run_.model.pcutoff);
    comparison.precision = precision_;
    comparison.frames_per_second = result.frames_per_second;
    comparison.fp32_frames_per_second = fp32.frames_per_second;
    record_comparison(result.files.meta_json, comparison);
    console::info("{}", comparison_text(result.video.filename().string(), comparison));
    result.against_fp32 = comparison;
  }

 private:
  struct TemporaryFolder {
    fs::path path;
    ~TemporaryFolder() {
      std::error_code error;
      fs::remove_all(path, error);
    }
  };

  std::unique_ptr<nets::Backend> backend_;
  std::unique_ptr<nets::Net> net_;
  AnalyzeOptions options_;
  DeviceSlots slots_;
  VideoRun run_;
  std::string precision_;
};

// A video that could not be analyzed, with why.
VideoAnalysis failed_video(const fs::path& video, const fs::path& folder,
                           const AnalysisModel& model, const Error& error) {
  VideoAnalysis failed;
  failed.video = video;
  failed.files = analysis_files(folder, projects::video_stem(video.string()), model.scorer);
  mark_failed(failed, error);
  return failed;
}

}  // namespace

void mark_failed(VideoAnalysis& result, const Error& error) {
  result.outcome = VideoAnalysis::Outcome::failed;
  result.error = error.what();
  if (!error.hint().empty()) result.error += fmt::format(" (hint: {})", error.hint());
  console::warn("{}", result.error);
}

std::vector<VideoAnalysis> analyze_videos(const projects::ProjectConfig& config,
                                          const std::vector<fs::path>& videos,
                                          const AnalyzeOptions& options) {
  if (config.values().multi_animal) return analyze_multi_animal_videos(config, videos, options, {});
  return analyze_videos(find_analysis_model(config, options.shuffle, options.training_fraction,
                                            options.snapshot_index, options.best_snapshot),
                        videos, options);
}

std::vector<VideoAnalysis> analyze_videos(const AnalysisModel& model,
                                          const std::vector<fs::path>& videos,
                                          const AnalyzeOptions& options) {
  const int batch_size =
      options.batch_size > 0 ? options.batch_size : std::max(1, model.batch_size);
  if (options.dest) {
    std::error_code error;
    fs::create_directories(*options.dest, error);
    if (error) {
      throw Error(
          fmt::format("cannot make the folder {}: {}", options.dest->string(), error.message()),
          "pick another --dest");
    }
  }
  const auto backend = make_analysis_backend(options.device, options.precision, model);
  const auto net = load_model_network(*backend, model);
  const DeviceSlots slots = analysis_slots(*backend, *net, model, options);
  console::info("analyzing {} video{} with {} ({}) on {} in {}, batch {}{}", videos.size(),
                videos.size() == 1 ? "" : "s", model.scorer, model.snapshot.filename().string(),
                backend->name(), nets::precision_name(backend->plan_precision()), batch_size,
                slots.count() > 1 ? fmt::format(", {} batches at once", slots.count()) : "");
  const VideoRun run{model, options, *backend, slots, batch_size};
  std::optional<Fp32Reference> reference;
  if (options.against_fp32) {
    if (backend->plan_precision() == nets::PlanPrecision::fp32) {
      console::info("--against-fp32: this analysis is fp32 already; nothing to compare");
    } else {
      reference.emplace(run);
    }
  }
  std::vector<VideoAnalysis> results;
  for (std::size_t i = 0; i < videos.size(); ++i) {
    const fs::path& video = videos[i];
    if (videos.size() > 1)
      console::info("video {} of {}: {}", i + 1, videos.size(), video.string());
    const fs::path folder = options.dest ? *options.dest : video.parent_path();
    try {
      results.push_back(analyze_one(run, video, folder));
      if (reference && results.back().outcome == VideoAnalysis::Outcome::analyzed) {
        reference->compare(results.back(), folder);
      } else if (reference) {
        console::info(
            "{}: not analyzed now, so not compared with fp32 (--overwrite analyzes it "
            "again)",
            video.filename().string());
      }
    } catch (const Error& error) {
      if (error.kind() == ErrorKind::interrupted) throw;
      results.push_back(failed_video(video, folder, model, error));
    }
  }
  return results;
}

}  // namespace labpose::pipeline
