// A restricted unpickler for PyTorch checkpoints and for DeepLabCut's pickles of numpy data: the
// pickle opcodes torch.save and pickle.dump emit (protocols 2-5), Python globals limited to what a
// state dict needs (OrderedDict, torch's tensor and parameter rebuild functions, storage types,
// dtypes) or what numpy arrays need (pandas objects are kept opaque), bounded stack, memo, nesting
// and size. It never executes anything: REDUCE builds dicts, tensor records and array records. Not
// a general unpickler.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "nets/torch_globals.hpp"

namespace labpose::nets {

/// A tensor as torch rebuilds it: a view of a storage, in elements of `dtype`.
struct TensorRecord {
  std::size_t storage = 0;  // what PersistentLoad returned for the storage
  TorchDtype dtype = TorchDtype::float32;
  std::int64_t offset = 0;  // storage_offset, in elements
  std::vector<std::int64_t> shape, stride;
};

enum class PickleKind {
  none,
  boolean,
  integer,
  big_integer,  // more than 64 bits; `text` holds its little-endian two's complement bytes
  floating,
  text,
  bytes,
  tuple,
  list,
  dict,     // dict and collections.OrderedDict, entries in insertion order
  global,   // an allowed Python global (a function, storage type or dtype); `text` is its name
  storage,  // a storage from a persistent id
  tensor,
  numpy_dtype,  // numpy_data: a numpy.dtype; `text` is its byte order and code, e.g. "<f8"
  array,        // numpy_data: a numpy array
  object,       // numpy_data: anything else a pandas global makes, kept opaque
};

/// A numpy array as pickled: its bytes in C (or, when `fortran`, Fortran) order. Arrays of Python
/// objects keep no bytes.
struct ArrayRecord {
  std::string dtype;  // byte order and code: "<f8", "<f4", "|i1", "|O"
  std::vector<std::int64_t> shape;
  bool fortran = false;
  std::string data;
};

/// What a pickle is expected to hold, which sets the globals it may name.
enum class PickleContent {
  torch_checkpoint,  // a state dict: torch's globals
  numpy_data,        // dicts, lists and numpy arrays (numpy's globals; pandas' kept opaque)
};

struct PickleValue {
  PickleKind kind = PickleKind::none;
  bool boolean = false;
  std::int64_t integer = 0;
  double floating = 0.0;
  std::string text;                                                        // text, bytes, global
  std::vector<const PickleValue*> items;                                   // tuple, list
  std::vector<std::pair<const PickleValue*, const PickleValue*>> entries;  // dict
  std::size_t storage = 0;                                                 // storage
  TorchDtype dtype = TorchDtype::other;    // storage; global storage type or dtype
  GlobalRole role = GlobalRole::function;  // global
  TensorRecord tensor;                     // tensor
  ArrayRecord array;                       // array
};

/// The values of one pickle; `root` and every value it reaches live as long as this object.
struct Pickle {
  std::deque<PickleValue> values;
  const PickleValue* root = nullptr;
  std::size_t end = 0;  // the offset just after the STOP opcode
};

/// Where the pickle lies, for messages: "<file>: byte N" or "<file>: <part>: byte N".
struct PickleSource {
  std::string file;
  std::string part;  // e.g. "archive/data.pkl"; empty when offsets are offsets in the file
};

/// What a persistent id stands for: a storage (TensorRecord::storage numbers it), or in the tar
/// format of torch < 0.4 a whole tensor.
struct PersistentObject {
  std::size_t storage = 0;
  TorchDtype dtype = TorchDtype::other;
  std::optional<TensorRecord> tensor;
};

/// Turns a persistent id (torch's ('storage', type, key, location, numel[, view]) tuple, or a key)
/// into the object it stands for, or throws an Error. `offset` is where the id is, for messages.
using PersistentLoad = std::function<PersistentObject(const PickleValue& id, std::size_t offset)>;

/// Unpickles the pickle at `bytes[start...]` up to its STOP. Errors name the source and byte
/// offset (truncated, unknown opcode, malformed stack, limits); a global outside the allowed set
/// is refused with a message naming it. `persistent_load` may be empty: persistent ids are then
/// errors. `content` sets the globals allowed, and the limits and messages.
Pickle unpickle(std::string_view bytes, std::size_t start, const PickleSource& source,
                const PersistentLoad& persistent_load,
                PickleContent content = PickleContent::torch_checkpoint);

/// A short description of `value` for messages: "a dict with keys epoch, arch", "an int", ...
std::string describe(const PickleValue& value);

}  // namespace labpose::nets
