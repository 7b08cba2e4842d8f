// The token check, JSON answers, embedded files and port binding of labpose's pages.
#include "labeling/page_http.hpp"

#include <fmt/core.h>
#include <httplib.h>
#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "labeling/bounded_server.hpp"
#include "labeling/label_store.hpp"
#include "labeling/request_handler.hpp"
#include "labeling/web_assets.hpp"

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

}  // namespace

bool check_page_access(const httplib::Request& request, httplib::Response& response,
                       const std::string& token, const std::string& cookie_name,
                       std::string_view command) {
  std::string offered = request.get_param_value("token");
  const bool from_url = !offered.empty();
  if (offered.empty()) offered = request.get_header_value("X-Labpose-Token");
  if (offered.empty()) offered = cookie_value(request, cookie_name);
  if (offered.empty()) {
    send_error(response, 401,
               fmt::format("this server needs its token: open the URL that `{}` printed "
                           "(http://...?token=...)",
                           command));
    return false;
  }
  if (!same_secret(offered, token)) {
    send_error(response, 403, fmt::format("wrong token: open the URL that `{}` printed", command));
    return false;
  }
  if (request.method == "POST" && !is_json_media_type(request.get_header_value("Content-Type"))) {
    send_error(response, 415, "changes are sent as application/json");
    return false;
  }
  if (from_url && request.method == "GET" && request.path == "/") {
    // Keep the token out of the address bar and history: a cookie carries it from here on.
    response.set_header(
        "Set-Cookie", fmt::format("{}={}; Path=/; HttpOnly; SameSite=Strict", cookie_name, token));
    response.set_redirect("/", 303);
    return false;
  }
  return true;
}

void send_json(httplib::Response& response, const json& body, int status) {
  response.status = status;
  response.set_header("Cache-Control", "no-store");
  // Messages may quote file contents: replace bytes that are not UTF-8 rather than throw.
  response.set_content(body.dump(-1, ' ', false, json::error_handler_t::replace),
                       "application/json");
}

void send_error(httplib::Response& response, int status, const std::string& message,
                const std::string& hint) {
  json body{{"error", message}};
  if (!hint.empty()) body["hint"] = hint;
  send_json(response, body, status);
}

void answer_guarded(httplib::Response& response, const std::function<void()>& handler) {
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

bool serve_page_asset(const std::string& path, std::string_view index,
                      httplib::Response& response) {
  for (const WebAsset& asset : web_assets()) {
    if (path != (asset.path == index ? std::string_view("/") : asset.path)) continue;
    response.set_header("Cache-Control", "no-store");
    response.set_header("Content-Security-Policy",
                        "default-src 'self'; img-src 'self' blob:; style-src 'self'");
    response.set_content(asset.body.data(), asset.body.size(), std::string(asset.content_type));
    return true;
  }
  return false;
}

std::string hex_color(const pipeline::Rgb& color) {
  const auto byte = [](double v) {
    return static_cast<int>(std::lround(std::clamp(v, 0.0, 1.0) * 255.0));
  };
  return fmt::format("#{:02x}{:02x}{:02x}", byte(color.r), byte(color.g), byte(color.b));
}

ConnectionLimits connection_limits(const ServerOptions& options) {
  return {options.idle_timeout, options.request_timeout, options.max_connections};
}

int bind_page_server(BoundedServer& server, const std::string& host, int port,
                     int max_connections) {
  // httplib's default also sets SO_REUSEPORT, which lets a second server share a taken port.
  server.set_socket_options([](int socket) {
    int yes = 1;
    setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  int bound = -1;
  if (port == 0) {
    bound = server.bind_to_any_port(host);
  } else if (server.bind_to_port(host, port)) {
    bound = port;
  }
  if (bound <= 0) {
    throw Error(fmt::format("cannot serve on {}:{}", host, port),
                "the port is taken or the address is not this machine's; try another --port "
                "(or leave it out to take a free one)");
  }
  server.widen_backlog(max_connections);
  return bound;
}

void listen_in_background(BoundedServer& server, std::thread& thread, std::atomic<bool>& finished) {
  thread = std::thread([&server, &finished] {
    server.listen_after_bind();
    finished = true;
  });
  // stop() only reaches a server that is already listening: wait for it.
  while (!server.is_running() && !finished)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

void stop_listening(BoundedServer& server, std::thread& thread) {
  server.wake_connections();
  server.stop();
  if (thread.joinable()) thread.join();
}

std::string page_url(const std::string& host, int port, const std::string& token) {
  const std::string shown = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  return fmt::format("http://{}:{}/?token={}", shown, port, token);
}

std::string json_string(const nlohmann::json& body, const char* name) {
  const auto it = body.find(name);
  if (it == body.end() || !it->is_string())
    throw RequestError(400, fmt::format("the request needs a string \"{}\"", name));
  return it->get<std::string>();
}

}  // namespace labpose::labeling
