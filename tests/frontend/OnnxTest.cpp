// OnnxTest: importing ONNX models — a small model written here with the protobuf API, a model of
// ONNX's own test data end to end, and every kind of bad file refused with the state unchanged.
#include "OnnxTestUtil.h"
#include "TestUtil.h"

#include "backend/Build.h"
#include "backend/BuiltLibrary.h"
#include "backend/DynamicBuild.h"
#include "backend/GraphExecutor.h"
#include "core/Npy.h"
#include "frontend/onnx/OnnxImport.h"
#include "passes/Pass.h"

#include <onnx/onnx_pb.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <regex>

using namespace loupe;
using namespace loupe::test;

namespace {

// Loads the model at `path` expecting an error that contains `want`, then removes the file.
void expectLoadError(Engine &e, const std::string &path, const std::string &want) {
  std::string err = output(e, ":load " + path);
  EXPECT_NE(err.find(want), std::string::npos) << err;
  std::filesystem::remove(path);
}

// conv (weights as an initializer) -> relu -> flatten -> gemm, with a given opset; `symbolic`
// makes the batch dimension a name instead of a number.
std::string writeModel(const std::string &name, int64_t opset, bool symbolic = false,
                       const std::string &extraOp = "") {
  onnx::ModelProto m;
  m.set_ir_version(7);
  m.add_opset_import()->set_version(opset);
  onnx::GraphProto *g = m.mutable_graph();
  addNamedInput(g, "x", {symbolic ? "N" : "1", "2", "4", "4"});
  auto ramp = [](int64_t i) { return static_cast<float>((i % 5) - 2) * 0.25f; };
  addFloats(g, "w", {3, 2, 3, 3}, ramp);
  addFloats(g, "fc", {5, 48}, ramp);
  auto node = [&](const std::string &op, std::vector<std::string> ins, const std::string &out) {
    return addNode(g, op, ins, out);
  };
  onnx::NodeProto *conv = node("Conv", {"x", "w"}, "c");
  setInts(conv, "pads", {1, 1, 1, 1});
  node("Relu", {"c"}, "r");
  node("Flatten", {"r"}, "f");
  onnx::NodeProto *gemm = node(extraOp.empty() ? "Gemm" : extraOp, {"f", "fc"}, "y");
  setInt(gemm, "transB", 1);
  g->add_output()->set_name("y");
  return saveModel(m, name);
}

} // namespace

TEST(Onnx, ImportsConvReluGemmAndRunsIt) {
  std::string path = writeModel("good.onnx", 13);
  Engine e;
  EXPECT_EQ(output(e, ":load " + path),
            "step 0: load " + path + " (7 nodes, 3 inputs, 1 output; opset 13; 2 params)\n");
  std::string ir = output(e, ":ir");
  EXPECT_NE(ir.find("conv2d(%x, %w, use_bias='False', dilation='(1, 1)', groups='1', "
                    "padding='(1, 1)', strides='(1, 1)', kernel_size='(3, 3)', channels='3')"),
            std::string::npos)
      << ir;
  EXPECT_NE(ir.find("matmul(%4, %fc, transpose_b='True', transpose_a='False')"), std::string::npos)
      << ir;
  run(e, ":build");
  std::string ran = output(e, ":run");
  EXPECT_NE(ran.find("output 0: shape (1, 5) float32"), std::string::npos) << ran;
  // float32 kernels against the reference interpreter: agreement to rounding.
  EXPECT_TRUE(std::regex_search(ran, std::regex("max abs error [0-9.]+e-(0[6-9]|1[0-9])"))) << ran;
  std::filesystem::remove(path);
}

TEST(Onnx, TestDataModelAndTensorProtoInputs) {
  Tensor x = frontend::readTensorProto(kData + "test_relu/test_data_set_0/input_0.pb");
  Tensor y = frontend::readTensorProto(kData + "test_relu/test_data_set_0/output_0.pb");
  ASSERT_EQ(x.shape, (Shape{3, 4, 5}));
  for (size_t i = 0; i < x.data.size(); ++i)
    EXPECT_EQ(y.data[i], std::max(x.data[i], 0.0));
  Engine e;
  run(e, ":load " + kData + "test_relu/model.onnx");
  run(e, ":build");
  std::string ran = output(e, ":run x=" + kData + "test_relu/test_data_set_0/input_0.pb");
  EXPECT_NE(ran.find("shape (3, 4, 5) float32"), std::string::npos) << ran;
}

