// The resumable record of a multi-animal video's analysis: a JSON header line (format, what the
// analysis is made from, the bodyparts, the graph edges kept and the identity channels), then per
// frame what the network found (every candidate with the identity head's values at it, and the
// costs of the edges assembly links through), appended and
// flushed frame by frame. An interrupted video resumes after its last whole record; the final
// files (_full.pickle, _assemblies.pickle, tracks) are written from it, and it is removed once
// they are. labpose's own format; not the single-animal checkpoint (checkpoint.hpp).
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <vector>

#include "pipeline/analysis/checkpoint.hpp"
#include "pipeline/assembly/assemble.hpp"

namespace labpose::pipeline {

/// One frame of the journal. detections.costs has one entry per edge of the model's graph; only
/// the journal's edges hold values, the others are empty (0 x 0). detections.identity is empty
/// without identity channels.
struct JournalFrame {
  std::int64_t index = 0;
  double status = kRowOk;  // kRowOk, kRowDamaged or kRowUndecodable (no candidates then)
  ImageDetections detections;
};

/// What every record of a journal holds: `bodyparts` bodyparts' candidates, with
/// `identity_channels` identity values each (0 without an identity head), and the costs of `edges`
/// (indices into a graph of `graph_edges` edges).
struct JournalShape {
  int bodyparts = 0;
  std::vector<int> edges;
  int graph_edges = 0;
  int identity_channels = 0;
};

class DetectionJournal {
 public:
  /// A journal at `file` of records of `shape`.
  DetectionJournal(std::filesystem::path file, JournalShape shape);
  ~DetectionJournal();
  DetectionJournal(const DetectionJournal&) = delete;
  DetectionJournal& operator=(const DetectionJournal&) = delete;

  /// Opens the file for appending and returns the frames already recorded in a journal made for
  /// `identity` with the same bodyparts and edges; 0 when there is none or it is another
  /// analysis's (then it is replaced). A torn last record is cut off. Throws Error naming the file
  /// when it cannot be written.
  std::int64_t open(const AnalysisIdentity& identity);
  /// Appends frame `frame`'s record and flushes; throws Error when the disk is full.
  void append(std::int64_t frame, double status, const ImageDetections& detections);
  void close();

  /// Calls `use` with every recorded frame, in order. Throws Error when the file cannot be read.
  void for_each(const std::function<void(const JournalFrame&)>& use) const;

 private:
  std::int64_t whole_records(const AnalysisIdentity& identity);

  std::filesystem::path file_;
  JournalShape shape_;
  std::uintmax_t header_bytes_ = 0;
  std::FILE* handle_ = nullptr;
};

}  // namespace labpose::pipeline
