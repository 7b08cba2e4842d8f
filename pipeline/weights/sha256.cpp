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
  }
  changed_.notify_all();
  thread_.join();
}

void BackgroundSha256::run() {
  std::unique_lock lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (stopping_) return;
    const std::string_view bytes = queue_.front();
    queue_.pop_front();
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
    changed_.notify_all();
  }
}

void BackgroundSha256::add(std::string_view bytes) {
  if (bytes.empty()) return;
  {
    const std::lock_guard lock(mutex_);
    queue_.push_back(bytes);
  }
  changed_.notify_all();
}

void BackgroundSha256::drain() noexcept {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return queue_.empty() && !hashing_; });
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