TEST(Onnx, BadFilesAreRefusedWithNothingChanged) {
  Engine e;
  run(e, "x = Variable(\"x\")\n:graph relu(x)");
  size_t steps = e.history().size();
  std::string good = writeModel("t.onnx", 13);
  std::string bytes;
  {
    std::ifstream in(good, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  std::string truncated = tempPath("truncated.onnx");
  std::ofstream(truncated, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  std::string text = tempPath("text.onnx");
  std::ofstream(text) << "this is not protobuf at all \xff\xff";
  std::string newer = writeModel("newer.onnx", 22);
  std::string symbolic = writeModel("symbolic.onnx", 13, true);
  std::string unsupported = writeModel("unsupported.onnx", 13, false, "NonZero");

  EXPECT_EQ(output(e, ":load " + truncated),
            "error: " + truncated + ": not an ONNX model (the protobuf does not parse)\n");
  EXPECT_EQ(output(e, ":load " + text),
            "error: " + text + ": not an ONNX model (the protobuf does not parse)\n");
  EXPECT_EQ(output(e, ":load /nonexistent.onnx"),
            "error: /nonexistent.onnx: cannot open: No such file or directory\n");
  EXPECT_EQ(output(e, ":load " + newer),
            "error: " + newer + ": opset 22 is newer than this importer knows (up to 21)\n");
  EXPECT_EQ(output(e, ":load " + symbolic + " N=2 M=3"),
            "error: " + symbolic +
                ": no input has a symbolic dimension 'M' (its symbolic dimensions: 'N')\n");
  EXPECT_EQ(output(e, ":load " + good + " N=2"),
            "error: " + good + ": no input has a symbolic dimension 'N' (it has none)\n");
  EXPECT_EQ(output(e, ":load " + symbolic + " N=-1"),
            "error: N must be a positive integer, got '-1'\n");
  EXPECT_EQ(output(e, ":load " + symbolic + " 2"),
            "error: expected DIM=N (a symbolic dimension's size), got '2'\n");
  EXPECT_EQ(output(e, ":load graph.json N=2"),
            "error: only an ONNX model takes dimension sizes; graph.json is a graph JSON file\n");
  EXPECT_EQ(output(e, ":load " + unsupported),
            "error: " + unsupported + ": node y (NonZero): operator NonZero is not supported\n");
  EXPECT_EQ(output(e, ":load " + kData + "test_unique_not_sorted_without_axis/model.onnx"),
            "error: " + kData +
                "test_unique_not_sorted_without_axis/model.onnx: node Y (Unique): operator Unique "
                "is not supported\n");
  EXPECT_EQ(e.history().size(), steps);
  for (const std::string &p : {good, truncated, text, newer, symbolic, unsupported})
    std::filesystem::remove(p);
}

// A dynamic batch stays a size symbol: the graph shows it, one :build runs any batch (each size
// built once, as a variant), each run equal to a build of that size, and a wrong input is one
// line naming what disagrees.
TEST(Onnx, SymbolicDimensionsStaySymbolsAndRunAtAnySize) {
  std::string symbolic = writeModel("symbolic-run.onnx", 13, true);
  Engine e;
  EXPECT_EQ(output(e, ":load " + symbolic),
            "step 0: load " + symbolic + " (7 nodes, 3 inputs, 1 output; opset 13; 2 params)\n");
  EXPECT_NE(output(e, ":inputs").find("x     (N, 2, 4, 4)"), std::string::npos);
  run(e, ":apply InferShape");
  EXPECT_NE(output(e, ":attr shape").find("[N, 3, 4, 4], [N, 3, 4, 4], [N, 48], [5, 48], [N, 5]"),
            std::string::npos);
  EXPECT_EQ(output(e, ":undo"), "now at step 0: load " + symbolic + "\n");
  EXPECT_EQ(output(e, ":build opt_level=2"),
            "step 1: build opt_level=2 (dynamic: size symbols N; each size :run gives builds its "
            "variant once)\ninput x: (N, 2, 4, 4)\n");
  std::string x3 = tempPath("x3.npy");
  Tensor t(Shape{3, 2, 4, 4}, kFloat32);
  for (int64_t i = 0; i < t.size(); ++i)
    t.data[i] = static_cast<double>((i * 7) % 11) * 0.125 - 0.5;
  writeNpy(x3, t);
  std::string ran = output(e, ":run x=" + x3);
  EXPECT_EQ(ran.substr(0, ran.find('\n')),
            "step 2: variant N=3 of the dynamic build (built now; step 1 was the build)");
  EXPECT_NE(ran.find("output 0: shape (3, 5) float32"), std::string::npos);
  EXPECT_NE(ran.find("max abs error 0.0e+00"), std::string::npos) << ran;
  // The same sizes built fixed give the same values, to the bit.
  Engine fixed;
  run(fixed, ":load " + symbolic + " N=3");
  run(fixed, ":build opt_level=2");
  std::string want = output(fixed, ":run x=" + x3);
  EXPECT_EQ(ran.substr(ran.find("output 0")), want.substr(want.find("output 0")));
  // A second size is a second variant; the first size again is the one built before.
  EXPECT_NE(output(e, ":run N=2").find("step 3: variant N=2 of the dynamic build (built now"),
            std::string::npos);
  EXPECT_NE(
      output(e, ":run x=" + x3).find("step 4: variant N=3 of the dynamic build (built before"),
      std::string::npos);
  size_t steps = e.history().size();
  std::string bad = tempPath("bad.npy");
  writeNpy(bad, Tensor(Shape{3, 2, 4, 5}, kFloat32));
  EXPECT_EQ(
      output(e, ":run x=" + bad),
      "error: input x has shape (3, 2, 4, 5), but the graph takes (N, 2, 4, 4) = (3, 2, 4, 4) "
      "at N=3\n");
  EXPECT_EQ(output(e, ":run M=2"), "error: run: the graph has no input 'M'; its data inputs: x "
                                   "(3, 2, 4, 4) (:inputs lists all)\n");
  EXPECT_EQ(e.history().size(), steps);
  for (const std::string &p : {symbolic, x3, bad})
    std::filesystem::remove(p);
}

// A dynamic build's variants share their params' bytes: at opt_level 3 each variant packs the
// convolution's weights (PrecomputePrune), equal from size to size, and holds them once.
TEST(Onnx, VariantsOfADynamicBuildShareTheirParams) {
  std::string symbolic = writeModel("symbolic-share.onnx", 13, true);
  Engine e;
  run(e, ":load " + symbolic + "\n:build opt_level=3");
  const Graph build = e.current()->graph;
  auto two = backend::builtLibrary(backend::variantOf(build, {{"N", 2}}));
  auto three = backend::builtLibrary(backend::variantOf(build, {{"N", 3}}));
  ASSERT_FALSE(two->params.empty());
  size_t shared = 0;
  for (const auto &[name, t] : two->params) {
    auto other = three->params.find(name);
    ASSERT_NE(other, three->params.end()) << name;
    EXPECT_EQ(other->second.bytes(), t.bytes()) << name << " is held twice";
    shared += other->second.bytes() == t.bytes();
  }
  EXPECT_EQ(shared, two->params.size());
  // Sharing changes no value: the variant computes what a fixed build of its size does.
  std::string ran = output(e, ":run N=3");
  Engine fixed;
  run(fixed, ":load " + symbolic + " N=3\n:build opt_level=3");
  std::string want = output(fixed, ":run");
  EXPECT_EQ(ran.substr(ran.find("output 0")), want.substr(want.find("output 0")));
  std::filesystem::remove(symbolic);
}

TEST(Onnx, ExpandWithSymbolicSizesKeepsTheSymbols) {
  // x (batch, 1, 8) expanded twice: to a target computed from its shape (Shape(x)[0:1] ++ [3, 8],
  // PyTorch's expand(x.size(0), 3, 8)) and to the constant (1, 3, 8), which broadcasts.
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  onnx::GraphProto *g = m.mutable_graph();
  addNamedInput(g, "x", {"batch", "1", "8"});
  addInts(g, "zero", {0});
  addInts(g, "one", {1});
  addInts(g, "rest", {3, 8});
  addInts(g, "const_target", {1, 3, 8});
  addNode(g, "Shape", {"x"}, "shape");
  addNode(g, "Slice", {"shape", "zero", "one"}, "lead");
  setInt(addNode(g, "Concat", {"lead", "rest"}, "target"), "axis", 0);
  addNode(g, "Expand", {"x", "target"}, "a");
  addNode(g, "Expand", {"x", "const_target"}, "b");
  addNode(g, "Add", {"a", "b"}, "y");
  g->add_output()->set_name("y");
  std::string path = saveModel(m, "expand_symbolic.onnx");
  Engine e;
  run(e, ":load " + path);
  std::string ir = output(e, ":ir");
  EXPECT_NE(ir.find("broadcast_to(%x, shape='(batch, 3, 8)')"), std::string::npos) << ir;
  run(e, ":apply InferShape");
  EXPECT_NE(output(e, ":attr shape")
                .find("[batch, 1, 8], [batch, 3, 8], [batch, 3, 8], "
                      "[batch, 3, 8]"),
            std::string::npos)
      << output(e, ":attr shape");
  run(e, ":undo");
  run(e, ":build opt_level=2");
  std::string ran = output(e, ":run batch=2");
  EXPECT_NE(ran.find("output 0: shape (2, 3, 8) float32"), std::string::npos) << ran;
  EXPECT_NE(ran.find("max abs error 0.0e+00"), std::string::npos) << ran;
  std::filesystem::remove(path);
}

// A Slice whose end is a size of the symbols (Hugging Face's position_ids[:, :seq]) keeps them:
// strided_slice's end is the expression, the slice of the table is (1, seq, 8). Built generic,
// a run at seq 5 computes it; at seq 20, past the table's 16 rows, the run is refused naming the
// node. A ConstantOfShape of a symbolic shape is a `full` of that shape.
TEST(Onnx, SlicesAndFillsOfSymbolicSizesKeepTheSymbols) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  onnx::GraphProto *g = m.mutable_graph();
  addNamedInput(g, "x", {"batch", "seq", "8"});
  addInts(g, "one", {1});
  addInts(g, "two", {2});
  addInts(g, "zero", {0});
  onnx::TensorProto *pos = g->add_initializer();
  pos->set_name("pos");
  pos->set_data_type(onnx::TensorProto::FLOAT);
  pos->add_dims(1);
  pos->add_dims(16);
  pos->add_dims(8);
  for (int i = 0; i < 16 * 8; ++i)
    pos->add_float_data(static_cast<float>(i));
  addNode(g, "Shape", {"x"}, "shape");
  addNode(g, "Slice", {"shape", "one", "two"}, "len");
  addNode(g, "Slice", {"pos", "zero", "len", "one"}, "p");
  addNode(g, "Add", {"x", "p"}, "y");
  g->add_output()->set_name("y");
  std::string path = saveModel(m, "slice_symbolic.onnx");
  Engine e;
  run(e, ":load " + path);
  std::string ir = output(e, ":ir");
  EXPECT_NE(ir.find("strided_slice(%pos, strides='()', axes='(1,)', end='(seq,)', begin='(0,)')"),
            std::string::npos)
      << ir;
  run(e, ":apply InferShape");
  EXPECT_NE(output(e, ":attr shape").find("[1, seq, 8]"), std::string::npos)
      << output(e, ":attr shape");
  run(e, ":undo\n:build opt_level=3 generic");
  std::string ran = output(e, ":run batch=2 seq=5");
  EXPECT_NE(ran.find("output 0: shape (2, 5, 8) float32"), std::string::npos) << ran;
  EXPECT_NE(ran.find("max abs error 0.0e+00"), std::string::npos) << ran;
  EXPECT_EQ(output(e, ":run batch=1 seq=20"),
            "error: node p slices to seq = 20 within 16 at batch=1, seq=20: seq must be at most "
            "16\n");
  std::filesystem::remove(path);
  // ConstantOfShape of (batch, seq), filled with 2.
  onnx::ModelProto c;
  c.set_ir_version(8);
  c.add_opset_import()->set_version(13);
  onnx::GraphProto *cg = c.mutable_graph();
  addNamedInput(cg, "x", {"batch", "seq"});
  addNode(cg, "Shape", {"x"}, "shape");
  onnx::NodeProto *fill = addNode(cg, "ConstantOfShape", {"shape"}, "k");
  onnx::AttributeProto *value = fill->add_attribute();
  value->set_name("value");
  value->set_type(onnx::AttributeProto::TENSOR);
  value->mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
  value->mutable_t()->add_dims(1);
  value->mutable_t()->add_float_data(2.0f);
  addNode(cg, "Add", {"x", "k"}, "y");
  cg->add_output()->set_name("y");
  std::string cpath = saveModel(c, "constant_of_symbolic.onnx");
  run(e, ":load " + cpath);
  std::string fullIr = output(e, ":ir");
  EXPECT_NE(fullIr.find("full(dtype='float32', fill_value='2', shape='(batch, seq)')"),
            std::string::npos)
      << fullIr;
  run(e, ":build opt_level=3 generic");
  std::string filled = output(e, ":run x=0.5 batch=2 seq=3");
  EXPECT_NE(filled.find("output 0: shape (2, 3) float32\n  values [2.5, 2.5, 2.5, 2.5, 2.5, 2.5]"),
            std::string::npos)
      << filled;
  std::filesystem::remove(cpath);
}

namespace {

// x (2, 3, 4) → relu → Reshape to (Shape(x)[0:1] ++ [12]) — the shape computed as exporters do
// — and y reshaped by a graph input `s` (which cannot be known before :run).
std::string writeShapeChainModel(const std::string &name, bool shapeFromInput) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(15);
  onnx::GraphProto *g = m.mutable_graph();
  addInput(g, "x", {2, 3, 4});
  if (shapeFromInput)
    addInput(g, "s", {2}, onnx::TensorProto::INT64);
  onnx::TensorProto *twelve = g->add_initializer();
  twelve->set_name("twelve");
  twelve->set_data_type(onnx::TensorProto::INT64);
  twelve->add_dims(1);
  twelve->add_int64_data(12);
  auto node = [&](const std::string &op, std::vector<std::string> ins, const std::string &out) {
    return addNode(g, op, ins, out);
  };
  node("Relu", {"x"}, "r");
  onnx::NodeProto *shape = node("Shape", {"r"}, "shape");
  setInt(shape, "end", 1);
  onnx::NodeProto *cat = node("Concat", {"shape", "twelve"}, "target");
  setInt(cat, "axis", 0);
  node("Reshape", {"r", shapeFromInput ? "s" : "target"}, "y");
  g->add_output()->set_name("y");
  return saveModel(m, name);
}

} // namespace

TEST(Onnx, ShapeComputationsFoldAtImport) {
  std::string path = writeShapeChainModel("chain.onnx", false);
  Engine e;
  run(e, ":load " + path);
  // Shape of the relu output is known from x's declared shape: it and the Concat became a
  // param, and the Reshape took the computed shape; no shape_of is left.
  std::string ir = output(e, ":ir");
  EXPECT_NE(ir.find("reshape(%1, shape='(2, 12)')"), std::string::npos) << ir;
  EXPECT_EQ(ir.find("shape_of"), std::string::npos) << ir;
  run(e, ":build");
  std::string ran = output(e, ":run x=random");
  EXPECT_NE(ran.find("output 0: shape (2, 12) float32"), std::string::npos) << ran;
  std::filesystem::remove(path);

  // A shape that a graph input gives is not known before :run: a clear error.
  std::string dynamic = writeShapeChainModel("dynamic.onnx", true);
  EXPECT_EQ(output(e, ":load " + dynamic),
            "error: " + dynamic +
                ": node y (Reshape): shape must be a constant (an initializer or Constant)\n");
  std::filesystem::remove(dynamic);

  // An empty piece of a shape (an expanded LayerNorm's prefix before axis 0) adds nothing to
  // the Concat it goes into: the Reshape still takes a computed shape.
  onnx::ModelProto m;
  m.set_ir_version(7);
  m.add_opset_import()->set_version(13);
  onnx::GraphProto *g = m.mutable_graph();
  addInput(g, "x", {2, 3, 4});
  addInts(g, "zero", {0});
  addInts(g, "rest", {6, 4});
  addNode(g, "Shape", {"x"}, "shape");
  addNode(g, "Slice", {"shape", "zero", "zero"}, "prefix");
  setInt(addNode(g, "Concat", {"prefix", "rest"}, "target"), "axis", 0);
  addNode(g, "Reshape", {"x", "target"}, "y");
  g->add_output()->set_name("y");
  std::string empty = saveModel(m, "empty_prefix.onnx");
  run(e, ":load " + empty);
  ir = output(e, ":ir");
  EXPECT_NE(ir.find("reshape(%x, shape='(6, 4)')"), std::string::npos) << ir;
  std::filesystem::remove(empty);
}

namespace {

// x (1, 1, 2, 3) -> Resize with the given mode and 2x scales (an initializer, or a graph input
// when `scalesInput`), opset 13.
std::string resizeModel(const std::string &name, const std::string &mode, bool scalesInput,
                        float scale = 2.0f) {
  onnx::ModelProto m;
  m.set_ir_version(7);
  m.add_opset_import()->set_version(13);
  onnx::GraphProto *g = m.mutable_graph();
  addInput(g, "x", {1, 1, 2, 3});
  if (scalesInput) {
    addInput(g, "scales", {4});
  } else {
    onnx::TensorProto *t = g->add_initializer();
    t->set_name("scales");
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->add_dims(4);
    for (float s : {1.0f, 1.0f, scale, scale})
      t->add_float_data(s);
  }
  setString(addNode(g, "Resize", {"x", "", "scales"}, "y"), "mode", mode);
  g->add_output()->set_name("y");
  return saveModel(m, name);
}

} // namespace

// Resize with constant scales becomes resize2d (sizes from the data's shape times the scales);
// what it cannot express is refused naming the node.
TEST(Onnx, ResizeWithConstantScales) {
  std::string path = resizeModel("resize.onnx", "linear", false);
  Engine e;
  run(e, ":load " + path);
  std::string ir = output(e, ":ir");
  EXPECT_NE(ir.find("resize2d(%x, scale_h='2', rounding_method='round_prefer_floor', "
                    "coordinate_transformation_mode='half_pixel', method='linear', scale_w='2', "
                    "size='(4, 6)')"),
            std::string::npos)
      << ir;
  run(e, ":build");
  EXPECT_NE(output(e, ":run").find("shape (1, 1, 4, 6) float32"), std::string::npos);
  std::filesystem::remove(path);
  for (auto [mode, input, message] :
       {std::tuple{"lanczos", false, "mode lanczos is not one of nearest, linear, cubic"},
        std::tuple{"nearest", true, "scales must be a constant (an initializer or Constant)"}}) {
    std::string bad = resizeModel("bad_resize.onnx", mode, input);
    std::string err = output(e, ":load " + bad);
    EXPECT_NE(err.find(message), std::string::npos) << err;
    EXPECT_NE(err.find("(Resize)"), std::string::npos) << err;
    std::filesystem::remove(bad);
  }
  // A NaN scale (its size would be an undefined conversion) is refused.
  std::string nan = resizeModel("nan_resize.onnx", "nearest", false, std::nanf(""));
  expectLoadError(e, nan, "scales must be positive and at most 1e6");
}

// Rank-0 constants as PyTorch exports them: a Constant scalar multiplied in (read as a
// one-element tensor, which broadcasts as the scalar does) and Clip's bounds as scalar
// initializers (read as values). A scalar where a tensor is needed is refused, naming it.
TEST(Onnx, ScalarConstantsBroadcastOrAreReadAsValues) {
  auto model = [](const std::string &name, const std::string &last) {
    onnx::ModelProto m;
    m.set_ir_version(7);
    m.add_opset_import()->set_version(13);
    onnx::GraphProto *g = m.mutable_graph();
    auto *in = g->add_input();
    in->set_name("x");
    auto *tt = in->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT);
    tt->mutable_shape()->add_dim()->set_dim_value(4);
    auto scalar = [&](const std::string &n, float v) {
      onnx::TensorProto *t = g->add_initializer();
      t->set_name(n);
      t->set_data_type(onnx::TensorProto::FLOAT);
      t->add_float_data(v);
    };
    scalar("lo", 0.0f);
    scalar("hi", 6.0f);
    onnx::NodeProto *c = addNode(g, "Constant", {}, "half");
    auto *a = c->add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    a->mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
    a->mutable_t()->add_float_data(0.5f);
    addNode(g, "Mul", {"x", "half"}, "h");
    addNode(g, "Clip", {"h", "lo", "hi"}, "y");
    if (!last.empty())
      addNode(g, last, {"half"}, "z");
    g->add_output()->set_name(last.empty() ? "y" : "z");
    return saveModel(m, name);
  };
  std::string path = model("scalars.onnx", "");
  Engine e;
  run(e, ":load " + path);
  std::string ir = output(e, ":ir");
  EXPECT_NE(ir.find("broadcast_mul(%x, %half_as_1d)"), std::string::npos) << ir;
  EXPECT_NE(ir.find("clip(%2, a_max='6', a_min='0')"), std::string::npos) << ir;
  frontend::OnnxModel m = frontend::importOnnx(path);
  backend::BuildOptions o;
  o.sharedParams = &m.params;
  Graph deploy = backend::build(m.graph, o, PassContext{});
  std::map<std::string, Tensor> in = loadAll(backend::builtLibrary(deploy)->params);
  in["x"] = Tensor(Shape{4}, kFloat32);
  in["x"].data = {-4, 2, 8, 20};
  EXPECT_EQ(backend::runDeployGraph(deploy, in).outputs.at(0).data,
            (std::vector<double>{0, 1, 4, 6}));
  std::filesystem::remove(path);
  // Read alone, a scalar constant is a param of shape (), which any op that takes scalars
  // reads; an op that takes none refuses it at :load, naming the node.
  std::string relu = model("scalar_relu.onnx", "Relu");
  run(e, ":load " + relu);
  ir = output(e, ":ir");
  EXPECT_NE(ir.find("relu(%half_scalar)"), std::string::npos) << ir;
  EXPECT_NE(output(e, ":outputs").find("()"), std::string::npos);
  std::filesystem::remove(relu);
  std::string bad = model("scalar_softmax.onnx", "Softmax");
  expectLoadError(e, bad,
                  "(softmax): input 'data' is a scalar (shape ()); softmax takes tensors of "
                  "rank 1 or more");
  std::filesystem::remove(bad);
}

