// The restricted unpickler: a loop over opcodes with an explicit stack, a memo and a mark stack,
// all bounded; globals are checked against an allowlist when they are named, and REDUCE, NEWOBJ
// and BUILD only ever make dicts and tensor records (numpy data's arrays: numpy_pickle.cpp).
// Values live in one deque (stable addresses, no ownership cycles even when a hostile pickle makes
// a list contain itself).
#include "nets/restricted_unpickler.hpp"

#include <fmt/core.h>

#include <bit>
#include <cstring>
#include <unordered_map>

#include "core/error.hpp"
#include "core/printable.hpp"
#include "nets/numpy_pickle.hpp"

namespace labpose::nets {
namespace {

// Bounds that no state dict comes near (ResNet-50's pickle holds ~10,000 values) but that keep a
// hostile pickle from exhausting memory.
constexpr std::size_t kMaxValues = 1'000'000;  // ~200 bytes each
constexpr std::size_t kMaxStack = 1'000'000;
constexpr std::size_t kMaxMemo = 1'000'000;
constexpr std::size_t kMaxMarks = 1'000;  // nesting of MARK ... TUPLE/LIST/DICT
constexpr std::size_t kMaxGlobalName = 200;
constexpr std::size_t kMaxTensorDims = 64;

constexpr const char* kDamagedHint =
    "the file may be truncated, damaged or not a PyTorch checkpoint; re-save it with torch.save";

bool is_tensor(const PickleValue* value) {
  return value->kind == PickleKind::tensor;
}

class Unpickler final : public PickleBuilder {
 public:
  Unpickler(std::string_view bytes, std::size_t start, const PickleSource& source,
            const PersistentLoad& persistent_load, PickleContent content)
      : bytes_(bytes),
        position_(start),
        source_(source),
        persistent_load_(persistent_load),
        content_(content) {}

  Pickle run();

  [[noreturn]] void damaged(const std::string& what) const override {
    damaged_at(opcode_at_, what);
  }
  PickleValue* make(PickleKind kind) override {
    const bool data = content_ == PickleContent::numpy_data;
    if (pickle_.values.size() >= (data ? kMaxDataValues : kMaxValues)) {
      damaged(fmt::format("the pickle makes more than {} values, more than any {}",
                          data ? kMaxDataValues : kMaxValues,
                          data ? "analysis file" : "state dict"));
    }
    PickleValue& value = pickle_.values.emplace_back();
    value.kind = kind;
    return &value;
  }

 private:
  [[noreturn]] void damaged_at(std::size_t offset, const std::string& what) const {
    const std::string place =
        source_.part.empty() ? fmt::format("{}: byte {}", source_.file, offset)
                             : fmt::format("{}: {}: byte {}", source_.file, source_.part, offset);
    throw Error(fmt::format("{}: {}", place, what),
                content_ == PickleContent::numpy_data ? kDamagedDataHint : kDamagedHint);
  }

  std::string_view take(std::size_t count) {
    if (count > bytes_.size() - position_) {
      damaged(
          fmt::format("the pickle ends in the middle of an opcode (it needs {} more bytes, "
                      "{} are left)",
                      count, bytes_.size() - position_));
    }
    const std::string_view out = bytes_.substr(position_, count);
    position_ += count;
    return out;
  }
  std::uint64_t take_unsigned(std::size_t count) {  // little-endian
    const std::string_view raw = take(count);
    std::uint64_t value = 0;
    for (std::size_t i = count; i-- > 0;) value = (value << 8) | static_cast<unsigned char>(raw[i]);
    return value;
  }
  std::string_view take_line() {
    const std::size_t end = bytes_.find('\n', position_);
    if (end == std::string_view::npos || end - position_ > kMaxGlobalName) {
      damaged("a GLOBAL opcode without a module or name line of at most 200 bytes");
    }
    const std::string_view line = bytes_.substr(position_, end - position_);
    position_ = end + 1;
    return line;
  }
  std::size_t take_length(std::size_t count) {
    const std::uint64_t length = take_unsigned(count);
    if (length > bytes_.size() - position_) {
      damaged(fmt::format("a string or bytes of {} bytes, but only {} bytes are left", length,
                          bytes_.size() - position_));
    }
    return static_cast<std::size_t>(length);
  }

