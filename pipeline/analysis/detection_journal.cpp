// The detection journal: header line, length-prefixed frame records appended and flushed, records
// read back in order.
#include "pipeline/analysis/detection_journal.hpp"

#include <fmt/core.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "core/atomic_file.hpp"
#include "core/console.hpp"
#include "core/error.hpp"

namespace labpose::pipeline {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// 2: the identity head's values follow each candidate (none without an identity head).
constexpr const char* kJournalFormat = "labpose multi-animal detections 2";

using FileHandle = std::unique_ptr<std::FILE, int (*)(std::FILE*)>;

// A record's bytes, native (little-endian) values one after another.
class RecordWriter {
 public:
  template <typename T>
  void put(T value) {
    const auto* bytes = reinterpret_cast<const char*>(&value);
    bytes_.append(bytes, sizeof value);
  }
  void put_doubles(const std::vector<double>& values) {
    bytes_.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(double));
  }
  const std::string& bytes() const { return bytes_; }

 private:
  std::string bytes_;
};

class RecordReader {
 public:
  explicit RecordReader(const std::string& bytes) : bytes_(bytes) {}
  template <typename T>
  T get() {
    T value{};
    take(&value, sizeof value);
    return value;
  }
  std::vector<double> get_doubles(std::size_t count) {
    std::vector<double> values(count);
    take(values.data(), count * sizeof(double));
    return values;
  }
  bool ok() const { return ok_; }

 private:
  void take(void* out, std::size_t size) {
    if (position_ + size > bytes_.size()) {
      ok_ = false;
      std::memset(out, 0, size);
      return;
    }
    std::memcpy(out, bytes_.data() + position_, size);
    position_ += size;
  }
  const std::string& bytes_;
  std::size_t position_ = 0;
  bool ok_ = true;
};

std::string encode(std::int64_t frame, double status, const ImageDetections& detections,
                   const std::vector<int>& edges, int identity_channels) {
  RecordWriter record;
  record.put(frame);
  record.put(status);
  for (std::size_t j = 0; j < detections.candidates.size(); ++j) {
    const auto& bodypart = detections.candidates[j];
    record.put(static_cast<std::int32_t>(bodypart.size()));
    for (const Candidate& c : bodypart) {
      record.put(static_cast<std::int32_t>(c.row));
      record.put(static_cast<std::int32_t>(c.col));
      record.put(c.x);
      record.put(c.y);
      record.put(c.confidence);
    }
    if (identity_channels > 0 && !bodypart.empty()) {
      const std::vector<double>& identity = detections.identity.at(j);
      LABPOSE_ASSERT(identity.size() ==
                     bodypart.size() * static_cast<std::size_t>(identity_channels));
      record.put_doubles(identity);
    }
  }
  for (const int e : edges) {
    const EdgeCosts& costs = detections.costs.at(static_cast<std::size_t>(e));
    record.put(static_cast<std::int32_t>(costs.sources));
    record.put(static_cast<std::int32_t>(costs.targets));
    record.put_doubles(costs.affinity);
    record.put_doubles(costs.length);
  }
  return record.bytes();
}

// One record back; false when it is damaged.
bool decode(const std::string& bytes, const JournalShape& shape, JournalFrame& frame) {
  const int bodyparts = shape.bodyparts;
  RecordReader record(bytes);
  frame.index = record.get<std::int64_t>();
  frame.status = record.get<double>();
  frame.detections.candidates.assign(static_cast<std::size_t>(bodyparts), {});
  frame.detections.identity.clear();
  if (shape.identity_channels > 0)
    frame.detections.identity.assign(static_cast<std::size_t>(bodyparts), {});
  for (int j = 0; j < bodyparts && record.ok(); ++j) {
    const auto count = record.get<std::int32_t>();
    if (count < 0 || count > 1'000'000) return false;
    for (std::int32_t i = 0; i < count && record.ok(); ++i) {
      Candidate c;
      c.bodypart = j;
      c.row = record.get<std::int32_t>();
      c.col = record.get<std::int32_t>();
      c.x = record.get<double>();
      c.y = record.get<double>();
      c.confidence = record.get<double>();
      frame.detections.candidates[static_cast<std::size_t>(j)].push_back(c);
    }
    if (shape.identity_channels > 0 && count > 0) {
      frame.detections.identity[static_cast<std::size_t>(j)] = record.get_doubles(
          static_cast<std::size_t>(count) * static_cast<std::size_t>(shape.identity_channels));
    }
  }
  frame.detections.costs.assign(static_cast<std::size_t>(shape.graph_edges), EdgeCosts{});
  for (const int e : shape.edges) {
    EdgeCosts& costs = frame.detections.costs[static_cast<std::size_t>(e)];
    costs.sources = record.get<std::int32_t>();
    costs.targets = record.get<std::int32_t>();
    if (!record.ok() || costs.sources < 0 || costs.targets < 0) return false;
    const auto cells =
        static_cast<std::size_t>(costs.sources) * static_cast<std::size_t>(costs.targets);
    costs.affinity = record.get_doubles(cells);
    costs.length = record.get_doubles(cells);
  }
  return record.ok();
}

