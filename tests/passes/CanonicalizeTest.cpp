// CanonicalizeTest: the canonicalising passes :build runs at opt_level 3 (EliminateIdentity,
// SimplifyGelu, SimplifyLayerNorm, MatMulToDense) — which forms each recognises, which it must
// leave alone, and that every rewritten graph computes what the original did (the reference
// interpreter on both, in double precision).
#include "TestUtil.h"

#include "backend/Build.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

using namespace loupe;
using namespace loupe::test;

namespace {

// A one-element constant.
Tensor scalar(double v) { return tensor({1}, {v}, kFloat64); }

// Builds `program` (output y), applies `pass` with `consts` as the bound params, and checks that
// the result computes the original's values on random data (the other variables). Returns the
// rewritten graph.
Graph rewritten(const std::string &program, const std::string &pass,
                std::map<std::string, Tensor> consts = {}) {
  Engine e;
  run(e, program + "\n:graph y");
  Graph g = applyPasses(e.current()->graph, {"InferShape"});
  const IndexedGraph &idx = g.index();
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(-2, 2);
  std::map<std::string, Tensor> in = consts;
  for (uint32_t nid : idx.argNodes) {
    const std::string &name = idx.nodes[nid].node->name;
    if (in.count(name))
      continue;
    Tensor t(g.attr("shape")->shapes[idx.entryId(nid, 0)], kFloat64);
    for (double &v : t.data)
      v = u(rng);
    in[name] = t;
  }
  PassContext ctx;
  StoredTensors stored = storeAll(consts);
  ctx.params = &stored;
  Graph typed = withInputs(g, in);
  Graph after = applyPasses(typed, {pass}, ctx);
  EXPECT_TRUE(after.attrs.empty());
  Tensor want = interpret(typed, in).at(0);
  Tensor got = interpret(withInputs(after, in), in).at(0);
  EXPECT_EQ(got.shape, want.shape);
  for (size_t i = 0; i < want.data.size() && i < got.data.size(); ++i)
    if (std::isnan(want.data[i])) // a fractional power of a negative number, on both sides
      EXPECT_TRUE(std::isnan(got.data[i])) << pass << " " << i;
    else
      EXPECT_NEAR(got.data[i], want.data[i], 1e-9 * (1 + std::abs(want.data[i])))
          << pass << " " << i;
  return after;
}

// The graph's op names, sorted (a multiset).
std::vector<std::string> opsOf(const Graph &g) {
  std::vector<std::string> ops;
  for (const auto &n : g.index().nodes)
    if (!n.node->isVariable())
      ops.push_back(n.node->op->name);
  std::sort(ops.begin(), ops.end());
  return ops;
}

using Ops = std::vector<std::string>;

// The node named `name`'s attribute `key` as written.
std::string attrOf(const Graph &g, const std::string &name, const std::string &key) {
  const IndexedGraph &idx = g.index();
  int nid = idx.findByName(name);
  if (nid < 0)
    return "<no node " + name + ">";
  for (const auto &[k, v] : idx.nodes[nid].node->attrs)
    if (k == key)
      return v;
  return "<no attr " + key + ">";
}

const std::string kX = "x = Variable(\"x\", shape=(2, 3, 8))\n";

} // namespace

TEST(Canonicalize, BuildRunsThePassesInOrder) {
  registerAllPasses();
  EXPECT_EQ(
      backend::canonicalizingPasses(),
      (std::vector<std::string>{"EliminateIdentity", "FakeQuantizationToInteger", "SimplifyGelu",
                                "SimplifyLayerNorm", "SimplifyPow", "MatMulToDense"}));
  for (const std::string &p : backend::canonicalizingPasses())
    EXPECT_NE(PassRegistry::get().find(p), nullptr) << p;
}

TEST(EliminateIdentity, RemovesCopiesAndNoOpReshapesAndTransposes) {
  Graph g = rewritten(kX + "y = relu(copy(x)) + copy(copy(reshape(transpose(x, axes=(0, 1, 2)), "
                           "shape=(2, 3, 8))))",
                      "EliminateIdentity");
  EXPECT_EQ(opsOf(g), (Ops{"broadcast_add", "relu"}));
}

