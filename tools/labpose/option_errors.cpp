// Wording of CLI11's parse errors (see option_errors.hpp).
#include "tools/labpose/option_errors.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <regex>
#include <string_view>
#include <vector>

#include "core/printable.hpp"

namespace labpose::tools {
namespace {

// Values longer than this are described ("a 300-digit number"), not echoed.
constexpr std::size_t kLongestShownValue = 24;

// Decimal numbers as the options accept them: no hexadecimal, no nan or inf.
const std::regex& whole_number() {
  static const std::regex pattern("[+-]?[0-9]+");
  return pattern;
}
const std::regex& decimal_number() {
  static const std::regex pattern(R"([+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?)");
  return pattern;
}

// A value from the command line as a message may show it.
std::string shown_value(const std::string& value) {
  const bool number = std::regex_match(value, decimal_number());
  if (value.size() <= kLongestShownValue) {
    return number ? value : "\"" + printable(value, 120) + "\"";
  }
  if (std::regex_match(value, whole_number())) {
    const std::size_t digits = value.find_first_of("0123456789");
    return fmt::format("a {}-digit {}number", value.size() - digits,
                       value.starts_with('-') ? "negative " : "");
  }
  return fmt::format("a {}-character {}", value.size(), number ? "number" : "value");
}

// Any run of more digits than a value is shown with, in a message CLI11 wrote itself.
std::string shorten_numbers(const std::string& text) {
  static const std::regex long_number("[0-9]{25,}");
  std::string out;
  auto last = text.cbegin();
  for (auto it = std::sregex_iterator(text.begin(), text.end(), long_number);
       it != std::sregex_iterator(); ++it) {
    out.append(last, text.cbegin() + it->position());
    out += fmt::format("<a {}-digit number>", it->length());
    last = text.cbegin() + it->position() + it->length();
  }
  out.append(last, text.cend());
  return printable(out, 400);
}

// The subcommands given on the command line, outermost first (`labpose net forward`: net, forward).
std::vector<const CLI::App*> command_chain(const CLI::App& root) {
  std::vector<const CLI::App*> chain{&root};
  while (!chain.back()->get_subcommands().empty())
    chain.push_back(chain.back()->get_subcommands().front());
  return chain;
}

// What a numeric option accepts, read from CLI11's type name of it ("INT:INT in [0 - 65535]",
// "FLOAT:POSITIVE", "UINT": the C++ type and the description of the command's own check).
struct NumberRule {
  bool whole = false, is_unsigned = false;
  std::optional<double> low, high;  // inclusive
  bool above_zero = false;          // a positive floating-point number: low is exclusive
};

std::optional<NumberRule> number_rule(const std::string& type) {
  const std::string base = type.substr(0, type.find(':'));
  if (base != "INT" && base != "UINT" && base != "FLOAT") return std::nullopt;
  NumberRule rule;
  rule.whole = base != "FLOAT";
  rule.is_unsigned = base == "UINT";
  if (rule.is_unsigned) rule.low = 0;
  static const std::regex bounds(R"(in \[([^ ]+) - ([^\]]+)\])");
  std::smatch range;
  if (std::regex_search(type, range, bounds)) {
    rule.low = std::strtod(range[1].str().c_str(), nullptr);
    rule.high = std::strtod(range[2].str().c_str(), nullptr);
  } else if (type.find("NONNEGATIVE") != std::string::npos) {
    rule.low = 0;
  } else if (type.find("POSITIVE") != std::string::npos) {
    rule.low = rule.whole ? 1 : 0;
    rule.above_zero = !rule.whole;
  }
  return rule;
}

// "a whole number from 0 to 65535", "a number greater than 0", ...
std::string accepted(const NumberRule& rule) {
  std::string kind = rule.whole ? "a whole number" : "a number";
  if (rule.low && rule.high) return fmt::format("{} from {} to {}", kind, *rule.low, *rule.high);
  if (rule.above_zero) return kind + " greater than 0";
  if (rule.low) return fmt::format("{} of {} or more", kind, *rule.low);
  return kind;
}

// Whether `input` is a plain decimal number the rule accepts; a whole number is rewritten without
// leading zeros or a plus sign (CLI11 reads "010" as octal).
bool accepts(const NumberRule& rule, std::string& input) {
  double value = 0;
  if (!rule.whole) {
    if (!std::regex_match(input, decimal_number())) return false;
    value = std::strtod(input.c_str(), nullptr);
    if (!std::isfinite(value)) return false;
  } else {
    if (!std::regex_match(input, whole_number())) return false;
    const bool negative = input.front() == '-';
    std::string digits = input.substr(input.front() == '-' || input.front() == '+' ? 1 : 0);
    digits.erase(0, std::min(digits.find_first_not_of('0'), digits.size() - 1));
    const std::string normalized = (negative && digits != "0" ? "-" : "") + digits;
    const char* end = normalized.data() + normalized.size();
    std::from_chars_result parsed{};
    if (rule.is_unsigned) {
      std::uint64_t whole = 0;
      parsed = std::from_chars(normalized.data(), end, whole);
      value = static_cast<double>(whole);
    } else {
      std::int64_t whole = 0;
      parsed = std::from_chars(normalized.data(), end, whole);
      value = static_cast<double>(whole);
    }
    if (parsed.ec != std::errc() || parsed.ptr != end) return false;
    input = normalized;
  }
  if (rule.low && (value < *rule.low || (rule.above_zero && value <= 0))) return false;
  return !rule.high || value <= *rule.high;
}

}  // namespace

void check_numbers(CLI::App& app) {
  for (CLI::Option* option : app.get_options()) {
    if (option->get_type_size() == 0) continue;  // a flag
    const std::optional<NumberRule> rule = number_rule(option->get_type_name());
    if (!rule) continue;
    // CLI11 converts whole numbers with strtoll/strtoull in base 0 without checking for overflow
    // of 64-bit values or a sign on unsigned ones ("010" was 8, "-1" an unsigned 2^64-1, a
    // 300-digit number the largest value), and its ranges let nan and inf through. This check
    // (after the command's own, which it repeats on the decimal value) refuses those in the
    // words of a range error, which describe_parse_error() turns into a sentence.
    option->check(CLI::Validator(
        [rule = *rule](std::string& input) {
          return accepts(rule, input) ? std::string() : "Value " + input + " not in range";
        },
        "", "plain number"));
  }
  for (CLI::App* command : app.get_subcommands({})) check_numbers(*command);
}

std::string describe_parse_error(const CLI::App& root, const CLI::Error& error) {
  const std::vector<const CLI::App*> chain = command_chain(root);
  std::string command = "labpose";
  for (std::size_t i = 1; i < chain.size(); ++i) command += " " + chain[i]->get_name();
  const std::string hint = fmt::format("see `{} --help`", command);

  // The option and value of a conversion ("Could not convert: --num = 1e999") or range
  // ("--port: Value 70000 not in range 0 to 65535") error.
  const std::string message = error.what();
  static const std::regex conversion(R"(^Could not convert: (\S+) = ([\s\S]*)$)");
  static const std::regex out_of_range(R"(^(\S+): Value ([\s\S]*) not in range( [\s\S]*)?$)");
  std::smatch match;
  if (std::regex_match(message, match, conversion) ||
      std::regex_match(message, match, out_of_range)) {
    const std::string name = match[1].str(), value = match[2].str();
    for (auto app = chain.rbegin(); app != chain.rend(); ++app) {
      const CLI::Option* option = (*app)->get_option_no_throw(name);
      if (option == nullptr) continue;
      const std::optional<NumberRule> rule = number_rule(option->get_type_name());
      if (!rule) break;
      // A whole number within the stated bounds (or with none) that was still refused does not
      // fit the option's type (or 64 bits).
      std::string note;
      if (std::regex_match(value, whole_number())) {
        const long double number = std::strtold(value.c_str(), nullptr);
        const bool in_bounds = (!rule->low || number >= *rule->low) &&
                               (!rule->high || number <= *rule->high) &&
                               !(rule->above_zero && number <= 0);
        if (in_bounds) note = number < 0 ? ", too small" : ", too large";
      }
      return fmt::format("error: {} must be {} (found {}{})\nhint: {}\n", name, accepted(*rule),
                         shown_value(value), note, hint);
    }
  }
  return fmt::format("error: {}\nhint: {}\n", shorten_numbers(message), hint);
}

}  // namespace labpose::tools
