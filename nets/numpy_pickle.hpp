// The numpy-data mode of the restricted unpickler: which Python globals DeepLabCut's pickles of
// numpy data (_full, _assemblies, _el) may name, and the numpy arrays and dtypes that REDUCE and
// BUILD reconstruct from their arguments. Not the opcode loop (restricted_unpickler.cpp) and not
// torch's tensors; internal to nets/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "nets/restricted_unpickler.hpp"

namespace labpose::nets {

/// DeepLabCut's tracklets of an hour of five animals make about 4 million values.
constexpr std::size_t kMaxDataValues = 20'000'000;

constexpr const char* kDamagedDataHint =
    "the file may be truncated, damaged or not one of DeepLabCut's pickles of numpy data; make it "
    "again with the step that writes it";

/// What reconstructing a value needs of the unpickler running: a new value of its pickle, and an
/// error that names the file and the opcode being run.
class PickleBuilder {
 public:
  virtual PickleValue* make(PickleKind kind) = 0;
  [[noreturn]] virtual void damaged(const std::string& what) const = 0;

 protected:
  ~PickleBuilder() = default;
};

/// Whether a pickle of numpy data may name `module`.`name`: numpy's array and dtype
/// reconstructors (numpy 1 and 2), builtins.getattr, and pandas' (kept opaque: the header of
/// DeepLabCut's tracklets is a pandas MultiIndex).
bool numpy_data_global(const std::string& module, const std::string& name);

/// What REDUCE makes of the allowed global `name` called with `arguments`: a dtype, an array, a
/// numpy number, or an opaque object for every other allowed global (pandas').
const PickleValue* call_numpy(PickleBuilder& builder, const std::string& name,
                              const std::vector<const PickleValue*>& arguments);

/// BUILD on a dtype (its byte order) or an array (its shape, dtype, order and bytes) with `state`.
void build_numpy(PickleBuilder& builder, PickleValue& object, const PickleValue& state);

}  // namespace labpose::nets
