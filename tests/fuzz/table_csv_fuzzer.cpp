// Fuzz harness for the CSV label/track reader (parse_table_csv): any bytes give a Table or an
// Error, never a crash, a hang or an unbounded allocation; a table that was read is written back
// and read again to the same table (the round trip the labeling server relies on).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/error.hpp"
#include "projects/table.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace projects = labpose::projects;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  projects::Table table;
  try {
    table = projects::parse_table_csv(text, "CollectedData_fuzz.csv");
  } catch (const labpose::Error&) {
    return 0;  // refused with a message: what a bad file must get
  }
  const std::string written = projects::table_to_csv(table);
  const projects::Table again = projects::parse_table_csv(written, "round-trip.csv");
  if (!projects::same_table(table, again)) __builtin_trap();
  return 0;
}
