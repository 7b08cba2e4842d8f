// What every page labpose serves shares (the labeling page, the track refinement page): the token
// check (URL, header or cookie, then a cookie and a redirect), JSON answers and errors, the
// embedded files, binding the port and serving on a thread. Not the routes of either page
// (request_handler.hpp, track_server.hpp).
#pragma once

#include <nlohmann/json.hpp>

#include <atomic>
#include <functional>
#include <string>
#include <string_view>
#include <thread>

#include "core/error.hpp"
#include "labeling/bounded_server.hpp"
#include "labeling/server.hpp"
#include "pipeline/plots/colormap.hpp"

namespace httplib {
struct Request;
struct Response;
}  // namespace httplib

namespace labpose::labeling {

/// The token and, for POST, the media type. True when the request may go on; otherwise the
/// response says why (401, 403, 415) or redirects the printed URL to the page (303). `command`
/// names what printed the URL ("labpose label").
bool check_page_access(const httplib::Request& request, httplib::Response& response,
                       const std::string& token, const std::string& cookie_name,
                       std::string_view command);

/// The string `name` of a request's JSON body; RequestError(400) naming it when it is missing or
/// not a string.
std::string json_string(const nlohmann::json& body, const char* name);
/// Answers `body` as JSON (not cached), with `status`.
void send_json(httplib::Response& response, const nlohmann::json& body, int status = 200);
/// Answers {"error": message, "hint": hint} with `status`.
void send_error(httplib::Response& response, int status, const std::string& message,
                const std::string& hint = {});

/// Runs `handler`, turning what it throws into a JSON error: RequestError with its status,
/// invalid JSON 400, any other error 500.
void answer_guarded(httplib::Response& response, const std::function<void()>& handler);

/// Answers an embedded file of labeling/web/ for `path` ("/" is `index`, e.g. "/index.html").
/// False when there is no such file.
bool serve_page_asset(const std::string& path, std::string_view index, httplib::Response& response);

/// "#rrggbb" for a colour.
std::string hex_color(const pipeline::Rgb& color);

/// The connection limits a page's server enforces, as `options` set them.
ConnectionLimits connection_limits(const ServerOptions& options);

/// Binds `server` to host:port (port 0: any free one) and returns the port. Throws Error saying
/// what to do when the port is taken.
int bind_page_server(BoundedServer& server, const std::string& host, int port, int max_connections);

/// Serves the bound `server` on `thread` and returns once it listens; `finished` becomes true when
/// it stops listening.
void listen_in_background(BoundedServer& server, std::thread& thread, std::atomic<bool>& finished);

/// Wakes the waiting connections, stops `server` and joins `thread` (nothing when not started).
void stop_listening(BoundedServer& server, std::thread& thread);

/// "http://<host>:<port>/?token=<token>", an IPv6 host in brackets: what a browser opens first.
std::string page_url(const std::string& host, int port, const std::string& token);

}  // namespace labpose::labeling
