// Trajectory figures: the layout of every figure (the y label clear of the title, the plot and the
// image's edges, computed from the boxes the drawing uses) and one set of DeepLabCut's figures per
// individual for tracks of several animals.
#include <gtest/gtest.h>

#include <filesystem>
#include <opencv2/core.hpp>
#include <string>
#include <vector>

#include "pipeline/analysis/trajectories.hpp"
#include "pipeline/images/image_files.hpp"
#include "pipeline/plots/figure.hpp"
#include "tests/pipeline/animal_tracks.hpp"
#include "tests/support/test_support.hpp"

namespace labpose::pipeline {
namespace {
namespace fs = std::filesystem;

TEST(FigureLayout, TheYLabelNeverMeetsTheTitleThePlotOrTheEdges) {
  const std::vector<std::string> labels = {"y", "likelihood", "pixels",
                                           "X-(dashed) and Y- (solid) position in pixels",
                                           std::string(120, 'w')};
  for (const auto& [width, height] :
       {std::pair{800, 640}, std::pair{1000, 560}, std::pair{1000, 480}, std::pair{900, 560},
        std::pair{400, 200}}) {
    for (const std::string& title :
         {std::string("likelihood"),
          std::string("trajectories of individual1 (likelihood >= 0.6)")}) {
      for (const std::string& y_label : labels) {
        const Figure figure(width, height, title, "frame", y_label);
        const FigureLayout layout = figure.layout();
        const std::string what =
            title + " / " + y_label + " at " + std::to_string(width) + "x" + std::to_string(height);
        EXPECT_FALSE(layout.y_label.intersects(layout.title)) << what;
        EXPECT_FALSE(layout.y_label.intersects(layout.plot)) << what;
        EXPECT_FALSE(layout.x_label.intersects(layout.plot)) << what;
        EXPECT_FALSE(layout.title.intersects(layout.plot)) << what;
        EXPECT_TRUE(layout.y_label.inside(width, height)) << what;
        EXPECT_TRUE(layout.title.inside(width, height)) << what;
        // Turned: taller than wide (a word, not a letter), and its length fits the plot's height.
        if (y_label.size() > 2) {
          EXPECT_GE(layout.y_label.height, layout.y_label.width) << what;
        }
        EXPECT_LE(layout.y_label.height, layout.plot.height) << what;
        // The y tick numbers (up to five characters) fit between the label and the plot.
        EXPECT_LE(layout.y_label.x + layout.y_label.width + 8 + 5 * 10, layout.plot.x) << what;
      }
    }
  }
  // The boxes are those the test assumes: overlapping boxes intersect, touching ones do not.
  EXPECT_TRUE((Box{0, 0, 10, 10}.intersects(Box{9, 9, 5, 5})));
  EXPECT_FALSE((Box{0, 0, 10, 10}.intersects(Box{10, 0, 5, 5})));
}

TEST(FigureLayout, AFigureWithALongYLabelIsDrawnAndSaved) {
  const testing::TempDir dir;
  Figure figure(400, 300, "likelihood", "frame", std::string(200, 'w'));
  figure.add_line({0, 1, 2}, {0.5, 0.7, 0.2}, {1, 0, 0}, "snout");
  figure.save(dir / "long.png");
  const cv::Mat image = read_image(dir / "long.png", ChannelOrder::bgr);
  EXPECT_EQ(image.cols, 400);
  EXPECT_EQ(image.rows, 300);
}

TEST(Trajectories, EachIndividualGetsDeepLabCutsFourFigures) {
  const testing::TempDir dir;
  const projects::Table tracks =
      animal_tracks({"mouse1", "mouse2"}, {"snout", "tail"}, {"port"}, 30);
  TrajectoryPlotOptions options;
  options.filtered = true;
  const std::vector<fs::path> files = plot_trajectories(tracks, dir / "plot-poses" / "v", options);
  std::vector<std::string> names;
  for (const fs::path& file : files) {
    names.push_back(file.filename().string());
    const cv::Mat image = read_image(file, ChannelOrder::bgr);
    EXPECT_FALSE(image.empty()) << file;
  }
  EXPECT_EQ(names, (std::vector<std::string>{
                       "trajectory_filteredmouse1.png", "plot_filteredmouse1.png",
                       "plot-likelihood_filteredmouse1.png", "hist_filteredmouse1.png",
                       "trajectory_filteredmouse2.png", "plot_filteredmouse2.png",
                       "plot-likelihood_filteredmouse2.png", "hist_filteredmouse2.png",
                       "trajectory_filteredsingle.png", "plot_filteredsingle.png",
                       "plot-likelihood_filteredsingle.png", "hist_filteredsingle.png"}));
}

}  // namespace
}  // namespace labpose::pipeline
