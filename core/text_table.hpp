// Rows of cells printed as a plain-text table for the console: each column as wide as its widest
// cell, two spaces between columns, no trailing spaces. Cells are shown as given.
#pragma once

#include <string>
#include <vector>

namespace labpose {

/// The rows as lines (each ending in '\n'), the columns padded to line up.
std::string text_table(const std::vector<std::vector<std::string>>& rows);

}  // namespace labpose
