// The labeling server's HTTP API through cpp-httplib's client: the token, requests that try to
// leave the project, bounded bodies, saves with backups, merges with other files, concurrent saves
// and --refine's machine labels.
#include <fmt/core.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <thread>

#include "core/atomic_file.hpp"
#include "labeling/server.hpp"
#include "projects/labels.hpp"
#include "tests/labeling/labeling_support.hpp"
#include "tests/labeling/server_fixture.hpp"
#include "tests/support/test_support.hpp"

namespace labpose::labeling {
namespace {
namespace fs = std::filesystem;
using nlohmann::json;

TEST_F(LabelServerTest, EveryRequestNeedsTheToken) {
  start();
  httplib::Client bare("127.0.0.1", server_->port());
  for (const char* path :
       {"/", "/app.js", "/api/project", "/api/videos", "/api/image?video=mouse&image=img000.png"}) {
    auto result = bare.Get(path);
    ASSERT_TRUE(result);
    EXPECT_EQ(result->status, 401) << path;
    EXPECT_EQ(result->body.find("<canvas"), std::string::npos);
  }
  auto posted = bare.Post("/api/point", R"({"video":"mouse"})", "application/json");
  ASSERT_TRUE(posted);
  EXPECT_EQ(posted->status, 401);

  // A wrong token, in any place a token may be given.
  EXPECT_EQ(bare.Get("/api/project?token=secret-tokeN")->status, 403);
  EXPECT_EQ(bare.Get("/api/project", {{"X-Labpose-Token", "nope"}})->status, 403);
  EXPECT_EQ(bare.Get("/api/project",
                     {{"Cookie", "labpose_token_" + std::to_string(server_->port()) + "=x"}})
                ->status,
            403);

  // The printed URL sets a cookie and sends the browser to the page without the token.
  auto opened = bare.Get("/?token=secret-token");
  ASSERT_TRUE(opened);
  EXPECT_EQ(opened->status, 303);
  const std::string cookie = opened->get_header_value("Set-Cookie");
  EXPECT_NE(cookie.find("labpose_token_" + std::to_string(server_->port()) + "=secret-token"),
            std::string::npos);
  EXPECT_NE(cookie.find("HttpOnly"), std::string::npos);
  EXPECT_NE(cookie.find("SameSite=Strict"), std::string::npos);
  EXPECT_EQ(opened->get_header_value("Location"), "/");
  auto page = bare.Get("/", {{"Cookie", cookie.substr(0, cookie.find(';'))}});
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  EXPECT_NE(page->body.find("<canvas"), std::string::npos);
  EXPECT_EQ(bare.Get("/app.js", {{"Cookie", cookie.substr(0, cookie.find(';'))}})->status, 200);
}

TEST_F(LabelServerTest, ATakenPortIsAnError) {
  start();
  ServerOptions options;
  options.port = server_->port();
  LabelServer second(projects::ProjectConfig::load(config_file_), options);
  try {
    second.start();
    FAIL() << "a second server started on the same port";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find(std::to_string(server_->port())), std::string::npos);
  }
}

TEST_F(LabelServerTest, ServesTheEmbeddedPageAndTheProject) {
  start();
  auto script = client().Get("/app.js");
  ASSERT_TRUE(script);
  EXPECT_EQ(script->status, 200);
  EXPECT_EQ(script->get_header_value("Content-Type"), "text/javascript; charset=utf-8");
  EXPECT_NE(script->body.find("/api/point"), std::string::npos);
  EXPECT_EQ(get_status("/style.css"), 200);
  EXPECT_EQ(get_status("/nothing.js"), 404);

  auto project = client().Get("/api/project");
  ASSERT_TRUE(project);
  const json body = json::parse(project->body);
  EXPECT_EQ(body["scorer"], "Alice");
  EXPECT_EQ(body["bodyparts"], json({"snout", "leftear", "rightear", "tailbase"}));
  // matplotlib's rainbow at 4 points, from pipeline/plots (tested against matplotlib there).
  ASSERT_EQ(body["colors"].size(), 4u);
  EXPECT_EQ(body["colors"][0], "#8000ff");
  EXPECT_EQ(body["colors"][3], "#ff0000");
  EXPECT_EQ(body["skeleton"], json::array({json::array({"snout", "tailbase"})}));

  auto videos = json::parse(client().Get("/api/videos")->body);
  ASSERT_EQ(videos["videos"].size(), 1u);
  EXPECT_EQ(videos["videos"][0]["stem"], "mouse");
  EXPECT_EQ(videos["videos"][0]["frames"].size(), 5u);

  auto image = client().Get("/api/image?video=mouse&image=img002.png");
  ASSERT_TRUE(image);
  EXPECT_EQ(image->status, 200);
  EXPECT_EQ(image->get_header_value("Content-Type"), "image/png");
  EXPECT_EQ(image->body, read_file(folder() / "img002.png"));
}

TEST_F(LabelServerTest, RefusesPathsOutsideTheLabeledData) {
  const fs::path project = config_file_.parent_path();
  testing::write_text(dir_.path() / "secret.png", "not in the project");
  fs::create_symlink(dir_.path() / "secret.png", folder() / "escape.png");
  fs::create_directories(dir_.path() / "elsewhere");
  fs::copy_file(folder() / "img000.png", dir_.path() / "elsewhere" / "img000.png");
  fs::create_directory_symlink(dir_.path() / "elsewhere", project / "labeled-data" / "outside");
  start();
  for (const char* query :
       {"video=..&image=config.yaml", "video=mouse&image=../../config.yaml",
        "video=mouse%2F..%2F..&image=config.yaml", "video=mouse&image=%2Fetc%2Fpasswd",
        "video=%2Fetc&image=passwd", "video=mouse&image=..%5C..%5Cconfig.yaml",
        "video=mouse&image=.hidden.png", "video=mouse&image=CollectedData_Alice.csv"}) {
    EXPECT_EQ(get_status(fmt::format("/api/image?{}", query)), 400) << query;
  }
  EXPECT_EQ(get_status("/api/image?video=mouse&image=img999.png"), 404);
  EXPECT_EQ(get_status("/api/image?video=mouse_labeled&image=img000.png"), 404);
  EXPECT_EQ(get_status("/api/image?video=mouse&image=escape.png"), 403);
  EXPECT_EQ(get_status("/api/image?video=outside&image=img000.png"), 403);
  EXPECT_EQ(get_status("/../config.yaml"), 404);
  EXPECT_EQ(get_status("/%2e%2e/config.yaml"), 404);
  post("/api/point",
       {{"video", "outside"}, {"image", "img000.png"}, {"bodypart", "snout"}, {"x", 1}, {"y", 1}},
       403);
  EXPECT_FALSE(fs::exists(dir_.path() / "elsewhere" / "CollectedData_Alice.csv"));
}

TEST_F(LabelServerTest, ALabeledDataFolderLeadingOutOfTheProjectIsNeitherListedNorWritten) {
  // labeled-data itself is a link to a folder outside the project, with a video folder, a frame
  // and another scorer's labels in it.
  const fs::path project = config_file_.parent_path();
  const fs::path outside = dir_.path() / "elsewhere";
  fs::create_directories(outside / "secret-video");
  fs::copy_file(folder() / "img000.png", outside / "secret-video" / "private-name.png");
  projects::Table theirs = projects::make_label_table("Bob", {"snout"});
  theirs.add_row({"labeled-data", "secret-video", "private-name.png"});
  theirs.at(0, 0) = 1;
  theirs.at(0, 1) = 2;
  projects::write_labels(theirs, projects::label_files(outside / "secret-video", "Bob"));
  fs::remove_all(project / "labeled-data");
  fs::create_directory_symlink(outside, project / "labeled-data");
  start();
  auto videos = client().Get("/api/videos");
  ASSERT_TRUE(videos);
  EXPECT_EQ(videos->status, 200);
  EXPECT_EQ(videos->body.find("secret-video"), std::string::npos) << videos->body;
  EXPECT_EQ(videos->body.find("private-name"), std::string::npos) << videos->body;
  EXPECT_EQ(get_status("/api/image?video=secret-video&image=private-name.png"), 403);
  EXPECT_EQ(get_status("/api/frame?video=secret-video&image=private-name.png"), 403);
  EXPECT_TRUE(server_->store().merge_other_scorers().empty());
  EXPECT_FALSE(projects::label_files(outside / "secret-video", "Alice").any_exists());
}

TEST_F(LabelServerTest, ChangesMustBeSentAsJson) {
  start();
  const json good = point_at("img000.png", "snout", 5, 6);
  for (const char* type : {"application/jsonfoo", "application/json-patch+json", "text/json",
                           "application/x-www-form-urlencoded", "application/jso", ""}) {
    auto answer = client().Post("/api/point", good.dump(), type);
    ASSERT_TRUE(answer);
    EXPECT_EQ(answer->status, 415) << type;
  }
  EXPECT_FALSE(files().any_exists());
  for (const char* type :
       {"application/json", "application/json; charset=utf-8", "Application/JSON",
        "application/json ;charset=UTF-8", " application/json"}) {
    auto answer = client().Post("/api/point", good.dump(), type);
    ASSERT_TRUE(answer);
    EXPECT_EQ(answer->status, 200) << type << ": " << answer->body;
  }
}

TEST_F(LabelServerTest, RefusesBadRequests) {
  start();
  const json good = {
      {"video", "mouse"}, {"image", "img000.png"}, {"bodypart", "snout"}, {"x", 5}, {"y", 6}};
  json unknown = good;
  unknown["bodypart"] = "wing";
  post("/api/point", unknown, 404);
  json outside = good;
  outside["x"] = 64;  // the image is 64 wide: x is 0..63.99
  post("/api/point", outside, 400);
  json text = good;
  text["x"] = "5";
  post("/api/point", text, 400);
  auto broken = client().Post("/api/point", "{\"video\": ", "application/json");
  ASSERT_TRUE(broken);
  EXPECT_EQ(broken->status, 400);
  auto form = client().Post("/api/point", good.dump(), "application/x-www-form-urlencoded");
  ASSERT_TRUE(form);
  EXPECT_EQ(form->status, 415);
  const std::string huge(std::size_t{200} * 1024, ' ');
  auto big = client().Post("/api/point", huge + good.dump(), "application/json");
  ASSERT_TRUE(big);
  EXPECT_EQ(big->status, 413);
  EXPECT_FALSE(files().any_exists());  // nothing above was saved
}

TEST_F(LabelServerTest, SavesEachChangeToCsvAndH5WithBackups) {
  start();
  json frame = post("/api/point", {{"video", "mouse"},
                                   {"image", "img001.png"},
                                   {"bodypart", "leftear"},
                                   {"x", 12.345},
                                   {"y", 20.5}});
  EXPECT_EQ(frame["points"][1], json({{"x", 12.35}, {"y", 20.5}}));
  EXPECT_TRUE(frame["points"][0].is_null());
  EXPECT_EQ(frame["width"], 64);
  const auto csv = projects::read_table_csv(files().csv);
  const auto h5 = projects::read_table_hdf5(files().h5);
  EXPECT_TRUE(projects::same_table(csv, h5));
  EXPECT_EQ(value(csv, "img001.png", "leftear", "x"), 12.35);
  EXPECT_EQ(value(csv, "img001.png", "leftear", "y"), 20.5);
  EXPECT_EQ(csv.index_levels, 3u);
  EXPECT_EQ(csv.columns.front(), (std::vector<std::string>{"Alice", "snout", "x"}));
  EXPECT_FALSE(fs::exists(files().csv.string() + ".bak"));  // nothing to keep before the first

  post("/api/point",
       {{"video", "mouse"}, {"image", "img000.png"}, {"bodypart", "snout"}, {"x", 3}, {"y", 4}});
  const auto after = projects::read_table_csv(files().csv);
  ASSERT_EQ(after.row_count(), 2u);  // rows kept in image order
  EXPECT_EQ(projects::image_key(after, 0).image, "img000.png");
  // The previous version is kept beside the file.
  EXPECT_TRUE(projects::same_table(projects::read_table_csv(files().csv.string() + ".bak"), csv));
  EXPECT_TRUE(projects::same_table(projects::read_table_hdf5(files().h5.string() + ".bak"), csv));

  frame =
      post("/api/delete", {{"video", "mouse"}, {"image", "img001.png"}, {"bodypart", "leftear"}});
  EXPECT_TRUE(frame["points"][1].is_null());
  EXPECT_TRUE(
      std::isnan(value(projects::read_table_csv(files().csv), "img001.png", "leftear", "x")));

  auto videos = json::parse(client().Get("/api/videos")->body);
  EXPECT_EQ(videos["videos"][0]["frames"][0]["labeled"], 1);
  EXPECT_EQ(videos["videos"][0]["frames"][1]["labeled"], 0);
}

TEST_F(LabelServerTest, KeepsTheFilesOfTheSessionStartInABackupFolder) {
  start();
  post("/api/point",
       {{"video", "mouse"}, {"image", "img000.png"}, {"bodypart", "snout"}, {"x", 3}, {"y", 4}});
  server_.reset();
  const std::string first = testing::read_text(files().csv);
  start();  // a new session
  post("/api/point",
       {{"video", "mouse"}, {"image", "img000.png"}, {"bodypart", "snout"}, {"x", 9}, {"y", 9}});
  post("/api/point",
       {{"video", "mouse"}, {"image", "img000.png"}, {"bodypart", "snout"}, {"x", 8}, {"y", 8}});
  const fs::path backup = server_->store().session_backup_dir("mouse");
  EXPECT_EQ(testing::read_text(backup / "CollectedData_Alice.csv"), first);
  EXPECT_TRUE(fs::exists(backup / "CollectedData_Alice.h5"));
}

TEST_F(LabelServerTest, KeepsWhatOtherToolsWrote) {
  // A file with an extra bodypart, a row for an image that is not there, the one-column index
  // style, and a .h5 that another tool made newer with one more point.
  projects::Table table = projects::make_label_table("Alice", {"snout", "leftear", "wing"});
  table.index_levels = 1;
  table.add_row({"labeled-data/mouse/img004.png"});
  table.add_row({"labeled-data/mouse/gone.png"});
  table.at(0, 4) = 7.5;  // wing x
  table.at(0, 5) = 8.5;
  table.at(1, 0) = 1.0;
  table.at(1, 1) = 2.0;
  projects::write_table_csv(table, files().csv);
  projects::Table newer = table;
  newer.at(0, 2) = 30.0;  // leftear, only in the .h5
  newer.at(0, 3) = 31.0;
  projects::write_table_hdf5(newer, files().h5);
  fs::last_write_time(files().h5, fs::last_write_time(files().csv) + std::chrono::seconds(5));
  start();

  json frame = json::parse(client().Get("/api/frame?video=mouse&image=img004.png")->body);
  EXPECT_EQ(frame["points"][1], json({{"x", 30.0}, {"y", 31.0}}));
  post("/api/point",
       {{"video", "mouse"}, {"image", "img004.png"}, {"bodypart", "snout"}, {"x", 5}, {"y", 6}});
  const auto csv = projects::read_table_csv(files().csv);
  EXPECT_EQ(csv.index_levels, 1u);
  EXPECT_EQ(value(csv, "img004.png", "wing", "x"), 7.5);
  EXPECT_EQ(value(csv, "gone.png", "snout", "y"), 2.0);
  EXPECT_EQ(value(csv, "img004.png", "leftear", "x"), 30.0);
  EXPECT_EQ(value(csv, "img004.png", "snout", "x"), 5.0);
  EXPECT_TRUE(std::isnan(value(csv, "img004.png", "tailbase", "x")));
  EXPECT_TRUE(projects::same_table(csv, projects::read_table_hdf5(files().h5)));
}

TEST_F(LabelServerTest, RefusesToSaveOverLabelsItCannotRead) {
  testing::write_text(files().csv, "scorer,Alice\nthis is not,a label file\n");
  const std::string before = testing::read_text(files().csv);
  start();
  post("/api/point",
       {{"video", "mouse"}, {"image", "img000.png"}, {"bodypart", "snout"}, {"x", 3}, {"y", 4}},
       409);
  EXPECT_EQ(testing::read_text(files().csv), before);
}

TEST_F(LabelServerTest, MergesOtherScorersOnceWithoutBringingBackDeletedPoints) {
  projects::Table theirs = projects::make_label_table("Bob", {"snout", "tailbase"});
  theirs.add_row({"labeled-data", "mouse", "img002.png"});
  theirs.at(0, 0) = 11;
  theirs.at(0, 1) = 12;
  theirs.at(0, 2) = 21;
  theirs.at(0, 3) = 22;
  projects::write_labels(theirs, files("Bob"));
  const std::string bob_csv = testing::read_text(files("Bob").csv);
  start();
  auto notes = server_->store().merge_other_scorers();
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0].points, 2u);
  EXPECT_EQ(notes[0].source, "CollectedData_Bob.h5");
  auto ours = projects::read_table_csv(files().csv);
  EXPECT_EQ(value(ours, "img002.png", "snout", "x"), 11.0);
  EXPECT_EQ(ours.columns.front().front(), "Alice");
  EXPECT_EQ(testing::read_text(files("Bob").csv), bob_csv);  // their file is left alone

  post("/api/delete", {{"video", "mouse"}, {"image", "img002.png"}, {"bodypart", "snout"}});
  server_.reset();
  start();
  EXPECT_EQ(server_->store().merge_other_scorers().size(), 0u);
  ours = projects::read_table_csv(files().csv);
  EXPECT_TRUE(std::isnan(value(ours, "img002.png", "snout", "x")));
  EXPECT_EQ(value(ours, "img002.png", "tailbase", "y"), 22.0);
}

