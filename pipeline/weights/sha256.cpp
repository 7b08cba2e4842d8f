// OpenSSL's EVP digest behind RAII; its failures (a libssl without SHA-256) become Errors.
#include "pipeline/weights/sha256.hpp"

#include <fmt/core.h>
#include <openssl/evp.h>

#include <cstdint>

#include "core/error.hpp"

namespace labpose::pipeline {
namespace {

[[noreturn]] void openssl_failed() {
  throw Error("OpenSSL could not compute a SHA-256", "check the installation of libssl");
}

}  // namespace

void Sha256::Free::operator()(evp_md_ctx_st* context) const {
  EVP_MD_CTX_free(context);
}

Sha256::Sha256() : context_(EVP_MD_CTX_new()) {
  if (!context_ || EVP_DigestInit_ex(context_.get(), EVP_sha256(), nullptr) != 1) openssl_failed();
}

Sha256::~Sha256() = default;

void Sha256::update(std::string_view piece) {
  LABPOSE_ASSERT(!finished_);
  if (!piece.empty() && EVP_DigestUpdate(context_.get(), piece.data(), piece.size()) != 1)
    openssl_failed();
}

std::string Sha256::hex() {
  LABPOSE_ASSERT(!finished_);
  finished_ = true;
  std::uint8_t digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_DigestFinal_ex(context_.get(), digest, &length) != 1 || length != 32) openssl_failed();
  std::string text;
  text.reserve(64);
  for (unsigned int i = 0; i < length; ++i) text += fmt::format("{:02x}", digest[i]);
  return text;
}

BackgroundSha256::BackgroundSha256() : thread_([this] { run(); }) {}

BackgroundSha256::~BackgroundSha256() {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
    queue_.clear();
    queued_bytes_ = 0;
  }
  changed_.notify_all();
  thread_.join();
}

void BackgroundSha256::run() {
  std::unique_lock lock(mutex_);
  for (;;) {
    sleeping_ = true;
    changed_.wait(lock, [&] { return stopping_ || ready(); });
    sleeping_ = false;
    if (stopping_) return;
    const std::string_view bytes = queue_.front();
    queue_.pop_front();
    queued_bytes_ -= bytes.size();
    hashing_ = true;
    lock.unlock();
    std::exception_ptr failure;
    try {
      hash_.update(bytes);
    } catch (...) {
      failure = std::current_exception();
    }
    lock.lock();
    hashing_ = false;
    if (failure && !failure_) failure_ = failure;
    if (waiting_ > 0) changed_.notify_all();
  }
}

bool BackgroundSha256::ready() const {
  return !queue_.empty() && (queued_bytes_ >= kWakeBytes || waiting_ > 0);
}

void BackgroundSha256::add(std::string_view bytes) {
  if (bytes.empty()) return;
  bool wake = false;
  {
    const std::lock_guard lock(mutex_);
    // A download arrives in 16 KB pieces, one after the other in its block: they join the piece
    // before them, and the thread is woken once a megabyte waits, not for every piece (the
    // hash outruns a download, so it would sleep and be woken thousands of times).
    if (!queue_.empty() && queue_.back().data() + queue_.back().size() == bytes.data()) {
      queue_.back() = std::string_view(queue_.back().data(), queue_.back().size() + bytes.size());
    } else {
      queue_.push_back(bytes);
    }
    queued_bytes_ += bytes.size();
    wake = sleeping_ && ready();
  }
  if (wake) changed_.notify_all();
}

void BackgroundSha256::drain() noexcept {
  std::unique_lock lock(mutex_);
  ++waiting_;
  if (sleeping_ && ready()) changed_.notify_all();
  changed_.wait(lock, [&] { return queue_.empty() && !hashing_; });
  --waiting_;
}

void BackgroundSha256::sync() {
  drain();
  const std::lock_guard lock(mutex_);
  if (failure_) std::rethrow_exception(failure_);
}

std::string BackgroundSha256::hex() {
  sync();
  return hash_.hex();
}

std::string sha256_hex(std::string_view bytes) {
  Sha256 hash;
  hash.update(bytes);
  return hash.hex();
}

}  // namespace labpose::pipeline
