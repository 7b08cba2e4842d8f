// The labeling page end to end in headless Chromium (ctest label `browser`): Debian's chromium and
// chromium-driver, driven by Selenium from PyPI in a virtualenv this test makes once under the
// build folder (never the system's site-packages). Skips with the reason when any of that is
// missing; fails instead when LABPOSE_REQUIRE_INTEROP_PYTHON=1 (tools/test.sh installed them).
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>

#include "labeling/server.hpp"
#include "projects/labels.hpp"
#include "tests/labeling/labeling_support.hpp"
#include "tests/support/test_support.hpp"

namespace labpose::labeling {
namespace {
namespace fs = std::filesystem;
using nlohmann::json;
using testing::shell_quote;

// The virtualenv's python with Selenium, made on first use; or the reason there is none.
std::string selenium_python(std::string& reason) {
  const fs::path venv = LABPOSE_BROWSER_VENV;
  const std::string python = (venv / "bin" / "python").string();
  if (testing::run(shell_quote(python) + " -c 'import selenium'").exit_code == 0) return python;
  for (const char* program : {"/usr/bin/chromium", "/usr/bin/chromedriver"}) {
    if (!fs::exists(program)) {
      reason = fmt::format(
          "{} is not installed (tools/install-deps.sh --tests installs Debian's "
          "chromium and chromium-driver)",
          program);
      return {};
    }
  }
  const auto made = testing::run("/usr/bin/python3 -m venv " + shell_quote(venv.string()) + " && " +
                                 shell_quote(python) + " -m pip install -q selenium");
  if (made.exit_code != 0) {
    reason = "could not make a virtualenv with Selenium from PyPI in " + venv.string() + ":\n" +
             made.output;
    return {};
  }
  return python;
}

TEST(Browser, PlaceMoveDeleteReloadAgreesWithTheCsv) {
  std::string reason;
  const std::string python = selenium_python(reason);
  if (python.empty()) {
    if (std::getenv("LABPOSE_REQUIRE_INTEROP_PYTHON") != nullptr)
      FAIL() << reason << " (LABPOSE_REQUIRE_INTEROP_PYTHON is set)";
    GTEST_SKIP() << reason;
  }
  testing::TempDir dir;
  const fs::path config = testing::make_labeling_project(dir.path());
  LabelServer server(projects::ProjectConfig::load(config), {});
  server.start();
  const auto result = testing::run(
      shell_quote(python) + " " +
      shell_quote(
          (fs::path(LABPOSE_SOURCE_DIR) / "tests" / "labeling" / "browser_labeling.py").string()) +
      " " + shell_quote(server.url()));
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const json page = json::parse(result.output.substr(result.output.rfind("\n{") + 1));
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

}  // namespace
}  // namespace labpose::labeling
