// The track refinement page's routes and JSON, on a BoundedServer.
#include "labeling/track_server.hpp"

#include <fmt/core.h>
#include <httplib.h>

#include <nlohmann/json.hpp>

#include <atomic>
#include <charconv>
#include <thread>

#include "labeling/bounded_server.hpp"
#include "labeling/label_store.hpp"
#include "labeling/page_http.hpp"
#include "pipeline/plots/colormap.hpp"

namespace labpose::labeling {
namespace {
using nlohmann::json;

constexpr std::string_view kCommand = "labpose refine-tracks";
constexpr std::string_view kPage = "/tracks.html";

json swaps_json(const std::vector<pipeline::TrackSwap>& swaps) {
  json list = json::array();
  for (const auto& swap : swaps)
    list.push_back(json{{"first", swap.first}, {"second", swap.second}, {"from", swap.from}});
  return list;
}

// The tracks' names and sizes, each individual's colour (config.yaml's colormap over the
// individuals, "single" one more, as labeled-video draws them) and the swaps not saved yet.
json tracks_json(TrackSession& session, const projects::ProjectConfig& config) {
  const auto individuals = session.individuals();
  const auto palette = pipeline::colormap_colors(config.values().colormap, individuals.size());
  json colors = json::array();
  for (const auto& color : palette) colors.push_back(hex_color(color));
  return json{{"video", session.video().filename().string()},
              {"tracks", session.tracks_file().string()},
              {"frames", session.frame_count()},
              {"width", session.width()},
              {"height", session.height()},
              {"individuals", individuals},
              {"colors", colors},
              {"bodyparts", session.bodyparts()},
              {"dotsize", config.values().dotsize},
              {"pcutoff", config.values().pcutoff},
              {"unsaved", swaps_json(session.unsaved())},
              {"revision", session.revision()}};
}

json points_json(const std::vector<IndividualPoints>& individuals, std::int64_t frame) {
  json list = json::array();
  for (const auto& individual : individuals) {
    json points = json::array();
    for (const auto& point : individual.points) {
      points.push_back(point ? json::array({point->x, point->y, point->likelihood})
                             : json(nullptr));
    }
    list.push_back(json{{"individual", individual.individual}, {"points", points}});
  }
  return json{{"frame", frame}, {"individuals", list}};
}

std::int64_t frame_param(const httplib::Request& request) {
  const std::string text = request.get_param_value("frame");
  std::int64_t frame = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), frame);
  if (text.empty() || error != std::errc() || end != text.data() + text.size())
    throw RequestError(400, fmt::format("the request needs a frame number (found \"{}\")", text));
  return frame;
}

std::int64_t integer_of(const json& body, const char* name) {
  const auto it = body.find(name);
  if (it == body.end() || !it->is_number_integer())
    throw RequestError(400, fmt::format("the request needs a whole number \"{}\"", name));
  return it->get<std::int64_t>();
}

}  // namespace

struct TrackServer::State {
  State(const projects::ProjectConfig& project, const std::filesystem::path& video,
        const std::filesystem::path& tracks_file, ServerOptions server_options)
      : config(project),
        options(std::move(server_options)),
        session(video, tracks_file),
        server(connection_limits(options)) {}

  projects::ProjectConfig config;
  ServerOptions options;
  TrackSession session;
  BoundedServer server;
  std::string cookie_name;
  std::thread thread;
  std::atomic<bool> finished = false;
  int port = 0;

  void get(const httplib::Request& request, httplib::Response& response) {
    if (serve_page_asset(request.path, kPage, response)) return;
    if (request.path == "/api/tracks") {
      answer_guarded(response, [&] { send_json(response, tracks_json(session, config)); });
    } else if (request.path == "/api/points") {
      answer_guarded(response, [&] {
        const std::int64_t frame = frame_param(request);
        send_json(response, points_json(session.points(frame), frame));
      });
    } else if (request.path == "/api/image") {
      answer_guarded(response, [&] {
        response.set_header("Cache-Control", "no-store");
        response.set_content(session.frame_jpeg(frame_param(request)), "image/jpeg");
      });
    } else if (request.path == "/favicon.ico") {
      response.status = 204;
    } else {
      send_error(response, 404, fmt::format("no such page: {}", request.path));
    }
  }

  void post(const httplib::Request& request, httplib::Response& response) {
    answer_guarded(response, [&] {
      const json body = request.body.empty() ? json::object() : json::parse(request.body);
      // The page sends the revision it shows; a change made in another tab since is refused.
      if (body.is_object() && body.contains("revision"))
        session.expect_revision(integer_of(body, "revision"));
      if (request.path == "/api/swap") {
        session.swap(json_string(body, "first"), json_string(body, "second"),
                     integer_of(body, "from"));
      } else if (request.path == "/api/undo") {
        if (!session.undo()) throw RequestError(409, "there is no unsaved swap to undo");
      } else if (request.path == "/api/save") {
        json written = json::array();
        for (const auto& file : session.save()) written.push_back(file.string());
        json answer = tracks_json(session, config);
        answer["written"] = written;
        answer["original"] = pipeline::original_tracks_path(session.tracks_file()).string();
        send_json(response, answer);
        return;
      } else {
        throw RequestError(404, fmt::format("no such change: {}", request.path));
      }
      send_json(response, tracks_json(session, config));
    });
  }

  void add_routes() {
    server.set_pre_routing_handler(
        [this](const httplib::Request& request, httplib::Response& response) {
          if (!check_page_access(request, response, options.token, cookie_name, kCommand))
            return httplib::Server::HandlerResponse::Handled;
          if (request.method == "POST") return httplib::Server::HandlerResponse::Unhandled;
          if (request.method == "GET" || request.method == "HEAD") {
            get(request, response);
          } else {
            response.set_header("Allow", "GET, HEAD, POST");
            send_error(response, 405,
                       fmt::format("this server answers GET and POST, not {}", request.method));
          }
          return httplib::Server::HandlerResponse::Handled;
        });
    for (const char* path : {"/api/swap", "/api/undo", "/api/save"}) {
      server.Post(path, [this](const httplib::Request& request, httplib::Response& response) {
        post(request, response);
      });
    }
  }
};

TrackServer::TrackServer(const projects::ProjectConfig& config, const std::filesystem::path& video,
                         const std::filesystem::path& tracks_file, ServerOptions options) {
  if (options.token.empty()) options.token = random_token();
  state_ = std::make_unique<State>(config, video, tracks_file, std::move(options));
  state_->server.set_payload_max_length(state_->options.max_body_bytes);
}

TrackServer::~TrackServer() {
  stop();
}

void TrackServer::start() {
  State& state = *state_;
  state.port = bind_page_server(state.server, state.options.host, state.options.port,
                                static_cast<int>(state.options.max_connections));
  state.cookie_name = fmt::format("labpose_tracks_token_{}", state.port);
  state.add_routes();
  listen_in_background(state.server, state.thread, state.finished);
}

void TrackServer::stop() {
  if (!state_) return;
  stop_listening(state_->server, state_->thread);
}

int TrackServer::port() const {
  return state_->port;
}

std::string TrackServer::url() const {
  return page_url(state_->options.host, state_->port, state_->options.token);
}

TrackSession& TrackServer::session() {
  return state_->session;
}

}  // namespace labpose::labeling