// A cast to the dtype its input already has (torch.onnx's Cast to uint8 after a QuantizeLinear)
// is dropped; a cast that converts stays (the values here are float64).
TEST(EliminateIdentity, RemovesCastsToTheSameDtype) {
  Graph g = rewritten(kX + "y = relu(cast(x, dtype=\"float64\")) + cast(cast(x, "
                           "dtype=\"float32\"), dtype=\"float64\")",
                      "EliminateIdentity");
  EXPECT_EQ(opsOf(g), (Ops{"broadcast_add", "cast", "cast", "relu"}));
}

TEST(EliminateIdentity, KeepsOutputsAndRealMoves) {
  // A copy that is the output keeps its name; a reversing transpose and a real reshape move data.
  EXPECT_EQ(opsOf(rewritten(kX + "y = copy(x)", "EliminateIdentity")), (Ops{"copy"}));
  EXPECT_EQ(
      opsOf(rewritten(kX + "y = relu(reshape(transpose(x), shape=(8, 6)))", "EliminateIdentity")),
      (Ops{"relu", "reshape", "transpose"}));
}

TEST(SimplifyGelu, ErfFormAsExportersWriteIt) {
  // ONNX's form: Div by a sqrt(2) initializer, Add a 1 initializer, Mul x, Mul a 0.5 initializer.
  Graph g =
      rewritten(kX + "r2 = Variable(\"r2\", shape=(1,))\none = Variable(\"one\", shape=(1,))\n"
                     "half = Variable(\"half\", shape=(1,))\n"
                     "y = broadcast_mul(broadcast_mul(x, broadcast_add(erf(broadcast_div(x, "
                     "r2)), one)), half)",
                "SimplifyGelu",
                {{"r2", scalar(1.4142135623730951)}, {"one", scalar(1)}, {"half", scalar(0.5)}});
  EXPECT_EQ(opsOf(g), (Ops{"gelu"}));
  EXPECT_EQ(attrOf(g, g.outputs()[0].node->name, "approximate"), "<no attr approximate>");
}

TEST(SimplifyGelu, ErfFormInAnyOrderWithScalars) {
  EXPECT_EQ(
      opsOf(rewritten(kX + "y = (x * 0.5) * (erf(x * 0.7071067811865476) + 1)", "SimplifyGelu")),
      (Ops{"gelu"}));
  EXPECT_EQ(
      opsOf(rewritten(kX + "y = x * ((1 + erf(x / 1.4142135623730951)) * 0.5)", "SimplifyGelu")),
      (Ops{"gelu"}));
}

TEST(SimplifyGelu, TanhForm) {
  Graph g =
      rewritten(kX + "y = 0.5 * x * (1 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))",
                "SimplifyGelu");
  EXPECT_EQ(opsOf(g), (Ops{"gelu"}));
  EXPECT_EQ(attrOf(g, g.outputs()[0].node->name, "approximate"), "tanh");
  EXPECT_EQ(opsOf(rewritten(kX + "y = 0.5 * x * (1 + tanh(0.7978845608028654 * (x + 0.044715 * "
                                 "__pow_scalar__(x, scalar=3))))",
                            "SimplifyGelu")),
            (Ops{"gelu"}));
}

TEST(SimplifyGelu, LeavesWhatIsNotGelu) {
  // Another coefficient, another variable inside erf, a constant that broadcasts x larger.
  EXPECT_EQ(opsOf(rewritten(kX + "y = 0.6 * x * (1 + erf(x * 0.7071067811865476))", "SimplifyGelu"))
                .size(),
            5u);
  std::string z = "z = Variable(\"z\", shape=(2, 3, 8))\n";
  EXPECT_EQ(
      opsOf(rewritten(kX + z + "y = 0.5 * x * (1 + erf(z * 0.7071067811865476))", "SimplifyGelu"))
          .size(),
      5u);
  EXPECT_EQ(
      opsOf(rewritten(kX + "h = Variable(\"h\", shape=(4, 1, 1, 1))\n"
                           "y = broadcast_mul(x * (1 + erf(x * 0.7071067811865476)), h)",
                      "SimplifyGelu", {{"h", tensor({4, 1, 1, 1}, {.5, .5, .5, .5}, kFloat64)}}))
          .size(),
      5u);
}

