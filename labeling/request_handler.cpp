// The labeling server's token check, routes and JSON.
#include "labeling/request_handler.hpp"

#include <fmt/core.h>
#include <httplib.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

#include "core/atomic_file.hpp"
#include "labeling/page_http.hpp"
#include "pipeline/plots/colormap.hpp"

namespace labpose::labeling {
namespace {
using nlohmann::json;

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

// The keypoint a change names: "bodypart", and "individual" in a multi-animal project (absent in
// a single-animal one).
Keypoint keypoint_field(const json& body) {
  Keypoint keypoint;
  if (body.contains("individual")) keypoint.individual = json_string(body, "individual");
  keypoint.bodypart = json_string(body, "bodypart");
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
  return check_page_access(request, response, token_, cookie_name_, "labpose label");
}

void RequestHandler::route(const httplib::Request& request, httplib::Response& response) {
  const std::string& path = request.path;
  const auto param = [&](const char* name) { return request.get_param_value(name); };
  if (request.method == "GET" || request.method == "HEAD") {
    if (serve_page_asset(path, "/index.html", response)) return;
    if (path == "/favicon.ico") {
      response.status = 204;  // no icon: keeps the browser's console free of a 404
      return;
    }
    if (path == "/api/project") {
      answer_guarded(response, [&] { send_json(response, project_json(store_)); });
      return;
    }
    if (path == "/api/videos") {
      answer_guarded(response, [&] {
        send_json(response, json{{"videos", videos_json(store_.videos())}});
      });
      return;
    }
    if (path == "/api/frame") {
      answer_guarded(response, [&] {
        send_json(response, frame_json(store_.frame(param("video"), param("image"))));
      });
      return;
    }
    if (path == "/api/image") {
      answer_guarded(response, [&] {
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
      answer_guarded(response,
                     [&] { send_json(response, frame_json(apply(json::parse(request.body)))); });
    };
    if (path == "/api/point") {
      change([&](const json& body) {
        return store_.set_point(json_string(body, "video"), json_string(body, "image"),
                                keypoint_field(body), number_field(body, "x"),
                                number_field(body, "y"));
      });
      return;
    }
    if (path == "/api/delete") {
      change([&](const json& body) {
        return store_.delete_point(json_string(body, "video"), json_string(body, "image"),
                                   keypoint_field(body));
      });
      return;
    }
    if (path == "/api/individual") {
      change([&](const json& body) {
        return store_.move_to_individual(json_string(body, "video"), json_string(body, "image"),
                                         keypoint_field(body), json_string(body, "to"));
      });
      return;
    }
    if (path == "/api/accept") {
      change([&](const json& body) {
        return store_.accept_machine(json_string(body, "video"), json_string(body, "image"));
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