// Swin's shape arithmetic, as torchvision's swin_t exports it: a window padding computed from
// scalar constants ((7 - 54 % 7) % 7 = 2: a Sub of a constant and a computed scalar is still a
// scalar), unsqueezed into Pad's pads; a dimension read from the padded shape (12), unsqueezed
// by a node named apart from its output, as a Slice's end. Both fold to constants at :load, and
// y = x[:, 1:] padded with two zeros at opt levels 0 and 3.
TEST(Onnx, ShapeArithmeticOnScalarsFoldsToConstants) {
  onnx::ModelProto m = floatInputModel({2, 10});
  onnx::GraphProto *g = m.mutable_graph();
  auto scalar = [&](const std::string &name, int64_t v) {
    onnx::NodeProto *c = addNode(g, "Constant", {}, name);
    auto *a = c->add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    a->mutable_t()->set_data_type(onnx::TensorProto::INT64);
    a->mutable_t()->add_int64_data(v);
  };
  scalar("c54", 54);
  scalar("c7", 7);
  scalar("one", 1);
  addInts(g, "axis0", {0});
  addInts(g, "no_pads", {0, 0, 0});
  addInts(g, "start", {1});
  addInts(g, "axis1", {1});
  addNode(g, "Mod", {"c54", "c7"}, "rest");
  addNode(g, "Sub", {"c7", "rest"}, "short");
  addNode(g, "Mod", {"short", "c7"}, "pad");
  addNode(g, "Unsqueeze", {"pad", "axis0"}, "pad1");
  setInt(addNode(g, "Concat", {"no_pads", "pad1"}, "pads"), "axis", 0);
  addNode(g, "Pad", {"x", "pads"}, "padded");
  addNode(g, "Shape", {"padded"}, "shape");
  addNode(g, "Gather", {"shape", "one"}, "width");
  addNode(g, "Unsqueeze", {"width", "axis0"}, "end")->set_name("/attn/Unsqueeze_57");
  addNode(g, "Slice", {"padded", "start", "end", "axis1"}, "y");
  g->add_output()->set_name("y");
  std::string path = saveModel(m, "shape_arithmetic.onnx");
  Tensor x(Shape{2, 10}, kFloat32);
  for (size_t i = 0; i < x.data.size(); ++i)
    x.data[i] = static_cast<double>(i) + 1;
  std::vector<double> want;
  for (int r = 0; r < 2; ++r) {
    for (int c = 1; c < 10; ++c)
      want.push_back(10 * r + c + 1);
    want.insert(want.end(), {0, 0});
  }
  for (int opt : {0, 3}) {
    SCOPED_TRACE(opt);
    Tensor y = runModel(path, {{"x", x}}, opt);
    EXPECT_EQ(y.shape, (Shape{2, 11}));
    EXPECT_EQ(y.data, want);
  }
  std::filesystem::remove(path);
}

// NegativeLogLikelihoodLoss with class weights and an ignored class, reduced by mean to the rank-0
// output ONNX declares (computed as one element of shape (1,), said by :load). By hand: row 0
// picks class 2 (-3, weight 2: loss 6), row 1's class 1 is ignored (weight 0), so the mean
// divides 6 by the weights applied, 2: 3. SoftmaxCrossEntropyLoss of the same rows with
// reduction sum: -log_softmax at the targets.
TEST(Onnx, LossesWithWeightsIgnoredClassesAndScalarOutputs) {
  auto model = [](const std::string &name, const std::string &op, const std::string &reduction) {
    onnx::ModelProto m = floatInputModel({2, 3});
    onnx::GraphProto *g = m.mutable_graph();
    onnx::TensorProto *t = g->add_initializer();
    t->set_name("target");
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(2);
    t->add_int64_data(2);
    t->add_int64_data(1);
    onnx::TensorProto *w = g->add_initializer();
    w->set_name("weight");
    w->set_data_type(onnx::TensorProto::FLOAT);
    w->add_dims(3);
    for (float v : {0.5f, 1.0f, 2.0f})
      w->add_float_data(v);
    onnx::NodeProto *n = addNode(g, op, {"x", "target", "weight"}, "loss");
    setString(n, "reduction", reduction);
    setInt(n, "ignore_index", 1);
    auto *out = g->add_output();
    out->set_name("loss");
    out->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
    out->mutable_type()->mutable_tensor_type()->mutable_shape(); // rank 0
    return saveModel(m, name);
  };
  auto runModel = [](const std::string &path) {
    frontend::OnnxModel m = frontend::importOnnx(path);
    backend::BuildOptions o;
    o.sharedParams = &m.params;
    Graph deploy = backend::build(m.graph, o, PassContext{});
    std::map<std::string, Tensor> in = loadAll(backend::builtLibrary(deploy)->params);
    in["x"] = Tensor(Shape{2, 3}, kFloat32);
    in["x"].data = {-1, -2, -3, -0.5, -1.5, -2.5};
    EXPECT_EQ(m.scalarOutputs, (std::vector<size_t>{0}));
    return backend::runDeployGraph(deploy, in).outputs.at(0);
  };
  std::string nll = model("nll.onnx", "NegativeLogLikelihoodLoss", "mean");
  Engine e;
  EXPECT_NE(output(e, ":load " + nll)
                .find("note: output 0 is a scalar (rank 0) in ONNX; it is computed here as shape "
                      "(1,)"),
            std::string::npos);
  Tensor loss = runModel(nll);
  EXPECT_EQ(loss.shape, (Shape{1}));
  EXPECT_EQ(loss.data, (std::vector<double>{3.0}));
  std::filesystem::remove(nll);

  std::string sce = model("sce.onnx", "SoftmaxCrossEntropyLoss", "sum");
  loss = runModel(sce);
  double lse = std::log(std::exp(-1.0) + std::exp(-2.0) + std::exp(-3.0));
  ASSERT_EQ(loss.data.size(), 1u);
  EXPECT_NEAR(loss.data[0], 2.0 * (3.0 + lse), 1e-5); // row 0 only, weight 2
  std::filesystem::remove(sce);

  std::string bad = model("bad_nll.onnx", "NegativeLogLikelihoodLoss", "max");
  EXPECT_NE(output(e, ":load " + bad).find("reduction 'max' is not none, sum or mean"),
            std::string::npos);
  std::filesystem::remove(bad);
}

// Range of constant scalars becomes a constant (1, 2, 3) added to x; TopK's two outputs, values
// and int64 indices, by hand. A zero step and a K larger than the axis are refused by name.
TEST(Onnx, RangeConstantAndTopKOutputs) {
  auto model = [](const std::string &name, float delta, int64_t k) {
    onnx::ModelProto m = floatInputModel({2, 3});
    onnx::GraphProto *g = m.mutable_graph();
    for (auto [n, v] : {std::pair{"start", 1.0f}, {"limit", 4.0f}, {"delta", delta}}) {
      onnx::TensorProto *t = g->add_initializer();
      t->set_name(n);
      t->set_data_type(onnx::TensorProto::FLOAT);
      t->add_float_data(v);
    }
    onnx::TensorProto *kt = g->add_initializer();
    kt->set_name("K");
    kt->set_data_type(onnx::TensorProto::INT64);
    kt->add_dims(1);
    kt->add_int64_data(k);
    addNode(g, "Range", {"start", "limit", "delta"}, "r");
    addNode(g, "Add", {"x", "r"}, "y");
    onnx::NodeProto *top = addNode(g, "TopK", {"y", "K"}, "values");
    top->add_output("indices");
    g->add_output()->set_name("values");
    g->add_output()->set_name("indices");
    return saveModel(m, name);
  };
  Engine e; // registers the passes
  std::string path = model("range_topk.onnx", 1, 2);
  frontend::OnnxModel m = frontend::importOnnx(path);
  EXPECT_EQ(m.params.at("r").load().data, (std::vector<double>{1, 2, 3}));
  backend::BuildOptions o;
  o.sharedParams = &m.params;
  o.optLevel = 2;
  Graph deploy = backend::build(m.graph, o, PassContext{});
  std::map<std::string, Tensor> in = loadAll(backend::builtLibrary(deploy)->params);
  in["x"] = Tensor(Shape{2, 3}, kFloat32);
  in["x"].data = {0, 5, 1, 3, 3, -1}; // y = [[1, 7, 4], [4, 5, 2]]
  backend::RunResult r = backend::runDeployGraph(deploy, in);
  EXPECT_EQ(r.outputs.at(0).data, (std::vector<double>{7, 4, 5, 4}));
  EXPECT_EQ(r.outputs.at(1).data, (std::vector<double>{1, 2, 1, 0}));
  EXPECT_EQ(r.outputs.at(1).dtype, kInt64);
  std::filesystem::remove(path);

  std::string zero = model("range_zero.onnx", 0, 2);
  EXPECT_NE(output(e, ":load " + zero).find("(Range): delta must not be 0"), std::string::npos);
  std::filesystem::remove(zero);
  std::string wide = model("topk_wide.onnx", 1, 5);
  expectLoadError(e, wide, "k 5 must be 1 … 3 (the size of axis 1)");
}

