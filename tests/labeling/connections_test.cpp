// The labeling server under clients that connect and then send nothing, or half a request, or a
// byte at a time: other clients are still answered, and the server ends such connections itself.
// Every wait here is for a condition (an answer, a closed socket), bounded only so that a failure
// ends the test.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <arpa/inet.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "tests/labeling/server_fixture.hpp"

namespace labpose::labeling {
namespace {
using namespace std::chrono_literals;

// A client socket connected to 127.0.0.1:`port`, closed at scope exit.
class RawConnection {
 public:
  explicit RawConnection(int port) : fd_(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<std::uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = fd_ >= 0 &&
                 ::connect(fd_, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0;
  }
  ~RawConnection() {
    if (fd_ >= 0) ::close(fd_);
  }
  RawConnection(RawConnection&& other) noexcept
      : fd_(std::exchange(other.fd_, -1)), connected_(other.connected_) {}
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  bool connected() const { return connected_; }
  bool send_text(const std::string& text) const {
    return ::send(fd_, text.data(), text.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(text.size());
  }
  /// True when the server has sent something or closed the connection (now, without waiting).
  bool server_acted() const {
    pollfd fd{fd_, POLLIN, 0};
    return ::poll(&fd, 1, 0) > 0;
  }
  /// Waits until the server closes the connection (reading and dropping what it sends first);
  /// false when `limit` passes first.
  bool wait_until_closed(std::chrono::seconds limit) const {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    char buffer[4096];
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      pollfd fd{fd_, POLLIN, 0};
      if (::poll(&fd, 1, static_cast<int>(left.count())) <= 0) continue;
      const ssize_t got = ::recv(fd_, buffer, sizeof buffer, MSG_DONTWAIT);
      if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR)) return true;
    }
  }

 private:
  int fd_;
  bool connected_ = false;
};

TEST_F(LabelServerTest, ManyIdleConnectionsDoNotStallOtherClients) {
  ServerOptions options;
  // Far longer than answering takes, so "answered before the idle sockets were closed" is the
  // condition, not a race.
  options.idle_timeout = 120s;
  options.request_timeout = 120s;
  start(false, options);
  std::vector<RawConnection> idle;
  for (int i = 0; i < 64; ++i) {
    idle.emplace_back(server_->port());
    ASSERT_TRUE(idle.back().connected());
    // Half of them send half a request line and then nothing.
    if (i % 2 == 1) {
      ASSERT_TRUE(idle.back().send_text("GET /api/proj"));
    }
  }
  httplib::Client patient = client();
  patient.set_read_timeout(std::chrono::seconds(600));
  const auto answer = patient.Get("/api/project");
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->status, 200);
  for (std::size_t i = 0; i < idle.size(); ++i)
    EXPECT_FALSE(idle[i].server_acted()) << "idle connection " << i << " was ended first";
}

TEST_F(LabelServerTest, EndsSilentAndTricklingConnectionsItself) {
  ServerOptions options;
  options.idle_timeout = 1s;
  options.request_timeout = 2s;
  start(false, options);
  const RawConnection silent(server_->port());
  const RawConnection trickling(server_->port());
  ASSERT_TRUE(silent.connected() && trickling.connected());
  // A request that never ends: one more header byte every tenth of a second, which used to
  // restart the server's read timeout each time.
  std::atomic<bool> stop = false;
  std::thread trickle([&] {
    if (!trickling.send_text("GET /api/project HTTP/1.1\r\nX-Slow: ")) return;
    while (!stop && trickling.send_text("a")) std::this_thread::sleep_for(100ms);
  });
  EXPECT_TRUE(silent.wait_until_closed(60s));
  EXPECT_TRUE(trickling.wait_until_closed(60s));
  stop = true;
  trickle.join();
  // And the server still answers.
  EXPECT_EQ(get_status("/api/project"), 200);
}

TEST_F(LabelServerTest, StopsPromptlyWithIdleConnectionsOpen) {
  ServerOptions options;
  options.idle_timeout = 600s;  // stop() must not wait for these
  start(false, options);
  std::vector<RawConnection> idle;
  idle.reserve(8);
  for (int i = 0; i < 8; ++i) idle.emplace_back(server_->port());
  ASSERT_EQ(get_status("/api/project"), 200);  // the server has accepted them by now
  server_->stop();
  for (const auto& connection : idle) EXPECT_TRUE(connection.wait_until_closed(60s));
}

}  // namespace
}  // namespace labpose::labeling
