// Outlier extraction: the ARMA fit against statsmodels' SARIMAX (what DeepLabCut calls), the
// jump/uncertain/fitting criteria on tracks with known outliers, frames and machinelabels written
// on the demo project (appended, never overwritten), the messages for bad input, and merge.
#include <gtest/gtest.h>

#include <fmt/core.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>

#include "core/error.hpp"
#include "pipeline/analysis/arma.hpp"
#include "pipeline/analysis/outliers.hpp"
#include "projects/labels.hpp"
#include "projects/layout.hpp"
#include "tests/pipeline/animal_tracks.hpp"
#include "tests/support/media_support.hpp"
#include "tests/support/test_support.hpp"

namespace labpose::pipeline {
namespace {
namespace fs = std::filesystem;
using testing::TempDir;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Whether the AR recursion h_k = c_1 h_{k-1} + ... + c_n h_{k-n} (h_0 = 1) dies out: stationary.
bool stationary(const std::vector<double>& coefficients) {
  const std::size_t n = coefficients.size();
  std::vector<double> h(n, 0.0);  // h[i] = h_{k-1-i}
  h.at(0) = 1.0;
  double largest = 0.0;
  for (int k = 0; k < 200000; ++k) {
    double next = 0.0;
    for (std::size_t i = 0; i < n; ++i) next += coefficients[i] * h[i];
    std::copy_backward(h.begin(), h.end() - 1, h.end());
    h[0] = next;
    if (k > 199000) largest = std::max(largest, std::abs(next));
  }
  return largest < 1e-6;
}

TEST(Arma, TransformGivesStationaryCoefficientsAndInverts) {
  std::mt19937 random(3);
  std::normal_distribution<double> normal(0.0, 1.0);
  for (int n = 1; n <= 5; ++n) {
    for (int trial = 0; trial < 20; ++trial) {
      std::vector<double> free(static_cast<std::size_t>(n));
      for (double& value : free) value = normal(random);
      const std::vector<double> coefficients = constrain_stationary(free);
      EXPECT_TRUE(stationary(coefficients));
      const auto back = unconstrain_stationary(coefficients);
      ASSERT_TRUE(back.has_value());
      for (int i = 0; i < n; ++i)
        EXPECT_NEAR((*back)[static_cast<std::size_t>(i)], free[static_cast<std::size_t>(i)],
                    1e-6 * (1 + std::abs(free[static_cast<std::size_t>(i)])));
    }
  }
  EXPECT_FALSE(stationary({1.2}));
  EXPECT_FALSE(unconstrain_stationary({1.2}).has_value());       // explosive AR(1)
  EXPECT_FALSE(unconstrain_stationary({0.5, 0.6}).has_value());  // a unit root beyond 1
  EXPECT_TRUE(unconstrain_stationary({0.5, 0.3}).has_value());
}

// A keypoint coordinate: a slow wander with jitter, a few spikes and missing samples.
std::vector<double> wandering(std::size_t length, std::uint32_t seed) {
  std::mt19937 random(seed);
  std::normal_distribution<double> jitter(0.0, 1.5);
  std::vector<double> values(length);
  double position = 200.0, velocity = 0.0;
  for (std::size_t i = 0; i < length; ++i) {
    velocity = 0.9 * velocity + jitter(random);
    position += velocity;
    values[i] = position + jitter(random);
  }
  return values;
}

nlohmann::json statsmodels_fit(const TempDir& dir, const std::string& python,
                               const std::vector<double>& series, int ar, int ma, double alpha) {
  std::string text;
  for (const double v : series) text += std::isnan(v) ? "nan\n" : fmt::format("{:.17g}\n", v);
  testing::write_text(dir / "series.txt", text);
  const auto result = testing::run(
      testing::shell_quote(python) + " " +
      testing::shell_quote((testing::python_scripts_dir() / "statsmodels_arma.py").string()) + " " +
      testing::shell_quote((dir / "series.txt").string()) +
      fmt::format(" {} {} {}", ar, ma, alpha));
  EXPECT_EQ(result.exit_code, 0) << result.output;
  return nlohmann::json::parse(result.output.substr(result.output.find('{')));
}

std::vector<double> numbers(const nlohmann::json& list) {
  std::vector<double> values;
  for (const auto& value : list) values.push_back(value.is_null() ? kNaN : value.get<double>());
  return values;
}

TEST(Arma, FilterAndFitAsStatsmodelsSarimax) {
  LABPOSE_REQUIRE_INTEROP_PYTHON(python);
  if (testing::run(testing::shell_quote(python) + " -c 'import statsmodels'").exit_code != 0) {
    if (std::getenv("LABPOSE_REQUIRE_INTEROP_PYTHON") != nullptr)
      FAIL() << "python3 with statsmodels is required (LABPOSE_REQUIRE_INTEROP_PYTHON is set)";
    GTEST_SKIP() << "statsmodels is not installed (tools/install-deps.sh --tests)";
  }
  const TempDir dir;
  std::vector<double> series = wandering(400, 7);
  for (std::size_t i : {0u, 17u, 18u, 19u, 150u, 151u, 399u}) series[i] = kNaN;
  series[100] += 60.0;
  series[260] -= 45.0;
  for (const auto& [ar, ma] : {std::pair{3, 1}, std::pair{1, 0}, std::pair{2, 2}}) {
    SCOPED_TRACE(fmt::format("ARMA({}, {})", ar, ma));
    const nlohmann::json expected = statsmodels_fit(dir, python, series, ar, ma, 0.01);
    const std::vector<double> params = numbers(expected["params"]);
    // The Kalman filter with statsmodels' parameters: its predictions, to rounding.
    const std::vector<double> phi(params.begin(), params.begin() + ar);
    const std::vector<double> theta(params.begin() + ar, params.begin() + ar + ma);
    const ArmaFit filtered = predict_arma(series, phi, theta, params.back(), 0.01);
    EXPECT_NEAR(filtered.log_likelihood, expected["llf"].get<double>(), 1e-6);
    const std::vector<double> mean = numbers(expected["mean"]), lower = numbers(expected["lower"]),
                              upper = numbers(expected["upper"]);
    for (std::size_t t = 0; t < series.size(); ++t) {
      ASSERT_NEAR(filtered.mean[t], mean[t], 1e-6) << "at " << t;
      ASSERT_NEAR(filtered.lower[t], lower[t], 1e-6) << "at " << t;
      ASSERT_NEAR(filtered.upper[t], upper[t], 1e-6) << "at " << t;
    }
    // The fit: at least statsmodels' likelihood (which stops after 50 L-BFGS iterations), and
    // where both find the same optimum, the same predictions within a fraction of a pixel.
    const auto fit = fit_arma(series, ar, ma, 0.01);
    ASSERT_TRUE(fit.has_value());
    EXPECT_GE(fit->log_likelihood, expected["llf"].get<double>() - 1e-3);
    if (ma < 2) {  // ARMA(2, 2) has several optima here, and statsmodels stops in a lower one
      double largest = 0.0;
      for (std::size_t t = 0; t < series.size(); ++t)
        largest = std::max(largest, std::abs(fit->mean[t] - mean[t]));
      EXPECT_LT(largest, 0.5) << "largest difference of the predictions, px";
    }
  }
  EXPECT_FALSE(fit_arma(std::vector<double>(10, 1.0), 3, 1, 0.01).has_value())
      << "10 points are too few, as in DeepLabCut";
}

const std::vector<std::string> kBodyparts = {"snout", "leftear", "rightear", "tailbase"};

// Tracks as analyze writes them: frames 0..frames-1, smooth paths, likelihood 0.9.
projects::Table make_tracks(int frames, const std::string& scorer) {
  projects::Table tracks;
  tracks.column_level_names = {"scorer", "bodyparts", "coords"};
  for (const auto& part : kBodyparts) {
    for (const char* coord : {"x", "y", "likelihood"})
      tracks.columns.push_back({scorer, part, coord});
  }
  tracks.integer_index = true;
  for (int frame = 0; frame < frames; ++frame) {
    const std::size_t row = tracks.add_row({std::to_string(frame)});
    for (std::size_t part = 0; part < kBodyparts.size(); ++part) {
      tracks.at(row, 3 * part) = 100.0 + 2.0 * frame + 10.0 * static_cast<double>(part);
      tracks.at(row, 3 * part + 1) =
          80.0 + 20.0 * std::sin(frame / 8.0) + 5.0 * static_cast<double>(part);
      tracks.at(row, 3 * part + 2) = 0.9;
    }
  }
  return tracks;
}

TEST(Outliers, JumpAndUncertainFlagExactlyTheirFrames) {
  projects::Table tracks = make_tracks(60, "DLC_test");
  tracks.at(20, 0) += 30.0;  // snout x jumps at 20 and back at 21
  tracks.at(40, 4) -= 25.0;  // leftear y jumps at 40, back at 41
  tracks.at(50, 9) += 19.0;  // tailbase x: 21 px from 49 to 50 (with the 2 px drift), 17 back
  tracks.at(33, 5) = 0.005;  // leftear unsure
  tracks.at(45, 11) = 0.0;   // tailbase unsure
  OutlierOptions options;
  options.algorithm = OutlierAlgorithm::jump;
  EXPECT_EQ(find_outlier_frames(tracks, 0, 60, options),
            (std::vector<std::int64_t>{20, 21, 40, 41, 50}));
  EXPECT_EQ(find_outlier_frames(tracks, 21, 45, options), (std::vector<std::int64_t>{40, 41}))
      << "the first frame of the range has no previous frame";
  options.bodyparts = {"leftear"};
  EXPECT_EQ(find_outlier_frames(tracks, 0, 60, options), (std::vector<std::int64_t>{40, 41}));
  options.bodyparts = {"tail"};
  EXPECT_THROW(find_outlier_frames(tracks, 0, 60, options), UsageError);
  options.bodyparts.clear();
  options.algorithm = OutlierAlgorithm::uncertain;
  EXPECT_EQ(find_outlier_frames(tracks, 0, 60, options), (std::vector<std::int64_t>{33, 45}));
  options.p_bound = 0.001;
  EXPECT_EQ(find_outlier_frames(tracks, 0, 60, options), (std::vector<std::int64_t>{45}));
}

// Several animals: the jump criterion per individual finds an identity swap, the frames where one
// animal's track takes over the other's.
TEST(Outliers, AnIdentitySwapIsAJumpOfBothTracks) {
  projects::Table tracks = animal_tracks({"mouse1", "mouse2"}, {"snout", "tail"}, {"port"}, 30);
  for (std::size_t row = 12; row < 18; ++row) {
    for (std::size_t c = 0; c < 6; ++c) std::swap(tracks.at(row, c), tracks.at(row, c + 6));
  }
  OutlierOptions options;
  options.algorithm = OutlierAlgorithm::jump;
  EXPECT_EQ(find_outlier_frames(tracks, 0, 30, options), (std::vector<std::int64_t>{12, 18}));
  options.bodyparts = {"tail"};
  EXPECT_EQ(find_outlier_frames(tracks, 0, 30, options), (std::vector<std::int64_t>{12, 18}))
      << "a bodypart asked for is compared in every individual";
  options.bodyparts = {"port"};
  EXPECT_TRUE(find_outlier_frames(tracks, 0, 30, options).empty());
}

TEST(Outliers, FittingFlagsFramesFarFromTheArmaFit) {
  projects::Table tracks = make_tracks(300, "DLC_test");
  std::mt19937 random(5);
  std::normal_distribution<double> jitter(0.0, 1.0);
  for (double& value : tracks.values) value += jitter(random) * 0.5;
  for (std::size_t row = 0; row < tracks.row_count(); ++row) {
    for (std::size_t part = 0; part < 4; ++part) tracks.at(row, 3 * part + 2) = 0.9;
  }
  for (int frame : {60, 150, 222}) {
    for (std::size_t part = 0; part < 4; ++part)
      tracks.at(static_cast<std::size_t>(frame), 3 * part) += 80.0;
  }
  OutlierOptions options;
  options.algorithm = OutlierAlgorithm::fitting;
  options.epsilon = 40.0;
  const std::vector<std::int64_t> frames = find_outlier_frames(tracks, 0, 300, options);
  for (const std::int64_t spike : {60, 150, 222})
    EXPECT_NE(std::find(frames.begin(), frames.end(), spike), frames.end()) << spike;
  EXPECT_LE(frames.size(), 6u) << "only the spikes and the frames right after them";
  // Too few beyond epsilon: the 2 * frames_wanted most distant frames instead.
  options.epsilon = 1000.0;
  options.frames_wanted = 5;
  const std::vector<std::int64_t> most = find_outlier_frames(tracks, 0, 300, options);
  EXPECT_EQ(most.size(), 10u);
  for (const std::int64_t spike : {60, 150, 222})
    EXPECT_NE(std::find(most.begin(), most.end(), spike), most.end()) << spike;
}

struct OutlierProject {
  TempDir dir;
  fs::path config_file, video, folder;
  AnalysisFiles analysis;
  std::optional<projects::ProjectConfig> config;
  projects::Table tracks;

