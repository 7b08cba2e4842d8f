// Connections with deadlines, one thread each, for the labeling server.
#include "labeling/bounded_server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

namespace labpose::labeling {
namespace {
using Clock = std::chrono::steady_clock;

// Threads made as connections arrive, up to a limit, and kept until shutdown: a waiting
// connection holds its thread, so a fixed small pool lets a few idle sockets stall everyone.
class ConnectionPool : public httplib::TaskQueue {
 public:
  explicit ConnectionPool(std::size_t max_threads)
      : max_threads_(std::max<std::size_t>(1, max_threads)) {}
  ~ConnectionPool() override { shutdown(); }
  ConnectionPool(const ConnectionPool&) = delete;
  ConnectionPool& operator=(const ConnectionPool&) = delete;

  void enqueue(std::function<void()> job) override {
    std::unique_lock lock(mutex_);
    jobs_.push_back(std::move(job));
    if (jobs_.size() > idle_ && threads_.size() < max_threads_) {
      try {
        threads_.emplace_back([this] { work(); });
      } catch (const std::system_error&) {
        // No thread to be had now: the job waits for one that exists (or the next one made).
      }
    }
    lock.unlock();
    ready_.notify_one();
  }

  void shutdown() override {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    ready_.notify_all();
    for (auto& thread : threads_)
      if (thread.joinable()) thread.join();
  }

 private:
  void work() {
    std::unique_lock lock(mutex_);
    for (;;) {
      ++idle_;
      ready_.wait(lock, [&] { return !jobs_.empty() || stopping_; });
      --idle_;
      if (jobs_.empty()) return;  // stopping, and every connection was handed out
      std::function<void()> job = std::move(jobs_.front());
      jobs_.pop_front();
      lock.unlock();
      job();
      lock.lock();
    }
  }

  const std::size_t max_threads_;
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> jobs_;
  std::vector<std::thread> threads_;
  std::size_t idle_ = 0;
  bool stopping_ = false;
};

// A connection's bytes for httplib's request parser, every wait bounded by a deadline.
class ConnectionStream : public httplib::Stream {
 public:
  ConnectionStream(int socket, int wake_fd) : socket_(socket), wake_fd_(wake_fd) {}

  /// Waits up to `idle` for the first byte of the next request. False when the time is up or the
  /// server stops; true also when the client closed (the read then says so).
  bool wait_for_request(std::chrono::milliseconds idle) {
    if (begin_ < end_) return true;  // a pipelined request is already here
    return wait(POLLIN, Clock::now() + idle, true);
  }

  /// The request that starts now must arrive whole within `limit`, and its answer be taken by the
  /// client within `limit` of its first byte.
  void start_request(std::chrono::milliseconds limit) {
    limit_ = limit;
    read_deadline_ = Clock::now() + limit;
    writing_ = false;
  }

  bool is_readable() const override { return begin_ < end_ || wait(POLLIN, read_deadline_, true); }
  bool is_writable() const override {
    return wait(POLLOUT, writing_ ? write_deadline_ : Clock::now() + limit_, false);
  }

  ssize_t read(char* data, std::size_t size) override {
    if (begin_ == end_) {
      if (!wait(POLLIN, read_deadline_, true)) return -1;
      ssize_t got;
      do {
        got = ::recv(socket_, buffer_, sizeof buffer_, MSG_DONTWAIT);
      } while (got < 0 && errno == EINTR);
      if (got <= 0) return got < 0 && errno == EAGAIN ? -1 : got;
      begin_ = 0;
      end_ = static_cast<std::size_t>(got);
    }
    const std::size_t count = std::min(size, end_ - begin_);
    std::memcpy(data, buffer_ + begin_, count);
    begin_ += count;
    return static_cast<ssize_t>(count);
  }

