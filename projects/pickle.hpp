// Python pickles of plain data — None, bools, ints, floats, strings, bytes, lists, tuples, dicts
// and numpy arrays — for the files DeepLabCut's Python tools load with pickle.load (_meta.pickle,
// Documentation_data-*.pickle, multi-animal training sets). Protocol 2, or 3 where bytes (and so
// arrays) need its BINBYTES. Writing only: labpose never unpickles (pickles can run code).
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
  static PyValue bytes(std::string raw);
  /// A module's global (a class or a function), and an object made by calling one.
  static PyValue global(std::string module, std::string name);
  static PyValue reduce(PyValue callable, PyValue arguments, PyValue state = PyValue());
  /// A numpy array as numpy pickles one (numpy.core.multiarray._reconstruct, then its state):
  /// `dtype` "f4" (float32) or "i8" (int64), little-endian values in C order.
  static PyValue float32_array(const std::vector<std::int64_t>& shape,
                               const std::vector<float>& values);
  static PyValue int64_array(const std::vector<std::int64_t>& shape,
                             const std::vector<std::int64_t>& values);
  /// The same with dtype "f8" (float64).
  static PyValue float64_array(const std::vector<std::int64_t>& shape,
                               const std::vector<double>& values);

  struct TupleItems {
    List items;
  };
  struct DictItems {
    Dict items;
  };
  struct Bytes {
    std::string raw;
  };
  /// callable(*arguments), then BUILD with `state` unless it is None: how objects are pickled.
  struct Global {
    std::string module, name;
  };
  struct Reduce {
    std::shared_ptr<PyValue> callable, arguments, state;
  };
  using Variant = std::variant<None, bool, std::int64_t, double, std::string, List, TupleItems,
                               DictItems, Bytes, Global, Reduce>;
  const Variant& variant() const { return value_; }

 private:
  Variant value_;
};

/// The pickle bytes of `value` (protocol 2: readable by every Python 3).
std::string pickle(const PyValue& value);

/// The opcodes of `value` alone, without the protocol header and STOP: pieces of a pickle too
/// large to build in memory at once (a dict streamed item by item). The writer keeps no memo, so
/// pieces join into one valid pickle behind a protocol 3 header.
std::string pickle_opcodes(const PyValue& value);

}  // namespace labpose::projects
