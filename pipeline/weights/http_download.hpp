// One file fetched over HTTP(S) with libcurl, for `labpose weights fetch`: redirects followed (a
// few), HTTP errors and stalled servers turned into Errors that name the URL, proxies taken from
// the environment as curl takes them (http_proxy, HTTPS_PROXY, NO_PROXY), a progress bar. Not a
// general HTTP client, and not where the file goes in the end: the caller checks and stores it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace labpose::pipeline {

/// Seconds without a byte received (or without a connection) after which a download is given up:
/// $LABPOSE_DOWNLOAD_STALL_SECONDS (a whole number from 1), else 60. A bad value is a UsageError.
int download_stall_seconds();

/// Downloads `url` into `file` (created or truncated), following up to 5 redirects, with a progress
/// bar labelled `label` (plain lines when stderr is not a terminal). Returns the bytes written.
/// Throws Error naming the URL and what went wrong (HTTP status, no connection, stalled, cut
/// short); `file` may then hold part of the body: the caller removes it.
std::uint64_t download_to_file(const std::string& url, const std::filesystem::path& file,
                               const std::string& label);

}  // namespace labpose::pipeline
