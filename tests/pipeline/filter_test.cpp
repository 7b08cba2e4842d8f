// Track filters against SciPy (what DeepLabCut calls) on the same series, NaN handling, the
// table-level rules (likelihoods kept, spline gaps and p_bound), and tables of several animals
// (each individual's columns on their own, the filtered file as DeepLabCut names it, pandas).
#include <gtest/gtest.h>

#include <fmt/core.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>

#include "core/error.hpp"
#include "pipeline/analysis/arma.hpp"
#include "pipeline/analysis/filter.hpp"
#include "pipeline/analysis/tracks.hpp"
#include "tests/pipeline/animal_tracks.hpp"
#include "tests/support/test_support.hpp"

namespace labpose::pipeline {
namespace {
namespace fs = std::filesystem;
using testing::TempDir;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// A wandering keypoint coordinate with jitter and a few jumps, reproducible.
std::vector<double> track(std::size_t length, std::uint32_t seed) {
  std::mt19937 random(seed);
  std::normal_distribution<double> jitter(0.0, 2.0);
  std::vector<double> values(length);
  double position = 150.0;
  for (std::size_t i = 0; i < length; ++i) {
    position += 0.8 * std::sin(static_cast<double>(i) / 9.0) + jitter(random);
    values[i] = position + (i % 37 == 5 ? 40.0 : 0.0);
  }
  return values;
}

nlohmann::json scipy(const std::string& python, const TempDir& dir,
                     const std::vector<double>& series, int window, int polyorder) {
  std::string text;
  for (const double v : series) text += std::isnan(v) ? "nan\n" : fmt::format("{:.17g}\n", v);
  testing::write_text(dir / "series.txt", text);
  const auto result = testing::run(
      testing::shell_quote(python) + " " +
      testing::shell_quote((testing::python_scripts_dir() / "scipy_filters.py").string()) + " " +
      testing::shell_quote((dir / "series.txt").string()) + " " + std::to_string(window) + " " +
      std::to_string(polyorder));
  EXPECT_EQ(result.exit_code, 0) << result.output;
  return nlohmann::json::parse(result.output);
}

void expect_close(const std::vector<double>& ours, const nlohmann::json& theirs, double tolerance,
                  const char* what) {
  ASSERT_EQ(ours.size(), theirs.size()) << what;
  for (std::size_t i = 0; i < ours.size(); ++i) {
    if (theirs[i].is_null()) {
      EXPECT_TRUE(std::isnan(ours[i])) << what << " at " << i;
    } else {
      EXPECT_NEAR(ours[i], theirs[i].get<double>(), tolerance) << what << " at " << i;
    }
  }
}

TEST(Filters, MedianSavgolAndSplineAsSciPyComputesThem) {
  LABPOSE_REQUIRE_INTEROP_PYTHON(python);
  const TempDir dir;
  const std::vector<double> series = track(200, 3);
  for (const auto& [window, order] : {std::pair{5, 3}, std::pair{11, 2}, std::pair{7, 0}}) {
    const nlohmann::json expected = scipy(python, dir, series, window, order);
    expect_close(median_filter(series, window), expected["median"], 1e-12, "median");
    expect_close(savgol_filter(series, window, order), expected["savgol"], 1e-8, "savgol");
  }
  // A spline through the samples that remain after gaps of 1..9 frames and missing ends.
  std::vector<double> gappy = series;
  for (std::size_t i :
       {0u, 1u, 2u, 30u, 31u, 60u, 61u, 62u, 63u, 64u, 65u, 66u, 67u, 68u, 120u, 199u})
    gappy[i] = kNaN;
  const nlohmann::json expected = scipy(python, dir, gappy, 5, 3);
  expect_close(spline_fill(gappy, 0), expected["spline"], 1e-7, "spline");
  // With at most 3-frame gaps filled, the 9-frame gap stays missing.
  const std::vector<double> limited = spline_fill(gappy, 3);
  EXPECT_TRUE(std::isnan(limited[64]));
  EXPECT_FALSE(std::isnan(limited[31]));
  EXPECT_NEAR(limited[31], expected["spline"][31].get<double>(), 1e-7);
}

TEST(Filters, MissingSamplesAndBadWindows) {
  std::vector<double> values = {1, 2, 100, 3, 4, kNaN, 5, 6, 7};
  const std::vector<double> median = median_filter(values, 3);
  EXPECT_DOUBLE_EQ(median[0], 1.0) << "zero padding: median(0, 1, 2)";
  EXPECT_DOUBLE_EQ(median[2], 3.0) << "the jump is removed";
  EXPECT_TRUE(std::isnan(median[5])) << "a missing sample stays missing";
  EXPECT_DOUBLE_EQ(median[4], 3.5) << "and is left out of its neighbours' windows";
  const std::vector<double> smooth = savgol_filter(values, 5, 1);
  EXPECT_TRUE(std::isnan(smooth[5]));
  EXPECT_DOUBLE_EQ(smooth[7], 6.0) << "a run shorter than the window stays as it is";
  EXPECT_NE(smooth[2], 100.0) << "a run as long as the window is smoothed";
  EXPECT_THROW(median_filter(values, 4), UsageError);
  EXPECT_THROW(savgol_filter(values, 5, 5), UsageError);
  EXPECT_THROW(parse_track_filter("kalman"), UsageError);
  EXPECT_EQ(spline_fill({kNaN, 1, 2, kNaN}, 0).size(), 4u) << "too few points: unchanged";
}

TEST(Filters, TablesKeepLikelihoodsAndMarkFilledPoints) {
  projects::Table table;
  table.column_level_names = {"scorer", "bodyparts", "coords"};
  for (const char* coord : {"x", "y", "likelihood"})
    table.columns.push_back({"DLC_x", "snout", coord});
  table.integer_index = true;
  for (int frame = 0; frame < 12; ++frame) {
    const std::size_t row = table.add_row({std::to_string(frame)});
    table.at(row, 0) = 10.0 + frame;
    table.at(row, 1) = 20.0 + 2.0 * frame;
    table.at(row, 2) = frame == 5 ? 0.0001 : 0.9;  // frame 5 is unsure
  }
  FilterOptions options;
  options.type = TrackFilter::spline;
  options.window = 2;
  const projects::Table filled = filter_tracks(table, options);
  EXPECT_NEAR(filled.at(5, 0), 15.0, 1e-9) << "a straight line is refilled exactly";
  EXPECT_NEAR(filled.at(5, 1), 30.0, 1e-9);
  EXPECT_DOUBLE_EQ(filled.at(5, 2), 0.01) << "filled points get likelihood 0.01";
  EXPECT_DOUBLE_EQ(filled.at(4, 2), 0.9);

  options.type = TrackFilter::median;
  options.window = 3;
  const projects::Table smoothed = filter_tracks(table, options);
  EXPECT_DOUBLE_EQ(smoothed.at(5, 0), 15.0);
  EXPECT_DOUBLE_EQ(smoothed.at(0, 0), 10.0) << "median(0, 10, 11)";
  EXPECT_DOUBLE_EQ(smoothed.at(5, 2), 0.0001) << "likelihoods untouched";
}

TEST(Filters, ArimaIsTheArmaPredictionOfTheSurePointsWithTheFirstKept) {
  projects::Table table;
  table.column_level_names = {"scorer", "bodyparts", "coords"};
  for (const char* coord : {"x", "y", "likelihood"})
    table.columns.push_back({"DLC_x", "snout", coord});
  table.integer_index = true;
  const std::vector<double> x = track(120, 4), y = track(120, 9);
  for (std::size_t frame = 0; frame < 120; ++frame) {
    const std::size_t row = table.add_row({std::to_string(frame)});
    table.at(row, 0) = x[frame];
    table.at(row, 1) = y[frame];
    table.at(row, 2) = frame % 10 == 3 ? 0.0001 : 0.9;  // every tenth frame unsure
  }
  FilterOptions options;
  options.type = TrackFilter::arima;
  const projects::Table filtered = filter_tracks(table, options);
  EXPECT_EQ(parse_track_filter("arima"), TrackFilter::arima);
  for (const auto& [column, series] :
       {std::pair{std::size_t{0}, x}, std::pair{std::size_t{1}, y}}) {
    std::vector<double> sure = series;
    for (std::size_t frame = 3; frame < 120; frame += 10) sure[frame] = kNaN;
    const auto fit = fit_arma(sure, 3, 1, 0.01);
    ASSERT_TRUE(fit.has_value());
    EXPECT_EQ(filtered.at(0, column), series[0]) << "the first sample is kept";
    for (std::size_t frame = 1; frame < 120; ++frame)
      EXPECT_EQ(filtered.at(frame, column), fit->mean[frame]) << frame;
  }
  EXPECT_EQ(filtered.at(3, 2), 0.0001) << "likelihoods untouched";
}

// Several animals: each (individual, bodypart) is its own set of columns, "single" included.
TEST(Tracks, FourLevelTablesNameTheIndividualOfEachBodypart) {
  const projects::Table tracks =
      animal_tracks({"mouse1", "mouse2"}, {"snout", "tail"}, {"port"}, 3);
  const std::vector<TrackColumns> columns = track_columns(tracks);
  ASSERT_EQ(columns.size(), 5u);
  EXPECT_EQ(columns[2].individual, "mouse2");
  EXPECT_EQ(columns[2].bodypart, "snout");
  EXPECT_EQ(columns[2].x, 6u);
  EXPECT_EQ(columns[2].y, 7u);
  EXPECT_EQ(columns[2].likelihood, 8u);
  EXPECT_EQ(columns[4].individual, "single");
  EXPECT_EQ(columns[4].bodypart, "port");
  EXPECT_EQ(track_individuals(columns), (std::vector<std::string>{"mouse1", "mouse2", "single"}));
  EXPECT_EQ(track_bodyparts(columns), (std::vector<std::string>{"snout", "tail", "port"}));

  projects::Table one;
  one.column_level_names = {"scorer", "bodyparts", "coords"};
  for (const char* coord : {"x", "y", "likelihood"}) one.columns.push_back({"s", "snout", coord});
  const std::vector<TrackColumns> single = track_columns(one);
  ASSERT_EQ(single.size(), 1u);
  EXPECT_EQ(single[0].individual, "");
  EXPECT_EQ(track_individuals(single), std::vector<std::string>{""});
}

TEST(Filters, EachIndividualsColumnsAreFilteredOnTheirOwn) {
  projects::Table tracks = animal_tracks({"mouse1", "mouse2"}, {"snout", "tail"}, {"port"}, 40);
  tracks.at(10, 6) = 900.0;  // mouse2's snout jumps for one frame
  FilterOptions options;
  options.window = 5;
  const projects::Table filtered = filter_tracks(tracks, options);
  for (std::size_t c = 0; c < tracks.column_count(); ++c) {
    std::vector<double> column(tracks.row_count());
    for (std::size_t r = 0; r < column.size(); ++r) column[r] = tracks.at(r, c);
    const std::vector<double> expected =
        tracks.columns[c].back() == "likelihood" ? column : median_filter(column, 5);
    for (std::size_t r = 0; r < column.size(); ++r)
      ASSERT_DOUBLE_EQ(filtered.at(r, c), expected[r]) << "column " << c << " row " << r;
  }
  EXPECT_DOUBLE_EQ(filtered.at(10, 6), 111.0) << "the jump is gone, from mouse2's own samples";
  EXPECT_DOUBLE_EQ(filtered.at(10, 0), 10.0) << "mouse1's snout is untouched by it";
}

TEST(Filters, FilteredAnimalTracksAreWrittenAsDeepLabCutNamesThemAndPandasReadsThem) {
  const TempDir dir;
  const projects::Table tracks = animal_tracks({"mouse1", "mouse2"}, {"snout"}, {"port"}, 12);
  const fs::path el = dir / "miceDLC_resnet50_miceNov29shuffle1_4_el.h5";
  const fs::path written = write_filtered_tracks(filter_tracks(tracks, {}), el, true);
  EXPECT_EQ(written.filename(), "miceDLC_resnet50_miceNov29shuffle1_4_el_filtered.h5");
  const fs::path csv = dir / "miceDLC_resnet50_miceNov29shuffle1_4_el_filtered.csv";
  ASSERT_TRUE(fs::exists(csv));
  const std::string text = testing::read_text(csv);
  EXPECT_EQ(text.rfind("scorer,", 0), 0u) << text;
  EXPECT_NE(text.find("\nindividuals,mouse1,mouse1,mouse1,mouse2,mouse2,mouse2,single,single,"
                      "single\nbodyparts,snout,"),
            std::string::npos)
      << text;
  EXPECT_TRUE(
      projects::same_table(projects::read_table_hdf5(written), projects::read_table_csv(csv)));

  LABPOSE_REQUIRE_INTEROP_PYTHON(python);
  const auto result = testing::run(
      testing::shell_quote(python) + " " +
      testing::shell_quote((testing::python_scripts_dir() / "pandas_tables.py").string()) +
      " to-csv " + testing::shell_quote(written.string()) + " " +
      testing::shell_quote((dir / "pandas.csv").string()));
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_EQ(testing::read_text(dir / "pandas.csv"), text) << "pandas reads the four header rows";
}

}  // namespace
}  // namespace labpose::pipeline