// A symbolic dimension (an export's dynamic axis) takes the size :load gives it.
TEST(Onnx, SymbolicDimensionsTakeTheSizesGiven) {
  std::string symbolic = writeModel("sized.onnx", 13, true);
  Engine e;
  run(e, ":load " + symbolic + " N=3");
  std::string nodes = output(e, ":ir");
  EXPECT_NE(nodes.find("Graph(%x"), std::string::npos) << nodes;
  run(e, ":apply InferShape");
  EXPECT_EQ(output(e, ":attr shape 0"), "[3, 2, 4, 4]\n");
  run(e, ":build");
  std::string ran = output(e, ":run x=random");
  EXPECT_NE(ran.find("output 0: shape (3, 5) float32"), std::string::npos) << ran;
  std::filesystem::remove(symbolic);
}

namespace {

// x (2, 3, 4) -> Gather at a scalar index along axis 1 -> MatMul with a (4, 2) initializer.
std::string gatherMatMulModel(const std::string &name) {
  onnx::ModelProto m = floatInputModel({2, 3, 4});
  onnx::GraphProto *g = m.mutable_graph();
  onnx::TensorProto *index = g->add_initializer(); // rank 0
  index->set_name("i");
  index->set_data_type(onnx::TensorProto::INT64);
  index->add_int64_data(-1);
  onnx::TensorProto *w = g->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(4);
  w->add_dims(2);
  for (float v : {1.f, 2.f, 3.f, 4.f, 5.f, 6.f, 7.f, 8.f}) // row k: (2k+1, 2k+2)
    w->add_float_data(v);
  onnx::NodeProto *gather = addNode(g, "Gather", {"x", "i"}, "row");
  setInt(gather, "axis", 1);
  addNode(g, "MatMul", {"row", "w"}, "y");
  g->add_output()->set_name("y");
  return saveModel(m, name);
}

} // namespace

// A scalar index drops its axis (take, then squeeze); a MatMul by a constant matrix is dense
// with the matrix transposed at import. x = ones: the last row along axis 1 is ones (2, 4), and
// each output is a column sum of w: 1+3+5+7 = 16, 2+4+6+8 = 20.
TEST(Onnx, ScalarIndexGatherAndMatMulByAWeight) {
  std::string path = gatherMatMulModel("gather_matmul.onnx");
  Engine e;
  run(e, ":load " + path);
  std::string ir = output(e, ":ir");
  EXPECT_NE(ir.find("squeeze("), std::string::npos) << ir;
  EXPECT_NE(ir.find("dense("), std::string::npos) << ir;
  EXPECT_NE(ir.find("units='2'"), std::string::npos) << ir;
  for (int opt : {0, 3}) {
    run(e, ":build opt_level=" + std::to_string(opt));
    std::string ran = output(e, ":run x=ones");
    EXPECT_NE(ran.find("output 0: shape (2, 2) float32\n  values [16, 20, 16, 20]"),
              std::string::npos)
        << ran;
    run(e, ":undo");
  }
  std::filesystem::remove(path);
}

namespace {

// An opset-12 model of one Einsum over float32 graph inputs a, b, c, … of the given shapes.
std::string einsumModel(const std::string &file, const std::string &equation,
                        const std::vector<Shape> &shapes) {
  onnx::ModelProto m;
  m.set_ir_version(7);
  m.add_opset_import()->set_version(12);
  onnx::GraphProto *g = m.mutable_graph();
  std::vector<std::string> names;
  for (size_t k = 0; k < shapes.size(); ++k) {
    names.push_back(std::string(1, static_cast<char>('a' + k)));
    addInput(g, names.back(), shapes[k]);
  }
  onnx::NodeProto *n = addNode(g, "Einsum", names, "y");
  setString(n, "equation", equation);
  g->add_output()->set_name("y");
  return saveModel(m, file);
}

// Small integers (exact in float32) that differ per operand and element.
Tensor einsumInput(const Shape &s, int k) {
  Tensor t(s, kFloat32);
  for (size_t i = 0; i < t.data.size(); ++i)
    t.data[i] = static_cast<double>((static_cast<int>(i) * (k + 2) + k) % 7 - 3);
  return t;
}

// An einsum model built at `opt` and run on einsumInput values.
Tensor runEinsum(const std::string &path, const std::vector<Shape> &shapes, int opt) {
  std::map<std::string, Tensor> in;
  for (size_t k = 0; k < shapes.size(); ++k)
    in[std::string(1, static_cast<char>('a' + k))] = einsumInput(shapes[k], static_cast<int>(k));
  return runModel(path, in, opt);
}

} // namespace

// Einsum's transformer patterns against sums written out here: attention scores
// (bhqd,bhkd->bhqk), weighted values (bhqk,bhkd->bhqd), a projection by a matrix (bsd,de->bse),
// an implicit output (ij,jk: ik), an ellipsis, three operands, and an index summed in one
// operand; a diagonal is refused by name.
TEST(Onnx, EinsumPatternsMatchTheirSums) {
  Engine e; // registers the passes the importer runs
  struct Case {
    std::string eq;
    std::vector<Shape> shapes;
    Shape out;
    std::function<double(const std::vector<Tensor> &, const std::vector<int64_t> &)> at;
  };
  auto v = [](const Tensor &t, std::vector<int64_t> idx) {
    int64_t flat = 0;
    for (size_t d = 0; d < idx.size(); ++d)
      flat = flat * t.shape[d] + idx[d];
    return t.data[static_cast<size_t>(flat)];
  };
  std::vector<Case> cases = {
      {"bhqd,bhkd->bhqk",
       {{2, 3, 4, 5}, {2, 3, 6, 5}},
       {2, 3, 4, 6},
       [&](const auto &in, const auto &i) {
         double s = 0;
         for (int64_t d = 0; d < 5; ++d)
           s += v(in[0], {i[0], i[1], i[2], d}) * v(in[1], {i[0], i[1], i[3], d});
         return s;
       }},
      {"bhqk, bhkd -> bhqd",
       {{2, 3, 4, 6}, {2, 3, 6, 5}},
       {2, 3, 4, 5},
       [&](const auto &in, const auto &i) {
         double s = 0;
         for (int64_t k = 0; k < 6; ++k)
           s += v(in[0], {i[0], i[1], i[2], k}) * v(in[1], {i[0], i[1], k, i[3]});
         return s;
       }},
      {"bsd,de->bse",
       {{2, 3, 4}, {4, 5}},
       {2, 3, 5},
       [&](const auto &in, const auto &i) {
         double s = 0;
         for (int64_t d = 0; d < 4; ++d)
           s += v(in[0], {i[0], i[1], d}) * v(in[1], {d, i[2]});
         return s;
       }},
      {"ij,jk",
       {{3, 4}, {4, 2}},
       {3, 2},
       [&](const auto &in, const auto &i) {
         double s = 0;
         for (int64_t j = 0; j < 4; ++j)
           s += v(in[0], {i[0], j}) * v(in[1], {j, i[1]});
         return s;
       }},
      {"...ij,...jk->...ik",
       {{2, 3, 4}, {2, 4, 3}},
       {2, 3, 3},
       [&](const auto &in, const auto &i) {
         double s = 0;
         for (int64_t j = 0; j < 4; ++j)
           s += v(in[0], {i[0], i[1], j}) * v(in[1], {i[0], j, i[2]});
         return s;
       }},
      {"ij,jk,kl->li",
       {{2, 3}, {3, 4}, {4, 2}},
       {2, 2},
       [&](const auto &in, const auto &i) {
         double s = 0;
         for (int64_t j = 0; j < 3; ++j)
           for (int64_t k = 0; k < 4; ++k)
             s += v(in[0], {i[1], j}) * v(in[1], {j, k}) * v(in[2], {k, i[0]});
         return s;
       }},
      {"ij,k->i",
       {{3, 4}, {5}},
       {3},
       [&](const auto &in, const auto &i) {
         double a = 0, b = 0;
         for (int64_t j = 0; j < 4; ++j)
           a += v(in[0], {i[0], j});
         for (int64_t k = 0; k < 5; ++k)
           b += v(in[1], {k});
         return a * b;
       }},
      // A repeated index: the diagonal of each matrix of the batch, then with another operand.
      {"...ii->...i",
       {{2, 3, 3}},
       {2, 3},
       [&](const auto &in, const auto &i) {
         return v(in[0], {i[0], i[1], i[1]});
       }},
      {"iij,j->i",
       {{3, 3, 4}, {4}},
       {3},
       [&](const auto &in, const auto &i) {
         double s = 0;
         for (int64_t j = 0; j < 4; ++j)
           s += v(in[0], {i[0], i[0], j}) * v(in[1], {j});
         return s;
       }},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.eq);
    std::string path = einsumModel("einsum.onnx", c.eq, c.shapes);
    std::vector<Tensor> in;
    for (size_t k = 0; k < c.shapes.size(); ++k)
      in.push_back(einsumInput(c.shapes[k], static_cast<int>(k)));
    for (int opt : {0, 3}) {
      Tensor got = runEinsum(path, c.shapes, opt);
      ASSERT_EQ(got.shape, c.out) << "opt " << opt;
      std::vector<int64_t> idx(c.out.size(), 0);
      for (size_t e = 0; e < got.data.size(); ++e) {
        EXPECT_EQ(got.data[e], c.at(in, idx)) << "opt " << opt << " element " << e;
        for (size_t d = idx.size(); d-- > 0 && ++idx[d] == c.out[d];)
          idx[d] = 0;
      }
    }
    std::filesystem::remove(path);
  }
  std::string diagonal = einsumModel("diagonal.onnx", "ii->i", {{3, 4}});
  EXPECT_EQ(output(e, ":load " + diagonal),
            "error: " + diagonal +
                ": node y (Einsum): the repeated index 'i' spans axes of sizes 3 and 4\n");
  std::filesystem::remove(diagonal);
}

namespace {

// An opset-13 model of one `op` node on x (1, 1, size, size) with INTS and STRING attributes.
std::string windowModel(const std::string &file, const std::string &op, int64_t size,
                        const std::vector<std::pair<std::string, std::vector<int64_t>>> &ints,
                        const std::string &autoPad) {
  onnx::ModelProto m = floatInputModel({1, 1, size, size});
  onnx::GraphProto *g = m.mutable_graph();
  std::vector<std::string> ins = {"x"};
  if (op == "Conv") {
    addFloats(g, "w", {1, 1, 3, 3});
    ins.push_back("w");
  }
  onnx::NodeProto *n = addNode(g, op, ins, "y");
  for (const auto &[name, values] : ints)
    setInts(n, name, values);
  setString(n, "auto_pad", autoPad);
  g->add_output()->set_name("y");
  return saveModel(m, file);
}

} // namespace

