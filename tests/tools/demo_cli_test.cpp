// labpose demo --animals N end to end, as a user runs it: the multi-mouse project is made, trained
// for a few seconds, evaluated, and the animal scores are printed; the graph evaluate chose is in
// test/pose_cfg.yaml. What the numbers are is the benchmark's business (tools/bench/
// multi_animal.py); here they only have to be there and be well-formed.
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <regex>
#include <string>

#include "pipeline/analysis/multi_animal_files.hpp"
#include "pipeline/evaluation/tracking_scores.hpp"
#include "projects/table.hpp"
#include "tests/support/test_support.hpp"

namespace labpose {
namespace {
namespace fs = std::filesystem;
using testing::shell_quote;
using testing::TempDir;

// The value printed after `label` on its own line of `output` ("test error: 4.15 px").
std::optional<double> printed(const std::string& output, const std::string& label) {
  std::smatch match;
  const std::regex pattern(label + " ([0-9.]+|nan)");
  if (!std::regex_search(output, match, pattern)) return std::nullopt;
  return match[1] == "nan" ? std::nan("") : std::stod(match[1]);
}

TEST(DemoCli, SeveralMiceAreTrainedEvaluatedAndScored) {
  const TempDir dir, empty_cache;
  // An empty weights cache: the demo trains mobilenet_v2_0.35 from scratch, for 6 seconds, on a
  // small video. Quiet: the first line printed is config.yaml.
  const auto made = testing::run("LABPOSE_WEIGHTS_DIR=" + shell_quote(empty_cache.path().string()) +
                                 " " + shell_quote(testing::labpose_binary()) +
                                 " --quiet demo --animals 2 --size 320x240 --frames 40 "
                                 "--labeled-frames 10 --minutes 0.1 --test-frames 20 --dir " +
                                 shell_quote(dir.path().string()));
  const std::string& output = made.output;
  ASSERT_EQ(made.exit_code, 0) << output;
  const fs::path config = made.output.substr(0, made.output.find('\n'));
  EXPECT_EQ(config.filename(), "config.yaml");
  ASSERT_TRUE(fs::is_regular_file(config)) << output;
  const auto error = printed(made.output, "test error:");
  ASSERT_TRUE(error.has_value()) << output;
  const auto map = printed(made.output, "test animals: mAP");
  const auto purity = printed(made.output, "test assembly: purity");
  ASSERT_TRUE(map && purity) << output;
  if (!std::isnan(*map)) {
    EXPECT_GE(*map, 0.0);
    EXPECT_LE(*map, 1.0);
  }
  if (!std::isnan(*purity)) {
    EXPECT_LE(*purity, 1.0);
  }
  // The chosen graph went where assembly reads it.
  bool paf_best = false;
  for (const auto& entry :
       fs::recursive_directory_iterator(config.parent_path() / "labpose-models")) {
    if (entry.path().filename() == "pose_cfg.yaml" &&
        entry.path().parent_path().filename() == "test")
      paf_best = testing::contains(testing::read_text(entry.path()), "\npaf_best: [");
  }
  EXPECT_TRUE(paf_best) << "no paf_best in test/pose_cfg.yaml";

  // The tracking test video and its ground truth, which scores itself perfectly.
  const fs::path videos = config.parent_path() / "videos";
  ASSERT_TRUE(fs::is_regular_file(videos / "test_mice.mp4"));
  ASSERT_TRUE(fs::is_regular_file(videos / "test_mice_truth.csv"));
  const fs::path truth = videos / "test_mice_truth.h5";
  const fs::path scorer =
      fs::path(testing::labpose_binary()).parent_path() / "labpose-bench-tracks";
  const auto scored = testing::run(shell_quote(scorer.string()) + " " +
                                   shell_quote(truth.string()) + " " + shell_quote(truth.string()));
  ASSERT_EQ(scored.exit_code, 0) << scored.output;
  EXPECT_TRUE(testing::contains(scored.output, "MOTA        1.0000")) << scored.output;
  EXPECT_TRUE(testing::contains(scored.output, "IDF1        1.0000")) << scored.output;

  // Assemblies that are the truth itself are pure, miss nothing and are whole animals.
  const projects::Table table = projects::read_table_hdf5(truth);
  const auto bodyparts = pipeline::animal_bodyparts_of(table, truth);
  std::vector<pipeline::Assemblies> frames;
  for (const auto& animals : pipeline::animal_frames_of(table, bodyparts, truth)) {
    pipeline::Assemblies assemblies;
    for (const auto& animal : animals) {
      pipeline::Assembly assembly;
      for (const auto& point : animal) {
        assembly.keypoints.push_back({point.x, point.y, 1.0});
        assembly.candidate.push_back(std::isnan(point.x) ? -1 : 0);
      }
      if (assembly.size() > 0) assemblies.animals.push_back(std::move(assembly));
    }
    frames.push_back(std::move(assemblies));
  }
  const fs::path pickle = dir.path() / "truth_assemblies.pickle";
  pipeline::write_assemblies_pickle(pickle, frames);
  const auto pure =
      testing::run(shell_quote(scorer.string()) + " " + shell_quote(truth.string()) + " " +
                   shell_quote(truth.string()) + " --assemblies " + shell_quote(pickle.string()));
  ASSERT_EQ(pure.exit_code, 0) << pure.output;
  EXPECT_TRUE(testing::contains(pure.output,
                                "assembly    purity 1.0000, miss 0.0000, whole animals 1.0000"))
      << pure.output;
  // ... and score what the truth's own keypoints score (below 1 where a mouse shows one keypoint:
  // DeepLabCut's OKS needs two).
  const std::regex keypoint_scores(
      R"(assembly    mAP ([0-9.]+), mAR ([0-9.]+) \(.*; (\d+) matched, (\d+) labeled animals left )"
      R"(over; the truth's own keypoints score mAP ([0-9.]+), mAR ([0-9.]+)\))");
  std::smatch perfect;
  ASSERT_TRUE(std::regex_search(pure.output, perfect, keypoint_scores)) << pure.output;
  EXPECT_EQ(perfect[1], perfect[5]) << pure.output;
  EXPECT_EQ(perfect[2], perfect[6]) << pure.output;
  EXPECT_EQ(perfect[4], "0") << pure.output;
  EXPECT_GT(std::stod(perfect[1]), 0.5) << pure.output;

  // Without each frame's last animal, those animals are left over and recall falls with them.
  std::size_t kept = 0, dropped = 0;
  for (auto& assemblies : frames) {
    if (!assemblies.animals.empty()) {
      assemblies.animals.pop_back();
      ++dropped;
    }
    kept += assemblies.animals.size();
  }
  pipeline::write_assemblies_pickle(pickle, frames);
  const auto fewer =
      testing::run(shell_quote(scorer.string()) + " " + shell_quote(truth.string()) + " " +
                   shell_quote(truth.string()) + " --assemblies " + shell_quote(pickle.string()));
  ASSERT_EQ(fewer.exit_code, 0) << fewer.output;
  std::smatch partial;
  ASSERT_TRUE(std::regex_search(fewer.output, partial, keypoint_scores)) << fewer.output;
  EXPECT_EQ(partial[3], std::to_string(kept)) << fewer.output;
  EXPECT_EQ(partial[4], std::to_string(dropped)) << fewer.output;
  EXPECT_LT(std::stod(partial[2]), std::stod(perfect[2])) << fewer.output;
  EXPECT_EQ(partial[6], perfect[6]) << fewer.output;
}

TEST(DemoCli, ATestVideoNeedsSeveralMice) {
  const TempDir dir;
  const auto refused = testing::run(shell_quote(testing::labpose_binary()) +
                                    " demo --project-only --test-frames 10 --dir " +
                                    shell_quote(dir.path().string()));
  EXPECT_EQ(refused.exit_code, 2) << refused.output;
  EXPECT_TRUE(testing::contains(refused.output, "--test-frames renders a tracking test video"))
      << refused.output;
  EXPECT_TRUE(fs::is_empty(dir.path())) << "nothing made";
}

TEST(DemoCli, IdentityMakesAProjectWhoseNetworkTellsTheMiceApart) {
  const TempDir dir;
  const std::string demo = shell_quote(testing::labpose_binary()) + " demo --project-only --dir " +
                           shell_quote(dir.path().string());
  const auto refused = testing::run(demo + " --identity");
  EXPECT_EQ(refused.exit_code, 2) << refused.output;
  EXPECT_TRUE(testing::contains(refused.output, "--identity tells several mice apart"))
      << refused.output;
  EXPECT_TRUE(fs::is_empty(dir.path())) << "nothing made";

  const auto made = testing::run(demo + " --animals 2 --identity --frames 20 --labeled-frames 4");
  ASSERT_EQ(made.exit_code, 0) << made.output;
  const fs::path project = fs::directory_iterator(dir.path())->path();  // demo_mice-labpose-<date>
  const std::string text = testing::read_text(project / "config.yaml");
  EXPECT_TRUE(testing::contains(text, "\nmultianimalproject: true\nidentity: true\n")) << text;
}

}  // namespace
}  // namespace labpose
