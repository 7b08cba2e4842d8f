// Multi-animal video analysis, one video after another: skip a finished video, resume from its
// journal, detect every frame into the journal, then assemble, track and write DeepLabCut's files.
#include "pipeline/analysis/multi_animal_analysis.hpp"

#include <fmt/core.h>
#include <opencv2/core.hpp>

#include <chrono>

#include "core/atomic_file.hpp"
#include "core/console.hpp"
#include "core/error.hpp"
#include "core/interrupt.hpp"
#include "core/progress.hpp"
#include "devices/devices.hpp"
#include "pipeline/analysis/analysis_metadata.hpp"
#include "pipeline/analysis/detection_journal.hpp"
#include "pipeline/analysis/multi_animal_files.hpp"
#include "pipeline/analysis/multi_animal_model_choice.hpp"
#include "pipeline/analysis/multi_animal_tracking.hpp"
#include "pipeline/analysis/stages.hpp"
#include "pipeline/assembly/identity.hpp"
#include "pipeline/assembly/temporal_prior.hpp"
#include "pipeline/pose/animal_predictor.hpp"
#include "pipeline/training/snapshot.hpp"
#include "pipeline/video/reader.hpp"
#include "projects/layout.hpp"
#include "projects/table.hpp"

namespace labpose::pipeline {
namespace fs = std::filesystem;

namespace {

// What every video of one call shares.
struct AnimalRun {
  const AnimalAnalysisModel& model;
  const AnalyzeOptions& options;
  const MultiAnimalOptions& multi;
  nets::Backend& backend;
  AnimalPredictor& predictor;
};

// One video's outputs and what makes them this analysis.
struct AnimalVideo {
  VideoAnalysis result;
  MultiAnimalFiles files;
  AnalysisIdentity identity;
};

bool outputs_exist(const AnimalRun& run, const AnimalVideo& video) {
  std::error_code error;
  bool exist = fs::exists(video.files.full_pickle, error) &&
               fs::exists(video.files.assemblies_pickle, error);
  if (run.multi.track) exist = exist && fs::exists(video.files.tracklets_pickle, error);
  return exist && analysis_complete(video.result.files, video.identity);
}

// Frames from the journal's end to the video's into the journal. Throws Error of kind
// interrupted when stopped by Ctrl-C/SIGTERM (the journal is kept).
void detect_frames(const AnimalRun& run, VideoReader& reader, DetectionJournal& journal,
                   VideoAnalysis& result) {
  const std::int64_t frames = reader.frame_count();
  cv::Mat rgb(reader.height(), reader.width(), CV_8UC3);
  ImageDetections nothing;  // an undecodable frame's
  nothing.candidates.resize(run.model.model.bodyparts.size());
  nothing.costs.resize(run.model.animals.graph.size());
  if (run.model.animals.identity_channels > 0)
    nothing.identity.resize(run.model.model.bodyparts.size());
  Progress progress(result.video.filename().string(), frames - result.resumed_from, "frames");
  std::int64_t rows = result.resumed_from;
  while (const auto read = reader.read(rgb.ptr<std::uint8_t>())) {
    if (interrupt_requested()) {
      progress.finish();
      throw Error(fmt::format("analysis stopped by {} at frame {} of {} in {}", interrupt_reason(),
                              rows, frames, result.video.filename().string()),
                  "run the same command again: it resumes from " +
                      result.files.checkpoint.filename().string(),
                  ErrorKind::interrupted);
    }
    if (read->status == FrameStatus::undecodable) {
      journal.append(read->index, kRowUndecodable, nothing);
    } else {
      const double status = read->status == FrameStatus::damaged ? kRowDamaged : kRowOk;
      journal.append(read->index, status, run.predictor.detect(rgb));
    }
    progress.advance();
    if (run.options.on_batch) run.options.on_batch(++rows);
  }
  progress.finish();
  journal.close();
}

const std::vector<Assembly> kNoAnimals;

// The pickles from the journal (and the bad frames of every run into the result), then the
// tracklets and the tracks.
// Returns the seconds that linking and stitching took.
double write_animal_files(const AnimalRun& run, AnimalVideo& video,
                          const DetectionJournal& journal) {
  const AnimalAnalysisModel& model = run.model;
  const AnimalFileHeader header = animal_file_header(model, video.result.frames);
  std::vector<Assemblies> assembled(static_cast<std::size_t>(video.result.frames));
  FullPickleWriter full(video.files.full_pickle, header);
  MapAssemblySettings settings = model.assembly;
  settings.temporal.enabled = settings.temporal.enabled && run.multi.temporal_prior;
  std::int64_t previous = -1;  // the last frame assembled
  journal.for_each([&](const JournalFrame& frame) {
    if (frame.status == kRowDamaged) video.result.damaged_frames.push_back(frame.index);
    if (frame.status == kRowUndecodable) video.result.undecodable_frames.push_back(frame.index);
    if (frame.status == kRowUndecodable || frame.index >= video.result.frames) return;
    full.add(frame.index, frame.detections);
    Assemblies& animals = assembled[static_cast<std::size_t>(frame.index)];
    // the animals of the frame before, where it was read (the temporal prior's)
    const std::vector<Assembly>& before =
        frame.index > 0 && frame.index - 1 == previous
            ? assembled[static_cast<std::size_t>(previous)].animals
            : kNoAnimals;
    animals = assemble_after(frame.detections, model.animals.graph, model.edges,
                             static_cast<int>(model.multi_bodyparts.size()), settings, before);
    previous = frame.index;
    attach_identities(animals, frame.detections);
  });
  full.commit();
  write_assemblies_pickle(video.files.assemblies_pickle, assembled);
  if (!run.multi.track) return 0.0;
  const auto start = std::chrono::steady_clock::now();
  const Tracklets tracklets =
      track_assemblies(assembled, model.tracker, header, video.files.tracklets_pickle);
  check_stitch_settings(model.stitch);  // inference_cfg.yaml's: the user's error, not the data's
  stitch_into_tracks(tracklets, model.stitch, header, video.files, run.options.csv,
                     video.result.video.filename().string());
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

VideoReaderOptions reader_options(const AnimalRun& run) {
  return analysis_reading(run.backend, run.options.decoder_threads, run.options.decode_on_gpu,
                          crop_region(run.options.crop ? run.options.crop : run.model.model.crop));
}

AnimalVideo video_outputs(const AnimalRun& run, const fs::path& video, const fs::path& folder) {
  AnimalVideo out;
  const std::string stem = projects::video_stem(video.string());
  const std::string& scorer = run.model.model.scorer;
  out.files = multi_animal_files(folder, stem, scorer, run.multi.tracker);
  out.result.video = video;
  out.result.files = analysis_files(folder, stem, scorer);
  out.result.files.h5 = run.multi.track ? out.files.tracks_h5 : out.files.assemblies_pickle;
  out.result.files.csv = out.files.tracks_csv;
  out.result.files.checkpoint = out.files.journal;
  return out;
}

VideoAnalysis analyze_one(const AnimalRun& run, const fs::path& video, const fs::path& folder) {
  AnimalVideo out = video_outputs(run, video, folder);
  VideoAnalysis& result = out.result;
  const std::optional<projects::CropBox> crop =
      run.options.crop ? run.options.crop : run.model.model.crop;
  VideoReader reader(video, reader_options(run));  // checks that the crop fits
  const std::int64_t frames = reader.frame_count();
  out.identity = AnalysisIdentity::of_video(video, frames, run.model.model.scorer,
                                            run.model.model.snapshot.filename().string(), crop, 1);
  // A journal of another precision starts over, as a checkpoint does.
  out.identity.precision = nets::precision_name(run.backend.plan_precision());
  if (!run.options.overwrite && outputs_exist(run, out)) {
    std::error_code error;
    if (run.multi.track && run.options.csv && !fs::exists(out.files.tracks_csv, error)) {
      projects::write_table_csv(projects::read_table_hdf5(out.files.tracks_h5, "tracks"),
                                out.files.tracks_csv);
    }
    console::info("{}: already analyzed ({}); --overwrite analyzes it again",
                  video.filename().string(), result.files.h5.filename().string());
    result.outcome = VideoAnalysis::Outcome::skipped;
    result.frames = frames;
    return result;
  }
  if (run.options.overwrite) forget_analysis(result.files, out.files.journal);
  DetectionJournal journal(
      out.files.journal,
      {static_cast<int>(run.model.model.bodyparts.size()), run.model.edges,
       static_cast<int>(run.model.animals.graph.size()), run.model.animals.identity_channels});
  result.resumed_from = journal.open(out.identity);
  if (result.resumed_from > 0) {
    console::info("{}: resuming at frame {} of {}", video.filename().string(), result.resumed_from,
                  frames);
    reader.seek(result.resumed_from);
  }
  const std::string started_text = local_time_text();
  const auto start = std::chrono::steady_clock::now();
  detect_frames(run, reader, journal, result);
  result.frames = frames;
  const double tracking = write_animal_files(run, out, journal);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (run.multi.track && result.seconds > 0) {
    console::info("{}: tracking took {:.2f} s of the analysis's {:.1f} s ({:.1f} %)",
                  video.filename().string(), tracking, result.seconds,
                  100.0 * tracking / result.seconds);
  }
  result.frames_per_second =
      result.seconds > 0 ? static_cast<double>(frames - result.resumed_from) / result.seconds : 0.0;
  const AnalysisRun record =
      finished_run(run.backend, run.model.model.iteration, 1, run.options.csv && run.multi.track,
                   result.seconds, started_text);
  write_analysis_metadata(run.model.model, result, reader.info(), out.identity, record);
  std::error_code error;
  fs::remove(out.files.journal, error);
  return result;
}

}  // namespace

void check_multi_animal_precision(nets::PlanPrecision precision) {
  if (precision != nets::PlanPrecision::int8) return;
  throw UsageError(
      "--precision int8 is for single-animal projects: its accuracy check measures one animal's "
      "keypoints against fp32",
      "--precision bf16 (or auto, which takes bf16 where the CPU's bf16 units are clearly "
      "faster) runs a multi-animal project's network in reduced precision");
}

std::unique_ptr<nets::Backend> make_animal_backend(const std::string& device,
                                                   nets::PlanPrecision precision) {
  check_multi_animal_precision(precision);
  return devices::make_backend(device, precision);
}

void check_multi_animal_options(const AnalyzeOptions& options) {
  const auto refuse = [](const std::string& option) {
    throw UsageError(fmt::format("{} is for single-animal projects: labpose analyzes videos of "
                                 "several animals frame by frame",
                                 option),
                     "leave it out for this project");
  };
  check_multi_animal_precision(options.precision);
  if (options.against_fp32) refuse("--against-fp32");
  if (options.batch_size > 0) refuse("--batch-size");
  if (options.slots > 0) refuse("--slots");
}

std::vector<VideoAnalysis> analyze_multi_animal_videos(const projects::ProjectConfig& config,
                                                       const std::vector<fs::path>& videos,
                                                       const AnalyzeOptions& options,
                                                       const MultiAnimalOptions& multi) {
  check_multi_animal_options(options);
  const AnimalAnalysisModel model = find_animal_analysis_model(config, options, multi.tracker);
  if (options.dest) create_folder(*options.dest);
  const auto backend = make_animal_backend(options.device, options.precision);
  const auto net = load_snapshot_network(*backend, *model.snapshot, model.model.snapshot);
  AnimalPredictor predictor(*backend, *net, model.animals,
                            static_cast<int>(model.model.bodyparts.size()), model.assembly);
  predictor.use_edges(model.edges);
  console::info(
      "analyzing {} video{} of {} animals with {} ({}) on {} in {}, frame by frame, {} of {} "
      "edges{}{}",
      videos.size(), videos.size() == 1 ? "" : "s", model.individuals.size(), model.model.scorer,
      model.model.snapshot.filename().string(), backend->name(),
      nets::precision_name(backend->plan_precision()), model.edges.size(),
      model.animals.graph.size(), multi.temporal_prior ? "" : ", each frame assembled alone",
      multi.track ? fmt::format(", {} tracker", tracker_file_code(multi.tracker)) : "");
  const AnimalRun run{model, options, multi, *backend, predictor};
  std::vector<VideoAnalysis> results;
  for (std::size_t i = 0; i < videos.size(); ++i) {
    const fs::path& video = videos[i];
    if (videos.size() > 1)
      console::info("video {} of {}: {}", i + 1, videos.size(), video.string());
    const fs::path folder = options.dest ? *options.dest : video.parent_path();
    try {
      results.push_back(analyze_one(run, video, folder));
    } catch (const Error& error) {
      if (error.kind() == ErrorKind::interrupted) throw;
      VideoAnalysis failed = video_outputs(run, video, folder).result;
      mark_failed(failed, error);
      results.push_back(std::move(failed));
    }
  }
  return results;
}

}  // namespace labpose::pipeline