  ssize_t write(const char* data, std::size_t size) override {
    if (!writing_) {
      writing_ = true;
      write_deadline_ = Clock::now() + limit_;
    }
    std::size_t sent = 0;
    while (sent < size) {
      if (!wait(POLLOUT, write_deadline_, false)) return -1;
      const ssize_t n = ::send(socket_, data + sent, size - sent, MSG_DONTWAIT | MSG_NOSIGNAL);
      if (n < 0) {
        if (errno == EINTR || errno == EAGAIN) continue;
        return -1;
      }
      sent += static_cast<std::size_t>(n);
    }
    return static_cast<ssize_t>(size);
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    address(::getpeername, ip, port);
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    address(::getsockname, ip, port);
  }
  ::socket_t socket() const override { return socket_; }

 private:
  // Polls the socket for `events` until `deadline`, and the wake eventfd too when `wakeable`.
  // True when the socket is ready (or reports an error or hang-up, which the next call sees).
  bool wait(short events, Clock::time_point deadline, bool wakeable) const {
    pollfd fds[2] = {{socket_, events, 0}, {wake_fd_, POLLIN, 0}};
    for (;;) {
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
      if (left.count() <= 0) return false;
      const int timeout = static_cast<int>(std::min<long long>(left.count(), 60'000));
      const int ready = ::poll(fds, wakeable ? 2 : 1, timeout);
      if (ready < 0 && errno == EINTR) continue;
      if (ready < 0) return false;
      if (wakeable && (fds[1].revents & POLLIN)) return false;
      if (fds[0].revents != 0) return true;
    }
  }

  template <typename Query>
  void address(Query query, std::string& ip, int& port) const {
    sockaddr_storage storage{};
    socklen_t length = sizeof storage;
    ip.clear();
    port = 0;
    if (query(socket_, reinterpret_cast<sockaddr*>(&storage), &length) != 0) return;
    char text[INET6_ADDRSTRLEN] = {};
    if (storage.ss_family == AF_INET) {
      const auto* v4 = reinterpret_cast<const sockaddr_in*>(&storage);
      ::inet_ntop(AF_INET, &v4->sin_addr, text, sizeof text);
      port = ntohs(v4->sin_port);
    } else if (storage.ss_family == AF_INET6) {
      const auto* v6 = reinterpret_cast<const sockaddr_in6*>(&storage);
      ::inet_ntop(AF_INET6, &v6->sin6_addr, text, sizeof text);
      port = ntohs(v6->sin6_port);
    }
    ip = text;
  }

  int socket_, wake_fd_;
  char buffer_[16384];
  std::size_t begin_ = 0, end_ = 0;
  std::chrono::milliseconds limit_{10000};
  Clock::time_point read_deadline_ = Clock::now(), write_deadline_ = Clock::now();
  bool writing_ = false;
};

}  // namespace

BoundedServer::BoundedServer(ConnectionLimits limits) : limits_(limits) {
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0) throw std::system_error(errno, std::generic_category(), "eventfd");
  new_task_queue = [this] { return new ConnectionPool(limits_.max_connections); };
  // A page asks for a frame and its image, then refreshes every few seconds: keep its connection.
  set_keep_alive_max_count(100);
}

BoundedServer::~BoundedServer() {
  ::close(wake_fd_);
}

void BoundedServer::widen_backlog(int connections) {
  // listen() again on a listening socket only changes its backlog.
  if (svr_sock_ != INVALID_SOCKET) ::listen(svr_sock_, connections);
}

void BoundedServer::wake_connections() {
  const std::uint64_t one = 1;
  // Stays readable from now on (nobody reads it), so every later wait also ends at once.
  [[maybe_unused]] const ssize_t written = ::write(wake_fd_, &one, sizeof one);
}

bool BoundedServer::process_and_close_socket(::socket_t socket) {
  {
    ConnectionStream stream(socket, wake_fd_);
    for (std::size_t served = 0; served < keep_alive_max_count_; ++served) {
      if (svr_sock_ == INVALID_SOCKET || !stream.wait_for_request(limits_.idle)) break;
      stream.start_request(limits_.request);
      bool connection_closed = false;
      const bool last = served + 1 == keep_alive_max_count_;
      if (!process_request(stream, last, connection_closed, nullptr) || connection_closed) break;
    }
  }
  ::shutdown(socket, SHUT_RDWR);
  ::close(socket);
  return true;
}

}  // namespace labpose::labeling