namespace {

// PyTorch's decomposed layer norm over the last `axes` axes of x (2, 3, 8).
std::string layerNorm(const std::string &axes, const std::string &tail) {
  return kX + "two = Variable(\"two\", shape=(1,))\neps = Variable(\"eps\", shape=(1,))\n" +
         "d = broadcast_sub(x, mean(x, axis=" + axes + ", keepdims=True))\n" +
         "n = broadcast_div(d, sqrt(broadcast_add(mean(broadcast_pow(d, two), axis=" + axes +
         ", keepdims=True), eps)))\n" + tail;
}

std::map<std::string, Tensor> lnConsts() { return {{"two", scalar(2)}, {"eps", scalar(1e-5)}}; }

} // namespace

TEST(SimplifyLayerNorm, ExportedFormWithGammaAndBeta) {
  auto c = lnConsts();
  c["g"] = tensor({8}, {1, 2, 3, 4, 5, 6, 7, 8}, kFloat64);
  c["b"] = tensor({8}, {-1, 0, 1, 2, -2, 3, 0.5, 0}, kFloat64);
  Graph g = rewritten(layerNorm("(-1,)", "g = Variable(\"g\", shape=(8,))\nb = Variable(\"b\", "
                                         "shape=(8,))\ny = broadcast_add(broadcast_mul(n, g), b)"),
                      "SimplifyLayerNorm", c);
  EXPECT_EQ(opsOf(g), (Ops{"layer_norm"}));
  const Node &ln = *g.outputs()[0].node;
  EXPECT_EQ(attrOf(g, ln.name, "axis"), "-1");
  EXPECT_EQ(attrOf(g, ln.name, "epsilon"), "1e-05");
  EXPECT_EQ(ln.inputs[1].node->name, "g");
  EXPECT_EQ(ln.inputs[2].node->name, "b");
}

TEST(SimplifyLayerNorm, TwoTrailingAxesReciprocalFormNoAffine) {
  // Over (3, 8) with mean's axes positive, d * d for the square, times 1 / sqrt: ones and zeros
  // stand in for gamma and beta.
  std::string p = kX + "eps = Variable(\"eps\", shape=(1,))\n"
                       "d = broadcast_sub(x, mean(x, axis=(2, 1), keepdims=True))\n"
                       "y = broadcast_mul(d, 1 / sqrt(broadcast_add(mean(d * d, axis=(1, 2), "
                       "keepdims=True), eps)))";
  Graph g = rewritten(p, "SimplifyLayerNorm", {{"eps", scalar(1e-3)}});
  EXPECT_EQ(opsOf(g), (Ops{"layer_norm", "ones", "zeros"}));
  EXPECT_EQ(attrOf(g, g.outputs()[0].node->name, "axis"), "-2");
  EXPECT_EQ(attrOf(g, g.outputs()[0].node->name + "_gamma", "shape"), "(3, 8)");
}

TEST(SimplifyLayerNorm, GammaWithLeadingOnesIsReshaped) {
  auto c = lnConsts();
  c["g"] = tensor({1, 1, 8}, {1, 2, 3, 4, 5, 6, 7, 8}, kFloat64);
  Graph g = rewritten(layerNorm("(-1,)", "g = Variable(\"g\", shape=(1, 1, 8))\n"
                                         "y = broadcast_mul(g, n)"),
                      "SimplifyLayerNorm", c);
  EXPECT_EQ(opsOf(g), (Ops{"layer_norm", "reshape", "zeros"}));
}