  void push(const PickleValue* value) {
    if (stack_.size() >= kMaxStack) damaged("the pickle's stack grows beyond a million values");
    stack_.push_back(value);
  }
  const PickleValue* pop() {
    if (stack_.size() <= stack_floor()) damaged("an opcode takes a value from an empty stack");
    const PickleValue* value = stack_.back();
    stack_.pop_back();
    return value;
  }
  const PickleValue* top() {
    if (stack_.size() <= stack_floor()) damaged("an opcode needs a value on an empty stack");
    return stack_.back();
  }
  std::size_t stack_floor() const { return marks_.empty() ? 0 : marks_.back(); }
  // The values pushed since the last MARK, which is removed.
  std::vector<const PickleValue*> pop_to_mark() {
    if (marks_.empty()) damaged("an opcode needs a MARK but there is none");
    const std::size_t mark = marks_.back();
    marks_.pop_back();
    std::vector<const PickleValue*> items(stack_.begin() + static_cast<std::ptrdiff_t>(mark),
                                          stack_.end());
    stack_.resize(mark);
    return items;
  }
  // The container below the values being added: a value made by this pickle, so writable.
  // An opaque object takes what is added to it (a pandas list subclass) and keeps it unread.
  PickleValue* container(const PickleValue* value, PickleKind kind, const char* opcode) {
    if (value->kind != kind && value->kind != PickleKind::object) {
      damaged(fmt::format("{} applies to {}, not to a {}", opcode, describe(*value),
                          kind == PickleKind::list ? "list" : "dict"));
    }
    return const_cast<PickleValue*>(value);  // every value lives in pickle_.values, non-const
  }
  void memo_put(std::uint64_t index) {
    if (memo_.size() >= kMaxMemo && !memo_.contains(index))
      damaged("the pickle's memo grows beyond a million values");
    memo_[index] = top();
  }
  void memo_get(std::uint64_t index) {
    const auto found = memo_.find(index);
    if (found == memo_.end()) damaged(fmt::format("memo entry {} is read before it is set", index));
    push(found->second);
  }
  std::int64_t small_integer(const PickleValue* value, const char* what) {
    if (value->kind != PickleKind::integer && value->kind != PickleKind::boolean) {
      damaged(fmt::format("the {} of a tensor is {}, not an integer", what, describe(*value)));
    }
    return value->kind == PickleKind::integer ? value->integer : value->boolean;
  }
  std::vector<std::int64_t> integer_tuple(const PickleValue* value, const char* what) {
    if (value->kind != PickleKind::tuple && value->kind != PickleKind::list)
      damaged(fmt::format("the {} of a tensor is {}, not a tuple", what, describe(*value)));
    if (value->items.size() > kMaxTensorDims)
      damaged(fmt::format("a tensor has {} dimensions, more than {}", value->items.size(),
                          kMaxTensorDims));
    std::vector<std::int64_t> out;
    for (const PickleValue* item : value->items) {
      const std::int64_t number = small_integer(item, what);
      if (number < 0) damaged(fmt::format("a tensor has the negative {} {}", what, number));
      out.push_back(number);
    }
    return out;
  }

  void global(const std::string& module, const std::string& name);
  const PickleValue* call(const PickleValue* function, const PickleValue* arguments);
  const PickleValue* rebuild_tensor(const std::vector<const PickleValue*>& arguments,
                                    const PickleValue* dtype);
  void step(unsigned char opcode);
  // The opcodes by kind; each returns false for an opcode not its own.
  bool step_value(unsigned char opcode);
  bool step_container(unsigned char opcode);
  bool step_object(unsigned char opcode);