// auto_pad SAME_UPPER / SAME_LOWER: each output size is ceil(input / stride), the pads' odd cell
// at the end or the start; VALID pads nothing. Values by hand on a 3x3 (or 5x5) ramp.
TEST(Onnx, AutoPadSameKeepsTheSizeAndPlacesTheOddCell) {
  Engine e;
  auto ramp = [](int64_t size) {
    Tensor t({1, 1, size, size}, kFloat32);
    for (size_t i = 0; i < t.data.size(); ++i)
      t.data[i] = static_cast<double>(i);
    return t;
  };
  struct Case {
    std::string op, autoPad;
    int64_t size;
    std::vector<std::pair<std::string, std::vector<int64_t>>> ints;
    std::string padding;
    std::vector<double> values;
  };
  std::vector<Case> cases = {
      // a 2x2 window needs one cell: after the ramp (UPPER) or before it (LOWER)
      {"MaxPool",
       "SAME_UPPER",
       3,
       {{"kernel_shape", {2, 2}}},
       "(0, 0, 1, 1)",
       {4, 5, 5, 7, 8, 8, 7, 8, 8}},
      {"MaxPool",
       "SAME_LOWER",
       3,
       {{"kernel_shape", {2, 2}}},
       "(1, 1, 0, 0)",
       {0, 1, 2, 3, 4, 5, 6, 7, 8}},
      // the average leaves the padding out: (0 + 1 + 3 + 4) / 4 at the first cell, 8 / 1 last
      {"AveragePool",
       "SAME_LOWER",
       3,
       {{"kernel_shape", {2, 2}}},
       "(1, 1, 0, 0)",
       {0, 0.5, 1.5, 1.5, 2, 3, 4.5, 5, 6}},
      // 5 by stride 2 is 3 outputs: (3 - 1) * 2 + 3 - 5 = 2 cells, one on each side
      {"Conv",
       "SAME_UPPER",
       5,
       {{"strides", {2, 2}}},
       "(1, 1)",
       {12, 27, 24, 63, 108, 81, 72, 117, 84}},
      {"MaxPool", "VALID", 3, {{"kernel_shape", {2, 2}}}, "(0, 0, 0, 0)", {4, 5, 7, 8}},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.op + " " + c.autoPad);
    std::string path = windowModel("auto_pad.onnx", c.op, c.size, c.ints, c.autoPad);
    run(e, ":load " + path);
    std::string ir = output(e, ":ir");
    EXPECT_NE(ir.find("padding='" + c.padding + "'"), std::string::npos) << ir;
    for (int opt : {0, 3}) {
      Tensor got = runModel(path, {{"x", ramp(c.size)}}, opt);
      EXPECT_EQ(got.data, c.values) << "opt " << opt;
    }
    std::filesystem::remove(path);
  }
  std::string bad =
      windowModel("auto_pad_bad.onnx", "MaxPool", 3, {{"kernel_shape", {2, 2}}}, "SAME");
  expectLoadError(e, bad, "auto_pad SAME is not one of NOTSET, VALID, SAME_UPPER, SAME_LOWER");
}

// GroupNormalization at opset 18 (a scale and bias per group, spread over the group's channels)
// and 21 (per channel), by hand: two groups of two channels of two pixels, (1, 3, 5, 7) with
// mean 4 and variance 5 and (0, 0, 2, 6) with mean 2 and variance 6.
TEST(Onnx, GroupNormalizationPerGroupAndPerChannelScales) {
  Engine e;
  auto model = [](int64_t opset, int64_t groups, int64_t scales) {
    onnx::ModelProto m;
    m.set_ir_version(8);
    m.add_opset_import()->set_version(opset);
    onnx::GraphProto *g = m.mutable_graph();
    addInput(g, "x", {1, 4, 2});
    addInput(g, "scale", {scales});
    addInput(g, "bias", {scales});
    onnx::NodeProto *n = addNode(g, "GroupNormalization", {"x", "scale", "bias"}, "y");
    setInt(n, "num_groups", groups);
    setFloat(n, "epsilon", 0);
    g->add_output()->set_name("y");
    return saveModel(m, "group_norm_" + std::to_string(opset) + ".onnx");
  };
  Tensor x({1, 4, 2}, kFloat32);
  x.data = {1, 3, 5, 7, 0, 0, 2, 6};
  double s5 = std::sqrt(5.0), s6 = std::sqrt(6.0);
  // The second group scaled by 2 and shifted by 10, either way.
  std::vector<double> want = {-3 / s5,     -1 / s5,     1 / s5,      3 / s5,
                              10 - 4 / s6, 10 - 4 / s6, 10 + 0 / s6, 10 + 8 / s6};
  struct Case {
    int64_t opset;
    std::vector<double> scale, bias;
  };
  for (const Case &c : {Case{18, {1, 2}, {0, 10}}, Case{21, {1, 1, 2, 2}, {0, 0, 10, 10}}}) {
    std::string path = model(c.opset, 2, static_cast<int64_t>(c.scale.size()));
    Tensor scale({static_cast<int64_t>(c.scale.size())}, kFloat32), bias = scale;
    scale.data = c.scale;
    bias.data = c.bias;
    for (int opt : {0, 3}) {
      SCOPED_TRACE("opset " + std::to_string(c.opset) + ", opt " + std::to_string(opt));
      Tensor y = runModel(path, {{"x", x}, {"scale", scale}, {"bias", bias}}, opt);
      ASSERT_EQ(y.data.size(), want.size());
      for (size_t i = 0; i < want.size(); ++i)
        EXPECT_NEAR(y.data[i], want[i], 1e-5) << i;
    }
    std::filesystem::remove(path);
  }
  std::string bad = model(21, 3, 4);
  expectLoadError(e, bad, "(GroupNormalization): num_groups 3 does not divide the 4 channels");
}

namespace {

// A model of opset `opset` with float input x of `dims`, one node made by `build` (which adds
// its inputs' initializers) and graph output y.
std::string opsetModel(int64_t opset, const std::vector<int64_t> &dims,
                       const std::function<void(onnx::GraphProto *)> &build) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(opset);
  addInput(m.mutable_graph(), "x", dims);
  build(m.mutable_graph());
  m.mutable_graph()->add_output()->set_name("y");
  return saveModel(m, "opset" + std::to_string(opset) + ".onnx");
}

// 0, 1, 2, … in a float32 tensor of shape s.
Tensor rampOf(const Shape &s) {
  Tensor t(s, kFloat32);
  for (size_t i = 0; i < t.data.size(); ++i)
    t.data[i] = static_cast<double>(i);
  return t;
}

} // namespace

// The forms opsets 18 and 19 gave old operators, by hand on small ramps at opt 0 and 3: Split's
// num_outputs, Pad's axes input, reductions' axes input and noop_with_empty_axes, Resize's axes
// and keep_aspect_ratio_policy, Constant's value_ints and pools' dilations of 1; what they still
// cannot do is a one-line error.
TEST(Onnx, Opset18FormsOfSplitPadReduceResizeAndConstant) {
  Engine e;
  struct Case {
    std::string what;
    std::vector<int64_t> dims;
    std::function<void(onnx::GraphProto *)> build;
    std::vector<double> want;
  };
  std::vector<Case> cases = {
      {"Split into 3 and 2, the second",
       {1, 5},
       [](onnx::GraphProto *g) {
         onnx::NodeProto *n = addNode(g, "Split", {"x"}, "a");
         n->add_output("y");
         setInt(n, "axis", 1);
         setInt(n, "num_outputs", 2);
       },
       {3, 4}},
      {"Pad axis 1 only",
       {2, 2},
       [](onnx::GraphProto *g) {
         addInts(g, "pads", {1, 2});
         addInts(g, "axes", {-1});
         addNode(g, "Pad", {"x", "pads", "", "axes"}, "y");
       },
       {0, 0, 1, 0, 0, 0, 2, 3, 0, 0}},
      {"ReduceMean over input axes",
       {2, 3},
       [](onnx::GraphProto *g) {
         addInts(g, "axes", {1});
         setInt(addNode(g, "ReduceMean", {"x", "axes"}, "y"), "keepdims", 0);
       },
       {1, 4}},
      {"ReduceSumSquare without axes, a no-op",
       {3},
       [](onnx::GraphProto *g) {
         setInt(addNode(g, "ReduceSumSquare", {"x"}, "y"), "noop_with_empty_axes", 1);
       },
       {0, 1, 2}},
      {"ReduceL2 without axes, everything",
       {3},
       [](onnx::GraphProto *g) { addNode(g, "ReduceL2", {"x"}, "y"); },
       {std::sqrt(5.0)}},
      {"Resize H and W, not larger than 4x4",
       {1, 1, 2, 4},
       [](onnx::GraphProto *g) {
         addInts(g, "sizes", {4, 4});
         onnx::NodeProto *n = addNode(g, "Resize", {"x", "", "", "sizes"}, "y");
         setInts(n, "axes", {2, 3});
         setString(n, "keep_aspect_ratio_policy", "not_larger");
       },
       {0, 1, 2, 3, 4, 5, 6, 7}},
      {"Resize W only, not smaller than 3",
       {1, 1, 1, 2},
       [](onnx::GraphProto *g) {
         addInts(g, "sizes", {3});
         onnx::NodeProto *n = addNode(g, "Resize", {"x", "", "", "sizes"}, "y");
         setInts(n, "axes", {-1});
         setString(n, "keep_aspect_ratio_policy", "not_smaller");
       },
       // 2 -> 3 at scale 1.5: sources -1/6, 1/2 and 7/6 round (halves down) to 0, 0, 1
       {0, 0, 1}},
      {"Reshape by a Constant's value_ints",
       {2, 3},
       [](onnx::GraphProto *g) {
         onnx::NodeProto *c = addNode(g, "Constant", {}, "shape");
         setInts(c, "value_ints", {3, 2});
         addNode(g, "Reshape", {"x", "shape"}, "y");
       },
       {0, 1, 2, 3, 4, 5}},
      {"AveragePool with dilations of 1",
       {1, 1, 2, 2},
       [](onnx::GraphProto *g) {
         onnx::NodeProto *n = addNode(g, "AveragePool", {"x"}, "y");
         setInts(n, "kernel_shape", {2, 2});
         setInts(n, "dilations", {1, 1});
       },
       {1.5}},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.what);
    std::string path = opsetModel(19, c.dims, c.build);
    for (int opt : {0, 3}) {
      Tensor y = runModel(path, {{"x", rampOf(c.dims)}}, opt);
      ASSERT_EQ(y.data.size(), c.want.size()) << "opt " << opt;
      for (size_t i = 0; i < c.want.size(); ++i)
        EXPECT_NEAR(y.data[i], c.want[i], 1e-6) << "opt " << opt << ", element " << i;
    }
    std::filesystem::remove(path);
  }
  struct Bad {
    std::vector<int64_t> dims;
    std::function<void(onnx::GraphProto *)> build;
    std::string error;
  };
  std::vector<Bad> bad = {
      {{4},
       [](onnx::GraphProto *g) {
         onnx::NodeProto *n = addNode(g, "Split", {"x"}, "y");
         n->add_output("b");
         n->add_output("c");
         setInt(n, "num_outputs", 3);
       },
       "node y (Split): 4 cannot split into 3 parts of 2 and a smaller last one"},
      {{2, 2},
       [](onnx::GraphProto *g) {
         addInts(g, "pads", {1, 2});
         addInts(g, "axes", {0, 1});
         addNode(g, "Pad", {"x", "pads", "", "axes"}, "y");
       },
       "node y (Pad): pads has 2 values for 2 axes (it needs two per axis)"},
      {{2, 3},
       [](onnx::GraphProto *g) {
         addInts(g, "axes", {-4});
         addNode(g, "Unsqueeze", {"x", "axes"}, "y");
       },
       "node y (Unsqueeze): axis -4 is out of range for rank 3 or repeated"},
      {{2, 3},
       [](onnx::GraphProto *g) {
         addInts(g, "axes", {1, -3}); // -3 of the output's rank 4 is 1
         addNode(g, "Unsqueeze", {"x", "axes"}, "y");
       },
       "node y (Unsqueeze): axis -3 is out of range for rank 4 or repeated"},
      {{2, 3},
       [](onnx::GraphProto *g) {
         addInts(g, "starts", {1});
         addInts(g, "ends", {1});
         addNode(g, "Slice", {"x", "starts", "ends"}, "s");
         addNode(g, "Relu", {"s"}, "y");
       },
       "node y (Relu): input 0 ('s') has no elements (a dimension of size 0), which static "
       "shapes cannot hold"},
      {{1, 2, 4, 4},
       [](onnx::GraphProto *g) {
         addFloats(g, "rois", {3, 4});
         addInts(g, "images", {0, 0, 0});
         addNode(g, "RoiAlign", {"x", "rois", "images"}, "y");
       },
       "node y (RoiAlign): sampling_ratio 0 (samples sized by each region, which is data) is not "
       "supported; give a positive one"},
      {{1, 2, 4, 4},
       [](onnx::GraphProto *g) {
         addFloats(g, "grid", {1, 3, 3, 3});
         addNode(g, "GridSample", {"x", "grid"}, "y");
       },
       "node y (GridSample): the grid's shape must be known and (N, H_out, W_out, 2), N as the "
       "data's"},
      {{4, 4},
       [](onnx::GraphProto *g) { addNode(g, "Det", {"x"}, "y"); },
       "node y (Det): Det is supported for matrices up to 3×3, got 4×4"},
      {{2, 3, 4},
       [](onnx::GraphProto *g) { addNode(g, "Det", {"x"}, "y"); },
       "node y (Det): the matrices must be square, got 3×4"},
      {{1, 1, 2, 2},
       [](onnx::GraphProto *g) {
         onnx::NodeProto *n = addNode(g, "AveragePool", {"x"}, "y");
         setInts(n, "kernel_shape", {2, 2});
         setInts(n, "dilations", {2, 2});
       },
       "node y (AveragePool): dilations other than 1 are not supported for average pools, got "
       "(2, 2)"},
      {{1, 1, 2, 2},
       [](onnx::GraphProto *g) {
         onnx::NodeProto *n = addNode(g, "MaxPool", {"x"}, "y");
         setInts(n, "kernel_shape", {2, 2});
         setInts(n, "dilations", {2, 2});
       },
       "node y (MaxPool): the window is larger than the padded input"},
      {{1, 1, 8, 8},
       [](onnx::GraphProto *g) {
         onnx::NodeProto *n = addNode(g, "MaxPool", {"x"}, "y");
         setInts(n, "kernel_shape", {9, 9});
         setInts(n, "dilations", {1, 2});
         setInts(n, "pads", {4, 8, 4, 8});
       },
       "node y (MaxPool): dilations, or the Indices output, are supported for windows of at most "
       "64 cells (and for dilated windows on every d-th cell), got (9, 9)"},
      {{1, 1, 2, 2},
       [](onnx::GraphProto *g) {
         addInts(g, "sizes", {4, 4});
         onnx::NodeProto *n = addNode(g, "Resize", {"x", "", "", "sizes"}, "y");
         setInts(n, "axes", {2, 3});
         setInt(n, "antialias", 1);
       },
       "node y (Resize): antialias is not supported"},
      {{1, 1, 2, 2},
       [](onnx::GraphProto *g) {
         addInts(g, "sizes", {1, 1, 4});
         addNode(g, "Resize", {"x", "", "", "sizes"}, "y");
       },
       "node y (Resize): sizes must have 4 values (N, C, H, W), got 3"},
  };
  for (const Bad &b : bad) {
    std::string path = opsetModel(18, b.dims, b.build);
    expectLoadError(e, path, b.error);
  }
}

