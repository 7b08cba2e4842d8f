// The analysis checkpoint: header line, rows appended and flushed, rows read back.
#include "pipeline/analysis/checkpoint.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cerrno>
#include <memory>
#include <nlohmann/json.hpp>

#include "core/atomic_file.hpp"
#include "core/console.hpp"
#include "core/error.hpp"

namespace labpose::pipeline {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr const char* kCheckpointFormat = "labpose analysis checkpoint 1";

std::uintmax_t file_size_or_zero(const fs::path& file) {
  std::error_code error;
  const auto size = fs::file_size(file, error);
  return error ? 0 : size;
}

using FileHandle = std::unique_ptr<std::FILE, int (*)(std::FILE*)>;

FileHandle open_for_reading(const fs::path& file) {
  return FileHandle(std::fopen(file.c_str(), "rb"), &std::fclose);
}

}  // namespace

AnalysisIdentity AnalysisIdentity::of_video(const fs::path& video, std::int64_t frames,
                                            std::string scorer, std::string snapshot,
                                            std::optional<projects::CropBox> crop, int batch_size) {
  AnalysisIdentity identity;
  identity.video = fs::absolute(video).lexically_normal().string();
  identity.video_bytes = file_size_or_zero(video);
  identity.frames = frames;
  identity.scorer = std::move(scorer);
  identity.snapshot = std::move(snapshot);
  identity.crop = crop;
  identity.batch_size = batch_size;
  return identity;
}

json AnalysisIdentity::to_json() const {
  json out = {{"video", video},        {"video_bytes", video_bytes}, {"frames", frames},
              {"scorer", scorer},      {"snapshot", snapshot},       {"batch_size", batch_size},
              {"precision", precision}};
  out["crop"] = crop ? json::array({crop->x1, crop->x2, crop->y1, crop->y2}) : json(nullptr);
  return out;
}

bool AnalysisIdentity::matches(const json& other, bool batch_size_too) const {
  const json mine = to_json();
  for (const auto& [key, value] : mine.items()) {
    if ((key == "batch_size" || key == "precision") && !batch_size_too) continue;
    if (key == "precision" && !other.contains(key) && value == "fp32") continue;
    if (!other.contains(key) || other[key] != value) return false;
  }
  return true;
}

Checkpoint::Checkpoint(fs::path file, std::size_t columns)
    : file_(std::move(file)), columns_(columns) {}

Checkpoint::~Checkpoint() {
  close();
}

json read_header_line(const fs::path& file, std::uintmax_t& bytes) {
  const FileHandle in = open_for_reading(file);
  if (!in) return json(json::value_t::discarded);
  std::string line;
  for (int c = std::fgetc(in.get()); c != EOF && c != '\n'; c = std::fgetc(in.get())) {
    line.push_back(static_cast<char>(c));
    if (line.size() > 1 << 20) return json(json::value_t::discarded);
  }
  bytes = line.size() + 1;
  return json::parse(line, nullptr, false);
}

std::int64_t open_resumable(const fs::path& file, const std::string& header,
                            const std::function<std::int64_t()>& usable,
                            std::uintmax_t& header_bytes, std::FILE*& handle) {
  std::error_code error;
  std::int64_t records = 0;
  if (fs::exists(file, error)) {
    records = usable();
    if (records == 0) fs::remove(file, error);
  }
  if (records == 0) {
    write_file_atomically(file, header);
    header_bytes = header.size();
  }
  handle = std::fopen(file.c_str(), "ab");
  if (handle == nullptr) {
    throw Error(fmt::format("cannot write {}: {}", file.string(), describe_errno(errno, file)),
                "check the output folder's permissions and free space (or pick one with --dest)");
  }
  return records;
}

std::int64_t Checkpoint::open(const AnalysisIdentity& identity) {
  const std::string header =
      json{{"format", kCheckpointFormat}, {"identity", identity.to_json()}, {"columns", columns_}}
          .dump() +
      "\n";
  return open_resumable(
      file_, header,
      [&] {
        const std::int64_t rows = usable_rows(identity);
        if (rows > 0) {
          fs::resize_file(file_,
                          header_bytes_ + static_cast<std::uintmax_t>(rows) * row_doubles() * 8);
        }
        return rows;
      },
      header_bytes_, handle_);
}

void Checkpoint::append(const double* values, std::size_t rows) {
  const std::size_t count = rows * row_doubles();
  if (std::fwrite(values, sizeof(double), count, handle_) != count || std::fflush(handle_) != 0) {
    throw Error(fmt::format("cannot write {}: {}", file_.string(), describe_errno(errno, file_)),
                "free some disk space and run the same command again: it resumes here");
  }
}

void Checkpoint::close() {
  if (handle_ != nullptr) std::fclose(handle_);
  handle_ = nullptr;
}

void Checkpoint::read(std::size_t first, std::size_t count, double* out,
                      std::vector<double>& status) const {
  const FileHandle in = open_for_reading(file_);
  std::vector<double> rows(count * row_doubles());
  const long offset = static_cast<long>(header_bytes_ + first * row_doubles() * 8);
  if (!in || std::fseek(in.get(), offset, SEEK_SET) != 0 ||
      std::fread(rows.data(), sizeof(double), rows.size(), in.get()) != rows.size()) {
    throw Error(
        fmt::format("cannot read back {} (was it changed while analyzing?)", file_.string()),
        "run the same command again with --overwrite");
  }
  status.resize(count);
  for (std::size_t r = 0; r < count; ++r) {
    std::copy_n(&rows[r * row_doubles()], columns_, out + r * columns_);
    status[r] = rows[r * row_doubles() + columns_];
  }
}

BadRows Checkpoint::bad_rows(std::int64_t rows) const {
  constexpr std::int64_t kChunk = 4096;
  BadRows bad;
  std::vector<double> statuses, chunk;
  for (std::int64_t first = 0; first < rows; first += kChunk) {
    const auto count = static_cast<std::size_t>(std::min(kChunk, rows - first));
    chunk.resize(count * columns_);
    read(static_cast<std::size_t>(first), count, chunk.data(), statuses);
    for (std::size_t r = 0; r < count; ++r) {
      if (statuses[r] == kRowUndecodable)
        bad.undecodable.push_back(first + static_cast<std::int64_t>(r));
      if (statuses[r] == kRowDamaged) bad.damaged.push_back(first + static_cast<std::int64_t>(r));
    }
  }
  return bad;
}

std::int64_t Checkpoint::usable_rows(const AnalysisIdentity& identity) {
  const json header = read_header_line(file_, header_bytes_);
  if (header.is_discarded() || !header.is_object() ||
      header.value("format", "") != kCheckpointFormat || !header.contains("identity") ||
      !identity.matches(header["identity"]) ||
      header.value("columns", std::size_t{0}) != columns_) {
    console::warn(
        "{} belongs to another analysis (video, model, crop or batch size changed); "
        "starting this video again",
        file_.string());
    return 0;
  }
  const std::uintmax_t size = file_size_or_zero(file_);
  const auto whole =
      static_cast<std::int64_t>((size - std::min(size, header_bytes_)) / (row_doubles() * 8));
  const std::int64_t rows = std::min(whole, identity.frames);
  return rows - rows % identity.batch_size;
}

}  // namespace labpose::pipeline
