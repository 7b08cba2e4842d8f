// The bytes in which read_table_hdf5's child process sends back what it read: a Table, a file
// format, or the Error it threw. Both ends are the same program, so this is not a file format:
// no versioning, native byte order.
#pragma once

#include <string>
#include <string_view>

#include "core/error.hpp"
#include "projects/table.hpp"

namespace labpose::projects::wire {

std::string encode_table(const Table& table);
std::string encode_format(Hdf5Format format);
std::string encode_error(const Error& error);

/// The table sent, or the Error sent thrown again.
Table decode_table(std::string_view bytes);
Hdf5Format decode_format(std::string_view bytes);

}  // namespace labpose::projects::wire
