// StoredParamsTest: weights held once and in their own dtype — stored tensors, the interpreter's
// values asked for when reached, the runtime binding its library's params, :build reading the
// session's params in place.
#include "TestUtil.h"

#include "backend/Build.h"
#include "backend/GraphExecutor.h"
#include "core/Buffers.h"
#include "core/DType.h"
#include "core/Interpreter.h"

#include <cmath>

using namespace loupe;
using namespace loupe::test;

namespace {

TEST(StoredTensor, HoldsEveryDTypeInItsOwnWidthAndLoadsTheSameValues) {
  std::vector<Tensor> ts = tensorsOfEveryWidth();
  for (const Tensor &t : ts) {
    StoredTensor s(t);
    EXPECT_EQ(s.shape(), t.shape);
    EXPECT_EQ(s.dtype(), t.dtype);
    // A float32 weight takes 4 bytes an element, not a double's 8.
    EXPECT_EQ(s.numBytes(), static_cast<size_t>(t.size() * dtypeBytes(t.dtype)));
    Tensor back = s.load();
    EXPECT_EQ(back.shape, t.shape);
    EXPECT_EQ(back.dtype, t.dtype);
    EXPECT_EQ(back.data, t.data) << dtypeName(t.dtype);
  }
  // Copies share the bytes (a built library's params are not duplicated by being passed on),
  // 64-byte aligned as kernels' vector loads want them.
  StoredTensor a(ts[0]);
  StoredTensor b = a;
  EXPECT_EQ(a.bytes(), b.bytes());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a.bytes()) % 64, 0u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(StoredTensor({2}, kInt8, "ab").bytes()) % 64, 0u);
  // Bytes that are not the shape's count are refused by name.
  expectError(
      [] {
        StoredTensor({2, 3}, kFloat32, std::string(20, '\0'));
      },
      "a stored tensor of shape [2, 3] needs 24 bytes, not 20");
}

TEST(InterpretFrom, AsksForAVariableForEachNodeThatReadsIt) {
  Engine e;
  run(e, "a = Variable(\"a\", shape=(2,), dtype=0)\nb = Variable(\"b\", shape=(2,), dtype=0)\n"
         "y = exp(a) + b * b + a\nz = Group([y, b])\n:graph z");
  Graph g = applyPasses(e.current()->graph, {"InferShape", "InferType"});
  std::vector<std::string> asked;
  auto source = [&](const std::string &name) -> std::optional<Tensor> {
    asked.push_back(name);
    return tensor({2}, {name == "a" ? 0.0 : 1.0, 2});
  };
  std::vector<Tensor> out = interpretFrom(g, source, {{}, {}, true});
  // a, read by exp and by the last add, is asked for by each (and not held between them); b, an
  // output, once where it is; b * b reads it once.
  EXPECT_EQ(asked, (std::vector<std::string>{"a", "b", "a"}));
  // Without askPerReader, each once, where it is.
  asked.clear();
  EXPECT_EQ(interpretFrom(g, source)[0].data, out[0].data);
  EXPECT_EQ(asked, (std::vector<std::string>{"a", "b"}));
  ASSERT_EQ(out.size(), 2u);
  double e2 = roundToDType(std::exp(2.0), kFloat32);
  EXPECT_EQ(out[0].data, (std::vector<double>{2, roundToDType(e2 + 4, kFloat32) + 2}));
  EXPECT_EQ(out[1].data, (std::vector<double>{1, 2}));
  // A source without a value for a variable: the variable is named, as for a map.
  expectError(
      [&] { interpretFrom(g, [](const std::string &) { return std::optional<Tensor>(); }); },
      "no value given for variable 'a'");
}

TEST(InterpretFrom, ASinkIsToldEachOutputOnceNothingMoreReadsIt) {
  Engine e;
  run(e, "a = Variable(\"a\", shape=(2,), dtype=0)\nb = Variable(\"b\", shape=(2,), dtype=0)\n"
         "y1 = exp(a)\ny2 = y1 + b\nz = Group([b, y1, y2, y1])\n:graph z");
  Graph g = applyPasses(e.current()->graph, {"InferShape", "InferType"});
  std::map<std::string, Tensor> in = {{"a", tensor({2}, {0, 1})}, {"b", tensor({2}, {1, 2})}};
  std::vector<std::pair<size_t, std::vector<double>>> told;
  std::vector<Tensor> left =
      interpretFrom(g, [&](const std::string &name) { return std::optional<Tensor>(in.at(name)); },
                    {NodeObserver(),
                     [&](size_t k, Tensor v) {
                       told.push_back({k, v.data});
                     },
                     false});
  double e1 = roundToDType(std::exp(1.0), kFloat32);
  // y1 and b are read by y2's node, so they leave right after it, in its inputs' order; y1, an
  // output twice, is told twice. Every output is told, and nothing is left in the result.
  std::vector<std::pair<size_t, std::vector<double>>> want = {
      {2, {2, roundToDType(e1 + 2, kFloat32)}}, {1, {1, e1}}, {3, {1, e1}}, {0, {1, 2}}};
  EXPECT_EQ(told, want);
  ASSERT_EQ(left.size(), 4u);
  for (const Tensor &t : left)
    EXPECT_TRUE(t.data.empty());
  // Without a sink the outputs are the result, as interpret() gives them.
  std::vector<Tensor> all =
      interpretFrom(g, [&](const std::string &name) { return std::optional<Tensor>(in.at(name)); });
  ASSERT_EQ(all.size(), 4u);
  EXPECT_EQ(all[3].data, (std::vector<double>{1, e1}));
}

