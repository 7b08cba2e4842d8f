// Numbers as text, exactly as Python and pandas write and read them: repr() of a float (shortest
// round trip, "1e-05", "265.0"), and locale-independent parsing. Shared by the YAML and CSV code.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace labpose::projects {

/// Python's repr(float): "0.95", "265.0", "1e-05", "1e+16", "nan", "inf", "-inf".
std::string python_float_repr(double value);

/// Parses a decimal or scientific number ("21.521", "-3", "1e-05", ".5", "nan", "inf"); nullopt if
/// `text` is not entirely a number. Leading/trailing spaces are not accepted.
std::optional<double> parse_double(std::string_view text);

}  // namespace labpose::projects
