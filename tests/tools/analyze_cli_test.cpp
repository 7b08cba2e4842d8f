// labpose analyze end to end: a run killed with SIGKILL mid-video resumes to the same file as an
// uninterrupted run, Ctrl-C exits 3, pandas reads the outputs as DeepLabCut's, finished videos are
// skipped, and bad input is named (the snapshot has random weights: training is not tested here).
#include <gtest/gtest.h>

#include "pipeline/video/reader.hpp"
#include "tests/support/media_support.hpp"
#include "tests/support/test_support.hpp"

namespace labpose {
namespace {
namespace fs = std::filesystem;
using testing::CommandResult;
using testing::shell_quote;
using testing::TempDir;

using testing::contains;

fs::path trained_demo(const TempDir& dir, int frames) {
  return testing::demo_with_random_snapshot(dir.path(), frames);
}

TEST(AnalyzeCli, KilledMidVideoThenResumedGivesTheSameFiles) {
  const TempDir dir;
  const fs::path config = trained_demo(dir, 600);
  const std::string c = shell_quote(config.string());
  const fs::path video = config.parent_path() / "videos" / "synthetic_mouse.mp4";
  const std::string v = shell_quote(video.string());
  const std::string scorer = "DLC_mobnet_35_demo" + [&] {
    const std::string text = testing::read_text(config);
    const auto at = text.find("\ndate: ");
    return text.substr(at + 7, text.find('\n', at + 1) - at - 7);
  }() + "shuffle1_7";

  CommandResult whole =
      testing::run_labpose("analyze " + c + " " + v + " --csv --batch-size 4 --dest " +
                           shell_quote((dir / "whole").string()));
  ASSERT_EQ(whole.exit_code, 0) << whole.output;
  const fs::path whole_h5 = dir / "whole" / ("synthetic_mouse" + scorer + ".h5");
  EXPECT_TRUE(contains(whole.output, whole_h5.string() + "\n")) << whole.output;

  // kill -9 once the checkpoint holds some rows (single-threaded, so that there is time).
  const fs::path killed = dir / "killed";
  const fs::path checkpoint = killed / ("synthetic_mouse" + scorer + ".labpose-checkpoint");
  const CommandResult stopped = testing::run_until_then_signal(
      "OMP_NUM_THREADS=1 " + shell_quote(testing::labpose_binary()) + " analyze " + c + " " + v +
          " --csv --batch-size 4 --threads 1 --dest " + shell_quote(killed.string()),
      "[ $(stat -c %s " + shell_quote(checkpoint.string()) + " || echo 0) -gt 6000 ]", "KILL");
  EXPECT_EQ(stopped.exit_code, 137) << stopped.output;
  ASSERT_TRUE(fs::exists(checkpoint)) << "killed before it finished";
  EXPECT_FALSE(fs::exists(killed / ("synthetic_mouse" + scorer + ".h5")));

  const CommandResult resumed = testing::run_labpose(
      "analyze " + c + " " + v + " --csv --batch-size 4 --dest " + shell_quote(killed.string()));
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_TRUE(contains(resumed.output, "synthetic_mouse.mp4: resuming at frame "))
      << resumed.output;
  EXPECT_EQ(testing::read_text(killed / ("synthetic_mouse" + scorer + ".csv")),
            testing::read_text(dir / "whole" / ("synthetic_mouse" + scorer + ".csv")));
  EXPECT_FALSE(fs::exists(checkpoint));

  // Done: skipped, unless --overwrite.
  const CommandResult again =
      testing::run_labpose("analyze " + c + " " + v + " --dest " + shell_quote(killed.string()));
  EXPECT_EQ(again.exit_code, 0) << again.output;
  EXPECT_TRUE(contains(again.output, "already analyzed")) << again.output;

  // filter reads them back.
  const CommandResult filtered = testing::run_labpose(
      "filter " + c + " " + v + " --type spline --dest " + shell_quote((dir / "whole").string()));
  EXPECT_EQ(filtered.exit_code, 0) << filtered.output;
  EXPECT_TRUE(fs::exists(dir / "whole" / ("synthetic_mouse" + scorer + "_filtered.h5")));
  EXPECT_TRUE(fs::exists(dir / "whole" / ("synthetic_mouse" + scorer + "_filtered.csv")));
  const CommandResult unanalyzed = testing::run_labpose("filter " + c + " " + v);
  EXPECT_EQ(unanalyzed.exit_code, 1) << unanalyzed.output;
  EXPECT_TRUE(contains(unanalyzed.output, "(analyze it first: labpose analyze"))
      << unanalyzed.output;

  // labeled-video draws the filtered tracks into an H.264 video of every frame.
  const CommandResult labeled = testing::run_labpose("labeled-video " + c + " " + v +
                                                     " --filtered --skeleton --trail 3 --dest " +
                                                     shell_quote((dir / "whole").string()));
  EXPECT_EQ(labeled.exit_code, 0) << labeled.output;
  const fs::path video_out =
      dir / "whole" / ("synthetic_mouse" + scorer + "_filtered_p60_labeled.mp4");
  EXPECT_TRUE(contains(labeled.output, video_out.string())) << labeled.output;
  ASSERT_TRUE(fs::is_regular_file(video_out));
  EXPECT_EQ(pipeline::VideoReader(video_out).frame_count(), 600);

  // plot-trajectories: four PNG figures of the video's size class, with DeepLabCut's names.
  const CommandResult plotted =
      testing::run_labpose("plot-trajectories " + c + " " + v + " --filtered --dest " +
                           shell_quote((dir / "whole").string()));
  EXPECT_EQ(plotted.exit_code, 0) << plotted.output;
  for (const char* name : {"trajectory_filtered.png", "plot_filtered.png",
                           "plot-likelihood_filtered.png", "hist_filtered.png"}) {
    const fs::path png = dir / "whole" / "plot-poses" / "synthetic_mouse" / name;
    EXPECT_TRUE(contains(plotted.output, png.string())) << plotted.output;
    EXPECT_EQ(testing::read_text(png).substr(1, 3), "PNG") << png;
  }

  LABPOSE_REQUIRE_INTEROP_PYTHON(python);
  const CommandResult checked = testing::run(
      shell_quote(python) + " " +
      shell_quote((testing::python_scripts_dir() / "dlc_analysis_files.py").string()) + " " +
      shell_quote(whole_h5.string()) + " " +
      shell_quote((dir / "whole" / ("synthetic_mouse" + scorer + ".csv")).string()) + " " +
      shell_quote((dir / "whole" / ("synthetic_mouse" + scorer + "_meta.pickle")).string()) +
      " 600 " + scorer);
  EXPECT_EQ(checked.exit_code, 0) << checked.output;
  EXPECT_TRUE(contains(checked.output, "ok 600 rows, 12 columns")) << checked.output;
}

TEST(AnalyzeCli, OutliersExtractedForRefinementThenMerged) {
  const TempDir dir;
  const fs::path config = trained_demo(dir, 60);
  const std::string c = shell_quote(config.string());
  const fs::path video = config.parent_path() / "videos" / "synthetic_mouse.mp4";
  const std::string v = shell_quote(video.string());
  CommandResult result = testing::run_labpose("extract-outliers " + c + " " + v);
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_TRUE(contains(result.output, "(analyze it first: labpose analyze")) << result.output;
  ASSERT_EQ(testing::run_labpose("--quiet analyze " + c + " " + v).exit_code, 0);

  // Random weights: every likelihood is below 1, so every frame is uncertain.
  result =
      testing::run_labpose("extract-outliers " + c + " " + v +
                           " --algo uncertain --p-bound 1 --num 3 --extraction uniform --seed 4");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const fs::path folder = config.parent_path() / "labeled-data" / "synthetic_mouse";
  int images = 0;
  for (std::size_t at = result.output.find(folder.string()); at != std::string::npos;
       at = result.output.find(folder.string(), at + 1))
    ++images;
  EXPECT_EQ(images, 3) << result.output;
  EXPECT_TRUE(contains(result.output, "next: labpose label ")) << result.output;
  const fs::path machine = folder / "machinelabels-iter0.h5";
  ASSERT_TRUE(fs::exists(machine));
  result = testing::run_labpose("extract-outliers " + c + " " + v + " --algo spread");
  EXPECT_EQ(result.exit_code, 2) << result.output;

  // merge waits for the outlier frames to be labeled.
  result = testing::run_labpose("merge " + c);
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_TRUE(contains(result.output, "3 outlier frames of iteration 0 have no labels"))
      << result.output;
  EXPECT_TRUE(contains(result.output, "--refine")) << result.output;
  EXPECT_TRUE(contains(testing::read_text(config), "\niteration: 0\n"));
  result = testing::run_labpose("merge " + c + " --force");
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_TRUE(contains(result.output, "iteration 0 -> 1")) << result.output;
  EXPECT_TRUE(contains(testing::read_text(config), "\niteration: 1\n"));

  LABPOSE_REQUIRE_INTEROP_PYTHON(python);
  fs::path tracks;
  for (const auto& entry : fs::directory_iterator(video.parent_path())) {
    if (entry.path().extension() == ".h5") tracks = entry.path();
  }
  const CommandResult checked = testing::run(
      shell_quote(python) + " " +
      shell_quote((testing::python_scripts_dir() / "dlc_machine_labels.py").string()) + " " +
      shell_quote(machine.string()) + " " + shell_quote((folder / "machinelabels.csv").string()) +
      " " + shell_quote(tracks.string()));
  EXPECT_EQ(checked.exit_code, 0) << checked.output;
  EXPECT_TRUE(contains(checked.output, "ok 3 rows")) << checked.output;
}

TEST(AnalyzeCli, CtrlCExitsThreeAndBadInputIsNamed) {
  const TempDir dir;
  const fs::path config = trained_demo(dir, 300);
  const std::string c = shell_quote(config.string());
  const std::string v =
      shell_quote((config.parent_path() / "videos" / "synthetic_mouse.mp4").string());

  // Ctrl-C once some rows are analyzed (the checkpoint holds them).
  const CommandResult stopped = testing::run_until_then_signal(
      "OMP_NUM_THREADS=1 " + shell_quote(testing::labpose_binary()) + " analyze " + c + " " + v +
          " --batch-size 2 --threads 1 --dest " + shell_quote((dir / "out").string()),
      "[ $(cat " + shell_quote((dir / "out").string()) +
          "/*.labpose-checkpoint | wc -c) -gt 6000 ]",
      "INT");
  EXPECT_EQ(stopped.exit_code, 3) << stopped.output;
  EXPECT_TRUE(contains(stopped.output, "error: analysis stopped by SIGINT at frame "))
      << stopped.output;
  EXPECT_TRUE(contains(stopped.output, "hint: run the same command again: it resumes"))
      << stopped.output;

  CommandResult result =
      testing::run_labpose("analyze " + c + " " + shell_quote((dir / "none.mp4").string()));
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_TRUE(contains(result.output, "none.mp4 does not exist")) << result.output;
  result = testing::run_labpose("analyze " + c + " " + v + " --shuffle 4");
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_TRUE(contains(result.output, "shuffle 4 of trainset95 (iteration 0) was never made"))
      << result.output;
  EXPECT_TRUE(contains(result.output, "hint: make and train it first")) << result.output;
  result = testing::run_labpose("analyze " + c + " " + v + " --shard 2/2");
  EXPECT_EQ(result.exit_code, 2) << result.output;
  result = testing::run_labpose("analyze " + c + " " + v + " --crop 10,5,0,100");
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_TRUE(contains(result.output, "--crop 10,5,0,100 is not x1,x2,y1,y2")) << result.output;
  result = testing::run_labpose("analyze " + c + " " + v + " --snapshot newest");
  EXPECT_EQ(result.exit_code, 2) << result.output;
}

}  // namespace
}  // namespace labpose
