// The track refinement page's server (labpose refine-tracks without --swap): the token, the page,
// the tracks and frames as JSON and JPEG, swaps from a frame on with undo, refusals with the
// individuals listed, and save writing the file in place with the first version kept.
#include "labeling/track_server.hpp"

#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>
#include <opencv2/core.hpp>

#include "core/atomic_file.hpp"
#include "pipeline/images/image_files.hpp"
#include "tests/labeling/labeling_support.hpp"
#include "tests/pipeline/animal_tracks.hpp"
#include "tests/support/media_support.hpp"
#include "tests/support/test_support.hpp"

namespace labpose::labeling {
namespace {
namespace fs = std::filesystem;
using nlohmann::json;

class TrackServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    config_ = testing::make_labeling_project(dir_.path());
    video_ = dir_ / "mice.mp4";
    testing::write_test_video(video_, 12, 96, 64);
    tracks_ = dir_ / "miceDLC_el.h5";
    projects::write_table_hdf5(original(), tracks_, "tracks");
    ServerOptions options;
    options.token = "secret-token";
    server_ = std::make_unique<TrackServer>(projects::ProjectConfig::load(config_), video_, tracks_,
                                            options);
    server_->start();
  }

  static projects::Table original() {
    return pipeline::animal_tracks({"individual1", "individual2", "individual3"}, {"snout", "tail"},
                                   {"arena"}, 12);
  }

  httplib::Client client(const std::string& token = "secret-token") const {
    httplib::Client client("127.0.0.1", server_->port());
    if (!token.empty()) client.set_default_headers({{"X-Labpose-Token", token}});
    return client;
  }

  json get(const std::string& path, int expected_status = 200) {
    auto result = client().Get(path.c_str());
    EXPECT_TRUE(result) << path;
    if (!result) return {};
    EXPECT_EQ(result->status, expected_status) << path << ": " << result->body;
    return json::parse(result->body);
  }

  json post(const std::string& path, const json& body, int expected_status = 200) {
    auto result = client().Post(path.c_str(), body.dump(), "application/json");
    EXPECT_TRUE(result) << path;
    if (!result) return {};
    EXPECT_EQ(result->status, expected_status) << path << ": " << result->body;
    return json::parse(result->body);
  }

  // The x of `individual`'s snout in `frame`, as the page is given it.
  double snout_x(std::int64_t frame, std::size_t individual) {
    const json points = get("/api/points?frame=" + std::to_string(frame));
    return points["individuals"][individual]["points"][0][0].get<double>();
  }

  testing::TempDir dir_;
  fs::path config_, video_, tracks_;
  std::unique_ptr<TrackServer> server_;
};

TEST_F(TrackServerTest, NeedsItsTokenAndServesThePage) {
  EXPECT_EQ(client("").Get("/api/tracks")->status, 401);
  EXPECT_EQ(client("wrong").Get("/api/tracks")->status, 403);
  const auto page = client().Get("/");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  EXPECT_NE(page->body.find("swap from this frame on"), std::string::npos);
  EXPECT_EQ(client().Get("/tracks.js")->status, 200);
  EXPECT_TRUE(testing::contains(server_->url(), "/?token=secret-token"));
}

TEST_F(TrackServerTest, GivesTheTracksPointsAndFrames) {
  const json info = get("/api/tracks");
  EXPECT_EQ(info["frames"], 12);
  EXPECT_EQ(info["width"], 96);
  EXPECT_EQ(info["height"], 64);
  EXPECT_EQ(info["individuals"],
            json::array({"individual1", "individual2", "individual3", "single"}));
  EXPECT_EQ(info["colors"].size(), 4u);
  EXPECT_EQ(info["bodyparts"], json::array({"snout", "tail", "arena"}));
  EXPECT_TRUE(info["unsaved"].empty());

  const json points = get("/api/points?frame=3");
  EXPECT_EQ(points["individuals"][1]["individual"], "individual2");
  EXPECT_EQ(points["individuals"][1]["points"][1], json::array({113.0, 81.0, 0.9}));
  EXPECT_TRUE(points["individuals"][1]["points"][2].is_null()) << "an animal has no arena";
  EXPECT_EQ(points["individuals"][3]["points"][2], json::array({300.0, 400.0, 0.95}));

  const auto image = client().Get("/api/image?frame=2");
  ASSERT_TRUE(image);
  EXPECT_EQ(image->get_header_value("Content-Type"), "image/jpeg");
  const cv::Mat decoded =
      pipeline::decode_image(image->body, "the frame", pipeline::ChannelOrder::bgr);
  EXPECT_EQ(decoded.cols, 96);
  EXPECT_EQ(decoded.rows, 64);
  get("/api/points?frame=12", 404);
  get("/api/image?frame=-1", 404);
  get("/api/points?frame=two", 400);
}