TEST(SimplifyLayerNorm, LeavesOtherNormalisations) {
  // Over a middle axis; different axes for the two means; the variance without its epsilon's
  // constant; gamma per row instead of per element.
  EXPECT_EQ(opsOf(rewritten(layerNorm("(1,)", "y = n"), "SimplifyLayerNorm", lnConsts())).size(),
            7u);
  std::string mixed = kX + "two = Variable(\"two\", shape=(1,))\neps = Variable(\"eps\", "
                           "shape=(1,))\nd = broadcast_sub(x, mean(x, axis=(-1,), keepdims=True))\n"
                           "y = broadcast_div(d, sqrt(broadcast_add(mean(broadcast_pow(d, two), "
                           "axis=(-2, -1), keepdims=True), eps)))";
  EXPECT_EQ(opsOf(rewritten(mixed, "SimplifyLayerNorm", lnConsts())).size(), 7u);
  EXPECT_EQ(opsOf(rewritten(layerNorm("(-1,)", "y = n"), "SimplifyLayerNorm", {{"two", scalar(2)}}))
                .size(),
            7u);
  auto c = lnConsts();
  c["g"] = tensor({3, 1}, {1, 2, 3}, kFloat64);
  Graph g =
      rewritten(layerNorm("(-1,)", "g = Variable(\"g\", shape=(3, 1))\ny = broadcast_mul(n, g)"),
                "SimplifyLayerNorm", c);
  EXPECT_EQ(opsOf(g), (Ops{"broadcast_mul", "layer_norm", "ones", "zeros"}));
}

TEST(SimplifyLayerNorm, AStepAnotherNodeReadsStays) {
  // n is an output too: the layer norm replaces n, and times gamma stays a multiplication of it.
  auto c = lnConsts();
  c["g"] = tensor({8}, {1, 2, 3, 4, 5, 6, 7, 8}, kFloat64);
  Graph g = rewritten(layerNorm("(-1,)", "g = Variable(\"g\", shape=(8,))\n"
                                         "y = broadcast_mul(n, g) + n"),
                      "SimplifyLayerNorm", c);
  EXPECT_EQ(opsOf(g), (Ops{"broadcast_add", "broadcast_mul", "layer_norm", "ones", "zeros"}));
}

namespace {

const std::string kRows =
    "a = Variable(\"a\", shape=(2, 5, 6))\nw = Variable(\"w\", shape=(6, 4))\n";

std::map<std::string, Tensor> weights() {
  std::vector<double> w(24), b{0.5, -1, 2, 0.25};
  for (size_t i = 0; i < w.size(); ++i)
    w[i] = std::sin(static_cast<double>(i));
  return {{"w", tensor({6, 4}, w, kFloat64)}, {"b", tensor({4}, b, kFloat64)}};
}

} // namespace

TEST(MatMulToDense, MatMulByAConstantWithItsBias) {
  Graph g = rewritten(kRows + "b = Variable(\"b\", shape=(4,))\ny = broadcast_add(b, matmul(a, w))",
                      "MatMulToDense", weights());
  EXPECT_EQ(opsOf(g), (Ops{"dense", "transpose"}));
  const Node &d = *g.outputs()[0].node;
  EXPECT_EQ(attrOf(g, d.name, "units"), "4");
  EXPECT_EQ(attrOf(g, d.name, "use_bias"), "True");
  EXPECT_EQ(d.inputs[2].node->name, "b");
}

TEST(MatMulToDense, GemmFormTransposedWeightAndDenseBias) {
  // Gemm's transB: the weight is dense's already; a dense without bias takes the add in.
  auto c = weights();
  c["wt"] = tensor({4, 6}, std::vector<double>(c["w"].data), kFloat64);
  EXPECT_EQ(opsOf(rewritten("a = Variable(\"a\", shape=(5, 6))\nwt = Variable(\"wt\", shape=(4, "
                            "6))\nb = Variable(\"b\", shape=(4,))\n"
                            "y = broadcast_add(matmul(a, wt, transpose_b=True), b)",
                            "MatMulToDense", c)),
            (Ops{"dense"}));
  EXPECT_EQ(opsOf(rewritten("a = Variable(\"a\", shape=(5, 6))\nwt = Variable(\"wt\", shape=(4, "
                            "6))\nb = Variable(\"b\", shape=(4,))\n"
                            "y = broadcast_add(dense(a, wt, units=4, use_bias=False), b)",
                            "MatMulToDense", c)),
            (Ops{"dense"}));
}

