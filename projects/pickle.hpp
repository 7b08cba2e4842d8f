// Python pickles (protocol 2) of plain data — None, bools, ints, floats, strings, lists, tuples and
// dicts — for the files DeepLabCut's Python tools load with pickle.load (_meta.pickle,
// Documentation_data-*.pickle). Writing only: labpose never unpickles (pickles can run code).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace labpose::projects {

/// A Python value. Dicts keep insertion order (as Python's do).
class PyValue {
 public:
  struct None {};
  using List = std::vector<PyValue>;
  using Dict = std::vector<std::pair<PyValue, PyValue>>;

  PyValue() : value_(None{}) {}
  PyValue(bool value) : value_(value) {}                      // NOLINT: implicit for literals
  PyValue(int value) : value_(std::int64_t{value}) {}         // NOLINT
  PyValue(std::int64_t value) : value_(value) {}              // NOLINT
  PyValue(double value) : value_(value) {}                    // NOLINT
  PyValue(const char* value) : value_(std::string(value)) {}  // NOLINT
  PyValue(std::string value) : value_(std::move(value)) {}    // NOLINT
  PyValue(List value) : value_(std::move(value)) {}           // NOLINT
  static PyValue tuple(List items);
  static PyValue dict(Dict items);

  struct TupleItems {
    List items;
  };
  struct DictItems {
    Dict items;
  };
  using Variant =
      std::variant<None, bool, std::int64_t, double, std::string, List, TupleItems, DictItems>;
  const Variant& variant() const { return value_; }

 private:
  Variant value_;
};

/// The pickle bytes of `value` (protocol 2: readable by every Python 3).
std::string pickle(const PyValue& value);

}  // namespace labpose::projects