  OutlierProject() {
    config_file = testing::copy_demo_project(dir.path());
    config = projects::ProjectConfig::load(config_file);
    video = config->project_dir() / "videos" / "synthetic_mouse.mp4";
    folder = config->project_dir() / "labeled-data" / "synthetic_mouse";
    tracks = make_tracks(60, "DLC_mobnet_35_demoshuffle1_7");
    for (int frame : {12, 25, 38, 47, 53}) tracks.at(static_cast<std::size_t>(frame), 0) += 50.0;
    analysis =
        analysis_files(video.parent_path(), "synthetic_mouse", "DLC_mobnet_35_demoshuffle1_7");
    projects::write_table_hdf5(tracks, analysis.h5);
  }
};

std::set<std::int64_t> frames_in(const fs::path& folder) {
  std::set<std::int64_t> frames;
  for (const auto& entry : fs::directory_iterator(folder)) {
    if (const auto index = projects::frame_index_of_image(entry.path().filename().string()))
      frames.insert(*index);
  }
  return frames;
}

TEST(Outliers, FramesAndMachineLabelsWrittenAndAppended) {
  const OutlierProject project;
  const std::set<std::int64_t> before = frames_in(project.folder);
  ExtractFramesOptions frames;
  frames.selection = FrameSelection::uniform;
  frames.frames = 3;
  frames.seed = 9;
  const OutlierVideo first =
      extract_outlier_frames(*project.config, "synthetic_mouse", project.analysis, {}, frames);
  std::vector<std::int64_t> outliers;
  for (int frame : {12, 25, 38, 47, 53}) {
    outliers.push_back(frame);
    outliers.push_back(frame + 1);
  }
  EXPECT_EQ(first.outliers, outliers);
  ASSERT_EQ(first.extracted.frames.size(), 3u);
  for (const std::int64_t frame : first.extracted.frames) {
    EXPECT_NE(std::find(outliers.begin(), outliers.end(), frame), outliers.end()) << frame;
    EXPECT_EQ(before.count(frame), 0u) << "a frame already there was picked again";
    EXPECT_TRUE(fs::exists(project.folder / projects::frame_image_name(frame, 60)));
  }
  EXPECT_EQ(first.machine_labels, project.folder / "machinelabels-iter0.h5");
  const projects::Table machine = projects::read_table_hdf5(first.machine_labels);
  ASSERT_EQ(machine.row_count(), 3u);
  EXPECT_EQ(machine.columns, project.tracks.columns);
  EXPECT_EQ(machine.index_levels, 3u);
  for (std::size_t row = 0; row < 3; ++row) {
    const std::int64_t frame = first.extracted.frames[row];
    EXPECT_EQ(machine.index[row],
              (std::vector<std::string>{"labeled-data", "synthetic_mouse",
                                        projects::frame_image_name(frame, 60)}));
    for (std::size_t c = 0; c < machine.column_count(); ++c)
      EXPECT_EQ(machine.at(row, c), project.tracks.at(static_cast<std::size_t>(frame), c));
  }
  EXPECT_TRUE(projects::same_table(projects::read_table_csv(project.folder / "machinelabels.csv"),
                                   machine));

  // Again: new frames only, the earlier rows kept first.
  frames.frames = 2;
  const OutlierVideo second =
      extract_outlier_frames(*project.config, "synthetic_mouse", project.analysis, {}, frames);
  ASSERT_EQ(second.extracted.frames.size(), 2u);
  for (const std::int64_t frame : second.extracted.frames) {
    EXPECT_EQ(std::count(first.extracted.frames.begin(), first.extracted.frames.end(), frame), 0);
  }
  const projects::Table both = projects::read_table_hdf5(first.machine_labels);
  ASSERT_EQ(both.row_count(), 5u);
  for (std::size_t row = 0; row < 3; ++row) EXPECT_EQ(both.index[row], machine.index[row]);
}

TEST(Outliers, BadInputIsNamedAndLeavesNothingBehind) {
  const OutlierProject project;
  const std::set<std::int64_t> before = frames_in(project.folder);
  ExtractFramesOptions frames;
  frames.frames = 2;
  // Tracks of another length than the video.
  const AnalysisFiles short_tracks = analysis_files(project.dir.path(), "short", "");
  projects::Table shorter = project.tracks;
  shorter.index.resize(55);
  shorter.values.resize(55 * shorter.column_count());
  projects::write_table_hdf5(shorter, short_tracks.h5);
  try {
    extract_outlier_frames(*project.config, "synthetic_mouse", short_tracks, {}, frames);
    FAIL() << "expected an error";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("has 55 rows but video"), std::string::npos)
        << error.what();
  }
  EXPECT_EQ(frames_in(project.folder), before) << "nothing was written";
  EXPECT_FALSE(fs::exists(project.folder / "machinelabels-iter0.h5"));
  // A video that is not in the project, and an unknown bodypart.
  EXPECT_THROW(extract_outlier_frames(*project.config, "other_mouse", project.analysis, {}, frames),
               UsageError);
  OutlierOptions unknown;
  unknown.bodyparts = {"nose"};
  EXPECT_THROW(
      extract_outlier_frames(*project.config, "synthetic_mouse", project.analysis, unknown, frames),
      UsageError);
  EXPECT_EQ(frames_in(project.folder), before);
}

TEST(Merge, RefusesUnreviewedOutliersThenAdvancesTheIteration) {
  OutlierProject project;
  ExtractFramesOptions frames;
  frames.frames = 2;
  frames.seed = 1;
  const OutlierVideo outliers =
      extract_outlier_frames(*project.config, "synthetic_mouse", project.analysis, {}, frames);
  ASSERT_EQ(outliers.extracted.frames.size(), 2u);
  try {
    merge_labeled_iteration(*project.config, false, std::nullopt);
    FAIL() << "expected an error";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("2 outlier frames of iteration 0 have no labels"),
              std::string::npos)
        << error.what();
    EXPECT_NE(error.hint().find("--refine"), std::string::npos);
  }
  EXPECT_EQ(projects::ProjectConfig::load(project.config_file).values().iteration, 0);

  // Label them (as the labeling page does), then merge.
  const auto files = projects::label_files(project.folder, project.config->values().scorer);
  projects::Table labels = projects::read_labels(files).table;
  for (const std::int64_t frame : outliers.extracted.frames) {
    const std::size_t row =
        labels.add_row({"labeled-data", "synthetic_mouse", projects::frame_image_name(frame, 60)});
    labels.at(row, 0) = 10.0;
    labels.at(row, 1) = 20.0;
  }
  projects::write_labels(labels, files);
  const IterationMerge merged = merge_labeled_iteration(*project.config, false, std::nullopt);
  EXPECT_EQ(merged.previous, 0);
  EXPECT_EQ(merged.next, 1);
  EXPECT_TRUE(merged.unreviewed.empty());
  EXPECT_EQ(projects::ProjectConfig::load(project.config_file).values().iteration, 1);
  // Forced to a given iteration.
  EXPECT_EQ(merge_labeled_iteration(*project.config, false, 4).next, 4);
  EXPECT_EQ(projects::ProjectConfig::load(project.config_file).values().iteration, 4);
}

}  // namespace
}  // namespace labpose::pipeline