TEST(MatMulToDense, LeavesDataByDataAndOtherAdds) {
  // A weight that is not bound is data: no dense. A bias per row is not dense's bias. A product
  // read elsewhere keeps its value: dense without bias, the add stays.
  auto c = weights();
  c.erase("w");
  EXPECT_EQ(opsOf(rewritten(kRows + "y = matmul(a, w)", "MatMulToDense", c)), (Ops{"matmul"}));
  c = weights();
  c["r"] = tensor({5, 1}, {1, 2, 3, 4, 5}, kFloat64);
  EXPECT_EQ(opsOf(rewritten(kRows + "r = Variable(\"r\", shape=(5, 1))\n"
                                    "y = broadcast_add(matmul(a, w), r)",
                            "MatMulToDense", c)),
            (Ops{"broadcast_add", "dense", "transpose"}));
  EXPECT_EQ(opsOf(rewritten(kRows + "b = Variable(\"b\", shape=(4,))\np = matmul(a, w)\n"
                                    "y = broadcast_add(p, b) * p",
                            "MatMulToDense", weights())),
            (Ops{"broadcast_add", "broadcast_mul", "dense", "transpose"}));
}

TEST(SimplifyPow, ConstantExponentsBecomeProductsSqrtOrReciprocal) {
  // Exponents as a bound one-element param (ONNX's Pow) and as __pow_scalar__; 0.5 of x * x,
  // whose values are not negative.
  std::string pos = "x = Variable(\"x\", shape=(2, 3, 8))\np = Variable(\"p\", shape=(1,))\n";
  EXPECT_EQ(opsOf(rewritten(pos + "y = broadcast_pow(x, p)", "SimplifyPow", {{"p", scalar(2)}})),
            (Ops{"elemwise_mul"}));
  EXPECT_EQ(opsOf(rewritten(pos + "y = broadcast_pow(x, p)", "SimplifyPow", {{"p", scalar(3)}})),
            (Ops{"elemwise_mul", "elemwise_mul"}));
  EXPECT_EQ(opsOf(rewritten(pos + "y = broadcast_pow(x, p)", "SimplifyPow", {{"p", scalar(-1)}})),
            (Ops{"__rdiv_scalar__"}));
  EXPECT_EQ(
      opsOf(rewritten(pos + "y = broadcast_pow(x * x, p)", "SimplifyPow", {{"p", scalar(0.5)}})),
      (Ops{"broadcast_mul", "sqrt"}));
  EXPECT_EQ(opsOf(rewritten(kX + "y = __pow_scalar__(x, scalar=2)", "SimplifyPow")),
            (Ops{"elemwise_mul"}));
}

TEST(SimplifyPow, LeavesOtherExponents) {
  // 2.5, an exponent per element, an unbound exponent, one that broadcasts x larger.
  std::string p = kX + "p = Variable(\"p\", shape=(8,))\n";
  EXPECT_EQ(opsOf(rewritten(kX + "y = __pow_scalar__(x * x, scalar=2.5)", "SimplifyPow")),
            (Ops{"__pow_scalar__", "broadcast_mul"}));
  EXPECT_EQ(opsOf(rewritten(p + "y = broadcast_pow(x * x, p)", "SimplifyPow",
                            {{"p", tensor({8}, {2, 2, 2, 2, 2, 2, 2, 3}, kFloat64)}})),
            (Ops{"broadcast_mul", "broadcast_pow"}));
  EXPECT_EQ(opsOf(rewritten(p + "y = broadcast_pow(x, p)", "SimplifyPow")), (Ops{"broadcast_pow"}));
  EXPECT_EQ(opsOf(rewritten(kX + "q = Variable(\"q\", shape=(4, 1, 1, 1))\ny = broadcast_pow(x, q)",
                            "SimplifyPow", {{"q", tensor({4, 1, 1, 1}, {2, 2, 2, 2}, kFloat64)}})),
            (Ops{"broadcast_pow"}));
}

TEST(Canonicalize, PassesNeedShapes) {
  Engine e;
  run(e, kX + "y = relu(x)\n:graph y");
  for (const char *p : {"SimplifyGelu", "SimplifyLayerNorm", "SimplifyPow", "MatMulToDense"})
    expectError([&] { applyPasses(e.current()->graph, {p}); },
                std::string("Graph attr dependency shape is required by pass ") + p +
                    " but is not available. The attribute is provided by pass InferShape");
}
