// Video analysis: decode -> network -> peaks -> checkpoint rows, on three threads with bounded
// queues of preallocated batches, then the DeepLabCut outputs written from the checkpoint.
#include "pipeline/analysis/analyze.hpp"

#include <fmt/core.h>
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <exception>
#include <limits>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

#include "core/bounded_queue.hpp"
#include "core/console.hpp"
#include "core/error.hpp"
#include "core/interrupt.hpp"
#include "core/progress.hpp"
#include "core/thread_priority.hpp"
#include "nets/fused_graph.hpp"
#include "pipeline/analysis/analysis_metadata.hpp"
#include "pipeline/analysis/checkpoint.hpp"
#include "pipeline/devices.hpp"
#include "pipeline/pose/decode.hpp"
#include "pipeline/training/snapshot.hpp"
#include "pipeline/video/reader.hpp"
#include "projects/layout.hpp"
#include "projects/table.hpp"

namespace labpose::pipeline {
namespace fs = std::filesystem;

namespace {

constexpr int kBatchesInFlight = 3;

double epoch_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// One batch in flight: the decoded frames and the network's outputs.
struct Batch {
  std::vector<FrameRead> reads;      // one per frame read into this batch
  std::vector<std::uint8_t> pixels;  // B frames, packed RGB
  std::vector<float> score, locref;  // (B, J, h, w), (B, 2J, h, w)
};

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

struct VideoRun {
  const projects::ProjectConfig& config;
  const AnalysisModel& model;
  const AnalyzeOptions& options;
  nets::Backend& backend;
  const nets::Net& net;
  int batch_size;
};

// The frames as the network sees them: the crop of the video (x2, y2 exclusive, as DeepLabCut
// slices) or the whole frame.
std::optional<PixelRect> crop_rect(const std::optional<projects::CropBox>& crop) {
  if (!crop) return std::nullopt;
  return PixelRect{crop->x1, crop->y1, crop->x2 - crop->x1, crop->y2 - crop->y1};
}

// Runs `body` on a thread; its exception is kept for the owner, and `on_failure` (closing the
// queues) lets the other stages stop instead of waiting for it.
class Stage {
 public:
  template <typename Body, typename OnFailure>
  Stage(Body body, OnFailure on_failure)
      : thread_([this, body = std::move(body), on_failure = std::move(on_failure)]() mutable {
          try {
            body();
          } catch (...) {
            error_ = std::current_exception();
            on_failure();
          }
        }) {}
  ~Stage() { join(); }
  Stage(const Stage&) = delete;
  Stage& operator=(const Stage&) = delete;
  void join() {
    if (thread_.joinable()) thread_.join();
  }
  std::exception_ptr error() const { return error_; }