TEST_F(TrackServerTest, SwapsFromAFrameOnUndoesAndRefusesWithTheIndividualsListed) {
  const std::string before = read_file(tracks_);
  const json swapped =
      post("/api/swap", {{"first", "individual1"}, {"second", "individual2"}, {"from", 5}});
  EXPECT_EQ(swapped["unsaved"],
            json::array({{{"first", "individual1"}, {"second", "individual2"}, {"from", 5}}}));
  EXPECT_EQ(snout_x(4, 0), 4.0);
  EXPECT_EQ(snout_x(5, 0), 105.0);
  EXPECT_EQ(snout_x(11, 1), 11.0);
  EXPECT_EQ(read_file(tracks_), before) << "nothing is written before save";

  const json single =
      post("/api/swap", {{"first", "single"}, {"second", "individual2"}, {"from", 0}}, 400);
  EXPECT_TRUE(testing::contains(single["error"], "cannot be swapped")) << single;
  const json unknown =
      post("/api/swap", {{"first", "mouse9"}, {"second", "individual2"}, {"from", 0}}, 400);
  EXPECT_TRUE(testing::contains(unknown["hint"], "individual1, individual2, individual3"))
      << unknown;
  post("/api/swap", {{"first", "individual1"}, {"second", "individual2"}}, 400);

  EXPECT_TRUE(post("/api/undo", json::object())["unsaved"].empty());
  EXPECT_EQ(snout_x(5, 0), 5.0);
  post("/api/undo", json::object(), 409);
  EXPECT_FALSE(fs::exists(pipeline::original_tracks_path(tracks_)));
}

TEST_F(TrackServerTest, SaveWritesTheFileInPlaceAndKeepsTheFirstVersion) {
  const std::string before = read_file(tracks_);
  post("/api/swap", {{"first", "individual3"}, {"second", "individual1"}, {"from", 2}});
  const json saved = post("/api/save", json::object());
  EXPECT_EQ(saved["written"], json::array({tracks_.string()}));
  EXPECT_EQ(saved["original"], pipeline::original_tracks_path(tracks_).string());
  EXPECT_TRUE(saved["unsaved"].empty());
  EXPECT_EQ(read_file(pipeline::original_tracks_path(tracks_)), before);
  const projects::Table table = projects::read_table_hdf5(tracks_, "tracks");
  EXPECT_EQ(table.at(2, 0), original().at(2, 12));
  EXPECT_EQ(table.at(1, 0), original().at(1, 0));
  post("/api/undo", json::object(), 409);  // a saved swap is no longer undone
}

// Tracks changed on disk while the page was open (another page, refine-tracks --swap, stitch
// again): the save answers 409 and writes nothing; the swaps stay unsaved.
TEST_F(TrackServerTest, SaveRefusesTracksChangedOnDiskSinceThePageRead) {
  post("/api/swap", {{"first", "individual3"}, {"second", "individual1"}, {"from", 2}});
  pipeline::RefinableTracks other = pipeline::read_refinable_tracks(tracks_);
  pipeline::swap_individuals(other.table, {"individual1", "individual2", 0, std::nullopt}, tracks_);
  pipeline::save_refined_tracks(other);
  const std::string changed = read_file(tracks_);
  post("/api/save", json::object(), 409);
  EXPECT_EQ(read_file(tracks_), changed) << "the other change is kept";
  EXPECT_EQ(get("/api/tracks")["unsaved"].size(), 1u);
}

// Two tabs on one page: each change sends the revision its tab shows, so a tab that has not seen
// the other's swap cannot undo or save it unseen (409, nothing changed); one that has, can.
TEST_F(TrackServerTest, RefusesAChangeFromATabThatHasNotSeenAnothersSwap) {
  const std::int64_t shown = get("/api/tracks")["revision"];
  const json first =
      post("/api/swap",
           {{"first", "individual1"}, {"second", "individual2"}, {"from", 5}, {"revision", shown}});
  const json stale = post("/api/undo", {{"revision", shown}}, 409);
  EXPECT_TRUE(testing::contains(stale["error"], "another tab")) << stale;
  post("/api/save", {{"revision", shown}}, 409);
  EXPECT_EQ(snout_x(5, 0), 105.0) << "the refused undo changed nothing";
  EXPECT_FALSE(fs::exists(pipeline::original_tracks_path(tracks_))) << "nor was anything saved";

  const json undone = post("/api/undo", {{"revision", first["revision"]}});
  EXPECT_TRUE(undone["unsaved"].empty());
  EXPECT_GT(undone["revision"].get<std::int64_t>(), first["revision"].get<std::int64_t>());
  post("/api/undo", {{"revision", "two"}}, 400);
}

}  // namespace
}  // namespace labpose::labeling
