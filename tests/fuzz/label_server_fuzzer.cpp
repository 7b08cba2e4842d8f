// Fuzz harness for the labeling server's request handling: the input is decoded into a method, a
// target (path and query, decoded by httplib's own functions as its parser does), headers and a
// body, and handed to RequestHandler::handle, the code the socket server runs for every request
// (token, cookie, media type, routes, JSON bodies, the label store). No sockets. Checked: no crash,
// no request without the token is answered, every JSON answer parses, and nothing outside the
// project is written (a linked video folder and a linked image lead out of it).
#include <fcntl.h>
#include <httplib.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>  // also POSIX mkdtemp
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "labeling/label_store.hpp"
#include "labeling/request_handler.hpp"
#include "projects/labels.hpp"
#include "tests/labeling/labeling_support.hpp"

namespace {
namespace fs = std::filesystem;
using namespace labpose;

constexpr const char* kToken = "fuzz-token-0123456789abcdef";
constexpr const char* kCookie = "labpose_token_1";
constexpr std::size_t kMaxBody =
    std::size_t{64} * 1024;  // the server's default: longer bodies get 413 unread

// Every file under `root` with its size: what must not change outside the project.
std::map<std::string, std::uintmax_t> listing(const fs::path& root) {
  std::map<std::string, std::uintmax_t> files;
  std::error_code error;
  for (auto it = fs::recursive_directory_iterator(root, error);
       it != fs::recursive_directory_iterator(); it.increment(error)) {
    const bool regular = it->is_regular_file(error);
    files[it->path().string()] = regular ? it->file_size(error) : 0;
  }
  return files;
}

// A project made once per process in a temp folder (on /dev/shm when there is one: the saves
// flush to disk), removed at exit.
struct World {
  fs::path root, project, outside;
  std::unique_ptr<projects::ProjectConfig> config;
  std::map<std::string, std::uintmax_t> outside_files, project_files, root_entries;
  std::string csv, h5, record;  // the labels every input starts from

  World() {
    std::string pattern =
        (fs::exists("/dev/shm") ? fs::path("/dev/shm") : fs::temp_directory_path()) /
        "labpose-fuzz-label-server-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) std::abort();
    root = pattern;
    const fs::path config_file = testing::make_labeling_project(root / "project");
    project = config_file.parent_path();
    config = std::make_unique<projects::ProjectConfig>(projects::ProjectConfig::load(config_file));
    const fs::path mouse = project / "labeled-data" / "mouse";
    testing::write_machine_labels(mouse);  // for /api/accept
    // Ways out of the project: a video folder and an image that are links to files outside it.
    outside = root / "outside";
    fs::create_directories(outside / "video");
    fs::copy_file(mouse / "img000.png", outside / "video" / "img000.png");
    fs::copy_file(mouse / "img001.png", outside / "secret.png");
    fs::create_directory_symlink(outside / "video", project / "labeled-data" / "escape");
    fs::create_symlink(outside / "secret.png", mouse / "link.png");
    // A folder whose labels cannot be read (a typo in the CSV), for the refusals.
    fs::create_directories(project / "labeled-data" / "broken");
    fs::copy_file(mouse / "img000.png", project / "labeled-data" / "broken" / "img000.png");
    projects::Table table = projects::make_label_table("Alice", {"snout", "leftear"});
    table.add_row({"labeled-data", "broken", "img000.png"});
    std::string text = projects::table_to_csv(table);
    text.insert(text.size() - 1, "x");
    write(project / "labeled-data" / "broken" / "CollectedData_Alice.csv", text);
    const auto old = fs::last_write_time(project / "labeled-data" / "broken" / "img000.png") -
                     std::chrono::hours(1);
    fs::last_write_time(project / "labeled-data" / "broken" / "CollectedData_Alice.csv", old);
    // Labels saved once by the store, as a session leaves them.
    labeling::LabelStore store(*config, true);
    store.set_point("mouse", "img001.png", "snout", 10, 20);
    const auto files = projects::label_files(mouse, "Alice");
    csv = labpose::read_file(files.csv);
    h5 = labpose::read_file(files.h5);
    record = labpose::read_file(mouse / ".labpose-backups" / "CollectedData_Alice.labpose-saved");
    reset_labels();
    outside_files = listing(outside);
    project_files = listing(project);
    for (const auto& entry : fs::directory_iterator(root)) root_entries[entry.path().string()] = 0;
  }

