// MixedPrecisionTest: ToMixedPrecision's rewrite (which ops compute in bfloat16, one cast per
// value, products feeding products in bfloat16, float64 and second runs untouched), its rules,
// and bfloat16 builds against the reference interpreter at every opt level.
#include "TestUtil.h"

#include "backend/BuiltLibrary.h"
#include "backend/Peak.h"
#include "passes/MixedPrecision.h"

#include <algorithm>
#include <map>
#include <string>

using namespace loupe;
using namespace loupe::test;

namespace {

const char *kBlock = "x = Variable(\"x\", shape=(1, 3, 8, 8))\n"
                     "c = conv2d(x, channels=4, kernel_size=(3,3), padding=(1,1), name=\"conv\")\n"
                     "f = flatten(relu(c))\n"
                     "d = dense(f, units=5, name=\"fc\")\n"
                     "e = dense(d, units=3, use_bias=False, name=\"head\")\n"
                     "y = softmax(e + 1, name=\"prob\")\n";

// op name and dtype attribute of each node of the current graph, by node name.
std::map<std::string, std::string> opsOf(const Graph &g) {
  std::map<std::string, std::string> ops;
  for (const auto &e : g.index().nodes) {
    const Node &n = *e.node;
    std::string op = n.isVariable() ? "var" : n.op->name;
    if (op == "cast")
      op += ":" + n.parsed.getStr("dtype");
    ops[n.name] = op;
  }
  return ops;
}

} // namespace

TEST(ToMixedPrecision, CastsAroundTheProductsOnly) {
  Engine e;
  run(e, std::string(kBlock) + ":graph y\n:apply InferShape InferType ToMixedPrecision");
  std::map<std::string, std::string> ops = opsOf(e.current()->graph);
  // The convolution's three operands and the first dense's: one cast each, named after them.
  for (const char *v : {"x", "conv_weight", "conv_bias", "fc_weight", "fc_bias", "head_weight"})
    EXPECT_EQ(ops[std::string(v) + "_bf16"], "cast:bfloat16") << v;
  // The relu and flatten after the convolution read it cast back; fc's result feeds head
  // directly, so fc has no cast back and head's data no cast; head's result is cast back for
  // the float32 add and softmax.
  EXPECT_EQ(ops["conv_fp32"], "cast:float32");
  EXPECT_EQ(ops["flatten0_bf16"], "cast:bfloat16");
  EXPECT_EQ(ops.count("fc_fp32"), 0u);
  EXPECT_EQ(ops.count("fc_bf16"), 0u);
  EXPECT_EQ(ops["head_fp32"], "cast:float32");
  EXPECT_EQ(ops["prob"], "softmax");
  EXPECT_EQ(ops["conv"], "conv2d");
  // 4 variables… : 6 narrowing casts, 2 widening, the 8 original op nodes, 6 variables.
  size_t narrowing = 0, widening = 0;
  for (const auto &[name, op] : ops) {
    narrowing += op == "cast:bfloat16";
    widening += op == "cast:float32";
  }
  EXPECT_EQ(narrowing, 7u); // x, conv's weight and bias, flatten0, fc's weight and bias, head's
  EXPECT_EQ(widening, 2u);
  // Run again on the typed result: nothing left in float32 to convert.
  Graph again = applyPasses(e.current()->graph, {"InferShape", "InferType"});
  EXPECT_EQ(applyPasses(again, {"ToMixedPrecision"}).index().numNodes(), again.index().numNodes());
}

TEST(ToMixedPrecision, LeavesFloat64Alone) {
  Engine e;
  run(e, "x = Variable(\"x\", shape=(2, 4), dtype=1)\ny = dense(x, units=3)\n:graph y");
  EXPECT_NE(output(e, ":apply InferShape InferType ToMixedPrecision").find("(graph unchanged"),
            std::string::npos);
}

TEST(ToMixedPrecision, RulesSayWhy) {
  for (const char *op : {"conv2d", "_contrib_conv2d_NCHWc", "dense", "_contrib_dense_pack",
                         "batch_matmul", "matmul", "_contrib_depthwise_conv2d_NCHWc"})
    EXPECT_TRUE(mixedPrecisionRule(op).bfloat16) << op;
  for (const char *op : {"softmax", "layer_norm", "sum", "exp", "erf", "broadcast_add", "relu"})
    EXPECT_FALSE(mixedPrecisionRule(op).bfloat16) << op;
  EXPECT_NE(mixedPrecisionRule("softmax").why.find("exponentiates"), std::string::npos);
  EXPECT_NE(mixedPrecisionRule("relu").why.find("no sum of products"), std::string::npos);
  EXPECT_TRUE(mixedPrecisionRule("cast", "bfloat16").bfloat16);
}