 private:
  std::exception_ptr error_;
  std::thread thread_;
};

VideoAnalysis analyze_one(const VideoRun& run, const fs::path& video, const fs::path& folder) {
  VideoAnalysis result;
  result.video = video;
  const std::string stem = projects::video_stem(video.string());
  result.files = analysis_files(folder, stem, run.model.scorer);
  const auto& values = run.config.values();
  const std::optional<projects::CropBox> crop =
      run.options.crop ? run.options.crop : (values.cropping ? values.crop : std::nullopt);

  // When the network runs on this machine's cores, decoding competes with it for them: one
  // decoder thread at background priority then fills the moments the network leaves idle instead
  // of preempting its threads (which stalls the whole team at its next barrier). With a GPU the
  // cores are free for one decoder thread each.
  const bool network_on_cores = run.backend.host_memory();
  VideoReaderOptions reader_options;
  reader_options.order = PixelOrder::rgb;
  reader_options.crop = crop_rect(crop);
  reader_options.threads =
      run.options.decoder_threads > 0 ? run.options.decoder_threads : (network_on_cores ? 1 : 0);
  const VideoInfo info = probe_video(video);
  if (crop && (crop->x2 > info.width || crop->y2 > info.height)) {
    throw Error(fmt::format("the crop {} does not fit {} ({}x{})", crop->text(), video.string(),
                            info.width, info.height),
                "fix x1, x2, y1, y2 in config.yaml (or --crop x1,x2,y1,y2), or turn cropping off");
  }
  VideoReader reader(video, reader_options);
  const std::int64_t frames = reader.frame_count();
  if (!reader.exact_frame_numbers()) {
    console::warn("{} has no usable timestamps: frames are numbered in decoding order",
                  video.string());
  }

  const AnalysisIdentity identity =
      AnalysisIdentity::of_video(video, frames, run.model.scorer,
                                 run.model.snapshot.filename().string(), crop, run.batch_size);

  if (!run.options.overwrite && analysis_complete(result.files, identity)) {
    std::error_code error;
    if (run.options.csv && !fs::exists(result.files.csv, error)) {
      projects::write_table_csv(projects::read_table_hdf5(result.files.h5), result.files.csv);
      console::info("{}: already analyzed; wrote the missing {}", video.filename().string(),
                    result.files.csv.filename().string());
    } else {
      console::info("{}: already analyzed ({}); --overwrite analyzes it again",
                    video.filename().string(), result.files.h5.filename().string());
    }
    result.outcome = VideoAnalysis::Outcome::skipped;
    result.frames = frames;
    return result;
  }
  if (run.options.overwrite) {
    std::error_code error;
    fs::remove(result.files.checkpoint, error);
  }

  const std::size_t joints = run.model.bodyparts.size();
  const std::size_t columns = 3 * joints;
  Checkpoint checkpoint(result.files.checkpoint, columns);
  const std::int64_t resumed = checkpoint.open(identity);
  result.resumed_from = resumed;
  if (resumed > 0) {
    console::info("{}: resuming at frame {} of {}", video.filename().string(), resumed, frames);
    reader.seek(resumed);
  }

  const int batch = run.batch_size;
  const int height = reader.height(), width = reader.width();
  LABPOSE_ASSERT(reader.frame_bytes() ==
                 3 * static_cast<std::size_t>(height) * static_cast<std::size_t>(width));
  const nets::Shape input_shape{batch, 3, height, width};
  const std::unique_ptr<nets::InferencePlan> plan =
      run.backend.compile(run.net.fuse(true), input_shape);
  nets::Tensor input = run.backend.allocate(input_shape);
  const nets::Shape score_shape = plan->output_shapes()[0];
  const nets::Shape locref_shape = plan->output_shapes()[1];
  const int map_height = static_cast<int>(score_shape.h()),
            map_width = static_cast<int>(score_shape.w());
  const std::size_t score_per_frame = joints * static_cast<std::size_t>(map_height * map_width);
  const DecodeSettings settings{run.model.stride, run.model.locref_stdev,
                                run.model.location_refinement};

  std::vector<Batch> batches(kBatchesInFlight);
  BoundedQueue<Batch*> free_batches(kBatchesInFlight), decoded(kBatchesInFlight),
      predicted(kBatchesInFlight);
  for (Batch& b : batches) {
    b.pixels.resize(static_cast<std::size_t>(batch) * reader.frame_bytes());
    b.score.resize(static_cast<std::size_t>(score_shape.elements()));
    b.locref.resize(static_cast<std::size_t>(locref_shape.elements()));
    b.reads.reserve(static_cast<std::size_t>(batch));
    free_batches.push(&b);
  }
  std::atomic<bool> stop{false};
  const auto close_all = [&] {
    stop = true;
    free_batches.close();
    decoded.close();
    predicted.close();
  };

  const auto start = std::chrono::steady_clock::now();
  const std::string started_text = local_time_text();
  Progress progress(video.filename().string(), frames - resumed, "frames");
  std::int64_t written = resumed;
  std::vector<std::int64_t> undecodable, damaged;

  // Decode: frames into free batches.
  Stage decode(
      [&] {
        if (network_on_cores) move_this_thread_to_background();
        std::int64_t next = resumed;
        while (!stop && next < frames) {
          const auto taken = free_batches.pop();
          if (!taken) return;
          Batch& b = **taken;
          b.reads.clear();
          while (static_cast<int>(b.reads.size()) < batch) {
            std::uint8_t* pixels = b.pixels.data() + b.reads.size() * reader.frame_bytes();
            const auto read = reader.read(pixels);
            if (!read) break;
            b.reads.push_back(*read);
          }
          if (b.reads.empty()) break;
          next = b.reads.back().index + 1;
          if (!decoded.push(&b)) return;
        }
        decoded.close();
      },
      close_all);

  // Peaks: keypoints of each frame, rows to the checkpoint.
  Stage peaks(
      [&] {
        std::vector<KeypointPrediction> keypoints(joints);
        std::vector<double> rows;
        const double nan = std::numeric_limits<double>::quiet_NaN();
        while (const auto taken = predicted.pop()) {
          Batch& b = **taken;
          rows.clear();
          for (std::size_t i = 0; i < b.reads.size(); ++i) {
            const FrameRead& read = b.reads[i];
            // Frames the decoder skipped (missing from the stream) and undecodable ones are NaN
            // rows.
            for (; written < read.index; ++written) {
              rows.insert(rows.end(), columns, nan);
              rows.push_back(kRowUndecodable);
              undecodable.push_back(written);
            }
            if (read.status == FrameStatus::undecodable) {
              rows.insert(rows.end(), columns, nan);
              rows.push_back(kRowUndecodable);
              undecodable.push_back(read.index);
            } else {
              decode_keypoints(b.score.data() + i * score_per_frame,
                               b.locref.data() + i * 2 * score_per_frame, static_cast<int>(joints),
                               map_height, map_width, settings, keypoints.data());
              for (const auto& k : keypoints) rows.insert(rows.end(), {k.x, k.y, k.likelihood});
              rows.push_back(read.status == FrameStatus::damaged ? kRowDamaged : kRowOk);
              if (read.status == FrameStatus::damaged) damaged.push_back(read.index);
            }
            written = read.index + 1;
          }
          checkpoint.append(rows.data(), rows.size() / checkpoint.row_doubles());
          progress.advance(static_cast<std::int64_t>(b.reads.size()));
          if (run.options.on_batch) run.options.on_batch(written);
          free_batches.push(
              &b);  // refused once stopping: the remaining predicted batches still drain
        }
      },
      close_all);

  // Network, on this thread.
  std::exception_ptr network_error;
  bool interrupted = false;
  try {
    while (true) {
      if (interrupt_requested()) {
        interrupted = true;
        break;
      }
      const auto taken = decoded.pop();
      if (!taken) break;
      Batch& b = **taken;
      run.backend.copy_pixels_from_host(b.pixels.data(), input);
      const auto& outputs = plan->run(input);
      run.backend.copy_to_host(outputs[0], b.score.data());
      run.backend.copy_to_host(outputs[1], b.locref.data());
      if (!predicted.push(&b)) break;
    }
  } catch (...) {
    network_error = std::current_exception();
  }
  if (interrupted || network_error) {
    stop = true;
    free_batches.close();
    decoded.close();
  }
  predicted.close();  // the peaks stage finishes what was predicted
  peaks.join();
  close_all();
  decode.join();
  progress.finish();
  for (const std::exception_ptr& error : {network_error, decode.error(), peaks.error()}) {
    if (error) std::rethrow_exception(error);
  }
  if (interrupted) {
    throw Error(fmt::format("analysis stopped by {} at frame {} of {} in {}", interrupt_reason(),
                            written, frames, video.filename().string()),
                "run the same command again: it resumes from " +
                    result.files.checkpoint.filename().string(),
                ErrorKind::interrupted);
  }
  // Frames missing at the end of the stream are NaN rows too: one row per frame, always.
  if (written < frames) {
    std::vector<double> rows;
    for (; written < frames; ++written) {
      rows.insert(rows.end(), columns, std::numeric_limits<double>::quiet_NaN());
      rows.push_back(kRowUndecodable);
      undecodable.push_back(written);
    }
    checkpoint.append(rows.data(), rows.size() / checkpoint.row_doubles());
  }
  checkpoint.close();
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.frames = frames;
  result.frames_per_second =
      result.seconds > 0 ? static_cast<double>(frames - resumed) / result.seconds : 0.0;

  // The bad frames of an earlier run, from the statuses in the checkpoint.
  std::set<std::int64_t> bad(undecodable.begin(), undecodable.end());
  std::set<std::int64_t> concealed(damaged.begin(), damaged.end());
  const BadRows earlier = checkpoint.bad_rows(resumed);
  bad.insert(earlier.undecodable.begin(), earlier.undecodable.end());
  concealed.insert(earlier.damaged.begin(), earlier.damaged.end());
  result.undecodable_frames.assign(bad.begin(), bad.end());
  result.damaged_frames.assign(concealed.begin(), concealed.end());

  const projects::Table header = track_table_header(run.model);
  const projects::RowSource rows = [&](std::size_t first, std::size_t count, double* out) {
    std::vector<double> ignored;
    checkpoint.read(first, count, out, ignored);
  };
  const double stopped = epoch_seconds();
  projects::write_frames_table_hdf5(header, static_cast<std::size_t>(frames), rows,
                                    result.files.h5);
  if (run.options.csv) {
    projects::write_frames_table_csv(header, static_cast<std::size_t>(frames), rows,
                                     result.files.csv);
  }
  AnalysisRun record;
  record.iteration = values.iteration;
  record.device = run.backend.name();
  record.device_description = run.backend.description();
  record.batch_size = run.batch_size;
  record.csv = run.options.csv;
  record.started = stopped - result.seconds;
  record.stopped = stopped;
  record.started_text = started_text;
  write_analysis_metadata(run.model, result, info, identity, record);
  std::error_code error;
  fs::remove(result.files.checkpoint, error);
  if (!result.undecodable_frames.empty()) {
    console::warn("{}: {} frame{} could not be decoded (NaN rows), the first at frame {}",
                  video.filename().string(), result.undecodable_frames.size(),
                  result.undecodable_frames.size() == 1 ? "" : "s",
                  result.undecodable_frames.front());
  }
  return result;
}

}  // namespace

std::vector<VideoAnalysis> analyze_videos(const projects::ProjectConfig& config,
                                          const std::vector<fs::path>& videos,
                                          const AnalyzeOptions& options) {
  const AnalysisModel model =
      find_analysis_model(config, options.shuffle, options.training_fraction,
                          options.snapshot_index, options.best_snapshot);
  const int batch_size =
      options.batch_size > 0 ? options.batch_size : std::max(1, config.values().batch_size);
  if (options.dest) {
    std::error_code error;
    fs::create_directories(*options.dest, error);
    if (error) {
      throw Error(
          fmt::format("cannot make the folder {}: {}", options.dest->string(), error.message()),
          "pick another --dest");
    }
  }
  const auto backend = make_backend(options.device);
  const LoadedSnapshot loaded = read_snapshot(model.snapshot);
  if (loaded.metadata.bodyparts != model.bodyparts ||
      loaded.metadata.architecture != model.net_type) {
    throw Error(fmt::format("{} is a {} for {}, but its pose_cfg.yaml says {} for {}",
                            model.snapshot.string(), loaded.metadata.architecture,
                            fmt::join(loaded.metadata.bodyparts, ", "), model.net_type,
                            fmt::join(model.bodyparts, ", ")),
                "the snapshot does not belong to this shuffle: train it again");
  }
  const auto net = load_snapshot_network(*backend, loaded, model.snapshot);
  console::info("analyzing {} video{} with {} ({}) on {}, batch {}", videos.size(),
                videos.size() == 1 ? "" : "s", model.scorer, model.snapshot.filename().string(),
                backend->name(), batch_size);
  const VideoRun run{config, model, options, *backend, *net, batch_size};
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
      VideoAnalysis failed;
      failed.video = video;
      failed.files = analysis_files(folder, projects::video_stem(video.string()), model.scorer);
      failed.outcome = VideoAnalysis::Outcome::failed;
      failed.error = error.what();
      if (!error.hint().empty()) failed.error += fmt::format(" (hint: {})", error.hint());
      console::warn("{}", failed.error);
      results.push_back(std::move(failed));
    }
  }
  return results;
}

}  // namespace labpose::pipeline
