// The labeling page end to end in headless Chromium (ctest label `browser`): Debian's chromium and
// chromium-driver, driven by Selenium from PyPI in a virtualenv this test makes once under the
// build folder (never the system's site-packages). Skips with the reason when any of that is
// missing; fails instead when LABPOSE_REQUIRE_INTEROP_PYTHON=1 (tools/test.sh installed them).
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <string>

#include "labeling/server.hpp"
#include "projects/labels.hpp"
#include "tests/labeling/labeling_support.hpp"
#include "tests/support/test_support.hpp"

namespace labpose::labeling {
namespace {
namespace fs = std::filesystem;
using nlohmann::json;
using testing::shell_quote;

// The virtualenv's python with Selenium, made on first use; or the reason there is none. Tests
// running at once (ctest -j) make it one at a time, under a lock file beside it.
std::string selenium_python(std::string& reason) {
  for (const char* program : {"/usr/bin/chromium", "/usr/bin/chromedriver"}) {
    if (!fs::exists(program)) {
      reason = fmt::format(
          "{} is not installed (tools/install-deps.sh --tests installs Debian's "
          "chromium and chromium-driver)",
          program);
      return {};
    }
  }
  const fs::path venv = LABPOSE_BROWSER_VENV;
  std::string python = (venv / "bin" / "python").string();
  const std::string make = shell_quote(python) + " -c 'import selenium' 2>/dev/null || " +
                           "(/usr/bin/python3 -m venv " + shell_quote(venv.string()) + " && " +
                           shell_quote(python) + " -m pip install -q selenium)";
  const auto made =
      testing::run("flock " + shell_quote(venv.string() + ".lock") + " sh -c " + shell_quote(make));
  if (made.exit_code != 0) {
    reason = "could not make a virtualenv with Selenium from PyPI in " + venv.string() + ":\n" +
             made.output;
    return {};
  }
  return python;
}

// Runs browser_labeling.py against `server`; its JSON line, or null after a failure.
json run_page_script(const std::string& python, const LabelServer& server,
                     const std::string& scenario = {}) {
  const auto result = testing::run(
      shell_quote(python) + " " +
      shell_quote(
          (fs::path(LABPOSE_SOURCE_DIR) / "tests" / "labeling" / "browser_labeling.py").string()) +
      " " + shell_quote(server.url()) + " " + scenario);
  EXPECT_EQ(result.exit_code, 0) << result.output;
  if (result.exit_code != 0) return nullptr;
  // The last line that starts with '{' (Selenium may print warnings before it).
  const auto newline = result.output.rfind("\n{");
  return json::parse(result.output.substr(newline == std::string::npos ? 0 : newline + 1));
}

// Binds the virtualenv's python to `name`, or skips (fails with LABPOSE_REQUIRE_INTEROP_PYTHON).
// NOLINTBEGIN(bugprone-macro-parentheses): `name` is the variable it declares, not an expression.
#define LABPOSE_REQUIRE_SELENIUM(name)                                       \
  std::string name##_reason;                                                 \
  const std::string name = selenium_python(name##_reason);                   \
  if (name.empty()) {                                                        \
    if (std::getenv("LABPOSE_REQUIRE_INTEROP_PYTHON") != nullptr)            \
      FAIL() << name##_reason << " (LABPOSE_REQUIRE_INTEROP_PYTHON is set)"; \
    GTEST_SKIP() << name##_reason;                                           \
  }
// NOLINTEND(bugprone-macro-parentheses)

TEST(Browser, PlaceMoveDeleteReloadAgreesWithTheCsv) {
  LABPOSE_REQUIRE_SELENIUM(python);
  testing::TempDir dir;
  const fs::path config = testing::make_labeling_project(dir.path());
  LabelServer server(projects::ProjectConfig::load(config), {});
  server.start();
  const json page = run_page_script(python, server);
  ASSERT_FALSE(page.is_null());
  ASSERT_EQ(page["bodyparts"], json({"snout", "leftear", "rightear", "tailbase"}));

  // The clicks landed where they were aimed (the view shows the 64x48 frame about 13x enlarged).
  const json& clicked = page["after_clicks"];
  EXPECT_NEAR(clicked[0]["x"].get<double>(), 10.5, 0.5);
  EXPECT_NEAR(clicked[0]["y"].get<double>(), 20.5, 0.5);
  EXPECT_NEAR(clicked[1]["x"].get<double>(), 40.25, 0.5);
  EXPECT_NEAR(clicked[1]["y"].get<double>(), 30.75, 0.5);

  // After the reload: the dragged snout, no leftear (deleted), nothing else.
  const json& points = page["points"];
  ASSERT_TRUE(points[0].is_object()) << page.dump();
  EXPECT_NEAR(points[0]["x"].get<double>(), 20.5, 0.5);
  EXPECT_NEAR(points[0]["y"].get<double>(), 10.5, 0.5);
  for (std::size_t j = 1; j < 4; ++j) EXPECT_TRUE(points[j].is_null()) << j;
  EXPECT_EQ(page["list"][0][1], fmt::format("{:.1f}, {:.1f}", points[0]["x"].get<double>(),
                                            points[0]["y"].get<double>()));
  EXPECT_EQ(page["list"][1][1], "—");

  // The CSV says exactly what the page shows, and the .h5 the same.
  const auto files =
      projects::label_files(config.parent_path() / "labeled-data" / "mouse", "Alice");
  const auto csv = projects::read_table_csv(files.csv);
  ASSERT_EQ(csv.row_count(), 1u);
  EXPECT_EQ(projects::image_key(csv, 0).image, "img000.png");
  EXPECT_EQ(csv.at(0, 0), points[0]["x"].get<double>());
  EXPECT_EQ(csv.at(0, 1), points[0]["y"].get<double>());
  for (std::size_t column = 2; column < 8; ++column) EXPECT_TRUE(std::isnan(csv.at(0, column)));
  EXPECT_TRUE(projects::same_table(csv, projects::read_table_hdf5(files.h5)));
}

TEST(Browser, KeysUndoRedoSecondTabAndRefine) {
  LABPOSE_REQUIRE_SELENIUM(python);
  testing::TempDir dir;
  const fs::path config = testing::make_labeling_project(dir.path());
  const fs::path folder = config.parent_path() / "labeled-data" / "mouse";
  testing::write_machine_labels(folder);
  ServerOptions options;
  options.refine = true;
  LabelServer server(projects::ProjectConfig::load(config), options);
  server.start();
  const json page = run_page_script(python, server, "extras");
  ASSERT_FALSE(page.is_null());
  EXPECT_NEAR(page["placed"]["x"].get<double>(), 30.0, 0.5);
  EXPECT_TRUE(page["second_tab"][1].is_null());
  // Accepted: the network's snout, leftear and rightear; it had no tailbase.
  const json& accepted = page["accepted"];
  for (std::size_t j = 0; j < 3; ++j)
    EXPECT_EQ(accepted[j], json({{"x", 10.0 + static_cast<double>(j)}, {"y", 20.0}})) << j;
  EXPECT_TRUE(accepted[3].is_null());

  const auto csv = projects::read_table_csv(projects::label_files(folder, "Alice").csv);
  ASSERT_EQ(csv.row_count(), 2u);  // img001 (its point deleted in the first tab) and img003
  EXPECT_EQ(projects::image_key(csv, 0).image, "img001.png");
  for (std::size_t column = 0; column < 8; ++column) EXPECT_TRUE(std::isnan(csv.at(0, column)));
  EXPECT_EQ(projects::image_key(csv, 1).image, "img003.png");
  EXPECT_EQ(csv.at(1, 2), 11.0);  // leftear x
  EXPECT_TRUE(std::isnan(csv.at(1, 6)));
}

TEST(Browser, ARefusedSaveIsShownWithTheFileAndLine) {
  LABPOSE_REQUIRE_SELENIUM(python);
  testing::TempDir dir;
  const fs::path config = testing::make_labeling_project(dir.path());
  const auto files =
      projects::label_files(config.parent_path() / "labeled-data" / "mouse", "Alice");
  LabelServer server(projects::ProjectConfig::load(config), {});
  server.start();
  const json page = run_page_script(python, server, "refused " + shell_quote(files.csv.string()));
  ASSERT_FALSE(page.is_null());
  // The page names the file and the line with the typo (line 4: the first row after 3 headers).
  const std::string status = page["status"];
  EXPECT_NE(status.find("CollectedData_Alice.csv:4"), std::string::npos) << status;
  EXPECT_TRUE(page["points"][1].is_null()) << page.dump();  // the refused point is not shown
  const std::string csv = testing::read_text(files.csv);
  EXPECT_TRUE(csv.ends_with("x\n")) << csv;  // the user's file, untouched
}

TEST(Browser, LabelsThatCannotBeReadAreShownAsSuchWithTheImage) {
  LABPOSE_REQUIRE_SELENIUM(python);
  testing::TempDir dir;
  const fs::path config = testing::make_labeling_project(dir.path());
  const auto files =
      projects::label_files(config.parent_path() / "labeled-data" / "mouse", "Alice");
  testing::write_text(files.csv,
                      "scorer,,,Alice,Alice\nbodyparts,,,snout,snout\ncoords,,,x,y\n"
                      "labeled-data,mouse,img000.png,1.5,2x\n");
  LabelServer server(projects::ProjectConfig::load(config), {});
  server.start();
  const json page = run_page_script(python, server, "unreadable");
  ASSERT_FALSE(page.is_null());
  const std::string status = page["status"];
  EXPECT_NE(status.find("CollectedData_Alice.csv:4"), std::string::npos) << status;
  EXPECT_TRUE(page["picture"].get<bool>()) << page.dump();
  EXPECT_TRUE(page["frame"].is_null()) << page.dump();
}

// DeepLabCut's multi-animal example with one blank, unlabeled frame: points of two individuals,
// one given to a third, one such move refused; the files say what the page showed.
TEST(Browser, PlacesPointsOfSeveralIndividualsAndMovesOneToAnother) {
  LABPOSE_REQUIRE_SELENIUM(python);
  testing::TempDir dir;
  const fs::path config = testing::copy_multi_animal_example(dir.path(), {"img00.png"});
  const fs::path folder = config.parent_path() / "labeled-data" / "m3v1mp4short";
  const std::string example = testing::read_text(projects::label_files(folder, "dlc_team").csv);
  LabelServer server(projects::ProjectConfig::load(config), {});
  server.start();
  const json page = run_page_script(python, server, "multi");
  ASSERT_FALSE(page.is_null());
  EXPECT_EQ(page["individuals"], json({"individual1", "individual2", "individual3", "single"}));
  EXPECT_EQ(page["single"], json({"single", json({"corner1", "corner2"})}));
  EXPECT_EQ(page["selected"], "individual2");
  const std::string refused = page["refused"];
  EXPECT_TRUE(
      testing::contains(refused, "individual2's bodypart1 already has a point in img00.png"))
      << refused;
  EXPECT_EQ(page["counts"], json({"3/11"}));

  // individual1's bodypart1, individual2's bodypart1, individual3's bodypart2 (moved from
  // individual2's); nothing else.
  const json& points = page["points"];
  ASSERT_EQ(points.size(), 11u);
  const auto near = [&](std::size_t keypoint, double x, double y) {
    ASSERT_TRUE(points[keypoint].is_object()) << keypoint << ": " << page.dump();
    EXPECT_NEAR(points[keypoint]["x"].get<double>(), x, 1.0) << keypoint;
    EXPECT_NEAR(points[keypoint]["y"].get<double>(), y, 1.0) << keypoint;
  };
  near(0, 300.5, 300.5);
  near(3, 100.5, 100.5);
  near(7, 200.5, 120.5);
  for (const std::size_t keypoint : {1u, 2u, 4u, 5u, 6u, 8u, 9u, 10u})
    EXPECT_TRUE(points[keypoint].is_null()) << keypoint;

  // The file: DeepLabCut's four header rows, the example's rows, and img00 as the page shows it.
  const auto files = projects::label_files(folder, "dlc_team");
  const std::string text = testing::read_text(files.csv);
  const std::size_t headers_end = example.find("labeled-data,");
  EXPECT_EQ(text.substr(0, headers_end), example.substr(0, headers_end));
  EXPECT_TRUE(testing::contains(text, example.substr(headers_end))) << text;
  const auto csv = projects::read_table_csv(files.csv);
  ASSERT_EQ(csv.row_count(), 6u);
  EXPECT_EQ(projects::image_key(csv, 0).image, "img00.png");
  for (std::size_t column = 0; column < 22; ++column) {
    const std::size_t keypoint = column / 2;
    const json& shown = points[keypoint];
    if (shown.is_null()) {
      EXPECT_TRUE(std::isnan(csv.at(0, column))) << column;
    } else {
      EXPECT_EQ(csv.at(0, column), shown[column % 2 == 0 ? "x" : "y"].get<double>()) << column;
    }
  }
  EXPECT_TRUE(projects::same_table(csv, projects::read_table_hdf5(files.h5)));
}

}  // namespace
}  // namespace labpose::labeling
