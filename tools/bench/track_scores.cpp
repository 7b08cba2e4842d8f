// labpose-bench-tracks: how well a multi-animal video's tracks follow its known animals, as the
// multi-object-tracking benchmarks score trackers (MOTA, identity switches per 1000 frames, IDF1;
// pipeline/evaluation/tracking_scores.hpp). The truth is a table of the same video's frames in
// DeepLabCut's multi-animal layout (scorer/individuals/bodyparts/coords): `labpose demo --animals N
// --test-frames F` writes one for its test video; hand labels of every frame serve as well. A
// benchmark program: it asserts nothing. With --assemblies, the animals assembled in every frame
// (the video's _assemblies.pickle) are scored as evaluate scores labeled images
// (pipeline/evaluation/assembly_purity.hpp: purity, miss, and the share of whole animals, over
// every frame with two or more animals in the truth; keypoint_similarity.hpp: COCO's mAP and mAR
// over every frame with an animal): thousands of held-out animals where a project's test images
// hold a few dozen. Usage:
//   labpose-bench-tracks TRACKS TRUTH [--threshold PX] [--assemblies PICKLE] [--json]
#include <fmt/core.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "pipeline/analysis/tracklet_files.hpp"
#include "pipeline/evaluation/assembly_purity.hpp"
#include "pipeline/evaluation/keypoint_similarity.hpp"
#include "pipeline/evaluation/tracking_scores.hpp"
#include "projects/table.hpp"

