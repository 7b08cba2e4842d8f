// The labeling server tests' fixture: the project of labeling_support.hpp, a LabelServer on a free
// port with a fixed token, and small HTTP helpers over cpp-httplib's client. Not a test itself.
#pragma once

#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <memory>
#include <string>

#include "labeling/server.hpp"
#include "projects/labels.hpp"
#include "tests/labeling/labeling_support.hpp"
#include "tests/support/test_support.hpp"

namespace labpose::labeling {

class LabelServerTest : public ::testing::Test {
 protected:
  void SetUp() override { config_file_ = testing::make_labeling_project(dir_.path()); }

  // Starts a server on a free port with a fixed token.
  void start(bool refine = false, ServerOptions options = {}) {
    options.token = "secret-token";
    options.refine = refine;
    server_ = std::make_unique<LabelServer>(projects::ProjectConfig::load(config_file_), options);
    server_->start();
  }

  httplib::Client client() const {
    httplib::Client client("127.0.0.1", server_->port());
    client.set_default_headers({{"X-Labpose-Token", "secret-token"}});
    return client;
  }

  nlohmann::json post(const std::string& path, const nlohmann::json& body,
                      int expected_status = 200) {
    auto result = client().Post(path.c_str(), body.dump(), "application/json");
    EXPECT_TRUE(result) << path;
    if (!result) return {};
    EXPECT_EQ(result->status, expected_status) << path << ": " << result->body;
    return nlohmann::json::parse(result->body);
  }

  int get_status(const std::string& path) {
    auto result = client().Get(path.c_str());
    return result ? result->status : -1;
  }

  std::filesystem::path folder() const {
    return config_file_.parent_path() / "labeled-data" / "mouse";
  }
  projects::LabelFiles files(const std::string& scorer = "Alice") const {
    return projects::label_files(folder(), scorer);
  }

  testing::TempDir dir_;
  std::filesystem::path config_file_;
  std::unique_ptr<LabelServer> server_;
};

// The body of /api/point for a point of labeled-data/mouse.
inline nlohmann::json point_at(const std::string& image, const std::string& bodypart, double x,
                               double y) {
  return {{"video", "mouse"}, {"image", image}, {"bodypart", bodypart}, {"x", x}, {"y", y}};
}

// The value of one keypoint in a label table, NaN when the row or column is missing.
inline double value(const projects::Table& table, const std::string& image,
                    const std::string& bodypart, const std::string& coord) {
  for (std::size_t row = 0; row < table.row_count(); ++row) {
    if (projects::image_key(table, row).image != image) continue;
    for (std::size_t column = 0; column < table.column_count(); ++column) {
      if (table.columns[column][1] == bodypart && table.columns[column][2] == coord)
        return table.at(row, column);
    }
  }
  return std::nan("");
}

}  // namespace labpose::labeling
