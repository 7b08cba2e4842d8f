// The videos one analysis job works on: files and folders given on the command line as one sorted
// list without duplicates, and this job's shard of it (every n-th from the i-th, for cluster array
// jobs). Not probing or reading the videos.
#pragma once

#include <filesystem>
#include <vector>

namespace labpose::pipeline {

/// Videos and folders (their videos, sorted) as one sorted list without duplicates; then this
/// shard's part. Throws UsageError for a shard outside 0 <= shard_index < shard_count, and Error
/// naming a path that is neither, or a folder without videos.
std::vector<std::filesystem::path> videos_to_analyze(
    const std::vector<std::filesystem::path>& inputs, int shard_index, int shard_count);

}  // namespace labpose::pipeline