// Before opset 7, Add and the other arithmetic ops broadcast B into A from `axis` on: B (3) in
// A (2, 3, 2) at axis 1 reads B[j] at every (i, j, k); B that does not fit is refused.
TEST(Onnx, Opset6BroadcastAlignsTheSecondOperandAtItsAxis) {
  Engine e;
  auto model = [](int64_t axis, const std::vector<int64_t> &bDims) {
    onnx::ModelProto m;
    m.set_ir_version(3);
    m.add_opset_import()->set_version(6);
    onnx::GraphProto *g = m.mutable_graph();
    addInput(g, "x", {2, 3, 2});
    addInput(g, "b", bDims);
    onnx::NodeProto *n = addNode(g, "Add", {"x", "b"}, "y");
    setInt(n, "broadcast", 1);
    setInt(n, "axis", axis);
    g->add_output()->set_name("y");
    return saveModel(m, "opset6_add.onnx");
  };
  std::string path = model(1, {3});
  Tensor b({3}, kFloat32);
  b.data = {10, 20, 30};
  for (int opt : {0, 3}) {
    Tensor y = runModel(path, {{"x", rampOf({2, 3, 2})}, {"b", b}}, opt);
    EXPECT_EQ(y.data, (std::vector<double>{10, 11, 22, 23, 34, 35, 16, 17, 28, 29, 40, 41}))
        << "opt " << opt;
  }
  std::filesystem::remove(path);
  std::string bad = model(2, {3});
  expectLoadError(e, bad, "node y (Add): operand B (3,) does not fit into A (2, 3, 2) from axis 2");
}

// ConvTranspose of a 2x2 of ones by a 3x3 of ones: the full output counts the overlaps,
// ((1,2,2,1), (2,4,4,2), (2,4,4,2), (1,2,2,1)). Asymmetric pads crop it unevenly; output_shape
// and auto_pad fix its size, the odd cell of padding at the start unless SAME_UPPER; a size
// past the full output's end gets output_padding's cells (zeros here, no bias).
TEST(Onnx, ConvTransposePadsFromOutputShapeAndAutoPad) {
  Engine e;
  struct Case {
    std::string what;
    std::function<void(onnx::NodeProto *)> attrs;
    std::vector<double> want;
  };
  std::vector<Case> cases = {
      {"pads top 1, right 1",
       [](onnx::NodeProto *n) {
         setInts(n, "pads", {1, 0, 0, 1});
       },
       {2, 4, 4, 2, 4, 4, 1, 2, 2}},
      {"output_shape 3x3",
       [](onnx::NodeProto *n) {
         setInts(n, "output_shape", {3, 3});
       },
       {4, 4, 2, 4, 4, 2, 2, 2, 1}},
      {"SAME_UPPER",
       [](onnx::NodeProto *n) { setString(n, "auto_pad", "SAME_UPPER"); },
       {4, 4, 4, 4}},
      {"output_shape 5x4",
       [](onnx::NodeProto *n) {
         setInts(n, "output_shape", {5, 4});
       },
       {1, 2, 2, 1, 2, 4, 4, 2, 2, 4, 4, 2, 1, 2, 2, 1, 0, 0, 0, 0}},
  };
  auto model = [](const std::function<void(onnx::NodeProto *)> &attrs) {
    return opsetModel(13, {1, 1, 2, 2}, [&](onnx::GraphProto *g) {
      addFloats(g, "w", {1, 1, 3, 3});
      attrs(addNode(g, "ConvTranspose", {"x", "w"}, "y"));
    });
  };
  Tensor ones({1, 1, 2, 2}, kFloat32);
  ones.data = {1, 1, 1, 1};
  for (const Case &c : cases) {
    SCOPED_TRACE(c.what);
    std::string path = model(c.attrs);
    for (int opt : {0, 3})
      EXPECT_EQ(runModel(path, {{"x", ones}}, opt).data, c.want) << "opt " << opt;
    std::filesystem::remove(path);
  }
  // 1-D, run as 2-D on (N, C, 1, L): the full (1, 2, 2, 1) to 3 cells, the odd one cut first.
  std::string line = opsetModel(13, {1, 1, 2}, [](onnx::GraphProto *g) {
    addFloats(g, "w", {1, 1, 3});
    setInts(addNode(g, "ConvTranspose", {"x", "w"}, "y"), "output_shape", {3});
  });
  Tensor pair({1, 1, 2}, kFloat32);
  pair.data = {1, 1};
  for (int opt : {0, 3})
    EXPECT_EQ(runModel(line, {{"x", pair}}, opt).data, (std::vector<double>{2, 2, 1}))
        << "1-D, opt " << opt;
  std::filesystem::remove(line);
  std::string bad = model([](onnx::NodeProto *n) {
    setInts(n, "output_shape", {6, 4});
    setString(n, "auto_pad", "SAME_UPPER");
  });
  expectLoadError(e, bad,
                  "(ConvTranspose): output_shape (6, 4) would add cells before the "
                  "convolution's output");
}

// A rank-0 graph input is a variable of shape (): as an operand that broadcasts (Mul with a
// tensor, Gemm's C) it scales or shifts every element, an op that takes scalars (Cast) reads
// it, and `:run` takes a rank-0 TensorProto for it.
TEST(Onnx, ScalarGraphInputsBroadcast) {
  Engine e;
  auto model = [](const std::string &op) {
    onnx::ModelProto m;
    m.set_ir_version(8);
    m.add_opset_import()->set_version(13);
    onnx::GraphProto *g = m.mutable_graph();
    addInput(g, "x", {2, 3});
    addInput(g, "s", {});
    if (op == "Cast")
      setInt(addNode(g, "Cast", {"s"}, "y"), "to", onnx::TensorProto::FLOAT);
    else
      addNode(g, op, {"x", "s"}, "y");
    g->add_output()->set_name("y");
    return saveModel(m, "scalar_input_" + op + ".onnx");
  };
  std::string path = model("Mul");
  onnx::TensorProto s;
  s.set_data_type(onnx::TensorProto::FLOAT);
  s.add_float_data(2.5f);
  std::string sFile = tempPath("s.pb");
  std::ofstream(sFile, std::ios::binary) << s.SerializeAsString();
  run(e, ":load " + path);
  run(e, ":build");
  std::string ran = output(e, ":run x=ones s=" + sFile);
  EXPECT_NE(ran.find("values [2.5, 2.5, 2.5, 2.5, 2.5, 2.5]"), std::string::npos) << ran;
  std::filesystem::remove(path);
  std::string cast = model("Cast");
  run(e, ":load " + cast);
  run(e, ":build");
  ran = output(e, ":run s=" + sFile);
  EXPECT_NE(ran.find("output 0: shape () float32\n  values [2.5]\n"), std::string::npos) << ran;
  std::filesystem::remove(cast);
  std::filesystem::remove(sFile);
}

namespace {

// An integer initializer (uint8, int8: ONNX keeps them in int32_data) of the given dims.
void addIntegers(onnx::GraphProto *g, const std::string &name, const std::vector<int64_t> &dims,
                 int type, const std::vector<int32_t> &v) {
  onnx::TensorProto *t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(type);
  for (int64_t d : dims)
    t->add_dims(d);
  for (int32_t x : v)
    t->add_int32_data(x);
}

} // namespace

