// cpp-httplib's Server with every connection bounded in time: a connection waits at most `idle`
// for its next request and then has `request` to send it whole (and again to take the answer), and
// each is served on its own thread (up to `max_connections` at once), so clients that connect and
// send nothing, or trickle a byte at a time, neither stall the others nor hold a thread for long.
// httplib 0.11 gives a fixed pool of 8 threads and a read timeout per recv() only. Not the routes:
// request_handler.hpp.
#pragma once

#include <httplib.h>

#include <chrono>
#include <cstddef>

namespace labpose::labeling {

struct ConnectionLimits {
  std::chrono::milliseconds idle{5000};      // waiting for a request (or the next one)
  std::chrono::milliseconds request{10000};  // reading one request; writing its answer
  std::size_t max_connections = 128;         // served at once; more wait for a free thread
};

class BoundedServer : public httplib::Server {
 public:
  explicit BoundedServer(ConnectionLimits limits);
  ~BoundedServer() override;
  BoundedServer(const BoundedServer&) = delete;
  BoundedServer& operator=(const BoundedServer&) = delete;

  /// Lets `connections` wait to be accepted after bind_to_port() (httplib listens with a backlog of
  /// 5, so a burst of connections beyond that waits for TCP's retransmission, a second or more).
  void widen_backlog(int connections);

  /// Makes every connection that waits for a request give up at once (call before stop(), which
  /// otherwise waits for them to time out). Answers being written are finished.
  void wake_connections();

 private:
  // httplib's per-connection loop (a private virtual of httplib::Server), replaced by one whose
  // waits have deadlines; the requests themselves are still parsed and routed by httplib.
  bool process_and_close_socket(::socket_t socket) override;

  ConnectionLimits limits_;
  int wake_fd_ = -1;  // an eventfd, readable once wake_connections() ran
};

}  // namespace labpose::labeling
