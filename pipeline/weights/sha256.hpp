// SHA-256 with OpenSSL (the CPU's SHA extensions or its vector code): of bytes in one call, or of a
// stream fed piece by piece, so a download or a file being written is hashed as it passes.
#pragma once

#include <memory>
#include <string>
#include <string_view>

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

/// The SHA-256 of bytes, as 64 lower-case hex digits.
std::string sha256_hex(std::string_view bytes);

}  // namespace labpose::pipeline