TEST_F(LabelServerTest, ConcurrentSavesFromTwoTabsLoseNothing) {
  start();
  const std::vector<std::string> bodyparts = {"snout", "leftear", "rightear", "tailbase"};
  std::vector<std::thread> tabs;
  tabs.reserve(2);
  for (int tab = 0; tab < 2; ++tab) {
    tabs.emplace_back([&, tab] {
      httplib::Client client("127.0.0.1", server_->port());
      client.set_default_headers({{"X-Labpose-Token", "secret-token"}});
      for (int image = 0; image < 5; ++image) {
        for (int j = tab * 2; j < tab * 2 + 2; ++j) {
          const json body = {{"video", "mouse"},
                             {"image", fmt::format("img{:03}.png", image)},
                             {"bodypart", bodyparts[static_cast<std::size_t>(j)]},
                             {"x", 10 * image + j},
                             {"y", j}};
          auto result = client.Post("/api/point", body.dump(), "application/json");
          EXPECT_TRUE(result && result->status == 200);
        }
      }
    });
  }
  for (auto& tab : tabs) tab.join();
  const auto csv = projects::read_table_csv(files().csv);
  ASSERT_EQ(csv.row_count(), 5u);
  for (int image = 0; image < 5; ++image) {
    for (int j = 0; j < 4; ++j) {
      EXPECT_EQ(value(csv, fmt::format("img{:03}.png", image),
                      bodyparts[static_cast<std::size_t>(j)], "x"),
                10 * image + j);
    }
  }
  EXPECT_TRUE(projects::same_table(csv, projects::read_table_hdf5(files().h5)));
}