// A bfloat16 build runs the same rounding as the reference interpreter, within float32's
// summation order, at every level; from opt_level 2 its weights are cast once at build time
// (PrecomputePrune), at 3 after AlterOpLayout blocked them. opt_level 3 needs avx512_bf16: on a CPU
// without it the build is refused by name, which the test accepts.
TEST(ToMixedPrecision, BuildsMatchTheReference) {
  for (int opt : {0, 2, 3}) {
    Engine e;
    run(e, std::string(kBlock) + ":graph y");
    std::string said = output(e, ":build precision=bf16 opt_level=" + std::to_string(opt) +
                                     " param conv_weight=random conv_bias=random fc_weight=random "
                                     "fc_bias=random head_weight=random");
    if (opt == 3 && said.find("needs avx512_bf16") != std::string::npos) {
      EXPECT_EQ(said.rfind("error: precision=bf16 at opt_level 3 needs avx512_bf16 (vdpbf16ps)", 0),
                0u);
      continue;
    }
    std::string ran = output(e, ":run x=random");
    size_t at = ran.find("max abs error ");
    ASSERT_NE(at, std::string::npos) << ran;
    EXPECT_LT(std::stod(ran.substr(at + 14)), 1e-6) << ran;
    auto lib = backend::builtLibrary(e.current()->graph);
    ASSERT_TRUE(lib);
    std::map<std::string, Tensor> params = loadAll(lib->params);
    std::string weight = opt == 0   ? "conv_weight"
                         : opt == 2 ? "conv_weight_bf16"
                                    : "conv_weight_pad_OIHW4o2i_bf16"; // 3 channels padded to 4
    ASSERT_EQ(params.count(weight), 1u) << said;
    EXPECT_EQ(params.at(weight).dtype, opt == 0 ? kFloat32 : kBFloat16);
  }
}

// `:build precision=` and `:set precision` refuse another word with the same line, and change
// nothing.
TEST(BFloat16Build, APrecisionOtherThanFp32OrBf16IsRefusedAlike) {
  Engine e;
  run(e, "x = Variable(\"x\", shape=(1, 4))\ny = relu(x)\n:graph y");
  const std::string line = "error: precision must be fp32 or bf16 (convolutions and matrix "
                           "products in bfloat16), got 'half'\n";
  EXPECT_EQ(output(e, ":build precision=half"), line);
  EXPECT_EQ(output(e, ":set precision half"), line);
  EXPECT_EQ(e.history().size(), 1u);
}

// `:build dtype=bfloat16` of a zoo network converts its data input with its params (its
// variables carry their float32 dtype attribute), and the whole network then runs in bfloat16
// with the reference interpreter's rounding.
TEST(BFloat16Build, AZooNetworkConvertsItsInputWithItsParams) {
  Engine e;
  run(e, ":model mlp");
  std::string said = output(e, ":build dtype=bfloat16");
  EXPECT_NE(said.find("note: dtype=bfloat16: the model's 1 input and "), std::string::npos) << said;
  std::string ran = output(e, ":run");
  EXPECT_NE(ran.find("bfloat16\n"), std::string::npos) << ran;
  size_t at = ran.find("max abs error ");
  ASSERT_NE(at, std::string::npos) << ran;
  EXPECT_LT(std::stod(ran.substr(at + 14)), 1e-2) << ran;
}

// :profile measures a kernel that reads bfloat16 operands against the vdpbf16ps loop's peak
// where the CPU has avx512_bf16 (and names the loop), else against float32's; the loop's flops
// are 2 × 32 pairs × 12 chains an iteration, or none without the instruction.
TEST(BFloat16Build, ProfileMeasuresBfloat16KernelsAgainstTheirPeak) {
  double perIter = backend::bf16LoopFlopsPerIter();
  EXPECT_TRUE(perIter == 0 || perIter == 768) << perIter;
  if (perIter > 0) {
    EXPECT_GT(backend::peakBf16GflopsPerCore(), 0);
    EXPECT_GT(backend::bf16Loop(10), 0); // the lanes' sums, kept
  } else {
    EXPECT_EQ(backend::peakBf16GflopsPerCore(), 0);
  }
  Engine e;
  run(e, "x = Variable(\"x\", shape=(1, 8, 6, 6))\n"
         "y = conv2d(x, channels=8, kernel_size=(3, 3), use_bias=False, name=\"c\")\n:graph y\n"
         ":build opt_level=2 precision=bf16 param c_weight=random");
  std::string p = output(e, ":profile 2");
  EXPECT_EQ(p.find("a vdpbf16ps loop") != std::string::npos, perIter > 0) << p;
  // A float32 build names no bfloat16 peak.
  run(e, ":undo\n:build opt_level=2 param c_weight=random");
  EXPECT_EQ(output(e, ":profile 2").find("vdpbf16ps"), std::string::npos);
}
