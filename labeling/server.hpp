// The labeling server: the embedded page and a small JSON API over a LabelStore, on
// 127.0.0.1 by default, with a random token required on every request (in the printed URL, then
// a cookie). Images come only from the project's labeled-data. Connections are bounded in time
// and served in parallel (bounded_server.hpp); requests are answered by request_handler.hpp. Not a
// general web server: no directory listings, no uploads, bounded request bodies.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include "labeling/label_store.hpp"
#include "projects/config.hpp"

namespace labpose::labeling {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 0;         // 0: any free port
  bool refine = false;  // show machinelabels predictions (frames from extract-outliers)
  std::string token;    // empty: a new random one
  std::size_t max_body_bytes = std::size_t{64} * 1024;
  // A connection may wait this long for a request (or the next one on a kept-alive connection),
  std::chrono::milliseconds idle_timeout{5000};
  // then has this long to send it whole, and again to take the answer.
  std::chrono::milliseconds request_timeout{10000};
  std::size_t max_connections = 128;  // served at once; more wait for one of them to end
};

class LabelServer {
 public:
  LabelServer(const projects::ProjectConfig& config, ServerOptions options);
  ~LabelServer();  // stops serving
  LabelServer(const LabelServer&) = delete;
  LabelServer& operator=(const LabelServer&) = delete;

  /// Binds the port and serves on a background thread. Throws Error when the port cannot be had.
  void start();
  /// Blocks until stop() (from another thread or a signal watcher).
  void wait();
  void stop();

  int port() const;
  const std::string& token() const;
  /// "http://<host>:<port>/?token=<token>", what a browser opens first.
  std::string url() const;
  LabelStore& store();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

/// 32 hexadecimal digits from the operating system's random source.
std::string random_token();

/// True for the loopback addresses (127.x.x.x, ::1, localhost).
bool is_loopback_host(const std::string& host);

}  // namespace labpose::labeling
