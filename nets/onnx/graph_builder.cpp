// GraphBuilder: unique names, nodes, and initializers as little-endian raw data (ONNX's byte order
// on every host).
#include "nets/onnx/graph_builder.hpp"

#include <onnx/defs/attr_proto_util.h>

#include <bit>

#include "core/error.hpp"

namespace labpose::nets::onnx_export {
namespace {

// The little-endian bytes of `values`, whatever the host's byte order.
template <typename Value, typename Bits>
std::string little_endian_bytes(const std::vector<Value>& values) {
  static_assert(sizeof(Value) == sizeof(Bits));
  std::string bytes(values.size() * sizeof(Value), '\0');
  for (std::size_t i = 0; i < values.size(); ++i) {
    const auto bits = std::bit_cast<Bits>(values[i]);
    for (std::size_t b = 0; b < sizeof(Bits); ++b)
      bytes[i * sizeof(Bits) + b] = static_cast<char>((bits >> (8 * b)) & 0xFFU);
  }
  return bytes;
}

std::int64_t element_count(const std::vector<std::int64_t>& dims) {
  std::int64_t count = 1;
  for (const std::int64_t dim : dims) count *= dim;
  return count;
}

}  // namespace

std::string GraphBuilder::unique_name(const std::string& base) {
  std::string name = base;
  for (int n = 1; names_.count(name) != 0; ++n) name = base + "_" + std::to_string(n);
  names_.insert(name);
  return name;
}

onnx::NodeProto& GraphBuilder::node(const std::string& op_type,
                                    const std::vector<std::string>& inputs,
                                    const std::string& output) {
  onnx::NodeProto& node = *graph_.add_node();
  node.set_op_type(op_type);
  node.set_name(output);
  for (const std::string& input : inputs) node.add_input(input);
  node.add_output(output);
  return node;
}

std::string GraphBuilder::apply(const std::string& op_type, const std::vector<std::string>& inputs,
                                const std::string& base) {
  std::string output = unique_name(base);
  node(op_type, inputs, output);
  return output;
}

std::string GraphBuilder::float_tensor(const std::string& base,
                                       const std::vector<std::int64_t>& dims,
                                       const std::vector<float>& values) {
  LABPOSE_ASSERT(element_count(dims) == static_cast<std::int64_t>(values.size()));
  onnx::TensorProto& tensor = *graph_.add_initializer();
  tensor.set_name(unique_name(base));
  tensor.set_data_type(onnx::TensorProto::FLOAT);
  for (const std::int64_t dim : dims) tensor.add_dims(dim);
  tensor.set_raw_data(little_endian_bytes<float, std::uint32_t>(values));
  return tensor.name();
}

std::string GraphBuilder::int64_tensor(const std::string& base,
                                       const std::vector<std::int64_t>& dims,
                                       const std::vector<std::int64_t>& values) {
  LABPOSE_ASSERT(element_count(dims) == static_cast<std::int64_t>(values.size()));
  onnx::TensorProto& tensor = *graph_.add_initializer();
  tensor.set_name(unique_name(base));
  tensor.set_data_type(onnx::TensorProto::INT64);
  for (const std::int64_t dim : dims) tensor.add_dims(dim);
  tensor.set_raw_data(little_endian_bytes<std::int64_t, std::uint64_t>(values));
  return tensor.name();
}

std::string GraphBuilder::float_scalar(float value) {
  const auto found = scalars_.find(value);
  if (found != scalars_.end()) return found->second;
  std::string name = float_tensor("constant", {}, {value});
  scalars_.emplace(value, name);
  return name;
}

void set_attribute(onnx::NodeProto& node, const std::string& name, std::int64_t value) {
  *node.add_attribute() = onnx::MakeAttribute(name, value);
}

void set_attribute(onnx::NodeProto& node, const std::string& name,
                   const std::vector<std::int64_t>& values) {
  *node.add_attribute() = onnx::MakeAttribute(name, values);
}

void add_value_info(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>& values,
                    const std::string& name, int elem_type, const std::vector<std::int64_t>& dims,
                    const std::vector<std::string>& symbols) {
  onnx::ValueInfoProto& value = *values.Add();
  value.set_name(name);
  onnx::TypeProto::Tensor& tensor = *value.mutable_type()->mutable_tensor_type();
  tensor.set_elem_type(elem_type);
  onnx::TensorShapeProto& shape = *tensor.mutable_shape();
  for (std::size_t i = 0; i < dims.size(); ++i) {
    onnx::TensorShapeProto::Dimension& dim = *shape.add_dim();
    if (i < symbols.size() && !symbols[i].empty()) {
      dim.set_dim_param(symbols[i]);
    } else {
      dim.set_dim_value(dims[i]);
    }
  }
}

}  // namespace labpose::nets::onnx_export
