// Pickling of PyValue: a direct opcode writer (no memo: the values are trees).
#include "projects/pickle.hpp"

#include <algorithm>
#include <bit>
#include <cstring>

namespace labpose::projects {
namespace {

void put_le(std::string& out, std::uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out += static_cast<char>((value >> (8 * i)) & 0xFF);
}

void write(std::string& out, const PyValue& value) {
  std::visit(
      [&out](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, PyValue::None>) {
          out += 'N';
        } else if constexpr (std::is_same_v<T, bool>) {
          out += v ? '\x88' : '\x89';  // NEWTRUE / NEWFALSE
        } else if constexpr (std::is_same_v<T, std::int64_t>) {
          if (v >= INT32_MIN && v <= INT32_MAX) {
            out += 'J';  // BININT: 4-byte signed little-endian
            put_le(out, static_cast<std::uint32_t>(static_cast<std::int32_t>(v)), 4);
          } else {
            out += '\x8a';  // LONG1: 8-byte two's complement
            out += '\x08';
            put_le(out, static_cast<std::uint64_t>(v), 8);
          }
        } else if constexpr (std::is_same_v<T, double>) {
          out += 'G';  // BINFLOAT: 8-byte big-endian
          const auto bits = std::bit_cast<std::uint64_t>(v);
          for (int i = 7; i >= 0; --i) out += static_cast<char>((bits >> (8 * i)) & 0xFF);
        } else if constexpr (std::is_same_v<T, std::string>) {
          out += 'X';  // BINUNICODE: 4-byte length + UTF-8
          put_le(out, v.size(), 4);
          out += v;
        } else if constexpr (std::is_same_v<T, PyValue::List>) {
          out += ']';  // EMPTY_LIST
          if (!v.empty()) {
            out += '(';  // MARK
            for (const auto& item : v) write(out, item);
            out += 'e';  // APPENDS
          }
        } else if constexpr (std::is_same_v<T, PyValue::TupleItems>) {
          out += '(';  // MARK
          for (const auto& item : v.items) write(out, item);
          out += 't';  // TUPLE
        } else if constexpr (std::is_same_v<T, PyValue::Bytes>) {
          out += 'B';  // BINBYTES (protocol 3): 4-byte length + raw bytes
          put_le(out, v.raw.size(), 4);
          out += v.raw;
        } else if constexpr (std::is_same_v<T, PyValue::Global>) {
          out += 'c';  // GLOBAL: module and name, each ended by a newline
          out += v.module + "\n" + v.name + "\n";
        } else if constexpr (std::is_same_v<T, PyValue::Reduce>) {
          write(out, *v.callable);
          write(out, *v.arguments);
          out += 'R';  // REDUCE
          if (!std::holds_alternative<PyValue::None>(v.state->variant())) {
            write(out, *v.state);
            out += 'b';  // BUILD
          }
        } else if constexpr (std::is_same_v<T, PyValue::DictItems>) {
          out += '}';  // EMPTY_DICT
          if (!v.items.empty()) {
            out += '(';
            for (const auto& [key, item] : v.items) {
              write(out, key);
              write(out, item);
            }
            out += 'u';  // SETITEMS
          }
        }
      },
      value.variant());
}

bool holds_bytes(const PyValue& value) {
  return std::visit(
      [](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, PyValue::Bytes>) {
          return true;
        } else if constexpr (std::is_same_v<T, PyValue::List>) {
          return std::any_of(v.begin(), v.end(), holds_bytes);
        } else if constexpr (std::is_same_v<T, PyValue::TupleItems>) {
          return std::any_of(v.items.begin(), v.items.end(), holds_bytes);
        } else if constexpr (std::is_same_v<T, PyValue::DictItems>) {
          return std::any_of(v.items.begin(), v.items.end(),
                             [](const auto& item) { return holds_bytes(item.second); });
        } else if constexpr (std::is_same_v<T, PyValue::Reduce>) {
          return holds_bytes(*v.arguments) || holds_bytes(*v.state);
        } else {
          return false;
        }
      },
      value.variant());
}

// numpy's own pickle of an array: _reconstruct(ndarray, (0,), b'b'), then the state (version 1,
// shape, dtype, Fortran order, the raw values); the dtype is dtype(code, False, True) with its
// state (version 3, byte order, ...).
PyValue numpy_array(const std::vector<std::int64_t>& shape, const char* code, std::string raw) {
  PyValue::List dims;
  for (const std::int64_t d : shape) dims.emplace_back(d);
  PyValue dtype =
      PyValue::reduce(PyValue::global("numpy", "dtype"), PyValue::tuple({code, false, true}),
                      PyValue::tuple({3, "<", PyValue(), PyValue(), PyValue(), -1, -1, 0}));
  return PyValue::reduce(PyValue::global("numpy.core.multiarray", "_reconstruct"),
                         PyValue::tuple({PyValue::global("numpy", "ndarray"), PyValue::tuple({0}),
                                         PyValue::bytes("b")}),
                         PyValue::tuple({1, PyValue::tuple(std::move(dims)), std::move(dtype),
                                         false, PyValue::bytes(std::move(raw))}));
}

template <typename T>
std::string little_endian_bytes(const std::vector<T>& values) {
  static_assert(std::endian::native == std::endian::little, "pickled arrays are little-endian");
  std::string raw(values.size() * sizeof(T), '\0');
  if (!values.empty()) std::memcpy(raw.data(), values.data(), raw.size());
  return raw;
}

}  // namespace

PyValue PyValue::bytes(std::string raw) {
  PyValue value;
  value.value_ = Bytes{std::move(raw)};
  return value;
}

PyValue PyValue::global(std::string module, std::string name) {
  PyValue value;
  value.value_ = Global{std::move(module), std::move(name)};
  return value;
}

PyValue PyValue::reduce(PyValue callable, PyValue arguments, PyValue state) {
  PyValue value;
  value.value_ = Reduce{std::make_shared<PyValue>(std::move(callable)),
                        std::make_shared<PyValue>(std::move(arguments)),
                        std::make_shared<PyValue>(std::move(state))};
  return value;
}

PyValue PyValue::float32_array(const std::vector<std::int64_t>& shape,
                               const std::vector<float>& values) {
  return numpy_array(shape, "f4", little_endian_bytes(values));
}

PyValue PyValue::int64_array(const std::vector<std::int64_t>& shape,
                             const std::vector<std::int64_t>& values) {
  return numpy_array(shape, "i8", little_endian_bytes(values));
}

PyValue PyValue::float64_array(const std::vector<std::int64_t>& shape,
                               const std::vector<double>& values) {
  return numpy_array(shape, "f8", little_endian_bytes(values));
}

PyValue PyValue::tuple(List items) {
  PyValue value;
  value.value_ = TupleItems{std::move(items)};
  return value;
}

PyValue PyValue::dict(Dict items) {
  PyValue value;
  value.value_ = DictItems{std::move(items)};
  return value;
}

std::string pickle(const PyValue& value) {
  std::string out = holds_bytes(value) ? "\x80\x03" : "\x80\x02";  // PROTO 3 for BINBYTES
  write(out, value);
  out += '.';  // STOP
  return out;
}

std::string pickle_opcodes(const PyValue& value) {
  std::string out;
  write(out, value);
  return out;
}

}  // namespace labpose::projects
