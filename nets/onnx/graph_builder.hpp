// Internal to nets/onnx: a small helper that adds nodes and initializers to an onnx::GraphProto
// under unique names. Not a general ONNX builder: float32 and int64 tensors only, no subgraphs.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace labpose::nets::onnx_export {

class GraphBuilder {
 public:
  /// Adds to `graph` (not owned; it outlives the builder).
  explicit GraphBuilder(onnx::GraphProto& graph) : graph_(graph) {}

  /// `base`, or `base` with a number appended, whichever is not taken yet; reserves it.
  std::string unique_name(const std::string& base);

  /// Adds a node of `op_type` reading `inputs` and writing the value `output` (a name from
  /// unique_name); returns the node for its attributes.
  onnx::NodeProto& node(const std::string& op_type, const std::vector<std::string>& inputs,
                        const std::string& output);
  /// The same with a fresh output value named after `base`; returns that name.
  std::string apply(const std::string& op_type, const std::vector<std::string>& inputs,
                    const std::string& base);

  /// A float32 initializer of shape `dims` (values in C order); returns its name.
  std::string float_tensor(const std::string& base, const std::vector<std::int64_t>& dims,
                           const std::vector<float>& values);
  /// An int64 initializer of shape `dims`; returns its name.
  std::string int64_tensor(const std::string& base, const std::vector<std::int64_t>& dims,
                           const std::vector<std::int64_t>& values);
  /// A float32 scalar, shared between the nodes that use the same value.
  std::string float_scalar(float value);

 private:
  onnx::GraphProto& graph_;
  std::set<std::string> names_;
  std::map<float, std::string> scalars_;
};

/// Sets attribute `name` of `node`.
void set_attribute(onnx::NodeProto& node, const std::string& name, std::int64_t value);
void set_attribute(onnx::NodeProto& node, const std::string& name,
                   const std::vector<std::int64_t>& values);

/// A value of `graph`'s inputs or outputs: `elem_type` (onnx::TensorProto::FLOAT, ...) with the
/// dimensions `dims`, each a number or, where `symbols` has a non-empty entry, that symbol.
void add_value_info(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>& values,
                    const std::string& name, int elem_type, const std::vector<std::int64_t>& dims,
                    const std::vector<std::string>& symbols);

}  // namespace labpose::nets::onnx_export
