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

std::string sha256_hex(std::string_view bytes) {
  Sha256 hash;
  hash.update(bytes);
  return hash.hex();
}

}  // namespace labpose::pipeline
