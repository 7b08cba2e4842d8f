// python_float_repr on top of std::to_chars' shortest round-trip digits, formatted by Python's rule
// (scientific notation when the decimal exponent is < -4 or >= 16).
#include "projects/number_text.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <system_error>

namespace labpose::projects {

std::string python_float_repr(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  if (value == 0) return std::signbit(value) ? "-0.0" : "0.0";

  // Shortest digits in scientific form, e.g. "2.5005599999999998e+02".
  char buffer[64];
  const auto result =
      std::to_chars(buffer, buffer + sizeof(buffer), value, std::chars_format::scientific);
  std::string scientific(buffer, result.ptr);
  const bool negative = scientific[0] == '-';
  if (negative) scientific.erase(0, 1);
  const std::size_t e = scientific.find('e');
  std::string digits = scientific.substr(0, e);
  digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());
  const int exponent = std::atoi(scientific.c_str() + e + 1);
  const int decimal_point = exponent + 1;  // value = 0.DIGITS x 10^decimal_point

  std::string out;
  if (negative) out.push_back('-');
  const auto point = static_cast<std::size_t>(std::max(decimal_point, 0));
  if (decimal_point > -4 && decimal_point <= 16) {
    if (decimal_point <= 0) {
      out.append("0.");
      out.append(static_cast<std::size_t>(-decimal_point), '0');
      out.append(digits);
    } else if (point >= digits.size()) {
      out.append(digits);
      out.append(point - digits.size(), '0');
      out.append(".0");
    } else {
      out.append(digits, 0, point);
      out.push_back('.');
      out.append(digits, point, std::string::npos);
    }
    return out;
  }
  out.push_back(digits[0]);
  if (digits.size() > 1) {
    out.push_back('.');
    out.append(digits, 1, std::string::npos);
  }
  const int shown_exponent = decimal_point - 1;
  out.append(shown_exponent < 0 ? "e-" : "e+");
  const int magnitude = std::abs(shown_exponent);
  if (magnitude < 10) out.push_back('0');
  out.append(std::to_string(magnitude));
  return out;
}

std::optional<double> parse_double(std::string_view text) {
  if (text.empty()) return std::nullopt;
  std::string_view body = text;
  bool negative = false;
  if (body.front() == '+' || body.front() == '-') {
    negative = body.front() == '-';
    body.remove_prefix(1);
  }
  auto lower = [](std::string_view s) {
    std::string out(s);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
  };
  const std::string word = lower(body);
  if (word == "nan" || word == ".nan") return std::nan("");
  if (word == "inf" || word == ".inf" || word == "infinity") {
    return negative ? -HUGE_VAL : HUGE_VAL;
  }
  if (body.empty() || body.front() == '+' || body.front() == '-') return std::nullopt;
  double value = 0;
  const auto result = std::from_chars(body.data(), body.data() + body.size(), value);
  if (result.ec != std::errc() || result.ptr != body.data() + body.size()) {
    // from_chars does not accept ".5" in every library version; retry with a leading zero.
    if (body.front() == '.') {
      const std::string padded = "0" + std::string(body);
      const auto retry = std::from_chars(padded.data(), padded.data() + padded.size(), value);
      if (retry.ec != std::errc() || retry.ptr != padded.data() + padded.size())
        return std::nullopt;
    } else {
      return std::nullopt;
    }
  }
  return negative ? -value : value;
}

}  // namespace labpose::projects
