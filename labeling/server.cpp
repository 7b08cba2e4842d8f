// The labeling server: a BoundedServer whose every request goes to a RequestHandler.
#include "labeling/server.hpp"

#include <fmt/core.h>

#include <atomic>
#include <random>
#include <thread>

#include "labeling/bounded_server.hpp"
#include "labeling/page_http.hpp"
#include "labeling/request_handler.hpp"

namespace labpose::labeling {
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
      : options(std::move(server_options)),
        store(config, options.refine),
        server(connection_limits(options)) {}

  ServerOptions options;
  LabelStore store;
  BoundedServer server;
  std::unique_ptr<RequestHandler> handler;  // made once the port (in the cookie's name) is known
  std::thread thread;
  std::atomic<bool> finished = false;
  int port = 0;

  // httplib calls the pre-routing handler before it reads a body: the token is checked and every
  // request is answered there, except the changes, whose JSON body httplib then reads and hands to
  // the same route() through the POST handlers.
  void add_routes() {
    server.set_pre_routing_handler(
        [this](const httplib::Request& request, httplib::Response& response) {
          const bool allowed = handler->check_access(request, response);
          if (allowed && RequestHandler::reads_body(request))
            return httplib::Server::HandlerResponse::Unhandled;
          if (allowed) handler->route(request, response);
          return httplib::Server::HandlerResponse::Handled;
        });
    for (const std::string_view path : RequestHandler::kChangePaths) {
      server.Post(std::string(path),
                  [this](const httplib::Request& request, httplib::Response& response) {
                    handler->route(request, response);
                  });
    }
  }
};

LabelServer::LabelServer(const projects::ProjectConfig& config, ServerOptions options) {
  if (options.token.empty()) options.token = random_token();
  state_ = std::make_unique<State>(config, std::move(options));
  state_->server.set_payload_max_length(state_->options.max_body_bytes);
}

LabelServer::~LabelServer() {
  stop();
}

void LabelServer::start() {
  State& state = *state_;
  state.port = bind_page_server(state.server, state.options.host, state.options.port,
                                static_cast<int>(state.options.max_connections));
  state.handler = std::make_unique<RequestHandler>(state.store, state.options.token,
                                                   fmt::format("labpose_token_{}", state.port));
  state.add_routes();
  listen_in_background(state.server, state.thread, state.finished);
}

void LabelServer::wait() {
  if (state_->thread.joinable()) state_->thread.join();
}

void LabelServer::stop() {
  if (!state_) return;
  stop_listening(state_->server, state_->thread);
}

int LabelServer::port() const {
  return state_->port;
}

const std::string& LabelServer::token() const {
  return state_->options.token;
}

std::string LabelServer::url() const {
  return page_url(state_->options.host, state_->port, state_->options.token);
}

LabelStore& LabelServer::store() {
  return state_->store;
}

}  // namespace labpose::labeling
