// labpose track <config> <video|folder>... [--tracker ellipse|box|identity] [--shuffle K]
//   [--training-fraction F] [--snapshot S] [--dest D] [--overwrite]
// DeepLabCut's convert_detections2tracklets: a multi-animal video's _assemblies.pickle (from
// labpose analyze --no-track, or DeepLabCut's analyze_videos with auto_track=False) linked into
// the tracklets _el.pickle (_bx.pickle), without running the network again.
#include "pipeline/analysis/multi_animal_tracking.hpp"
#include "tools/labpose/command.hpp"
#include "tools/labpose/track_step.hpp"

namespace labpose::tools {

Command track_command() {
  Command command;
  command.name = "track";
  command.summary =
      "link a multi-animal video's assemblies into tracklets (DeepLabCut's "
      "convert_detections2tracklets)";
  command.define = [](CLI::App& app) -> std::function<int()> {
    auto options = std::make_shared<TrackStepCli>();
    options->add_to(app, "tracklets to write");
    app.footer(
        "Reads <video stem><scorer>_assemblies.pickle (labpose analyze writes it; with --no-track "
        "it stops there) and writes the tracklets <stem><scorer>_el.pickle (_bx.pickle with "
        "--tracker box, _id.pickle with --tracker identity), linked with the tracker settings of "
        "the shuffle's test/inference_cfg.yaml (max_age, min_hits, iou_threshold, "
        "boundingboxslack); the identity column of the assemblies, when they have one, gives each "
        "animal its identity votes. Videos "
        "whose tracklets exist are skipped (--overwrite to link them again). labpose stitch "
        "makes the tracks from them.");
    return [options]() { return options->run(pipeline::track_videos); };
  };
  return command;
}

}  // namespace labpose::tools
