// --algo/--num/--crop/--cluster-*/--seed/--threads for the commands that extract frames.
#include "tools/labpose/frame_options.hpp"

#include <random>

#include "core/console.hpp"

namespace labpose::tools {

void FrameOptions::add_to(CLI::App& app, const std::string& algo_flag) {
  app.add_option(algo_flag, algorithm,
                 "kmeans: one frame per cluster of similar-looking frames (default); uniform: "
                 "frames drawn at random")
      ->check(CLI::IsMember({"kmeans", "uniform"}));
  app.add_option("--num", frames, "new frames per video (default: numframes2pick in config.yaml)")
      ->check(CLI::NonNegativeNumber);
  app.add_flag("--crop", crop,
               "crop the frames to each video's crop box in config.yaml (video_sets)");
  app.add_option("--cluster-resize-width", cluster_resize_width,
                 "kmeans: shrink frames to this width before clustering (default 30)")
      ->check(CLI::PositiveNumber);
  app.add_flag("--cluster-color", cluster_color,
               "kmeans: cluster colour images instead of grey ones");
  app.add_option("--seed", seed,
                 "random seed; the same seed picks the same frames (default: a new one, printed)");
  app.add_option("--threads", threads, "decoder threads (default: one per core)")
      ->check(CLI::NonNegativeNumber);
}

pipeline::ExtractFramesOptions FrameOptions::resolve() const {
  pipeline::ExtractFramesOptions extract;
  extract.selection =
      algorithm == "uniform" ? pipeline::FrameSelection::uniform : pipeline::FrameSelection::kmeans;
  extract.frames = frames;
  extract.crop = crop;
  extract.cluster_resize_width = cluster_resize_width;
  extract.cluster_color = cluster_color;
  extract.threads = threads;
  extract.seed = seed ? *seed : std::random_device{}();
  if (!seed) {
    console::info("random seed {} (pass --seed {} to pick the same frames again)", extract.seed,
                  extract.seed);
  }
  return extract;
}

}  // namespace labpose::tools
