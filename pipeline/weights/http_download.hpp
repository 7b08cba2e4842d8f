// One file fetched over HTTP(S) with libcurl, for `labpose weights fetch`: redirects followed (a
// few), HTTP errors and stalled servers turned into Errors that name the URL, proxies taken from
// the environment as curl takes them (http_proxy, HTTPS_PROXY, NO_PROXY), a progress bar. Not a
// general HTTP client: the body comes back in memory with its SHA-256, and the caller checks and
// stores it.
#pragma once

#include <string>

namespace labpose::pipeline {

/// Seconds without a byte received (or without a connection) after which a download is given up:
/// $LABPOSE_DOWNLOAD_STALL_SECONDS (a whole number from 1), else 60. A bad value is a UsageError.
int download_stall_seconds();

/// A body downloaded, with the SHA-256 taken of it as it arrived.
struct DownloadedBody {
  std::string bytes;
  std::string sha256;  // 64 lower-case hex digits
};

/// The body of `url`, downloaded into memory (in one block when the server gives its size: a
/// checkpoint is then never written to disk before it is checked and converted) and hashed while
/// it arrives, following up to 5 redirects, with a progress bar labelled `label` (plain lines when
/// stderr is not a terminal). Throws Error naming the URL and what went wrong (HTTP status, no
/// connection, stalled, cut short, out of memory).
DownloadedBody download(const std::string& url, const std::string& label);

}  // namespace labpose::pipeline