// QuantizeLinear and DequantizeLinear by hand at opt 0 and 3. Per tensor into uint8: x / 2
// rounded halves to even (0.75 → 1, 1.25 → 1, -1.5 → -2, 126.7 → 127), plus 10, saturated
// (310 → 255). Per channel (axis 1) into int8: scales 0.5 and 2, zero points 0 and -1 (-151
// saturates to -128); and back, (x - zero point) · scale. DynamicQuantizeLinear of
// (0, 2, -1, 4.5): scale 5.5 / 255, zero point round(1 / scale) = round(46.36) = 46, and
// round(x / scale) + 46 = 46, 93 + 46, -46 + 46, 209 + 46 saturated to 255; its scale and zero
// point are one element each. A float zero point is a one-line error.
TEST(Onnx, QuantizeAndDequantizeLinear) {
  Engine e;
  auto quantize = [](bool perChannel) {
    return opsetModel(13, perChannel ? std::vector<int64_t>{1, 2, 2} : std::vector<int64_t>{1, 6},
                      [&](onnx::GraphProto *g) {
                        if (perChannel) {
                          addFloats(g, "s", {2}, [](int64_t i) { return i ? 2.0f : 0.5f; });
                          addIntegers(g, "z", {2}, onnx::TensorProto::INT8, {0, -1});
                        } else {
                          addFloats(g, "s", {}, [](int64_t) { return 2.0f; });
                          addIntegers(g, "z", {}, onnx::TensorProto::UINT8, {10});
                        }
                        addNode(g, "QuantizeLinear", {"x", "s", "z"}, "y");
                      });
  };
  for (int opt : {0, 3}) {
    SCOPED_TRACE("opt " + std::to_string(opt));
    Tensor x({1, 6}, kFloat32);
    x.data = {0, 1.5, 2.5, -3, 600, 253.4};
    Tensor q = runModel(quantize(false), {{"x", x}}, opt);
    EXPECT_EQ(q.dtype, kUint8);
    EXPECT_EQ(q.data, (std::vector<double>{10, 11, 11, 8, 255, 137}));
    Tensor c({1, 2, 2}, kFloat32);
    c.data = {1, -1, 100, -300};
    Tensor qc = runModel(quantize(true), {{"x", c}}, opt);
    EXPECT_EQ(qc.dtype, kInt8);
    EXPECT_EQ(qc.data, (std::vector<double>{2, -2, 49, -128}));
    onnx::ModelProto m;
    m.set_ir_version(8);
    m.add_opset_import()->set_version(13);
    onnx::GraphProto *g = m.mutable_graph();
    addInput(g, "q", {1, 2, 2}, onnx::TensorProto::INT8);
    addFloats(g, "s", {2}, [](int64_t i) { return i ? 2.0f : 0.5f; });
    addIntegers(g, "z", {2}, onnx::TensorProto::INT8, {0, -1});
    addNode(g, "DequantizeLinear", {"q", "s", "z"}, "y");
    g->add_output()->set_name("y");
    Tensor back = runModel(saveModel(m, "dequantize.onnx"), {{"q", qc}}, opt);
    EXPECT_EQ(back.dtype, kFloat32);
    EXPECT_EQ(back.data, (std::vector<double>{1, -1, 100, -254}));
  }
  std::string dynamic = opsetModel(13, {4}, [](onnx::GraphProto *g) {
    onnx::NodeProto *d = addNode(g, "DynamicQuantizeLinear", {"x"}, "y");
    d->add_output("scale");
    d->add_output("zero");
    g->add_output()->set_name("scale");
    g->add_output()->set_name("zero");
  });
  Tensor x({4}, kFloat32);
  x.data = {0, 2, -1, 4.5};
  for (int opt : {0, 3}) {
    std::vector<Tensor> got = runModelOutputs(dynamic, {{"x", x}}, opt);
    ASSERT_EQ(got.size(), 3u); // scale and zero, then y (opsetModel declares y last)
    EXPECT_EQ(got[0].data, (std::vector<double>{static_cast<double>(5.5f / 255)}));
    EXPECT_EQ(got[1].data, (std::vector<double>{46}));
    EXPECT_EQ(got[2].data, (std::vector<double>{46, 139, 0, 255}));
  }
  expectLoadError(e,
                  opsetModel(13, {1, 2},
                             [](onnx::GraphProto *g) {
                               addFloats(g, "s", {});
                               addFloats(g, "z", {});
                               addNode(g, "QuantizeLinear", {"x", "s", "z"}, "y");
                             }),
                  "node y (QuantizeLinear): the zero point (input 2) must be of type uint8, int8, "
                  "uint16 or int16");
}

// A model of one node `op` on graph input `x` (dims, element type), its other inputs made by
// `build`, output y.
std::string integerModel(const std::string &op, const std::vector<int64_t> &dims, int type,
                         const std::vector<std::string> &ins,
                         const std::function<void(onnx::GraphProto *, onnx::NodeProto *)> &build) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  onnx::GraphProto *g = m.mutable_graph();
  addInput(g, "x", dims, type);
  onnx::NodeProto *n = addNode(g, op, ins, "y");
  build(g, n);
  g->add_output()->set_name("y");
  return saveModel(m, op + ".onnx");
}

