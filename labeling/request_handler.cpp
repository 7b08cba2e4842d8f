// The labeling server's token check, routes and JSON.
#include "labeling/request_handler.hpp"

#include <fmt/core.h>
#include <httplib.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

#include "core/atomic_file.hpp"
#include "labeling/web_assets.hpp"
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
  // Messages may quote file contents: replace bytes that are not UTF-8 rather than throw.
  response.set_content(body.dump(-1, ' ', false, json::error_handler_t::replace),
                       "application/json");
}

void send_error(httplib::Response& response, int status, const std::string& message,
                const std::string& hint = {}) {
  json body{{"error", message}};
  if (!hint.empty()) body["hint"] = hint;
  send_json(response, body, status);
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
    json entry{{"stem", video.stem}, {"frames", frames}};
    if (!video.problem.empty()) entry["problem"] = video.problem;
    list.push_back(std::move(entry));
  }
  return list;
}

std::string string_field(const json& body, const char* name) {
  const auto it = body.find(name);
  if (it == body.end() || !it->is_string())
    throw RequestError(400, fmt::format("the request needs a string \"{}\"", name));
  return it->get<std::string>();
}

// The keypoint a change names: "bodypart", and "individual" in a multi-animal project (absent in
// a single-animal one).
Keypoint keypoint_field(const json& body) {
  Keypoint keypoint;
  if (body.contains("individual")) keypoint.individual = string_field(body, "individual");
  keypoint.bodypart = string_field(body, "bodypart");
  return keypoint;
}

double number_field(const json& body, const char* name) {
  const auto it = body.find(name);
  if (it == body.end() || !it->is_number())
    throw RequestError(400, fmt::format("the request needs a number \"{}\"", name));
  return it->get<double>();
}

// Each keypoint's colour: config.yaml's colormap over the bodyparts in a single-animal project,
// over the individuals (with "single" as one more) in a multi-animal one, as check-labels draws
// them.
json project_json(const LabelStore& store) {
  const auto& values = store.config().values();
  const auto& individuals = store.individuals();
  const auto& keypoints = store.keypoints();
  const auto palette = pipeline::colormap_colors(
      values.colormap, individuals.empty() ? keypoints.size() : individuals.size());
  json colors = json::array(), individual_colors = json::array(), skeleton = json::array();
  json keypoint_list = json::array();
  for (std::size_t k = 0; k < keypoints.size(); ++k) {
    const std::size_t individual = static_cast<std::size_t>(
        std::find(individuals.begin(), individuals.end(), keypoints[k].individual) -
        individuals.begin());
    colors.push_back(hex_color(palette[individuals.empty() ? k : individual]));
    keypoint_list.push_back(
        json{{"individual", keypoints[k].individual}, {"bodypart", keypoints[k].bodypart}});
  }
  for (std::size_t i = 0; i < individuals.size(); ++i)
    individual_colors.push_back(hex_color(palette[i]));
  for (const auto& edge : values.skeleton) skeleton.push_back(json::array({edge.from, edge.to}));
  return json{{"project", store.config().project_dir().filename().string()},
              {"scorer", values.scorer},
              {"multi_animal", values.multi_animal},
              {"bodyparts", store.config().keypoint_names()},
              {"keypoints", keypoint_list},
              {"individuals", individuals},
              {"individual_colors", individual_colors},
              {"colors", colors},
              {"skeleton", skeleton},
              {"skeleton_color", hex_color(pipeline::named_color(values.skeleton_color))},
              {"dotsize", values.dotsize},
              {"alphavalue", values.alphavalue},
              {"pcutoff", values.pcutoff},
              {"refine", store.refine()}};
}

// Runs a handler, turning what it throws into a JSON error with the right status.
template <typename Handler>
void guarded(httplib::Response& response, Handler&& handler) {
  try {
    handler();
  } catch (const RequestError& failure) {
    send_error(response, failure.status(), failure.what(), failure.hint());
  } catch (const json::exception& failure) {
    send_error(response, 400,
               fmt::format("the request body is not valid JSON ({})", failure.what()));
  } catch (const Error& failure) {
    send_error(response, 500, failure.what(), failure.hint());
  } catch (const std::exception& failure) {
    send_error(response, 500, failure.what());
  }
}

bool serve_asset(const std::string& path, httplib::Response& response) {
  for (const WebAsset& asset : web_assets()) {
    if (path != (asset.path == "/index.html" ? std::string_view("/") : asset.path)) continue;
    response.set_header("Cache-Control", "no-store");
    response.set_header("Content-Security-Policy",
                        "default-src 'self'; img-src 'self' blob:; style-src 'self'");
    response.set_content(asset.body.data(), asset.body.size(), std::string(asset.content_type));
    return true;
  }
  return false;
}

}  // namespace

