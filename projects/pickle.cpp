// Protocol-2 pickling of PyValue: a direct opcode writer (no memo: the values are trees).
#include "projects/pickle.hpp"

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

}  // namespace

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
  std::string out = "\x80\x02";  // PROTO 2
  write(out, value);
  out += '.';  // STOP
  return out;
}

}  // namespace labpose::projects