  std::string_view bytes_;
  std::size_t position_;
  std::size_t opcode_at_ = 0;
  const PickleSource& source_;
  const PersistentLoad& persistent_load_;
  PickleContent content_;
  Pickle pickle_;
  std::vector<const PickleValue*> stack_;
  std::vector<std::size_t> marks_;
  std::unordered_map<std::uint64_t, const PickleValue*> memo_;
  bool stopped_ = false;
};

void Unpickler::global(const std::string& module, const std::string& name) {
  const std::string full = module + "." + name;
  const bool data = content_ == PickleContent::numpy_data;
  const auto allowed = data ? std::optional<AllowedGlobal>() : allowed_global(module, name);
  if (data ? !numpy_data_global(module, name) : !allowed) {
    const std::string place = source_.part.empty()
                                  ? fmt::format("byte {}", opcode_at_)
                                  : fmt::format("byte {} of {}", opcode_at_, source_.part);
    throw Error(fmt::format("{}: refuses to load: the {} asks for the Python global {}, which {} "
                            "({})",
                            source_.file, data ? "pickle" : "checkpoint", printable(full, 200),
                            data ? "DeepLabCut's pickles of numpy data never hold"
                                 : "a state dict never needs",
                            place),
                data ? "it may not be an analysis file, or it may be unsafe; load it only if you "
                       "trust it"
                     : "it may not be a weights file, or it may be unsafe; load it only if you "
                       "trust it, and re-save its state_dict with "
                       "torch.save(model.state_dict(), file)");
  }
  PickleValue* value = make(PickleKind::global);
  value->text = full;
  if (data) {
    push(value);
    return;
  }
  value->dtype = allowed->dtype;
  value->role = allowed->role;
  push(value);
}

const PickleValue* Unpickler::rebuild_tensor(const std::vector<const PickleValue*>& arguments,
                                             const PickleValue* dtype) {
  const PickleValue* storage = arguments[0];
  if (storage->kind != PickleKind::storage)
    damaged(fmt::format("a tensor is rebuilt from {}, not from a storage", describe(*storage)));
  PickleValue* tensor = make(PickleKind::tensor);
  tensor->tensor.storage = storage->storage;
  tensor->tensor.dtype = dtype != nullptr ? dtype->dtype : storage->dtype;
  tensor->tensor.offset = small_integer(arguments[1], "storage offset");
  if (tensor->tensor.offset < 0) damaged("a tensor has a negative storage offset");
  tensor->tensor.shape = integer_tuple(arguments[2], "size");
  tensor->tensor.stride = integer_tuple(arguments[3], "stride");
  if (tensor->tensor.shape.size() != tensor->tensor.stride.size()) {
    damaged(fmt::format("a tensor has {} sizes but {} strides", tensor->tensor.shape.size(),
                        tensor->tensor.stride.size()));
  }
  return tensor;
}

// What REDUCE (and NEWOBJ) make of an allowed function and its arguments.
const PickleValue* Unpickler::call(const PickleValue* function, const PickleValue* arguments) {
  // An opaque object "called" (pandas.MultiIndex.from_arrays got through getattr) stays opaque.
  if (content_ == PickleContent::numpy_data && function->kind == PickleKind::object)
    return make(PickleKind::object);
  if (function->kind != PickleKind::global)
    damaged(fmt::format("REDUCE calls {}, not a function", describe(*function)));
  if (arguments->kind != PickleKind::tuple)
    damaged(fmt::format("REDUCE's arguments are {}, not a tuple", describe(*arguments)));
  const std::string& name = function->text;
  const auto& items = arguments->items;
  if (content_ == PickleContent::numpy_data) return call_numpy(*this, name, items);
  const auto expect = [&](std::size_t low, std::size_t high) {
    if (items.size() < low || items.size() > high) {
      damaged(fmt::format("{} is called with {} arguments (expected {}{})", name, items.size(), low,
                          high == low ? "" : fmt::format(" to {}", high)));
    }
  };
  if (name == "collections.OrderedDict") {
    expect(0, 0);
    return make(PickleKind::dict);
  }
  if (name == "torch._utils._rebuild_tensor") {
    expect(4, 4);
    return rebuild_tensor(items, nullptr);
  }
  if (name == "torch._utils._rebuild_tensor_v2") {
    expect(6, 7);  // (storage, offset, size, stride, requires_grad, hooks[, metadata])
    return rebuild_tensor(items, nullptr);
  }
  if (name == "torch._utils._rebuild_tensor_v3") {
    expect(7, 8);  // (storage, offset, size, stride, requires_grad, hooks, dtype[, metadata])
    if (items[6]->kind != PickleKind::global || items[6]->role != GlobalRole::dtype) {
      damaged(fmt::format("_rebuild_tensor_v3's dtype is {}", describe(*items[6])));
    }
    return rebuild_tensor(items, items[6]);
  }
  if (name == "torch._utils._rebuild_parameter" ||
      name == "torch._utils._rebuild_parameter_with_state") {
    expect(name.ends_with("state") ? 4 : 3, name.ends_with("state") ? 4 : 3);
    if (!is_tensor(items[0]))
      damaged(fmt::format("a parameter is rebuilt from {}, not a tensor", describe(*items[0])));
    return items[0];
  }
  damaged(fmt::format("{} cannot be called", name));
}

void Unpickler::step(unsigned char opcode) {
  if (!step_value(opcode) && !step_container(opcode) && !step_object(opcode))
    damaged(fmt::format("unknown or unsupported pickle opcode 0x{:02x}", opcode));
}

bool Unpickler::step_value(unsigned char opcode) {
  switch (opcode) {
    case 0x80:  // PROTO
      if (const auto version = take_unsigned(1); version < 2 || version > 5)
        damaged(fmt::format("pickle protocol {} (torch.save writes 2 to 5)", version));
      return true;
    case 0x95:  // FRAME: a length hint only
      take_unsigned(8);
      return true;
    case '.':  // STOP
      stopped_ = true;
      return true;
    case '(':  // MARK
      if (marks_.size() >= kMaxMarks)
        damaged(fmt::format("the pickle nests deeper than {} levels", kMaxMarks));
      marks_.push_back(stack_.size());
      return true;
    case '0':  // POP
      pop();
      return true;
    case '1':  // POP_MARK
      pop_to_mark();
      return true;
    case '2':  // DUP
      push(top());
      return true;
    case 'N':
      push(make(PickleKind::none));
      return true;
    case 0x88:    // NEWTRUE
    case 0x89: {  // NEWFALSE
      PickleValue* value = make(PickleKind::boolean);
      value->boolean = opcode == 0x88;
      push(value);
      return true;
    }
    case 'J':    // BININT
    case 'K':    // BININT1
    case 'M': {  // BININT2
      PickleValue* value = make(PickleKind::integer);
      const std::uint64_t raw = take_unsigned(opcode == 'J' ? 4 : opcode == 'K' ? 1 : 2);
      value->integer = opcode == 'J' ? static_cast<std::int32_t>(static_cast<std::uint32_t>(raw))
                                     : static_cast<std::int64_t>(raw);
      push(value);
      return true;
    }
    case 0x8a:    // LONG1
    case 0x8b: {  // LONG4
      const std::size_t length = take_length(opcode == 0x8a ? 1 : 4);
      const std::string_view raw = take(length);
      PickleValue* value = make(length <= 8 ? PickleKind::integer : PickleKind::big_integer);
      if (length <= 8) {
        std::uint64_t bits = 0;
        for (std::size_t i = length; i-- > 0;)
          bits = (bits << 8) | static_cast<unsigned char>(raw[i]);
        if (length > 0 && length < 8 && (static_cast<unsigned char>(raw[length - 1]) & 0x80) != 0)
          bits |= ~std::uint64_t{0} << (8 * length);  // sign extension
        value->integer = static_cast<std::int64_t>(bits);
      } else {
        value->text = raw;
      }
      push(value);
      return true;
    }
    case 'G': {  // BINFLOAT, big-endian
      const std::string_view raw = take(8);
      std::uint64_t bits = 0;
      for (const char byte : raw) bits = (bits << 8) | static_cast<unsigned char>(byte);
      PickleValue* value = make(PickleKind::floating);
      value->floating = std::bit_cast<double>(bits);
      push(value);
      return true;
    }
    case 'X':     // BINUNICODE
    case 0x8c:    // SHORT_BINUNICODE
    case 0x8d:    // BINUNICODE8
    case 'T':     // BINSTRING (Python 2 str)
    case 'U':     // SHORT_BINSTRING
    case 'B':     // BINBYTES
    case 'C':     // SHORT_BINBYTES
    case 0x8e:    // BINBYTES8
    case 0x96: {  // BYTEARRAY8 (numpy's arrays in protocol 5)
      const std::size_t width = opcode == 0x8c || opcode == 'U' || opcode == 'C'     ? 1
                                : opcode == 0x8d || opcode == 0x8e || opcode == 0x96 ? 8
                                                                                     : 4;
      const bool is_bytes = opcode == 'B' || opcode == 'C' || opcode == 0x8e || opcode == 0x96;
      PickleValue* value = make(is_bytes ? PickleKind::bytes : PickleKind::text);
      value->text = take(take_length(width));
      push(value);
      return true;
    }
    default:
      return false;
  }
}

bool Unpickler::step_container(unsigned char opcode) {
  switch (opcode) {
    case ')':
      push(make(PickleKind::tuple));
      return true;
    case ']':
      push(make(PickleKind::list));
      return true;
    case '}':
      push(make(PickleKind::dict));
      return true;
    case 't':  // TUPLE
    case 'l':  // LIST
    {
      PickleValue* value = make(opcode == 't' ? PickleKind::tuple : PickleKind::list);
      value->items = pop_to_mark();
      push(value);
      return true;
    }
    case 0x85:    // TUPLE1
    case 0x86:    // TUPLE2
    case 0x87: {  // TUPLE3
      PickleValue* value = make(PickleKind::tuple);
      value->items.resize(opcode - 0x84U);
      for (std::size_t i = value->items.size(); i-- > 0;) value->items[i] = pop();
      push(value);
      return true;
    }
    case 'd': {  // DICT
      const auto items = pop_to_mark();
      if (items.size() % 2 != 0) damaged("DICT with an odd number of keys and values");
      PickleValue* value = make(PickleKind::dict);
      for (std::size_t i = 0; i < items.size(); i += 2)
        value->entries.emplace_back(items[i], items[i + 1]);
      push(value);
      return true;
    }
    case 'a': {  // APPEND
      const PickleValue* item = pop();
      container(top(), PickleKind::list, "APPEND")->items.push_back(item);
      return true;
    }
    case 'e': {  // APPENDS
      const auto items = pop_to_mark();
      PickleValue* list = container(top(), PickleKind::list, "APPENDS");
      list->items.insert(list->items.end(), items.begin(), items.end());
      return true;
    }
    case 's': {  // SETITEM
      const PickleValue* item = pop();
      const PickleValue* key = pop();
      container(top(), PickleKind::dict, "SETITEM")->entries.emplace_back(key, item);
      return true;
    }
    case 'u': {  // SETITEMS
      const auto items = pop_to_mark();
      if (items.size() % 2 != 0) damaged("SETITEMS with an odd number of keys and values");
      PickleValue* dict = container(top(), PickleKind::dict, "SETITEMS");
      for (std::size_t i = 0; i < items.size(); i += 2)
        dict->entries.emplace_back(items[i], items[i + 1]);
      return true;
    }
    case 'q':  // BINPUT
      memo_put(take_unsigned(1));
      return true;
    case 'r':  // LONG_BINPUT
      memo_put(take_unsigned(4));
      return true;
    case 0x94:  // MEMOIZE
      memo_put(memo_.size());
      return true;
    case 'h':  // BINGET
      memo_get(take_unsigned(1));
      return true;
    case 'j':  // LONG_BINGET
      memo_get(take_unsigned(4));
      return true;
    default:
      return false;
  }
}

bool Unpickler::step_object(unsigned char opcode) {
  switch (opcode) {
    case 'c': {  // GLOBAL
      const std::string module(take_line());
      const std::string name(take_line());
      global(module, name);
      return true;
    }
    case 0x93: {  // STACK_GLOBAL
      const PickleValue* name = pop();
      const PickleValue* module = pop();
      if (module->kind != PickleKind::text || name->kind != PickleKind::text)
        damaged("STACK_GLOBAL needs a module and a name");
      global(module->text, name->text);
      return true;
    }
    case 'R': {  // REDUCE
      const PickleValue* arguments = pop();
      const PickleValue* function = pop();
      push(call(function, arguments));
      return true;
    }
    case 0x81: {  // NEWOBJ: only OrderedDict is an allowed class (and pandas' in numpy_data)
      const PickleValue* arguments = pop();
      const PickleValue* type = pop();
      if (content_ == PickleContent::numpy_data && type->kind == PickleKind::global) {
        push(make(PickleKind::object));
        return true;
      }
      if (type->kind != PickleKind::global || type->text != "collections.OrderedDict")
        damaged(fmt::format("NEWOBJ makes an instance of {}", describe(*type)));
      push(call(type, arguments));
      return true;
    }
    case 'b': {  // BUILD: OrderedDict's attributes (_metadata) and tensor state carry no weights
      const PickleValue* state = pop();
      const PickleValue* object = top();
      if (object->kind == PickleKind::object) return true;
      if (object->kind == PickleKind::numpy_dtype || object->kind == PickleKind::array) {
        // every value lives in pickle_.values, non-const
        build_numpy(*this, *const_cast<PickleValue*>(object), *state);
        return true;
      }
      if (object->kind != PickleKind::dict && object->kind != PickleKind::tensor)
        damaged(fmt::format("BUILD sets the state of {}", describe(*object)));
      if (state->kind != PickleKind::dict && state->kind != PickleKind::none &&
          state->kind != PickleKind::tuple)
        damaged(fmt::format("BUILD with the state {}", describe(*state)));
      return true;
    }
    case 'Q': {  // BINPERSID
      const PickleValue* id = pop();
      if (!persistent_load_) damaged("a persistent id where none is expected");
      PersistentObject object = persistent_load_(*id, opcode_at_);
      PickleValue* value = make(object.tensor ? PickleKind::tensor : PickleKind::storage);
      if (object.tensor) value->tensor = std::move(*object.tensor);
      value->storage = object.storage;
      value->dtype = object.dtype;
      push(value);
      return true;
    }
    default:
      return false;
  }
}

Pickle Unpickler::run() {
  while (!stopped_) {
    opcode_at_ = position_;
    if (position_ >= bytes_.size()) damaged("the pickle ends before its STOP opcode");
    step(static_cast<unsigned char>(bytes_[position_++]));
  }
  if (stack_.empty()) damaged("STOP with an empty stack");
  pickle_.root = stack_.back();
  pickle_.end = position_;
  return std::move(pickle_);
}

const char* kind_name(PickleKind kind) {
  switch (kind) {
    case PickleKind::none:
      return "None";
    case PickleKind::boolean:
      return "a bool";
    case PickleKind::integer:
    case PickleKind::big_integer:
      return "an int";
    case PickleKind::floating:
      return "a float";
    case PickleKind::text:
      return "a string";
    case PickleKind::bytes:
      return "bytes";
    case PickleKind::tuple:
      return "a tuple";
    case PickleKind::list:
      return "a list";
    case PickleKind::dict:
      return "a dict";
    case PickleKind::global:
      return "the global";
    case PickleKind::storage:
      return "a storage";
    case PickleKind::tensor:
      return "a tensor";
    case PickleKind::numpy_dtype:
      return "a numpy dtype";
    case PickleKind::array:
      return "a numpy array";
    case PickleKind::object:
      return "a Python object";
  }
  return "a value";
}

}  // namespace

Pickle unpickle(std::string_view bytes, std::size_t start, const PickleSource& source,
                const PersistentLoad& persistent_load, PickleContent content) {
  LABPOSE_ASSERT(start <= bytes.size());
  return Unpickler(bytes, start, source, persistent_load, content).run();
}

std::string describe(const PickleValue& value) {
  switch (value.kind) {
    case PickleKind::global:
      return printable(value.text, 120);
    case PickleKind::tuple:
    case PickleKind::list:
      return fmt::format("{} of {} item{}", kind_name(value.kind), value.items.size(),
                         value.items.size() == 1 ? "" : "s");
    case PickleKind::dict: {
      if (value.entries.empty()) return "an empty dict";
      std::vector<std::string> keys;
      for (const auto& [key, item] : value.entries) {
        keys.push_back(key->kind == PickleKind::text      ? key->text
                       : key->kind == PickleKind::integer ? std::to_string(key->integer)
                                                          : kind_name(key->kind));
      }
      return fmt::format("a dict with the keys {}", printable_list(keys, 200));
    }
    default:
      return kind_name(value.kind);
  }
}

}  // namespace labpose::nets