const char *kScaled = "x = Variable(\"x\", shape=(1, 4), dtype=0)\n"
                      "w = Variable(\"w\", shape=(3, 4), dtype=0)\n"
                      "y = dense(x, w, units=3, use_bias=False)\n:graph y";

TEST(GraphRuntime, BindsItsLibrarysParamsAndTakesANewValueForOne) {
  Engine e;
  run(e, kScaled);
  backend::BuildOptions o;
  o.params["w"] = tensor({3, 4}, {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 1});
  Graph deploy = backend::build(e.current()->graph, o, PassContext{});
  ASSERT_EQ(backend::builtLibrary(deploy)->params.count("w"), 1u);
  backend::GraphRuntime rt(deploy);
  rt.setInput("x", tensor({1, 4}, {1, 2, 3, 4})); // w is the library's, bound already
  rt.run();
  EXPECT_EQ(rt.outputs()[0].data, (std::vector<double>{1, 2, 7}));
  rt.setInput("w", tensor({3, 4}, std::vector<double>(12, 0.5)));
  rt.run();
  EXPECT_EQ(rt.outputs()[0].data, (std::vector<double>{5, 5, 5}));
  // The library's bytes, which runtimes read in place, were not written: another runtime of it
  // computes with the built weight.
  EXPECT_EQ(backend::builtLibrary(deploy)->params.at("w").load().data,
            (std::vector<double>{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 1}));
  backend::GraphRuntime other(deploy);
  other.setInput("x", tensor({1, 4}, {1, 2, 3, 4}));
  other.run();
  EXPECT_EQ(other.outputs()[0].data, (std::vector<double>{1, 2, 7}));
  // runDeployGraph takes the data inputs alone; an input neither given nor a param is named.
  EXPECT_EQ(backend::runDeployGraph(deploy, {{"x", tensor({1, 4}, {1, 1, 1, 1})}}).outputs[0].data,
            (std::vector<double>{1, 1, 2}));
  expectError([&] { backend::runDeployGraph(deploy, {}); }, "run: no value for input 'x'");
}

TEST(BuildParams, TheSessionsParamsAreHeldStoredAndSharedWithTheBuild) {
  Engine e;
  run(e, ":model mlp batch=2");
  const StoredTensors &params = e.modelParams();
  ASSERT_EQ(params.size(), 6u);
  // Held in their own dtype: fc1's float32 weight in 4 bytes an element.
  EXPECT_EQ(params.at("fc1_weight").numBytes(), 128u * 784 * 4);
  std::map<std::string, const void *> where;
  for (const auto &[name, t] : params)
    where[name] = t.bytes();
  std::map<std::string, Tensor> before = loadAll(params);
  // At opt_level 1 nothing is precomputed: the library's params are the session's very bytes.
  run(e, ":build opt_level=1");
  for (const auto &[name, t] : backend::builtLibrary(e.current()->graph)->params)
    EXPECT_EQ(t.bytes(), where.at(name)) << name;
  run(e, ":undo");
  // At opt_level 3 they are read in place and left as they were.
  run(e, ":build opt_level=3");
  std::string ran = output(e, ":run seed=5");
  for (const auto &[name, t] : e.modelParams()) {
    EXPECT_EQ(t.bytes(), where.at(name)) << name;
    EXPECT_EQ(t.load().data, before.at(name).data) << name;
  }
  // And the build is the one a copy of them gives: the same outputs on the same inputs.
  backend::BuildOptions copied;
  copied.optLevel = 3;
  copied.params = before;
  copied.shapes = {{"data", {2, 1, 28, 28}}};
  run(e, ":undo");
  Graph deploy = backend::build(e.current()->graph, copied, PassContext{});
  run(e, ":build opt_level=3");
  std::string again = output(e, ":run seed=5");
  EXPECT_EQ(ran, again);
  Tensor x({2, 1, 28, 28}, kFloat32);
  for (size_t i = 0; i < x.data.size(); ++i)
    x.data[i] = roundToDType(std::sin(0.01 * static_cast<double>(i)), kFloat32);
  std::vector<Tensor> fromShared =
      backend::runDeployGraph(e.current()->graph, {{"data", x}}).outputs;
  std::vector<Tensor> fromCopy = backend::runDeployGraph(deploy, {{"data", x}}).outputs;
  ASSERT_EQ(fromShared.size(), 1u);
  EXPECT_EQ(fromShared[0].data, fromCopy[0].data);
}

TEST(BuildParams, SharedParamsAreReadOnlyAndMayNameOtherGraphsVariables) {
  Engine e;
  run(e, kScaled);
  StoredTensors session = {
      {"w", StoredTensor(tensor({3, 4}, {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 1}))},
      {"other", StoredTensor(tensor({2}, {1, 2}))}}; // another graph's variable
  backend::BuildOptions o;
  o.sharedParams = &session;
  Graph deploy = backend::build(e.current()->graph, o, PassContext{});
  EXPECT_EQ(backend::builtLibrary(deploy)->params.size(), 1u);
  EXPECT_EQ(backend::runDeployGraph(deploy, {{"x", tensor({1, 4}, {1, 2, 3, 4})}}).outputs[0].data,
            (std::vector<double>{1, 2, 7}));
  EXPECT_EQ(session.size(), 2u);
  EXPECT_EQ(session.at("w").load().data.size(), 12u);
  // Given as the caller's own, a param of no variable is an error, as before.
  backend::BuildOptions own;
  own.params = loadAll(session);
  expectError([&] { backend::build(e.current()->graph, own, PassContext{}); },
              "build: the graph has no input 'other' to bind a param to");
}

} // namespace
