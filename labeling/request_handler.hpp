// The labeling server's requests, with no socket: the token check (URL, header or cookie), the
// JSON media type of changes, the routes (the embedded page, /api/...) and their JSON, over a
// LabelStore. The socket server (server.cpp) calls exactly this for every request it has read, and
// so does the fuzz harness. Not a web framework: a fixed table of routes.
#pragma once

#include <array>
#include <string>
#include <string_view>

#include "labeling/label_store.hpp"

namespace httplib {
struct Request;
struct Response;
}  // namespace httplib

namespace labpose::labeling {

class RequestHandler {
 public:
  /// `cookie_name` carries the token once the printed URL was opened (one per port, so two
  /// servers on one machine do not share it).
  RequestHandler(LabelStore& store, std::string token, std::string cookie_name);

  /// Answers a request whose path, query parameters, headers and body httplib has parsed:
  /// check_access(), then route().
  void handle(const httplib::Request& request, httplib::Response& response);

  /// The token and, for POST, the media type. True when the request may go on; otherwise the
  /// response says why (401, 403, 415) or redirects the printed URL to the page (303).
  bool check_access(const httplib::Request& request, httplib::Response& response) const;

  /// Answers an allowed request (the page, /api/...; 404 for other paths, 405 for other methods).
  void route(const httplib::Request& request, httplib::Response& response);

  /// The changes: POST with a JSON body, each the path of one route.
  static constexpr std::array<std::string_view, 4> kChangePaths = {
      "/api/point", "/api/delete", "/api/individual", "/api/accept"};
  /// True for a change (the only requests whose body is read).
  static bool reads_body(const httplib::Request& request);

 private:
  LabelStore& store_;
  std::string token_;
  std::string cookie_name_;
};

/// True when a Content-Type value is application/json, with or without parameters
/// ("application/json; charset=utf-8"); case does not matter, "application/jsonfoo" is not.
bool is_json_media_type(std::string_view content_type);

}  // namespace labpose::labeling