namespace {

namespace fs = std::filesystem;
using labpose::pipeline::TrackingScores;

// A number for --json: null where it is undefined (NaN: nothing to score).
std::string json_number(double value) {
  return std::isnan(value) ? "null" : fmt::format("{:.6f}", value);
}

labpose::projects::Table read_any_table(const fs::path& file) {
  return file.extension() == ".csv" ? labpose::projects::read_table_csv(file)
                                    : labpose::projects::read_table_hdf5(file);
}

void print(const TrackingScores& s, double threshold, bool json) {
  if (json) {
    std::printf("%s\n",
                fmt::format(R"({{"frames": {}, "truth": {}, "tracked": {}, "matches": {}, )"
                            R"("misses": {}, "false_positives": {}, "switches": {}, )"
                            R"("mota": {:.6f}, "idf1": {:.6f}, "idp": {:.6f}, "idr": {:.6f}, )"
                            R"("switches_per_1000_frames": {:.4f}, "own_identity_frames": {:.6f}, )"
                            R"("mean_distance": {:.4f}, "threshold": {}}})",
                            s.frames, s.truth, s.tracked, s.matches, s.misses, s.false_positives,
                            s.switches, s.mota, s.idf1, s.idp, s.idr, s.switches_per_1000_frames,
                            s.own_identity_frames, s.mean_distance, threshold)
                    .c_str());
    return;
  }
  std::printf(
      "MOTA        %.4f  (misses %lld, false positives %lld, switches %lld; %lld animals "
      "in %lld frames)\n",
      s.mota, static_cast<long long>(s.misses), static_cast<long long>(s.false_positives),
      static_cast<long long>(s.switches), static_cast<long long>(s.truth),
      static_cast<long long>(s.frames));
  std::printf("IDF1        %.4f  (IDP %.4f, IDR %.4f)\n", s.idf1, s.idp, s.idr);
  std::printf("switches    %.2f per 1000 frames\n", s.switches_per_1000_frames);
  std::printf("identities  %.4f of the frames with animals have each on its own track\n",
              s.own_identity_frames);
  std::printf("distance    %.2f px mean over the %lld matches (a match within %.1f px)\n",
              s.mean_distance, static_cast<long long>(s.matches), threshold);
}

struct AssemblyFigures {
  labpose::pipeline::PurityScores purity;
  labpose::pipeline::AssemblyScores keypoints;  // COCO's mAP and mAR, as evaluate computes them
  labpose::pipeline::AssemblyScores ceiling;    // the same for the truth's own keypoints
};

// The labeled animals of one frame (NaN where hidden), over the multi-animal bodyparts.
std::vector<std::vector<labpose::pipeline::KeypointPrediction>> labeled_animals(
    const std::vector<std::vector<labpose::pipeline::ScoredPoint>>& frame) {
  std::vector<std::vector<labpose::pipeline::KeypointPrediction>> animals;
  for (const auto& animal : frame) {
    std::vector<labpose::pipeline::KeypointPrediction> keypoints;
    for (const auto& point : animal) keypoints.push_back({point.x, point.y, 1.0});
    animals.push_back(std::move(keypoints));
  }
  return animals;
}

// An animal with a keypoint, as an assembly: what perfect predictions would be.
std::vector<labpose::pipeline::Assembly> as_assemblies(
    const std::vector<std::vector<labpose::pipeline::KeypointPrediction>>& animals) {
  std::vector<labpose::pipeline::Assembly> assemblies;
  for (const auto& keypoints : animals) {
    labpose::pipeline::Assembly assembly;
    assembly.keypoints = keypoints;
    for (const auto& point : keypoints) assembly.candidate.push_back(std::isnan(point.x) ? -1 : 0);
    if (assembly.size() > 0) assemblies.push_back(std::move(assembly));
  }
  return assemblies;
}

// The assemblies in `file` against `truth`, frame by frame: their purity (over the frames with two
// or more animals), and mAP and mAR over every frame with a labeled animal, with what the truth's
// own keypoints score there (where an animal shows one keypoint, DeepLabCut's OKS is undefined).
AssemblyFigures score_assemblies(const fs::path& file, const labpose::pipeline::AnimalFrames& truth,
                                 int bodyparts) {
  auto frames = labpose::pipeline::read_assemblies_pickle(
      file, static_cast<std::int64_t>(truth.size()), bodyparts, 0);
  std::vector<labpose::pipeline::ImagePurity> images;
  std::vector<labpose::pipeline::ImageAnimals> predicted, perfect;
  for (std::size_t f = 0; f < truth.size(); ++f) {
    auto labeled = labeled_animals(truth[f]);
    images.push_back(labpose::pipeline::image_purity(labeled, frames[f].animals));
    labpose::pipeline::ImageAnimals image{std::move(frames[f].animals), {}};
    auto truths = as_assemblies(labeled);
    for (const auto& assembly : truths) image.labeled.push_back(assembly.keypoints);
    perfect.push_back({std::move(truths), image.labeled});
    predicted.push_back(std::move(image));
  }
  return {labpose::pipeline::mean_purity(images), labpose::pipeline::score_assemblies(predicted),
          labpose::pipeline::score_assemblies(perfect)};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3 || std::string(argv[1]) == "--help") {
    std::fprintf(stderr,
                 "usage: labpose-bench-tracks TRACKS TRUTH [--threshold PX] [--assemblies PICKLE] "
                 "[--json]\n"
                 "Scores a multi-animal video's tracks (.h5 or .csv, e.g. <video><scorer>_el.h5) "
                 "against its ground truth\n(the same frames, DeepLabCut's multi-animal table): "
                 "MOTA, IDF1 and identity switches, with a\ntrack matching an animal where their "
                 "keypoints are on average within PX pixels (default 20); with --assemblies, "
                 "the purity of\nthe video's assembled animals (<video><scorer>_assemblies.pickle) "
                 "frame by frame, and their mAP and mAR.\n");
    return 2;
  }
  const fs::path tracks_file = argv[1], truth_file = argv[2];
  fs::path assemblies_file;
  double threshold = 20.0;
  bool json = false;
  for (int i = 3; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--json") {
      json = true;
    } else if (flag == "--assemblies" && i + 1 < argc) {
      assemblies_file = argv[++i];
    } else if (flag == "--threshold" && i + 1 < argc) {
      threshold = std::stod(argv[++i]);
    } else {
      std::fprintf(stderr, "labpose-bench-tracks: unknown option %s\n", flag.c_str());
      return 2;
    }
  }
  try {
    const auto truth_table = read_any_table(truth_file);
    const std::vector<std::string> bodyparts =
        labpose::pipeline::animal_bodyparts_of(truth_table, truth_file);
    const auto truth = labpose::pipeline::animal_frames_of(truth_table, bodyparts, truth_file);
    const auto tracks =
        labpose::pipeline::animal_frames_of(read_any_table(tracks_file), bodyparts, tracks_file);
    if (!json) {
      std::printf("tracks      %s: %zu frames, %zu tracks\n", tracks_file.c_str(), tracks.size(),
                  tracks.empty() ? std::size_t{0} : tracks.front().size());
      std::printf("truth       %s: %zu animals, %zu bodyparts\n", truth_file.c_str(),
                  truth.empty() ? std::size_t{0} : truth.front().size(), bodyparts.size());
    }
    print(labpose::pipeline::score_tracks(truth, tracks, threshold), threshold, json);
    if (!assemblies_file.empty()) {
      const auto [purity, keypoints, ceiling] =
          score_assemblies(assemblies_file, truth, static_cast<int>(bodyparts.size()));
      if (json) {
        std::printf("%s\n", fmt::format(R"({{"assembly_purity": {}, "assembly_miss": {}, )"
                                        R"("whole_animals": {}, "frames_scored": {}}})",
                                        json_number(purity.purity), json_number(purity.miss),
                                        json_number(purity.whole_animals), purity.images)
                                .c_str());
        std::printf("%s\n",
                    fmt::format(R"({{"assembly_map": {}, "assembly_mar": {}, )"
                                R"("matches": {}, "unmatched_animals": {}, )"
                                R"("truth_map": {}, "truth_mar": {}}})",
                                json_number(keypoints.mean_average_precision),
                                json_number(keypoints.mean_average_recall), keypoints.matches,
                                keypoints.misses, json_number(ceiling.mean_average_precision),
                                json_number(ceiling.mean_average_recall))
                        .c_str());
      } else {
        std::printf(
            "assembly    purity %.4f, miss %.4f, whole animals %.4f (over the %d frames with two "
            "or more animals)\n",
            purity.purity, purity.miss, purity.whole_animals, purity.images);
        std::printf(
            "assembly    mAP %.4f, mAR %.4f (OKS 0.50:0.95 as evaluate computes them; %zu matched, "
            "%zu labeled animals left over; the truth's own keypoints score mAP %.4f, mAR %.4f)\n",
            keypoints.mean_average_precision, keypoints.mean_average_recall, keypoints.matches,
            keypoints.misses, ceiling.mean_average_precision, ceiling.mean_average_recall);
      }
    }
  } catch (const labpose::Error& error) {
    std::fprintf(stderr, "error: %s\n", error.what());
    if (!error.hint().empty()) std::fprintf(stderr, "hint: %s\n", error.hint().c_str());
    return 1;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "error: %s\n", error.what());
    return 1;
  }
  return 0;
}