  ~World() {
    std::error_code error;
    fs::remove_all(root, error);
  }

  static void write(const fs::path& file, const std::string& bytes) {
    const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0 || ::write(fd, bytes.data(), bytes.size()) != static_cast<ssize_t>(bytes.size()))
      std::abort();
    ::close(fd);
  }

  // Puts the mouse folder's labels back as they were, so each input starts from the same files.
  void reset_labels() {
    const fs::path mouse = project / "labeled-data" / "mouse";
    const auto files = projects::label_files(mouse, "Alice");
    std::error_code error;
    fs::remove_all(mouse / ".labpose-backups", error);
    for (const fs::path& file : {files.csv, files.h5}) fs::remove(file.string() + ".bak", error);
    write(files.csv, csv);
    write(files.h5, h5);
    fs::create_directories(mouse / ".labpose-backups");
    write(mouse / ".labpose-backups" / "CollectedData_Alice.labpose-saved", record);
  }
};

World& world() {
  static World instance;
  return instance;
}

std::string_view next_line(std::string_view& text) {
  const std::size_t end = text.find('\n');
  std::string_view line = text.substr(0, end);
  text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

std::string_view trimmed(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

// "METHOD TARGET [VERSION]\n" then "Name: value\n" lines, an empty line, and the body: what
// httplib hands over after parsing a request. False for what httplib refuses before any handler.
bool decode(std::string_view input, httplib::Request& request) {
  std::string_view line = next_line(input);
  const std::size_t space = line.find(' ');
  if (space == std::string_view::npos) return false;
  request.method = std::string(line.substr(0, space));
  static const char* const kMethods[] = {"GET",     "HEAD",    "POST",  "PUT",  "DELETE",
                                         "CONNECT", "OPTIONS", "TRACE", "PATCH"};
  if (std::find(std::begin(kMethods), std::end(kMethods), request.method) == std::end(kMethods))
    return false;
  line.remove_prefix(space + 1);
  request.target = std::string(line.substr(0, line.find(' ')));
  std::size_t parts = 0;
  httplib::detail::split(
      request.target.data(), request.target.data() + request.target.size(), '?',
      [&](const char* begin, const char* end) {
        if (parts == 0) {
          request.path = httplib::detail::decode_url(std::string(begin, end), false);
        } else if (parts == 1 && end > begin) {
          httplib::detail::parse_query_text(std::string(begin, end), request.params);
        }
        ++parts;
      });
  if (parts > 2 || request.path.empty()) return false;
  while (!input.empty()) {
    line = next_line(input);
    if (line.empty()) break;
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) return false;
    request.headers.emplace(std::string(line.substr(0, colon)),
                            std::string(trimmed(line.substr(colon + 1))));
  }
  if (input.size() > kMaxBody) return false;
  request.body = std::string(input);
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  World& state = world();
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  httplib::Request request;
  if (!decode(input, request)) return 0;
  labeling::LabelStore store(*state.config, true);
  labeling::RequestHandler handler(store, kToken, kCookie);
  httplib::Response response;
  handler.handle(request, response);

  // Without the token (as given, or %-encoded in the query), nothing but a refusal.
  const bool token_offered =
      input.find(kToken) != std::string_view::npos || request.get_param_value("token") == kToken;
  if (!token_offered && response.status != 401 && response.status != 403) __builtin_trap();
  if (response.status != -1 && (response.status < 200 || response.status > 599)) __builtin_trap();
  if (response.get_header_value("Content-Type") == "application/json" &&
      !nlohmann::json::accept(response.body))
    __builtin_trap();
  // Nothing written outside the project (the linked folder and image, the temp folder's root),
  // nor anywhere in it but the labels of labeled-data/mouse, which are put back for the next input.
  if (listing(state.outside) != state.outside_files) __builtin_trap();
  state.reset_labels();
  if (listing(state.project) != state.project_files) __builtin_trap();
  std::map<std::string, std::uintmax_t> root_entries;
  for (const auto& entry : fs::directory_iterator(state.root))
    root_entries[entry.path().string()] = 0;
  if (root_entries != state.root_entries) __builtin_trap();
  return 0;
}
