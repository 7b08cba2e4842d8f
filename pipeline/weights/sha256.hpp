// SHA-256 with OpenSSL (the CPU's SHA extensions or its vector code): of bytes in one call, or of a
// stream fed piece by piece, so a download or a file being written is hashed as it passes; and the
// same on a thread of its own, behind the caller, who meanwhile writes or receives.
#pragma once

#include <condition_variable>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

struct evp_md_ctx_st;  // OpenSSL's EVP_MD_CTX

namespace labpose::pipeline {

/// A SHA-256 being computed: update() with each piece, in order, then hex() once.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  void update(std::string_view piece);
  /// The digest of everything given, as 64 lower-case hex digits. Ends the computation: update()
  /// and hex() may not be called again.
  std::string hex();

 private:
  struct Free {
    void operator()(evp_md_ctx_st* context) const;
  };
  std::unique_ptr<evp_md_ctx_st, Free> context_;
  bool finished_ = false;
};

/// A SHA-256 computed on a thread of its own: add() queues bytes and returns at once, so that
/// hashing a 100 MB file overlaps writing or receiving it (each takes about as long on one core).
class BackgroundSha256 {
 public:
  BackgroundSha256();
  /// Waits for the thread (an unfinished hash is dropped).
  ~BackgroundSha256();
  BackgroundSha256(const BackgroundSha256&) = delete;
  BackgroundSha256& operator=(const BackgroundSha256&) = delete;

  /// Queues `bytes` after everything queued before. They must stay where they are, unchanged, until
  /// sync() returns. The thread takes them once a megabyte is queued, or at sync().
  void add(std::string_view bytes);
  /// Waits until everything queued is hashed; rethrows the thread's error.
  void sync();
  /// Waits the same, without throwing: for a caller that is unwinding and must not free the bytes
  /// while the thread reads them.
  void drain() noexcept;
  /// sync(), then the digest of everything added, as 64 lower-case hex digits. Ends the
  /// computation.
  std::string hex();

 private:
  void run();
  // What wakes the thread: a megabyte queued, or a caller waiting in drain().
  static constexpr std::size_t kWakeBytes = std::size_t{1} << 20;
  bool ready() const;

  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::string_view> queue_;
  std::size_t queued_bytes_ = 0;
  bool hashing_ = false, stopping_ = false;
  bool sleeping_ = false;  // the thread waits for bytes: add() wakes it
  int waiting_ = 0;        // callers in drain(): the thread wakes them after each run
  std::exception_ptr failure_;
  Sha256 hash_;
  std::thread thread_;  // last: started once the rest exists
};

/// The SHA-256 of bytes, as 64 lower-case hex digits.
std::string sha256_hex(std::string_view bytes);

}  // namespace labpose::pipeline
