// libcurl's easy interface behind RAII handles. A stall is curl's low-speed limit (under a byte a
// second for the stall time) plus a connect timeout of the same length, so a server that accepts
// and then says nothing ends in bounded time. Ctrl-C under an InterruptHandler aborts the transfer.
#include "pipeline/weights/http_download.hpp"

#include <curl/curl.h>
#include <fmt/core.h>

#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <memory>
#include <new>
#include <optional>
#include <string>

#include "core/error.hpp"
#include "core/interrupt.hpp"
#include "core/progress.hpp"
#include "pipeline/weights/sha256.hpp"

namespace labpose::pipeline {
namespace {

constexpr long kMaxRedirects = 5;
// The largest body held: 2 GiB, over ten times resnet_101's checkpoint (171 MB). A server that says
// or sends more is refused before it can fill the memory.
constexpr curl_off_t kMaxBytes = curl_off_t{2} << 30;
constexpr int kDefaultStallSeconds = 60;

// curl_global_init once per process, before the first handle (it is not thread-safe itself).
void initialize_curl() {
  static const CURLcode initialized = curl_global_init(CURL_GLOBAL_DEFAULT);
  if (initialized != CURLE_OK) {
    throw Error(fmt::format("cannot start libcurl: {}", curl_easy_strerror(initialized)));
  }
}

struct CurlDeleter {
  void operator()(CURL* handle) const { curl_easy_cleanup(handle); }
};
// What the callbacks share: the body so far and its hash, the progress bar (made once the size is
// known, or at the first byte when the server does not say it), and what stopped the transfer from
// inside a callback (no exception may cross libcurl's C frames).
struct Transfer {
  CURL* handle = nullptr;
  std::string body;
  // Hashed as it arrives, on a thread of its own, in place in `body` (synced before the block
  // moves): the hash adds no time of its own, on a network or from a disk as fast as the hash. It
  // covers exactly the bytes that `body` keeps.
  BackgroundSha256 hash;
  std::string label;
  std::optional<Progress> progress;
  bool too_large = false;
  std::exception_ptr failure;
};

std::size_t write_body(char* data, std::size_t size, std::size_t count, void* user) {
  auto& transfer = *static_cast<Transfer*>(user);
  const std::size_t bytes = size * count;
  if (transfer.body.size() + bytes > static_cast<std::size_t>(kMaxBytes)) {
    transfer.too_large = true;
    return 0;  // curl stops with CURLE_WRITE_ERROR
  }
  try {
    if (transfer.body.size() + bytes > transfer.body.capacity()) transfer.hash.sync();
    const std::size_t at = transfer.body.size();
    transfer.body.append(data, bytes);
    transfer.hash.add(std::string_view(transfer.body).substr(at, bytes));
  } catch (...) {
    transfer.failure = std::current_exception();
    return 0;
  }
  return bytes;
}

// Whole megabytes, rounded up (Progress counts whole units; a finished download is total/total).
std::int64_t megabytes(curl_off_t bytes) {
  return static_cast<std::int64_t>((bytes + 999'999) / 1'000'000);
}

// Progress in megabytes; the body's block reserved once its size is known. Non-zero aborts the
// transfer.
int on_progress(void* user, curl_off_t total, curl_off_t now, curl_off_t, curl_off_t) {
  auto& transfer = *static_cast<Transfer*>(user);
  long status = 0;  // no bar for redirects and error pages
  curl_easy_getinfo(transfer.handle, CURLINFO_RESPONSE_CODE, &status);
  const bool body = status >= 200 && status < 300;
  if (body && total > kMaxBytes) {
    transfer.too_large = true;
    return 1;
  }
  try {
    if (body && total > 0 && static_cast<std::size_t>(total) > transfer.body.capacity()) {
      transfer.hash.sync();                                    // the block moves
      transfer.body.reserve(static_cast<std::size_t>(total));  // one block, no copies on the way
    }
    if (!transfer.progress && (total > 0 || now > 0) && body)
      transfer.progress.emplace(transfer.label, megabytes(total), "MB");
    if (transfer.progress) {
      if (total > 0) transfer.progress->set_total(megabytes(total));
      transfer.progress->set_done(megabytes(now));
    }
  } catch (...) {
    transfer.failure = std::current_exception();
    return 1;
  }
  return interrupt_requested() ? 1 : 0;
}

// What went wrong, in words, from curl's code, its message and the HTTP status.
std::string failure_text(CURLcode code, const char* message, long status, int stall_seconds) {
  switch (code) {
    case CURLE_HTTP_RETURNED_ERROR:
      return fmt::format("the server answered HTTP {}{}", status,
                         status == 404 ? " (no such file there)" : "");
    case CURLE_OPERATION_TIMEDOUT:
      return fmt::format("nothing arrived for {} s ({}); the server or the network stalled",
                         stall_seconds, message);
    case CURLE_PARTIAL_FILE:
      return fmt::format("the download was cut short ({})", message);
    case CURLE_TOO_MANY_REDIRECTS:
      return fmt::format("more than {} redirects ({})", kMaxRedirects, message);
    default:
      return message[0] != '\0' ? std::string(message) : curl_easy_strerror(code);
  }
}

// Sets an option of a handle; a failure is a bug or a libcurl without the feature.
template <typename Value>
void set_option(CURL* handle, CURLoption option, Value value) {
  const CURLcode code = curl_easy_setopt(handle, option, value);
  if (code != CURLE_OK)
    throw Error(fmt::format("libcurl refused an option: {}", curl_easy_strerror(code)));
}

}  // namespace

int download_stall_seconds() {
  const char* text = std::getenv("LABPOSE_DOWNLOAD_STALL_SECONDS");
  if (text == nullptr || *text == '\0') return kDefaultStallSeconds;
  const std::string_view value(text);
  int seconds = 0;
  const auto parsed = std::from_chars(value.data(), value.data() + value.size(), seconds);
  if (parsed.ec != std::errc() || parsed.ptr != value.data() + value.size() || seconds < 1) {
    throw UsageError(
        fmt::format("LABPOSE_DOWNLOAD_STALL_SECONDS must be a whole number of seconds from 1 "
                    "(found \"{}\")",
                    value),
        fmt::format("unset it for the default of {} s", kDefaultStallSeconds));
  }
  return seconds;
}

DownloadedBody download(const std::string& url, const std::string& label) {
  const int stall_seconds = download_stall_seconds();
  initialize_curl();
  const std::unique_ptr<CURL, CurlDeleter> handle(curl_easy_init());
  if (!handle) throw Error("cannot start libcurl: out of memory");
  Transfer transfer;
  transfer.handle = handle.get();
  transfer.label = label;
  char message[CURL_ERROR_SIZE] = {};
  CURL* curl = handle.get();
  set_option(curl, CURLOPT_URL, url.c_str());
  set_option(curl, CURLOPT_ERRORBUFFER, message);
  set_option(curl, CURLOPT_PROTOCOLS_STR, "http,https");
  set_option(curl, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  set_option(curl, CURLOPT_FOLLOWLOCATION, 1L);
  set_option(curl, CURLOPT_MAXREDIRS, kMaxRedirects);
  set_option(curl, CURLOPT_FAILONERROR, 1L);
  set_option(curl, CURLOPT_NOSIGNAL, 1L);
  set_option(curl, CURLOPT_USERAGENT, "labpose");
  set_option(curl, CURLOPT_CONNECTTIMEOUT, static_cast<long>(stall_seconds));
  set_option(curl, CURLOPT_LOW_SPEED_LIMIT, 1L);
  set_option(curl, CURLOPT_LOW_SPEED_TIME, static_cast<long>(stall_seconds));
  set_option(curl, CURLOPT_WRITEFUNCTION, write_body);
  set_option(curl, CURLOPT_WRITEDATA, &transfer);
  set_option(curl, CURLOPT_XFERINFOFUNCTION, on_progress);
  set_option(curl, CURLOPT_XFERINFODATA, &transfer);
  set_option(curl, CURLOPT_NOPROGRESS, 0L);
  const CURLcode code = curl_easy_perform(curl);
  if (transfer.progress) transfer.progress->finish();
  if (transfer.too_large) {
    throw Error(fmt::format("cannot download {}: the server sends more than {} MB, more than any "
                            "checkpoint labpose fetches",
                            url, megabytes(kMaxBytes)),
                "check the URL (--url, LABPOSE_WEIGHTS_URL): it does not serve a checkpoint");
  }
  if (transfer.failure) {
    try {
      std::rethrow_exception(transfer.failure);
    } catch (const std::bad_alloc&) {
      throw Error(fmt::format("cannot download {}: this machine has not the memory to hold it "
                              "({} MB so far)",
                              url, megabytes(static_cast<curl_off_t>(transfer.body.size()))),
                  "close other programs and run the same command again");
    }
  }
  if (code == CURLE_ABORTED_BY_CALLBACK && interrupt_requested()) {
    throw Error(fmt::format("the download of {} was stopped by {}", url, interrupt_reason()),
                "run the same command again: it starts the download over", ErrorKind::interrupted);
  }
  if (code != CURLE_OK) {
    long status = 0;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    throw Error(fmt::format("cannot download {}: {}", url,
                            failure_text(code, message, status, stall_seconds)));
  }
  std::string sha256 = transfer.hash.hex();  // before the body moves: the thread reads it in place
  return {std::move(transfer.body), std::move(sha256)};
}

}  // namespace labpose::pipeline