TEST_F(LabelServerTest, RefineShowsAndAcceptsTheNetworksPoints) {
  testing::write_machine_labels(folder());

  start(false);
  json frame = json::parse(client().Get("/api/frame?video=mouse&image=img003.png")->body);
  EXPECT_TRUE(frame["machine"].empty());  // only with --refine
  server_.reset();

  start(true);
  EXPECT_EQ(json::parse(client().Get("/api/project")->body)["refine"], true);
  auto videos = json::parse(client().Get("/api/videos")->body);
  EXPECT_EQ(videos["videos"][0]["frames"][3]["machine"], true);
  EXPECT_EQ(videos["videos"][0]["frames"][2]["machine"], false);
  frame = json::parse(client().Get("/api/frame?video=mouse&image=img003.png")->body);
  EXPECT_EQ(frame["machine"][1], json({{"x", 11.0}, {"y", 20.0}, {"likelihood", 0.5}}));
  EXPECT_TRUE(frame["machine"][3].is_null());

  // One point corrected by hand, the rest accepted.
  post("/api/point",
       {{"video", "mouse"}, {"image", "img003.png"}, {"bodypart", "snout"}, {"x", 2}, {"y", 3}});
  frame = post("/api/accept", {{"video", "mouse"}, {"image", "img003.png"}});
  EXPECT_EQ(frame["points"][0], json({{"x", 2.0}, {"y", 3.0}}));
  EXPECT_EQ(frame["points"][2], json({{"x", 12.0}, {"y", 20.0}}));
  EXPECT_TRUE(frame["points"][3].is_null());
  const auto csv = projects::read_table_csv(files().csv);
  EXPECT_EQ(value(csv, "img003.png", "leftear", "x"), 11.0);
  EXPECT_EQ(value(csv, "img003.png", "snout", "x"), 2.0);
  EXPECT_EQ(csv.column_count(), 8u);  // no likelihood columns in human labels
}

}  // namespace
}  // namespace labpose::labeling
