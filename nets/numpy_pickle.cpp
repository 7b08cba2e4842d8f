// numpy's globals, and the arrays and dtypes its reconstructors make, for the restricted
// unpickler's numpy-data mode. Nothing is called: the arguments are read as numpy would use them.
#include "nets/numpy_pickle.hpp"

#include <fmt/core.h>

#include <cstring>

namespace labpose::nets {
namespace {

constexpr std::size_t kMaxArrayDims = 64;

const PickleValue* numpy_dtype(PickleBuilder& builder, const PickleValue* value, const char* what) {
  if (value->kind != PickleKind::numpy_dtype)
    builder.damaged(fmt::format("the dtype of {} is {}", what, describe(*value)));
  return value;
}

// An array's shape: a tuple of sizes.
std::vector<std::int64_t> shape_of(PickleBuilder& builder, const PickleValue* value) {
  if (value->kind != PickleKind::tuple && value->kind != PickleKind::list)
    builder.damaged(fmt::format("the shape of an array is {}, not a tuple", describe(*value)));
  if (value->items.size() > kMaxArrayDims)
    builder.damaged(fmt::format("an array has {} dimensions, more than {}", value->items.size(),
                                kMaxArrayDims));
  std::vector<std::int64_t> shape;
  for (const PickleValue* item : value->items) {
    if (item->kind != PickleKind::integer || item->integer < 0)
      builder.damaged(fmt::format("an array's shape holds {}, not a size", describe(*item)));
    shape.push_back(item->integer);
  }
  return shape;
}

}  // namespace

bool numpy_data_global(const std::string& module, const std::string& name) {
  if (module == "numpy") return name == "dtype" || name == "ndarray";
  if (module == "numpy.core.multiarray" || module == "numpy._core.multiarray")
    return name == "_reconstruct" || name == "scalar";
  if (module == "numpy.core.numeric" || module == "numpy._core.numeric")
    return name == "_frombuffer";
  if (module == "builtins") return name == "getattr";
  return module == "pandas" || module.starts_with("pandas.");
}

// numpy's reconstructors; every other allowed global (pandas') makes an opaque object.
const PickleValue* call_numpy(PickleBuilder& builder, const std::string& name,
                              const std::vector<const PickleValue*>& items) {
  const auto expect = [&](std::size_t count) {
    if (items.size() != count)
      builder.damaged(
          fmt::format("{} is called with {} arguments (expected {})", name, items.size(), count));
  };
  if (name == "numpy.dtype") {  // ("f8", False, True), then BUILD sets the byte order
    expect(3);
    if (items[0]->kind != PickleKind::text)
      builder.damaged(fmt::format("numpy.dtype of {}", describe(*items[0])));
    PickleValue* dtype = builder.make(PickleKind::numpy_dtype);
    dtype->text = "|" + items[0]->text;
    return dtype;
  }
  if (name.ends_with("multiarray._reconstruct")) {  // (ndarray, (0,), b"b"), then BUILD
    expect(3);
    return builder.make(PickleKind::array);
  }
  if (name.ends_with("numeric._frombuffer")) {  // (buffer, dtype, shape, order)
    expect(4);
    if (items[0]->kind != PickleKind::bytes)
      builder.damaged(fmt::format("an array's buffer is {}, not bytes", describe(*items[0])));
    PickleValue* array = builder.make(PickleKind::array);
    array->array.data = items[0]->text;
    array->array.dtype = numpy_dtype(builder, items[1], "an array")->text;
    array->array.shape = shape_of(builder, items[2]);
    array->array.fortran = items[3]->kind == PickleKind::text && items[3]->text == "F";
    return array;
  }
  if (name.ends_with("multiarray.scalar")) {  // (dtype, bytes): a numpy number
    expect(2);
    const std::string& dtype = numpy_dtype(builder, items[0], "a number")->text;
    const std::string& raw = items[1]->text;
    PickleValue* number = builder.make(PickleKind::integer);
    if ((dtype.ends_with("i8") || dtype.ends_with("u8")) && raw.size() == 8) {
      std::memcpy(&number->integer, raw.data(), 8);
    } else if (dtype.ends_with("i4") && raw.size() == 4) {
      std::int32_t value = 0;
      std::memcpy(&value, raw.data(), 4);
      number->integer = value;
    } else if (dtype.ends_with("f8") && raw.size() == 8) {
      number->kind = PickleKind::floating;
      std::memcpy(&number->floating, raw.data(), 8);
    } else {
      number->kind = PickleKind::object;
    }
    return number;
  }
  return builder.make(PickleKind::object);
}

// BUILD on what numpy_data makes: a dtype's byte order, an array's shape, dtype and bytes.
void build_numpy(PickleBuilder& builder, PickleValue& object, const PickleValue& state) {
  if (object.kind == PickleKind::numpy_dtype) {
    // (3, "<", None, None, None, -1, -1, 0)
    if (state.kind == PickleKind::tuple && state.items.size() > 1 &&
        state.items[1]->kind == PickleKind::text && state.items[1]->text.size() == 1)
      object.text[0] = state.items[1]->text[0];
    return;
  }
  // (version, shape, dtype, is_fortran, data), or the same without the version
  if (state.kind != PickleKind::tuple || state.items.size() < 4)
    builder.damaged(fmt::format("an array's state is {}", describe(state)));
  const std::size_t first = state.items.size() - 4;
  object.array.shape = shape_of(builder, state.items[first]);
  object.array.dtype = numpy_dtype(builder, state.items[first + 1], "an array")->text;
  const PickleValue* fortran = state.items[first + 2];
  object.array.fortran =
      fortran->kind == PickleKind::boolean ? fortran->boolean : fortran->integer != 0;
  const PickleValue* data = state.items[first + 3];
  if (data->kind == PickleKind::bytes || data->kind == PickleKind::text)
    object.array.data = data->text;  // not for arrays of Python objects (a list)
}

}  // namespace labpose::nets