bool is_json_media_type(std::string_view content_type) {
  // RFC 9110 8.3.1: type "/" subtype *( OWS ";" OWS parameter ); type and subtype are
  // case-insensitive. The parameters (charset) do not change what the body is.
  std::string_view type = content_type.substr(0, content_type.find(';'));
  const auto blank = [](char c) { return c == ' ' || c == '\t'; };
  while (!type.empty() && blank(type.front())) type.remove_prefix(1);
  while (!type.empty() && blank(type.back())) type.remove_suffix(1);
  constexpr std::string_view kJson = "application/json";
  return type.size() == kJson.size() &&
         std::equal(type.begin(), type.end(), kJson.begin(), [](char a, char b) {
           return std::tolower(static_cast<unsigned char>(a)) == b;
         });
}

RequestHandler::RequestHandler(LabelStore& store, std::string token, std::string cookie_name)
    : store_(store), token_(std::move(token)), cookie_name_(std::move(cookie_name)) {}

bool RequestHandler::reads_body(const httplib::Request& request) {
  return request.method == "POST" &&
         std::find(kChangePaths.begin(), kChangePaths.end(), request.path) != kChangePaths.end();
}

void RequestHandler::handle(const httplib::Request& request, httplib::Response& response) {
  if (check_access(request, response)) route(request, response);
}

bool RequestHandler::check_access(const httplib::Request& request,
                                  httplib::Response& response) const {
  std::string offered = request.get_param_value("token");
  const bool from_url = !offered.empty();
  if (offered.empty()) offered = request.get_header_value("X-Labpose-Token");
  if (offered.empty()) offered = cookie_value(request, cookie_name_);
  if (offered.empty()) {
    send_error(response, 401,
               "this server needs its token: open the URL that `labpose label` printed "
               "(http://...?token=...)");
    return false;
  }
  if (!same_secret(offered, token_)) {
    send_error(response, 403, "wrong token: open the URL that `labpose label` printed");
    return false;
  }
  if (request.method == "POST" && !is_json_media_type(request.get_header_value("Content-Type"))) {
    send_error(response, 415, "changes are sent as application/json");
    return false;
  }
  if (from_url && request.method == "GET" && request.path == "/") {
    // Keep the token out of the address bar and history: a cookie carries it from here on.
    response.set_header("Set-Cookie", fmt::format("{}={}; Path=/; HttpOnly; SameSite=Strict",
                                                  cookie_name_, token_));
    response.set_redirect("/", 303);
    return false;
  }
  return true;
}

void RequestHandler::route(const httplib::Request& request, httplib::Response& response) {
  const std::string& path = request.path;
  const auto param = [&](const char* name) { return request.get_param_value(name); };
  if (request.method == "GET" || request.method == "HEAD") {
    if (serve_asset(path, response)) return;
    if (path == "/favicon.ico") {
      response.status = 204;  // no icon: keeps the browser's console free of a 404
      return;
    }
    if (path == "/api/project") {
      guarded(response, [&] { send_json(response, project_json(store_)); });
      return;
    }
    if (path == "/api/videos") {
      guarded(response, [&] {
        send_json(response, json{{"videos", videos_json(store_.videos())}});
      });
      return;
    }
    if (path == "/api/frame") {
      guarded(response, [&] {
        send_json(response, frame_json(store_.frame(param("video"), param("image"))));
      });
      return;
    }
    if (path == "/api/image") {
      guarded(response, [&] {
        const auto file = store_.image_path(param("video"), param("image"));
        const std::string extension = file.extension().string();
        response.set_content(read_file(file), extension == ".png" || extension == ".PNG"
                                                  ? "image/png"
                                                  : "image/jpeg");
      });
      return;
    }
  } else if (request.method == "POST") {
    // One change from the JSON body; the answer is the frame after it.
    const auto change = [&](auto apply) {
      guarded(response, [&] { send_json(response, frame_json(apply(json::parse(request.body)))); });
    };
    if (path == "/api/point") {
      change([&](const json& body) {
        return store_.set_point(string_field(body, "video"), string_field(body, "image"),
                                keypoint_field(body), number_field(body, "x"),
                                number_field(body, "y"));
      });
      return;
    }
    if (path == "/api/delete") {
      change([&](const json& body) {
        return store_.delete_point(string_field(body, "video"), string_field(body, "image"),
                                   keypoint_field(body));
      });
      return;
    }
    if (path == "/api/individual") {
      change([&](const json& body) {
        return store_.move_to_individual(string_field(body, "video"), string_field(body, "image"),
                                         keypoint_field(body), string_field(body, "to"));
      });
      return;
    }
    if (path == "/api/accept") {
      change([&](const json& body) {
        return store_.accept_machine(string_field(body, "video"), string_field(body, "image"));
      });
      return;
    }
  } else {
    response.set_header("Allow", "GET, HEAD, POST");
    send_error(response, 405,
               fmt::format("this server answers GET and POST, not {}", request.method));
    return;
  }
  send_error(response, 404, fmt::format("no such page: {}", path));
}

}  // namespace labpose::labeling
