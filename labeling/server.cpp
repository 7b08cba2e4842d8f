// The labeling server's routes, token check and JSON.
#include "labeling/server.hpp"

#include <fmt/core.h>
#include <httplib.h>
#include <sys/socket.h>

#include <nlohmann/json.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <random>
#include <thread>

#include "core/atomic_file.hpp"
#include "labeling/web_assets.hpp"
#include "pipeline/analysis/labeled_video.hpp"
#include "pipeline/plots/colormap.hpp"

namespace labpose::labeling {
namespace {
using nlohmann::json;

bool same_secret(const std::string& a, const std::string& b) {
  // Compares every byte, so the time taken does not tell how much of a guess was right.
  if (a.size() != b.size()) return false;
  unsigned char difference = 0;
  for (std::size_t i = 0; i < a.size(); ++i) difference |= static_cast<unsigned char>(a[i] ^ b[i]);
  return difference == 0;
}

std::string cookie_value(const httplib::Request& request, const std::string& name) {
  const std::string cookies = request.get_header_value("Cookie");
  std::size_t at = 0;
  while (at < cookies.size()) {
    const std::size_t end = std::min(cookies.find(';', at), cookies.size());
    std::string_view pair(cookies.data() + at, end - at);
    while (!pair.empty() && pair.front() == ' ') pair.remove_prefix(1);
    if (pair.starts_with(name) && pair.size() > name.size() && pair[name.size()] == '=')
      return std::string(pair.substr(name.size() + 1));
    at = end + 1;
  }
  return {};
}

void send_json(httplib::Response& response, const json& body, int status = 200) {
  response.status = status;
  response.set_header("Cache-Control", "no-store");
  response.set_content(body.dump(), "application/json");
}

void send_error(httplib::Response& response, int status, const std::string& message) {
  send_json(response, json{{"error", message}}, status);
}

std::string hex_color(const pipeline::Rgb& color) {
  const auto byte = [](double v) {
    return static_cast<int>(std::lround(std::clamp(v, 0.0, 1.0) * 255.0));
  };
  return fmt::format("#{:02x}{:02x}{:02x}", byte(color.r), byte(color.g), byte(color.b));
}

json frame_json(const FrameLabels& frame) {
  json points = json::array(), machine = json::array();
  for (const auto& point : frame.points)
    points.push_back(point ? json{{"x", point->x}, {"y", point->y}} : json(nullptr));
  for (const auto& point : frame.machine) {
    machine.push_back(
        point ? json{{"x", point->x}, {"y", point->y}, {"likelihood", point->likelihood}}
              : json(nullptr));
  }
  return json{{"video", frame.video},   {"image", frame.image}, {"width", frame.width},
              {"height", frame.height}, {"points", points},     {"machine", machine}};
}

json videos_json(const std::vector<VideoSummary>& videos) {
  json list = json::array();
  for (const auto& video : videos) {
    json frames = json::array();
    for (const auto& frame : video.frames) {
      frames.push_back(
          json{{"image", frame.image}, {"labeled", frame.labeled}, {"machine", frame.machine}});
    }
    list.push_back(json{{"stem", video.stem}, {"frames", frames}});
  }
  return list;
}

std::string string_field(const json& body, const char* name) {
  const auto it = body.find(name);
  if (it == body.end() || !it->is_string())
    throw RequestError(400, fmt::format("the request needs a string \"{}\"", name));
  return it->get<std::string>();
}

double number_field(const json& body, const char* name) {
  const auto it = body.find(name);
  if (it == body.end() || !it->is_number())
    throw RequestError(400, fmt::format("the request needs a number \"{}\"", name));
  return it->get<double>();
}

}  // namespace

std::string random_token() {
  std::random_device source;  // the kernel's random source on Linux
  std::string token;
  for (int i = 0; i < 4; ++i) token += fmt::format("{:08x}", source());
  return token;
}

bool is_loopback_host(const std::string& host) {
  return host == "localhost" || host == "::1" || host.starts_with("127.");
}

struct LabelServer::State {
  State(const projects::ProjectConfig& config, ServerOptions server_options)
      : options(std::move(server_options)), store(config, options.refine) {}