// The next record's bytes from `in`; false at the end or at a torn record.
bool read_record(std::FILE* in, std::string& bytes) {
  std::uint64_t size = 0;
  if (std::fread(&size, sizeof size, 1, in) != 1 || size > (1ULL << 32)) return false;
  bytes.resize(size);
  return std::fread(bytes.data(), 1, size, in) == size;
}

}  // namespace

DetectionJournal::DetectionJournal(fs::path file, JournalShape shape)
    : file_(std::move(file)), shape_(std::move(shape)) {}

DetectionJournal::~DetectionJournal() {
  close();
}

std::int64_t DetectionJournal::open(const AnalysisIdentity& identity) {
  const std::string header =
      json{{"format", kJournalFormat},          {"identity", identity.to_json()},
           {"bodyparts", shape_.bodyparts},     {"edges", shape_.edges},
           {"graph_edges", shape_.graph_edges}, {"identity_channels", shape_.identity_channels}}
          .dump() +
      "\n";
  return open_resumable(
      file_, header, [&] { return whole_records(identity); }, header_bytes_, handle_);
}

void DetectionJournal::append(std::int64_t frame, double status,
                              const ImageDetections& detections) {
  const std::string record =
      encode(frame, status, detections, shape_.edges, shape_.identity_channels);
  const std::uint64_t size = record.size();
  if (std::fwrite(&size, sizeof size, 1, handle_) != 1 ||
      std::fwrite(record.data(), 1, record.size(), handle_) != record.size() ||
      std::fflush(handle_) != 0) {
    throw Error(fmt::format("cannot write {}: {}", file_.string(), describe_errno(errno, file_)),
                "free some disk space and run the same command again: it resumes here");
  }
}

void DetectionJournal::close() {
  if (handle_ != nullptr) std::fclose(handle_);
  handle_ = nullptr;
}

void DetectionJournal::for_each(const std::function<void(const JournalFrame&)>& use) const {
  const FileHandle in(std::fopen(file_.c_str(), "rb"), &std::fclose);
  if (!in || std::fseek(in.get(), static_cast<long>(header_bytes_), SEEK_SET) != 0) {
    throw Error(fmt::format("cannot read back {}", file_.string()),
                "run the same command again with --overwrite");
  }
  std::string bytes;
  JournalFrame frame;
  while (read_record(in.get(), bytes)) {
    if (!decode(bytes, shape_, frame)) {
      throw Error(fmt::format("{} is damaged (was it changed while analyzing?)", file_.string()),
                  "run the same command again with --overwrite");
    }
    use(frame);
  }
}

std::int64_t DetectionJournal::whole_records(const AnalysisIdentity& identity) {
  const json header = read_header_line(file_, header_bytes_);
  if (!header.is_discarded() && header.is_object() && header.contains("format") &&
      header.value("format", "") != kJournalFormat) {
    console::warn("{} was written by another version of labpose; starting this video again",
                  file_.string());
    return 0;
  }
  if (header.is_discarded() || !header.is_object() ||
      header.value("format", "") != kJournalFormat || !header.contains("identity") ||
      !identity.matches(header["identity"]) || header.value("bodyparts", -1) != shape_.bodyparts ||
      header.value("graph_edges", -1) != shape_.graph_edges || !header.contains("edges") ||
      header["edges"] != json(shape_.edges) ||
      header.value("identity_channels", -1) != shape_.identity_channels) {
    console::warn(
        "{} belongs to another analysis (video, model, crop or paf_best changed); starting "
        "this video again",
        file_.string());
    return 0;
  }
  const FileHandle in(std::fopen(file_.c_str(), "rb"), &std::fclose);
  if (!in || std::fseek(in.get(), static_cast<long>(header_bytes_), SEEK_SET) != 0) return 0;
  // Whole records in order from frame 0; the first torn or out-of-order one ends them.
  std::int64_t frames = 0;
  std::uintmax_t good_bytes = header_bytes_;
  std::string bytes;
  JournalFrame frame;
  while (frames < identity.frames && read_record(in.get(), bytes) && decode(bytes, shape_, frame) &&
         frame.index == frames) {
    ++frames;
    good_bytes += sizeof(std::uint64_t) + bytes.size();
  }
  std::error_code error;
  fs::resize_file(file_, good_bytes, error);
  if (error) return 0;
  return frames;
}

}  // namespace labpose::pipeline
