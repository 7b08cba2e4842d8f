// The bytes in which read_table_hdf5's child process sends back what it read (a Table, a file
// format, or the Error it threw), and the Error when the child did not answer. Both ends are the
// same program, so this is not a file format: no versioning, native byte order.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "projects/child_process.hpp"
#include "projects/table.hpp"

namespace labpose::projects::wire {

std::string encode_table(const Table& table);
std::string encode_format(Hdf5Format format);
std::string encode_error(const Error& error);

/// The hint of every "damaged file" Error of the HDF5 reader.
extern const char* const kDamagedFileHint;

/// The Error for a child that read `file` and did not answer: it crashed (inside libhdf5: "is
/// damaged (the HDF5 library crashed reading it ...)"), ran past `deadline`, was killed or was
/// interrupted (kind interrupted).
Error failed_read(const std::filesystem::path& file, const ChildResult& result,
                  std::chrono::seconds deadline);

/// The table sent, or the Error sent thrown again.
Table decode_table(std::string_view bytes);
Hdf5Format decode_format(std::string_view bytes);

}  // namespace labpose::projects::wire