  ServerOptions options;
  LabelStore store;
  httplib::Server server;
  std::thread thread;
  std::atomic<bool> finished = false;
  int port = 0;
  std::string cookie_name;

  // Runs a handler, turning what it throws into a JSON error with the right status.
  template <typename Handler>
  void guarded(httplib::Response& response, Handler&& handler) {
    try {
      handler();
    } catch (const RequestError& failure) {
      send_error(response, failure.status(), failure.what());
    } catch (const json::exception& failure) {
      send_error(response, 400,
                 fmt::format("the request body is not valid JSON ({})", failure.what()));
    } catch (const std::exception& failure) {
      send_error(response, 500, failure.what());
    }
  }

  // A POST route that applies one change from its JSON body and answers with the frame after it.
  template <typename Change>
  void post_change(const std::string& path, Change change) {
    server.Post(path, [this, change](const httplib::Request& request, httplib::Response& response) {
      guarded(response,
              [&] { send_json(response, frame_json(change(json::parse(request.body)))); });
    });
  }

  httplib::Server::HandlerResponse check_token(const httplib::Request& request,
                                               httplib::Response& response) {
    std::string offered = request.get_param_value("token");
    const bool from_url = !offered.empty();
    if (offered.empty()) offered = request.get_header_value("X-Labpose-Token");
    if (offered.empty()) offered = cookie_value(request, cookie_name);
    if (offered.empty()) {
      send_error(response, 401,
                 "this server needs its token: open the URL that `labpose label` printed "
                 "(http://...?token=...)");
      return httplib::Server::HandlerResponse::Handled;
    }
    if (!same_secret(offered, options.token)) {
      send_error(response, 403, "wrong token: open the URL that `labpose label` printed");
      return httplib::Server::HandlerResponse::Handled;
    }
    if (request.method == "POST" &&
        !request.get_header_value("Content-Type").starts_with("application/json")) {
      send_error(response, 415, "changes are sent as application/json");
      return httplib::Server::HandlerResponse::Handled;
    }
    if (from_url && request.method == "GET" && request.path == "/") {
      // Keep the token out of the address bar and history: a cookie carries it from here on.
      response.set_header("Set-Cookie", fmt::format("{}={}; Path=/; HttpOnly; SameSite=Strict",
                                                    cookie_name, options.token));
      response.set_redirect("/", 303);
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  }

  json project_json() const {
    const auto& values = store.config().values();
    json colors = json::array(), skeleton = json::array();
    for (const auto& color : pipeline::colormap_colors(values.colormap, store.bodyparts().size()))
      colors.push_back(hex_color(color));
    for (const auto& edge : values.skeleton) skeleton.push_back(json::array({edge.from, edge.to}));
    return json{{"project", store.config().project_dir().filename().string()},
                {"scorer", values.scorer},
                {"bodyparts", store.bodyparts()},
                {"colors", colors},
                {"skeleton", skeleton},
                {"skeleton_color", hex_color(pipeline::named_color(values.skeleton_color))},
                {"dotsize", values.dotsize},
                {"alphavalue", values.alphavalue},
                {"pcutoff", values.pcutoff},
                {"refine", store.refine()}};
  }

  void add_routes() {
    server.set_pre_routing_handler(
        [this](const httplib::Request& request, httplib::Response& response) {
          return check_token(request, response);
        });
    for (const WebAsset& asset : web_assets()) {
      const std::string path = asset.path == "/index.html" ? "/" : std::string(asset.path);
      server.Get(path, [asset](const httplib::Request&, httplib::Response& response) {
        response.set_header("Cache-Control", "no-store");
        response.set_header("Content-Security-Policy",
                            "default-src 'self'; img-src 'self' blob:; style-src 'self'");
        response.set_content(asset.body.data(), asset.body.size(), std::string(asset.content_type));
      });
    }
    server.Get("/favicon.ico", [](const httplib::Request&, httplib::Response& response) {
      response.status = 204;  // no icon: keeps the browser's console free of a 404
    });
    server.Get("/api/project", [this](const httplib::Request&, httplib::Response& response) {
      guarded(response, [&] { send_json(response, project_json()); });
    });
    server.Get("/api/videos", [this](const httplib::Request&, httplib::Response& response) {
      guarded(response, [&] {
        send_json(response, json{{"videos", videos_json(store.videos())}});
      });
    });
    server.Get("/api/frame", [this](const httplib::Request& request, httplib::Response& response) {
      guarded(response, [&] {
        send_json(response, frame_json(store.frame(request.get_param_value("video"),
                                                   request.get_param_value("image"))));
      });
    });
    server.Get("/api/image", [this](const httplib::Request& request, httplib::Response& response) {
      guarded(response, [&] {
        const auto path =
            store.image_path(request.get_param_value("video"), request.get_param_value("image"));
        const std::string extension = path.extension().string();
        response.set_content(read_file(path), extension == ".png" || extension == ".PNG"
                                                  ? "image/png"
                                                  : "image/jpeg");
      });
    });
    post_change("/api/point", [this](const json& body) {
      return store.set_point(string_field(body, "video"), string_field(body, "image"),
                             string_field(body, "bodypart"), number_field(body, "x"),
                             number_field(body, "y"));
    });
    post_change("/api/delete", [this](const json& body) {
      return store.delete_point(string_field(body, "video"), string_field(body, "image"),
                                string_field(body, "bodypart"));
    });
    post_change("/api/accept", [this](const json& body) {
      return store.accept_machine(string_field(body, "video"), string_field(body, "image"));
    });
  }
};

LabelServer::LabelServer(const projects::ProjectConfig& config, ServerOptions options) {
  if (options.token.empty()) options.token = random_token();
  state_ = std::make_unique<State>(config, std::move(options));
  state_->server.set_payload_max_length(state_->options.max_body_bytes);
  // httplib's default also sets SO_REUSEPORT, which lets a second server share a taken port.
  state_->server.set_socket_options([](int socket) {
    int yes = 1;
    setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  state_->add_routes();
}

LabelServer::~LabelServer() {
  stop();
}

void LabelServer::start() {
  State& state = *state_;
  if (state.options.port == 0) {
    state.port = state.server.bind_to_any_port(state.options.host);
  } else if (state.server.bind_to_port(state.options.host, state.options.port)) {
    state.port = state.options.port;
  } else {
    state.port = -1;
  }
  if (state.port <= 0) {
    throw Error(fmt::format("cannot serve on {}:{}", state.options.host, state.options.port),
                "the port is taken or the address is not this machine's; try another --port "
                "(or leave it out to take a free one)");
  }
  state.cookie_name = fmt::format("labpose_token_{}", state.port);
  state.thread = std::thread([&state] {
    state.server.listen_after_bind();
    state.finished = true;
  });
  // stop() only reaches a server that is already listening: wait for it.
  while (!state.server.is_running() && !state.finished)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

void LabelServer::wait() {
  if (state_->thread.joinable()) state_->thread.join();
}

void LabelServer::stop() {
  if (!state_) return;
  state_->server.stop();
  wait();
}

int LabelServer::port() const {
  return state_->port;
}

const std::string& LabelServer::token() const {
  return state_->options.token;
}

std::string LabelServer::url() const {
  const std::string& host = state_->options.host;
  const std::string shown = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  return fmt::format("http://{}:{}/?token={}", shown, state_->port, state_->options.token);
}

LabelStore& LabelServer::store() {
  return state_->store;
}

}  // namespace labpose::labeling