// The integer ops by hand, at opt 0, 2 and 3.
// QLinearMatMul: a = (12 20; 30 40) less its zero point 10 is (2 10; 20 30); b = (1 -1; 2 127)
// (zero point 0); a·b = (22 1268; 80 3790); times a_scale · b_scale / y_scale = 0.5 · (0.25, 1) /
// 0.5 per column, plus y's zero point 5 = (10.5 1273; 25 3795): ONNX adds the zero point before
// rounding, so 10.5 rounds to even 10 (not round(5.5) + 5 = 11), and 1273, 3795 saturate to 255.
// ConvInteger: x = 1..9 (3x3) less 1 is 0..8; weights (1 2; 3 4) with zero point 0 and (1 1; 1 2)
// with zero point 1, i.e. (0 0; 0 1); pads top 1, left 1: the padding is 0 after the shift. Channel
// 0 is 0 4 11 / 12 27 37 / 30 57 67 by hand; channel 1 reads the shifted x as it is.
// QLinearConv, no padding: accumulators (27 37 57 67) and (4 5 7 8) + bias 2, times 0.5 · 1 and
// 0.5 · 0.25 (y_scale 1), plus -3: 11.5 16.5 26.5 31.5 -> 12 16 26 32 (halves to even), and
// -2.25 -2.125 -1.875 -1.75 -> -2.
TEST(Onnx, IntegerProductsAndConvolutionsByHand) {
  std::string matmul = integerModel(
      "QLinearMatMul", {2, 2}, onnx::TensorProto::UINT8,
      {"x", "as", "az", "b", "bs", "bz", "ys", "yz"}, [](onnx::GraphProto *g, onnx::NodeProto *) {
        addFloats(g, "as", {}, [](int64_t) { return 0.5f; });
        addIntegers(g, "az", {}, onnx::TensorProto::UINT8, {10});
        addIntegers(g, "b", {2, 2}, onnx::TensorProto::INT8, {1, -1, 2, 127});
        addFloats(g, "bs", {2}, [](int64_t i) { return i ? 1.0f : 0.25f; });
        addIntegers(g, "bz", {2}, onnx::TensorProto::INT8, {0, 0});
        addFloats(g, "ys", {}, [](int64_t) { return 0.5f; });
        addIntegers(g, "yz", {}, onnx::TensorProto::UINT8, {5});
      });
  Tensor a({2, 2}, kUint8);
  a.data = {12, 20, 30, 40};
  auto weights = [](onnx::GraphProto *g, int type) {
    addIntegers(g, "w", {2, 1, 2, 2}, type, {1, 2, 3, 4, 1, 1, 1, 2});
    addIntegers(g, "wz", {2}, type, {0, 1});
    addIntegers(g, "xz", {}, onnx::TensorProto::UINT8, {1});
  };
  std::string convInteger =
      integerModel("ConvInteger", {1, 1, 3, 3}, onnx::TensorProto::UINT8, {"x", "w", "xz", "wz"},
                   [&](onnx::GraphProto *g, onnx::NodeProto *n) {
                     weights(g, onnx::TensorProto::UINT8);
                     setInts(n, "pads", {1, 1, 0, 0});
                   });
  std::string qconv =
      integerModel("QLinearConv", {1, 1, 3, 3}, onnx::TensorProto::UINT8,
                   {"x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "bias"},
                   [&](onnx::GraphProto *g, onnx::NodeProto *) {
                     weights(g, onnx::TensorProto::UINT8);
                     addFloats(g, "xs", {}, [](int64_t) { return 0.5f; });
                     addFloats(g, "ws", {2}, [](int64_t i) { return i ? 0.25f : 1.0f; });
                     addFloats(g, "ys", {}, [](int64_t) { return 1.0f; });
                     addIntegers(g, "yz", {}, onnx::TensorProto::INT8, {-3});
                     addIntegers(g, "bias", {2}, onnx::TensorProto::INT32, {2, 2});
                   });
  Tensor x({1, 1, 3, 3}, kUint8);
  x.data = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  for (int opt : {0, 2, 3}) {
    SCOPED_TRACE("opt " + std::to_string(opt));
    Tensor y = runModel(matmul, {{"x", a}}, opt);
    EXPECT_EQ(y.dtype, kUint8);
    EXPECT_EQ(y.data, (std::vector<double>{10, 255, 25, 255}));
    Tensor c = runModel(convInteger, {{"x", x}}, opt);
    EXPECT_EQ(c.dtype, kInt32);
    EXPECT_EQ(c.shape, (Shape{1, 2, 3, 3}));
    EXPECT_EQ(c.data, (std::vector<double>{0, 4, 11, 12, 27, 37, 30, 57, 67, //
                                           0, 1, 2, 3, 4, 5, 6, 7, 8}));
    Tensor q = runModel(qconv, {{"x", x}}, opt);
    EXPECT_EQ(q.dtype, kInt8);
    EXPECT_EQ(q.data, (std::vector<double>{12, 16, 26, 32, -2, -2, -2, -2}));
  }
}

// Bad quantization parameters are one-line errors naming the node: a scale of zero, a per-axis
// scale whose length is not its axis's, a zero point of another type than its input.
TEST(Onnx, BadQuantizationParametersNameTheNode) {
  Engine e;
  expectLoadError(e,
                  integerModel("QLinearMatMul", {2, 2}, onnx::TensorProto::UINT8,
                               {"x", "s", "z", "x", "s", "z", "zero", "z"},
                               [](onnx::GraphProto *g, onnx::NodeProto *) {
                                 addFloats(g, "s", {});
                                 addFloats(g, "zero", {}, [](int64_t) { return 0.0f; });
                                 addIntegers(g, "z", {}, onnx::TensorProto::UINT8, {0});
                               }),
                  "node y (QLinearMatMul): input 6 (a scale) must be positive and finite, got 0");
  expectLoadError(e,
                  integerModel("QuantizeLinear", {1, 2, 2}, onnx::TensorProto::FLOAT,
                               {"x", "s", "z"},
                               [](onnx::GraphProto *g, onnx::NodeProto *) {
                                 addFloats(g, "s", {3});
                                 addIntegers(g, "z", {2}, onnx::TensorProto::INT8, {0, 0});
                               }),
                  "node y (QuantizeLinear): input 1 has 3 elements, but axis 1 has 2");
  expectLoadError(e,
                  integerModel("ConvInteger", {1, 1, 3, 3}, onnx::TensorProto::INT8,
                               {"x", "w", "xz"},
                               [](onnx::GraphProto *g, onnx::NodeProto *) {
                                 addIntegers(g, "w", {1, 1, 1, 1}, onnx::TensorProto::INT8, {1});
                                 addIntegers(g, "xz", {}, onnx::TensorProto::UINT8, {1});
                               }),
                  "node y (ConvInteger): input 2 (input 0's zero point) must be of its type int8, "
                  "got uint8");
}

// A graph output that import computed as a scalar constant (Size of a known shape) is a param of
// shape (): 2 x 3 has 6 elements.
TEST(Onnx, AScalarConstantOutputIsOneElement) {
  Engine e;
  std::string path =
      opsetModel(13, {2, 3}, [](onnx::GraphProto *g) { addNode(g, "Size", {"x"}, "y"); });
  for (int opt : {0, 3}) {
    Tensor y = runModel(path, {{"x", rampOf({2, 3})}}, opt);
    EXPECT_TRUE(y.shape.isScalar()) << shapeToTuple(y.shape);
    EXPECT_EQ(y.data, (std::vector<double>{6}));
  }
}

// Arithmetic on scalars alone stays rank 0 (a windowed attention's Mod of a rank-0 constant by
// another), and a tensor modulo a rank-0 constant broadcasts: by hand, fmod(0..5, 4) and
// 10 mod 4 = 2 added to each.
TEST(Onnx, ScalarArithmeticStaysRankZero) {
  Engine e; // registers the passes
  std::string path = opsetModel(13, {6}, [](onnx::GraphProto *g) {
    for (auto [name, v] : {std::pair<const char *, float>{"four", 4.0f}, {"ten", 10.0f}}) {
      onnx::TensorProto *t = g->add_initializer(); // rank 0
      t->set_name(name);
      t->set_data_type(onnx::TensorProto::FLOAT);
      t->add_float_data(v);
    }
    setInt(addNode(g, "Mod", {"ten", "four"}, "r"), "fmod", 1);
    setInt(addNode(g, "Mod", {"x", "four"}, "m"), "fmod", 1);
    addNode(g, "Add", {"m", "r"}, "y");
  });
  for (int opt : {0, 3}) {
    Tensor y = runModel(path, {{"x", rampOf({6})}}, opt);
    EXPECT_EQ(y.shape, (Shape{6}));
    EXPECT_EQ(y.data, (std::vector<double>{2, 3, 4, 5, 2, 3}));
  }
  std::filesystem::remove(path);
}

// GlobalAveragePool and GlobalMaxPool over 1-D and 3-D spatial axes (a signal, a video): the mean
// and max of each channel, by hand on a ramp, at opt_level 0 and 3; data without a spatial axis
// is refused at :load, naming the node.
TEST(Onnx, GlobalPoolsOverAnyNumberOfSpatialAxes) {
  Engine e;
  for (const std::vector<int64_t> &dims :
       {std::vector<int64_t>{1, 2, 3}, std::vector<int64_t>{2, 2, 2, 1, 3}}) {
    for (const char *op : {"GlobalAveragePool", "GlobalMaxPool"}) {
      SCOPED_TRACE(std::string(op) + " rank " + std::to_string(dims.size()));
      onnx::ModelProto m = floatInputModel(dims);
      addNode(m.mutable_graph(), op, {"x"}, "y");
      m.mutable_graph()->add_output()->set_name("y");
      std::string path = saveModel(m, "global_pool.onnx");
      Tensor x(Shape(dims.begin(), dims.end()), kFloat32);
      for (size_t i = 0; i < x.data.size(); ++i)
        x.data[i] = static_cast<double>((i * 7) % 11);
      // Each (n, c) row holds `per` consecutive values of the ramp.
      int64_t per = x.size() / (dims[0] * dims[1]);
      std::vector<double> want;
      for (int64_t r = 0; r < dims[0] * dims[1]; ++r) {
        double sum = 0, best = -1;
        for (int64_t i = 0; i < per; ++i) {
          sum += x.data[r * per + i];
          best = std::max(best, x.data[r * per + i]);
        }
        want.push_back(std::string(op) == "GlobalMaxPool" ? best : sum / static_cast<double>(per));
      }
      for (int opt : {0, 3}) {
        Tensor got = runModel(path, {{"x", x}}, opt);
        Shape shape(dims.begin(), dims.begin() + 2);
        shape.resize(dims.size(), 1);
        EXPECT_EQ(got.shape, shape) << "opt " << opt;
        ASSERT_EQ(got.data.size(), want.size());
        for (size_t i = 0; i < want.size(); ++i)
          EXPECT_NEAR(got.data[i], want[i], 1e-5) << "opt " << opt << " at " << i;
      }
      std::filesystem::remove(path);
    }
  }
  onnx::ModelProto m = floatInputModel({2, 3});
  addNode(m.mutable_graph(), "GlobalAveragePool", {"x"}, "y");
  m.mutable_graph()->add_output()->set_name("y");
  expectLoadError(e, saveModel(m, "global_pool_2d.onnx"),
                  "data must be (N, C, D1, …) with at least one spatial axis, got (2, 3)");
}

// A weight shared through Identity (as torch.onnx.export writes the equal initializers of
// deep-copied layers) is read as the initializer itself: MatMul by it becomes dense over its
// transpose (tiled), no param is added for the Identity's output, and the product is x · W by
// hand at opt_level 0 and 3.
TEST(Onnx, AWeightSharedThroughIdentityIsTheInitializerItself) {
  Engine e;
  onnx::ModelProto m = floatInputModel({2, 3});
  onnx::GraphProto *g = m.mutable_graph();
  addFloats(g, "W", {3, 40}, [](int64_t i) { return static_cast<float>(i % 7) - 3; });
  addNode(g, "Identity", {"W"}, "W_shared");
  addNode(g, "MatMul", {"x", "W_shared"}, "y");
  g->add_output()->set_name("y");
  std::string path = saveModel(m, "identity_weight.onnx");
  frontend::OnnxModel model = frontend::importOnnx(path);
  EXPECT_EQ(model.params.count("W_shared"), 0u);
  ASSERT_EQ(model.params.count("y_weight"), 1u);
  EXPECT_EQ(model.params.at("y_weight").shape(), (Shape{40, 3}));
  Tensor x({2, 3}, kFloat32);
  x.data = {1, 2, 3, -1, 0, 2};
  for (int opt : {0, 3}) {
    Tensor y = runModel(path, {{"x", x}}, opt);
    ASSERT_EQ(y.shape, (Shape{2, 40})) << "opt " << opt;
    for (int64_t r = 0; r < 2; ++r)
      for (int64_t j = 0; j < 40; ++j) {
        double want = 0;
        for (int64_t k = 0; k < 3; ++k)
          want += x.data[r * 3 + k] * static_cast<double>((k * 40 + j) % 7 - 3);
        EXPECT_EQ(y.data[r * 40 + j], want) << "opt " << opt << " at " << r << ", " << j;
      }
  }
  std::filesystem::remove(path);
}

// Two layers that share a weight (one through Identity, as the exporter writes deep-copied
// layers) share its transpose too: one `_weight` param, named after the first MatMul, not a
// copy per layer (a BERT-sized export's :load held twelve); at opt_level 3 the two denses read
// one packed weight. The values are x · W · W' by hand.
TEST(Onnx, LayersSharingAWeightShareItsTransposeAndPacking) {
  Engine e;
  onnx::ModelProto m = floatInputModel({16, 16});
  onnx::GraphProto *g = m.mutable_graph();
  addFloats(g, "W", {16, 16}, [](int64_t i) { return static_cast<float>(i % 5) - 2; });
  addNode(g, "Identity", {"W"}, "W_shared");
  addNode(g, "MatMul", {"x", "W"}, "h");
  addNode(g, "MatMul", {"h", "W_shared"}, "y");
  g->add_output()->set_name("y");
  std::string path = saveModel(m, "shared_weight.onnx");
  frontend::OnnxModel model = frontend::importOnnx(path);
  EXPECT_EQ(model.params.size(), 1u);
  EXPECT_EQ(model.params.count("h_weight"), 1u);
  Tensor x({16, 16}, kFloat32);
  for (int64_t i = 0; i < x.size(); ++i)
    x.data[i] = static_cast<double>(i % 3) - 1;
  auto w = [](int64_t k, int64_t j) { return static_cast<double>((k * 16 + j) % 5 - 2); };
  for (int opt : {0, 3}) {
    Tensor y = runModel(path, {{"x", x}}, opt);
    ASSERT_EQ(y.shape, (Shape{16, 16})) << "opt " << opt;
    for (int64_t r = 0; r < 16; ++r)
      for (int64_t j = 0; j < 16; ++j) {
        double want = 0;
        for (int64_t k = 0; k < 16; ++k) {
          double h = 0;
          for (int64_t i = 0; i < 16; ++i)
            h += x.data[r * 16 + i] * w(i, k);
          want += h * w(k, j);
        }
        EXPECT_EQ(y.data[r * 16 + j], want) << "opt " << opt << " at " << r << ", " << j;
      }
  }
  run(e, ":set target llvm -mcpu=znver4\n:load " + path);
  std::string built = output(e, ":build opt_level=3");
  EXPECT_NE(built.find("params h_weight_pack)"), std::string::npos) << built;
  EXPECT_EQ(built.find("y_weight"), std::string::npos) << built;
  std::filesystem::remove(path);
}

// Compress along an axis and over the flattened input, by a constant condition shorter than
// the axis (the rest dropped); a condition that is not a constant, or selects nothing, is
// refused at :load in one line.
TEST(Onnx, CompressTakesWhereTheConditionHolds) {
  Engine e; // registers the passes the importer runs
  auto model = [](const std::vector<int> &cond, std::optional<int64_t> axis, bool condInput) {
    onnx::ModelProto m = floatInputModel({3, 4});
    onnx::GraphProto *g = m.mutable_graph();
    if (condInput) {
      addInput(g, "c", {static_cast<int64_t>(cond.size())}, onnx::TensorProto::BOOL);
    } else {
      onnx::TensorProto *t = g->add_initializer();
      t->set_name("c");
      t->set_data_type(onnx::TensorProto::BOOL);
      t->add_dims(static_cast<int64_t>(cond.size()));
      for (int v : cond)
        t->add_int32_data(v);
    }
    onnx::NodeProto *n = addNode(g, "Compress", {"x", "c"}, "y");
    if (axis)
      setInt(n, "axis", *axis);
    g->add_output()->set_name("y");
    return saveModel(m, "compress.onnx");
  };
  Tensor x({3, 4}, kFloat32);
  for (size_t i = 0; i < 12; ++i)
    x.data[i] = static_cast<double>(i);
  for (int opt : {0, 3}) {
    // axis 1, condition (1, 0, 1): columns 0 and 2 (column 3 is past the condition).
    std::string p = model({1, 0, 1}, 1, false);
    Tensor y = runModel(p, {{"x", x}}, opt);
    EXPECT_EQ(y.shape, (Shape{3, 2}));
    EXPECT_EQ(y.data, (std::vector<double>{0, 2, 4, 6, 8, 10})) << opt;
    // axis -2: row 1 only.
    p = model({0, 1}, -2, false);
    y = runModel(p, {{"x", x}}, opt);
    EXPECT_EQ(y.data, (std::vector<double>{4, 5, 6, 7})) << opt;
    // No axis: the flattened input's elements 1, 3 and 4.
    p = model({0, 1, 0, 1, 1}, std::nullopt, false);
    y = runModel(p, {{"x", x}}, opt);
    EXPECT_EQ(y.data, (std::vector<double>{1, 3, 4})) << opt;
    std::filesystem::remove(p);
  }
  expectLoadError(e, model({1, 0}, 0, true),
                  "node y (Compress): condition must be a constant (an initializer or Constant)");
  expectLoadError(e, model({0, 0}, 0, false),
                  "node y (Compress): the condition selects nothing (an empty output)");
  expectLoadError(e, model({1, 0, 1, 1}, 0, false),
                  "node y (Compress): condition has 4 values for an axis of 3");
}
