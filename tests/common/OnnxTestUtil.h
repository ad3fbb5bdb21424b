// OnnxTestUtil: what the ONNX tests share — models written with the protobuf API, saved to a
// temporary file, and built and run at an opt level.
#pragma once

#include "backend/Build.h"
#include "backend/GraphExecutor.h"
#include "frontend/onnx/OnnxImport.h"
#include "passes/Pass.h"

#include <onnx/onnx_pb.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <unistd.h>
#include <vector>

namespace loupe::test {

inline const std::string kData = "/usr/share/libonnx-testdata/data/node/";

inline std::string tempPath(const std::string &name) {
  return (std::filesystem::temp_directory_path() /
          ("loupe-onnx-" + std::to_string(::getpid()) + "-" + name))
      .string();
}

inline onnx::NodeProto *addNode(onnx::GraphProto *g, const std::string &op,
                                const std::vector<std::string> &ins, const std::string &out) {
  onnx::NodeProto *n = g->add_node();
  n->set_op_type(op);
  for (const auto &i : ins)
    n->add_input(i);
  n->add_output(out);
  return n;
}

// A graph input `name` of the given dims and element type.
inline void addInput(onnx::GraphProto *g, const std::string &name, const std::vector<int64_t> &dims,
                     int type = onnx::TensorProto::FLOAT) {
  auto *in = g->add_input();
  in->set_name(name);
  auto *tt = in->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(type);
  for (int64_t d : dims)
    tt->mutable_shape()->add_dim()->set_dim_value(d);
}

// A graph input whose dimensions are sizes or names (ONNX's dim_param: "batch"), float32.
inline void addNamedInput(onnx::GraphProto *g, const std::string &name,
                          const std::vector<std::string> &dims) {
  auto *in = g->add_input();
  in->set_name(name);
  auto *tt = in->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  for (const std::string &d : dims) {
    auto *dim = tt->mutable_shape()->add_dim();
    if (!d.empty() && std::isdigit(static_cast<unsigned char>(d[0])))
      dim->set_dim_value(std::stoll(d));
    else
      dim->set_dim_param(d);
  }
}

// An attribute of node n: ints, an int, a string or a float.
inline void setInts(onnx::NodeProto *n, const std::string &name, const std::vector<int64_t> &v) {
  auto *a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v)
    a->add_ints(x);
}
inline void setInt(onnx::NodeProto *n, const std::string &name, int64_t v) {
  auto *a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}
inline void setString(onnx::NodeProto *n, const std::string &name, const std::string &v) {
  auto *a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}
inline void setFloat(onnx::NodeProto *n, const std::string &name, float v) {
  auto *a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
}

// An int64 initializer.
inline void addInts(onnx::GraphProto *g, const std::string &name, const std::vector<int64_t> &v) {
  onnx::TensorProto *t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  t->add_dims(static_cast<int64_t>(v.size()));
  for (int64_t x : v)
    t->add_int64_data(x);
}

// A float32 initializer whose element i is value(i) (ones by default).
inline void addFloats(
    onnx::GraphProto *g, const std::string &name, const std::vector<int64_t> &dims,
    const std::function<float(int64_t)> &value = [](int64_t) { return 1.0f; }) {
  onnx::TensorProto *t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  int64_t count = 1;
  for (int64_t d : dims) {
    t->add_dims(d);
    count *= d;
  }
  for (int64_t i = 0; i < count; ++i)
    t->add_float_data(value(i));
}

// An opset-13 model with one float32 graph input x of shape `dims`, to add nodes to.
inline onnx::ModelProto floatInputModel(const std::vector<int64_t> &dims) {
  onnx::ModelProto m;
  m.set_ir_version(7);
  m.add_opset_import()->set_version(13);
  addInput(m.mutable_graph(), "x", dims);
  return m;
}

// Writes the model to a temporary file and returns its path.
inline std::string saveModel(const onnx::ModelProto &m, const std::string &name) {
  std::string path = tempPath(name);
  std::ofstream(path, std::ios::binary) << m.SerializeAsString();
  return path;
}

// The model at `path` built at `opt` and run on `inputs` (graph input name -> value); its
// outputs.
inline std::vector<Tensor> runModelOutputs(const std::string &path,
                                           const std::map<std::string, Tensor> &inputs, int opt) {
  frontend::OnnxModel m = frontend::importOnnx(path);
  backend::BuildOptions o;
  o.optLevel = opt;
  o.sharedParams = &m.params;
  Graph deploy = backend::build(m.graph, o, PassContext{});
  std::map<std::string, Tensor> in = loadAll(backend::builtLibrary(deploy)->params);
  for (const auto &[name, value] : inputs)
    in[name] = value;
  return backend::runDeployGraph(deploy, in).outputs;
}

// Its first output.
inline Tensor runModel(const std::string &path, const std::map<std::string, Tensor> &inputs,
                       int opt) {
  return runModelOutputs(path, inputs, opt).at(0);
}

} // namespace loupe::test
