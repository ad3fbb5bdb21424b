// AlterOpLayoutTest: the x86 conv2d → _contrib_conv2d_NCHWc replacement, its block sizes, and
// that after CorrectLayout the graph computes what the NCHW graph did.
#include "TestUtil.h"

#include "backend/Build.h"
#include "backend/GraphExecutor.h"
#include "core/DType.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace loupe;
using namespace loupe::test;

namespace {

int countOf(const std::string &text, const std::string &what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
    ++n;
  return n;
}

// Builds a conv → relu → flatten graph on a float64 input of `dshape` (float32 with `precision`
// bf16, which :build precision=bf16 gives AlterOpLayout), applies CorrectLayout, InferShape,
// InferType, AlterOpLayout under `target`, then CorrectLayout with the inputs' first layouts (as
// build does). Checks the result against the original numerically and returns the conv node's
// attributes (or its op name when it was not replaced).
std::string alterChecked(const Shape &dshape, const std::string &convAttrs,
                         const std::string &target = "llvm", const std::string &precision = "") {
  int dtype = precision == "bf16" ? kFloat32 : kFloat64;
  Engine e;
  run(e, "x = Variable(\"x\")\ny = flatten(relu(conv2d(x, " + convAttrs +
             ", kernel_size=(3,3), padding=(1,1), name=\"conv\")))\n:graph y");
  Graph g = e.current()->graph;
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(-1, 1);
  std::map<std::string, Tensor> in;
  in["x"] = Tensor(dshape, dtype);
  Graph shaped = withInputs(g, in);
  const IndexedGraph &idx = shaped.index();
  for (uint32_t nid : idx.argNodes) {
    Tensor t(shaped.attr("shape")->shapes[idx.entryId(nid, 0)], dtype);
    for (double &v : t.data)
      v = roundToDType(u(rng), dtype);
    in[idx.nodes[nid].node->name] = t;
  }
  Tensor want = interpret(withInputs(g, in), in).at(0);

  PassContext ctx;
  ctx.config["target"] = target;
  if (!precision.empty())
    ctx.config["precision"] = precision;
  Graph laid = applyPasses(g, {"CorrectLayout"}, ctx);
  std::vector<std::string> inputLayouts;
  for (uint32_t nid : laid.index().argNodes)
    inputLayouts.push_back(laid.attr("layout")->strs[laid.index().entryId(nid, 0)]);
  Graph altered = applyPasses(withInputs(laid, in), {"AlterOpLayout"}, ctx);
  EXPECT_TRUE(altered.attr("layout")); // kept because the input had it
  altered.attrs["layout_inputs"] = GraphAttr::listLayout(inputLayouts);
  Graph fixed = applyPasses(altered, {"CorrectLayout"}, ctx);
  Tensor got = interpret(withInputs(fixed, in), in).at(0);
  EXPECT_EQ(got.shape, want.shape);
  for (size_t i = 0; i < want.data.size() && i < got.data.size(); ++i)
    EXPECT_NEAR(got.data[i], want.data[i], 1e-12) << i;

  const IndexedGraph &fidx = fixed.index();
  const Node &conv = *fidx.nodes[fidx.findByName("conv")].node;
  bool depthwise = conv.op->name == "_contrib_depthwise_conv2d_NCHWc";
  if (conv.op->name != "_contrib_conv2d_NCHWc" && !depthwise)
    return conv.op->name;
  std::string s;
  for (const char *k : {"layout", "kernel_layout", "out_layout"})
    s += std::string(s.empty() ? "" : " ") + k + "=" + conv.parsed.getStr(k);
  return (depthwise ? "depthwise " : "") + s;
}

} // namespace

TEST(AlterOpLayout, BlocksFollowTheX86FallbackSchedule) {
  // float64 here. oc_bn: largest divisor of the output channels up to 8 lanes; ic_bn: of the
  // input channels up to oc_bn.
  EXPECT_EQ(alterChecked({1, 3, 6, 6}, "channels=16"),
            "layout=NCHW3c kernel_layout=OIHW3i8o out_layout=NCHW8c");
  EXPECT_EQ(alterChecked({1, 9, 4, 4}, "channels=8, use_bias=False"), // 9: 3 is the best <= 8
            "layout=NCHW3c kernel_layout=OIHW3i8o out_layout=NCHW8c");
  // Channels padded to the vector width where that fills registers better: 6 doubles would be a
  // vector of one and a half 256-bit registers, 12 input channels would come from such a
  // convolution, 7 and 5 are primes. The numbers are unchanged (alterChecked compares them).
  EXPECT_EQ(alterChecked({2, 4, 5, 7}, "channels=6"),
            "layout=NCHW4c kernel_layout=OIHW4i8o out_layout=NCHW8c");
  EXPECT_EQ(alterChecked({1, 12, 3, 3}, "channels=4"), // 12 -> 16, ic_bn capped by oc_bn = 4
            "layout=NCHW4c kernel_layout=OIHW4i4o out_layout=NCHW4c");
  EXPECT_EQ(alterChecked({1, 5, 4, 4}, "channels=7"),
            "layout=NCHW8c kernel_layout=OIHW8i8o out_layout=NCHW8c");
  // AVX-512 has 16 float32 lanes.
  EXPECT_EQ(alterChecked({1, 32, 4, 4}, "channels=32", "llvm -mcpu=skylake-avx512"),
            "layout=NCHW16c kernel_layout=OIHW16i16o out_layout=NCHW16c");
}

// A depthwise convolution becomes the blocked depthwise op in the blocks of its neighbours
// (float64 here: 16 channels are one block of 16 on AVX-512), computing the same numbers.
TEST(AlterOpLayout, DepthwiseConvolutionsAreBlockedToo) {
  EXPECT_EQ(alterChecked({1, 32, 5, 6}, "channels=32, groups=32", "llvm -mcpu=skylake-avx512"),
            "depthwise layout=NCHW16c kernel_layout=OIHW1i16o out_layout=NCHW16c");
  EXPECT_EQ(alterChecked({1, 16, 5, 6}, "channels=16, groups=16, use_bias=False"),
            "depthwise layout=NCHW8c kernel_layout=OIHW1i8o out_layout=NCHW8c");
  // Channels that do not fill blocks stay in NCHW (the NCHW depthwise schedule).
  EXPECT_EQ(alterChecked({1, 12, 5, 6}, "channels=12, groups=12"), "conv2d");
}

// With precision bf16 (ToMixedPrecision will compute the convolution in bfloat16, on a CPU with
// vdpbf16ps) a float32 convolution takes its weights in pairs of input channels, OIHW<o>o2i —
// the same numbers; an odd channel count (an image's 3) gets a zero channel first (pad nodes on
// the data and the weight), and an odd block (18 channels: 9 divides them) an even one (6).
TEST(AlterOpLayout, BFloat16ConvolutionsTakeWeightsInPairs) {
  const std::string avx512 = "llvm -mcpu=skylake-avx512";
  EXPECT_EQ(alterChecked({1, 32, 4, 4}, "channels=32", avx512, "bf16"),
            "layout=NCHW16c kernel_layout=OIHW16o2i out_layout=NCHW16c");
  EXPECT_EQ(alterChecked({1, 3, 6, 6}, "channels=16", avx512, "bf16"),
            "layout=NCHW4c kernel_layout=OIHW16o2i out_layout=NCHW16c");
  EXPECT_EQ(alterChecked({1, 18, 4, 4}, "channels=16", avx512, "bf16"),
            "layout=NCHW6c kernel_layout=OIHW16o2i out_layout=NCHW16c");
  EXPECT_EQ(alterChecked({1, 32, 4, 4}, "channels=32", avx512, "fp32"),
            "layout=NCHW16c kernel_layout=OIHW16i16o out_layout=NCHW16c");
}

TEST(AlterOpLayout, LeavesOtherConvolutionsAndTargetsAlone) {
  EXPECT_EQ(alterChecked({1, 4, 5, 5}, "channels=4, groups=2"), "conv2d");
  EXPECT_EQ(alterChecked({1, 3, 5, 5}, "channels=8", "cuda"), "conv2d");
}

TEST(AlterOpLayout, WithoutLayoutAddsNone) {
  Engine e;
  run(e, "x = Variable(\"x\", shape=(1,3,4,4), dtype=0)\ny = conv2d(x, channels=4, "
         "kernel_size=(1,1))\n:graph y\n:apply InferShape InferType AlterOpLayout");
  const Graph &g = e.current()->graph;
  EXPECT_FALSE(g.attr("layout"));
  EXPECT_EQ(g.outputs()[0].node->op->name, "_contrib_conv2d_NCHWc");
  EXPECT_EQ(g.outputs()[0].node->name, "conv2d0");
}

namespace {

// The relative error `:run` reports against the reference interpreter.
// Seed 001's tutorial graph on (1, 13, size, size): two 13-channel 3x3 convolutions, a residual
// add of the input, dense, softmax, sum.
std::string tutorialGraph(int size) {
  return "x = Variable(\"x\", shape=(1,13," + std::to_string(size) + "," + std::to_string(size) +
         "))\n"
         "z = relu(conv2d(data=x, channels=13, kernel_size=(3,3), padding=[1,1]))\n"
         "z = relu(conv2d(data=z, channels=13, kernel_size=(3,3), padding=[1,1]))\n"
         "z = sum(softmax(dense(flatten(x + z), units=10)), keepdims=True)\n:graph z";
}

double runError(Engine &e) {
  std::string out = output(e, ":run");
  size_t at = out.find("max rel error ");
  EXPECT_NE(at, std::string::npos) << out;
  return at == std::string::npos ? 1.0 : std::stod(out.substr(at + 14));
}

// The absolute error `:run` reports (for outputs near zero, where float32 rounding against the
// reference's doubles makes the relative error meaningless).
double absError(Engine &e) {
  std::string out = output(e, ":run");
  size_t at = out.find("max abs error ");
  EXPECT_NE(at, std::string::npos) << out;
  return at == std::string::npos ? 1.0 : std::stod(out.substr(at + 14));
}

} // namespace

TEST(AlterOpLayout, BlockedConvolutionsFeedBatchNormPoolsAndConcatenateAtOptLevel3) {
  // Batch norm after a replaced convolution used to see NCHW8c data with 64-channel params;
  // AlterOpLayout now records the layouts kept nodes read, so CorrectLayout converts back.
  // The concatenate joins a blocked branch and an NCHW pool branch in the first's layout.
  Engine e;
  run(e, "x = Variable(\"x\", shape=(1, 8, 9, 9))\n"
         "c = conv2d(x, channels=16, kernel_size=(3, 3), padding=(1, 1), use_bias=False)\n"
         "b = relu(batch_norm(c, epsilon=2e-5))\n"
         "p = avg_pool2d(x, pool_size=(3, 3), padding=(1, 1), count_include_pad=True)\n"
         "y = concatenate(b, p, axis=1)\n"
         "z = conv2d(y, channels=8, kernel_size=(1, 1))\n"
         ":graph z");
  run(e, ":build opt_level=3 param conv2d0_weight=random conv2d1_weight=random "
         "conv2d1_bias=random batch_norm0_gamma=random batch_norm0_beta=random "
         "batch_norm0_moving_mean=random seed=3");
  EXPECT_LT(runError(e), 1e-5);
}

// Ops whose axes mean something (layer_norm over H and W, group_norm's channel groups, matmul's
// rows and columns, where's broadcasting) read a blocked convolution's output converted back:
// layer_norm once took NCHW16c data and failed, its gamma (8, 8) against (8, 8, 16).
TEST(AlterOpLayout, NormalisationsAndMatmulReadPlainLayoutsAtOptLevel3) {
  Engine e;
  run(e, "x = Variable(\"x\", shape=(1, 3, 8, 8))\n"
         "c = conv2d(x, channels=16, kernel_size=(3, 3), padding=(1, 1))\n"
         "l = layer_norm(c, axis=2)[0]\n"
         "n = group_norm(c, num_groups=4)\n"
         "i = instance_norm(relu(c))\n"
         "m = matmul(c, Variable(\"w\", shape=(8, 5)))\n"
         "t = where(broadcast_greater(c, Variable(\"u\", shape=(8,))), n, i)\n"
         "y = l + n\n"
         ":graph Group([y, t, m])\n"
         ":set target llvm -mcpu=skylake-avx512");
  run(e, ":build opt_level=3");
  std::string ir = output(e, ":ir");
  EXPECT_NE(ir.find("func_name='fuse__contrib_conv2d_NCHWc'"), std::string::npos) << ir;
  std::string out = output(e, ":run");
  EXPECT_EQ(countOf(out, "vs reference interpreter"), 3) << out;
  for (size_t at = out.find("max rel error "); at != std::string::npos;
       at = out.find("max rel error ", at + 1))
    EXPECT_LT(std::stod(out.substr(at + 14)), 1e-4) << out;
}

TEST(AlterOpLayout, ConcatenateTakesTheFirstInputsLayoutAsNnvmDoes) {
  registerAllOps();
  const OpDef *concat = OpRegistry::get().find("concatenate");
  Attrs axis1 = concat->parse({{"axis", "1"}}, true);
  auto correct = [&](const Attrs &a, std::vector<std::string> in, std::vector<std::string> last) {
    std::vector<std::string> out{"__undef__"};
    concat->correctLayout(a, in, last, out);
    std::string s;
    for (const auto &l : in)
      s += l + " ";
    return s + "-> " + out[0];
  };
  // The first input's blocked layout is requested from every input.
  EXPECT_EQ(correct(axis1, {"NCHW8c", "NCHW"}, {"NCHW", "NCHW"}), "NCHW8c NCHW8c -> NCHW8c");
  // An unknown first input takes the last run's layout.
  EXPECT_EQ(correct(axis1, {"__undef__", "NCHW"}, {"NCHW", "NCHW"}), "NCHW NCHW -> NCHW");
  // Axis 1 would join H in NHWC instead of C: back to the last run's NCHW.
  EXPECT_EQ(correct(axis1, {"NHWC", "NHWC"}, {"NCHW", "NCHW"}), "NCHW NCHW -> NCHW");
  // Axis 4 does not exist in NCHW: the last run's NCHW8c is kept.
  Attrs axis4 = concat->parse({{"axis", "4"}}, true);
  EXPECT_EQ(correct(axis4, {"NCHW", "NCHW"}, {"NCHW8c", "NCHW8c"}), "NCHW8c NCHW8c -> NCHW8c");
  // Unknown first input and last run (a reshape's output), a blocked second one: all in the
  // blocked one's primal layout, so that it is converted back (ShuffleNet's channel shuffle).
  EXPECT_EQ(correct(axis1, {"__undef__", "NCHW8c"}, {"__undef__", "NCHW"}), "NCHW NCHW -> NCHW");
}

// ShuffleNet v2's unit at opt_level 3: a channel shuffle (reshape, transpose, reshape) split in
// two halves, one passed on, the other through blocked convolutions, then concatenated. The
// concatenate once met an unknown layout and NCHW8c and failed ("rank 5 instead of 4").
TEST(AlterOpLayout, ChannelShuffleBetweenBlockedConvolutionsBuildsAtOptLevel3) {
  Engine e;
  run(e, "x = Variable(\"x\", shape=(1, 16, 8, 8))\n"
         "a = relu(conv2d(x, channels=8, kernel_size=(1, 1)))\n"
         "b = relu(conv2d(x, channels=8, kernel_size=(3, 3), padding=(1, 1)))\n"
         "s = reshape(transpose(reshape(concatenate(a, b, axis=1), shape=(1, 2, 8, 8, 8)), "
         "axes=(0, 2, 1, 3, 4)), shape=(1, 16, 8, 8))\n"
         "h = strided_slice(s, begin=(0,), end=(8,), axes=(1,))\n"
         "t = strided_slice(s, begin=(8,), end=(16,), axes=(1,))\n"
         "u = relu(conv2d(t, channels=8, kernel_size=(1, 1)))\n"
         "y = concatenate(h, u, axis=1)\n"
         ":graph y\n"
         ":set target llvm -mcpu=znver3");
  run(e, ":build opt_level=3 seed=5");
  std::string ir = output(e, ":ir");
  EXPECT_NE(ir.find("fuse__contrib_conv2d_NCHWc"), std::string::npos) << ir;
  EXPECT_LT(absError(e), 1e-5); // relu's zeros make the relative error float32 rounding's
}

// Seed 000's graph with its weight bound: one weight read by two convolutions is converted to
// OIHW3i3o once (CorrectLayout shares the transform), so PrecomputePrune cuts one entry; the
// output comes back in NCHW with the shape opt level 2 gives.
TEST(AlterOpLayout, AWeightSharedByTwoConvolutionsIsPackedOnceAtOptLevel3) {
  Engine e;
  run(e, "x = Variable(\"x\")\nw = Variable(\"w\")\nb = Variable(\"b\")\n"
         "z = conv2d(data=x, weight=w, bias=b, channels=3, kernel_size=(5,5))\n"
         "z = z + conv2d(data=z, weight=w, bias=b, channels=3, kernel_size=(5,5), padding=[2,2])\n"
         ":graph z");
  std::string built = output(e, ":build opt_level=3 shape x=(7,3,11,13) param w=random b=random");
  EXPECT_NE(built.find("params b_C3c, w_OIHW3i3o"), std::string::npos) << built;
  std::string out = output(e, ":run");
  EXPECT_NE(out.find("shape (7, 3, 7, 9) float32"), std::string::npos) << out;
  EXPECT_LT(runError(e), 1e-2); // FMA contraction: a few ulps on values near zero
}

// The tutorial graph itself (13 channels on 100x100): the output columns fill the vectors
// better than the channels (100 of 112 lanes against 13 of 16; float64 100 of 104 against a
// padded 13 of 16), so the convolutions stay in NCHW with conv2dNCHW's register tile — no
// layout transform, no channel padding — and match the reference interpreter. At stride 2 the
// columns a vector reads are not consecutive, and the convolution is blocked by channels.
TEST(AlterOpLayout, WideNarrowChannelConvolutionsStayInNCHW) {
  for (const char *dt : {"float32", "float64"}) {
    Engine e;
    run(e, tutorialGraph(100) + "\n:set target llvm -mcpu=skylake-avx512");
    run(e, std::string(":build opt_level=3 dtype=") + dt);
    EXPECT_LT(runError(e), 1e-5) << dt;
    std::string ir = output(e, ":ir");
    EXPECT_EQ(countOf(ir, "layout_transform"), 0) << ir;
    EXPECT_EQ(countOf(ir, "NCHWc"), 0) << ir;
    EXPECT_NE(ir.find("func_name='fuse_conv2d_relu_broadcast_add'"), std::string::npos) << ir;
    std::string knobs = output(e, ":schedule fuse_conv2d_relu");
    EXPECT_NE(knobs.find("knob oc_block = 13"), std::string::npos) << knobs;
    EXPECT_NE(knobs.find("knob rows = 2"), std::string::npos) << knobs;
    EXPECT_NE(knobs.find(std::string("knob vec = ") + (std::string(dt) == "float32" ? "16" : "8")),
              std::string::npos)
        << knobs;
  }
  Engine e;
  run(e, "x = Variable(\"x\", shape=(1,13,100,100))\n"
         "y = conv2d(data=x, channels=13, kernel_size=(3,3), strides=(2,2), padding=[1,1])\n"
         ":graph y\n:set target llvm -mcpu=skylake-avx512\n:build opt_level=3");
  EXPECT_NE(output(e, ":ir").find("_contrib_conv2d_NCHWc"), std::string::npos);
  EXPECT_LT(absError(e), 1e-5); // no relu: outputs near zero make the relative error meaningless
}

// The same graph for an AVX2 CPU: still NCHW (100 columns fill 13 vectors of 8 floats or 25 of 4
// doubles exactly), with AVX2's smaller tile: 5 channels x 2 rows, the third block of the 13
// channels shifted back to channels 8-12 (the overlap computed twice, the same values).
TEST(AlterOpLayout, WideNarrowChannelConvolutionsOfAvx2) {
  for (const char *dt : {"float32", "float64"}) {
    Engine e;
    run(e, tutorialGraph(100) + "\n:set target llvm -mcpu=znver3");
    run(e, std::string(":build opt_level=3 dtype=") + dt);
    EXPECT_LT(runError(e), 1e-5) << dt;
    std::string ir = output(e, ":ir");
    EXPECT_EQ(countOf(ir, "layout_transform"), 0) << ir;
    std::string knobs = output(e, ":schedule fuse_conv2d_relu");
    EXPECT_NE(knobs.find("knob oc_block = 5  (output channels per register tile; the last block "
                         "shifted back)"),
              std::string::npos)
        << knobs;
    EXPECT_NE(knobs.find("knob rows = 2"), std::string::npos) << knobs;
    EXPECT_NE(knobs.find(std::string("knob vec = ") + (std::string(dt) == "float32" ? "8" : "4")),
              std::string::npos)
        << knobs;
    EXPECT_NE(knobs.find("split i1 by 5, the last tile shifted back to end at 13"),
              std::string::npos)
        << knobs;
  }
}

// The tutorial graph (seed 001) on 10x10 (too narrow for its columns to fill a vector, so the
// convolutions are blocked by channels): the residual add of a blocked convolution (NCHW13c)
// and the NCHW input converts the input to the blocked layout instead of refusing; float32
// and float64. The target names an AVX-512 CPU so that the blocks are the same on any machine.
TEST(AlterOpLayout, AResidualAddOfBlockedAndPlainLayoutsBuildsAtOptLevel3) {
  for (const char *dt : {"float32", "float64"}) {
    Engine e;
    run(e, tutorialGraph(10) + "\n:set target llvm -mcpu=skylake-avx512");
    run(e, std::string(":build opt_level=3 dtype=") + dt);
    EXPECT_LT(runError(e), 1e-5) << dt;
    std::string ir = output(e, ":ir");
    if (std::string(dt) == "float32") {
      // 13 float32 channels fill 13 of a register's 16 lanes: one NCHW13c block.
      std::string nodes = output(e, ":nodes");
      EXPECT_NE(nodes.find("'name': 'x_NCHW13c'"), std::string::npos) << "the add reads x blocked";
      // NCHW13c back to NCHW, flattened: each vector step gathers values whose indices
      // divide by 10 and 13 per lane, in 32-bit lanes (64-bit lanes have no vector division by
      // a constant and went scalar).
      std::string llvm = output(e, ":llvm fuse___layout_transform___flatten");
      EXPECT_NE(llvm.find("masked.gather"), std::string::npos);
      EXPECT_NE(llvm.find(" x i32>"), std::string::npos);
    } else {
      // 13 doubles would span two registers unevenly: the channels are padded to one NCHW16c
      // block. x is padded and converted once, for the first convolution and the add; the
      // second convolution reads the first one's padded output as it is; the channels are cut
      // back to 13 once, before flatten.
      EXPECT_NE(
          ir.find("%11 = tvm_op(%1, %6, %8, %10, num_outputs='1', num_inputs='4', "
                  "flatten_data='0', func_name='fuse__contrib_conv2d_NCHWc_relu_broadcast_add')"),
          std::string::npos)
          << ir;
      EXPECT_EQ(countOf(ir, "split"), 1) << ir;
      EXPECT_NE(ir.find("func_name='fuse___layout_transform___split_flatten'"), std::string::npos);
      EXPECT_NE(output(e, ":schedule fuse__contrib_conv2d_NCHWc_relu").find("knob oc_bn = 16"),
                std::string::npos);
    }
  }
}

// Padded channels (13 doubles in one block of 16) stay padded through ops that keep the padding
// zero (batch norm's multiply and add, relu, max pooling), and the next convolution reads them as
// its own zero-padded input channels. After an op that does not keep zeros (sigmoid: 0.5 in the
// padding) the channels are cut and padded with zeros again before the next convolution. Both
// compute what the reference interpreter does. 16-lane blocks: the target names an AVX-512 CPU.
TEST(AlterOpLayout, PaddedChannelsStayPaddedWhileThePaddingIsZero) {
  for (const char *act : {"relu", "sigmoid"}) {
    Engine e;
    run(e, std::string("x = Variable(\"x\", shape=(1,13,12,12))\n"
                       "z = conv2d(data=x, channels=13, kernel_size=(3,3), padding=[1,1])\n"
                       "z = ") +
               act +
               "(batch_norm(z))\n"
               "z = max_pool2d(z, pool_size=(2,2), strides=(2,2))\n"
               "z = relu(conv2d(data=z, channels=13, kernel_size=(3,3), padding=[1,1]))\n:graph z\n"
               ":set target llvm -mcpu=skylake-avx512");
    run(e, ":build opt_level=3 dtype=float64 param batch_norm0_gamma=random "
           "batch_norm0_beta=random batch_norm0_moving_mean=random "
           "batch_norm0_moving_var=ones");
    EXPECT_LT(absError(e), 1e-10) << act;
    std::string ir = output(e, ":ir");
    EXPECT_EQ(countOf(ir, "split"), std::string(act) == "relu" ? 1 : 2) << ir;
  }
}

// An output width with no useful divisor (29 is prime: TVM's rule would give reg_n = 1) is
// tiled as 2 x 15 columns, the second tile shifted back to start at column 14; the overlapping
// column is computed twice with the same result. With one channel block the kernel's columns
// are unrolled inside the channel loop (kw_inner), so neighbouring taps share input loads.
TEST(AlterOpLayout, APrimeOutputWidthGetsShiftedRegisterTiles) {
  Engine e;
  run(e, "x = Variable(\"x\", shape=(1, 16, 5, 29))\n"
         "y = relu(conv2d(x, channels=16, kernel_size=(3, 3), padding=(1, 1), name=\"c\"))\n"
         ":graph y\n:set target llvm -mcpu=skylake-avx512");
  run(e, ":build opt_level=3 param c_weight=random c_bias=random");
  std::string sched = output(e, ":schedule fuse__contrib_conv2d_NCHWc_relu");
  EXPECT_NE(sched.find("knob reg_n = 15  (output columns per register tile; the last tile "
                       "shifted back)"),
            std::string::npos)
      << sched;
  EXPECT_NE(sched.find("split i3 by 15, the last tile shifted back to end at 29"),
            std::string::npos)
      << sched;
  EXPECT_NE(sched.find("knob kw_inner = 1"), std::string::npos) << sched;
  EXPECT_NE(sched.find("reorder ic_chunk, kh, ic_block, oc_chunk.c, ow.c, kw, oc_block.c"),
            std::string::npos)
      << sched;
  EXPECT_LT(runError(e), 1e-4);
}

// SinkLayoutTransform: batch norm (broadcast multiply and add of per-channel operands after
// SimplifyInference) and relu between two blocked convolutions run in NCHW16c, fused into the
// first convolution, with their operands converted at build time: the only transforms left are
// the input's and the output's. An operand over (H, W) alone cannot be blocked: that add stays
// in NCHW between transforms. Both match the reference interpreter.
TEST(SinkLayoutTransform, BatchNormAndReluStayBlockedBetweenConvolutions) {
  Engine e;
  run(e, "x = Variable(\"x\", shape=(1, 16, 6, 6))\n"
         "c = conv2d(x, channels=32, kernel_size=(3, 3), padding=(1, 1), use_bias=False)\n"
         "b = relu(batch_norm(c, epsilon=2e-5))\n"
         "y = conv2d(b, channels=16, kernel_size=(1, 1))\n:graph y\n"
         ":set target llvm -mcpu=skylake-avx512\n:trace on");
  std::string built =
      output(e, ":build opt_level=3 param conv2d0_weight=random conv2d1_weight=random "
                "conv2d1_bias=random batch_norm0_gamma=random batch_norm0_beta=random "
                "batch_norm0_moving_mean=random batch_norm0_moving_var=ones seed=4");
  EXPECT_NE(built.find("Applied passes SinkLayoutTransform"), std::string::npos);
  run(e, ":trace off");
  std::string nodes = output(e, ":nodes");
  EXPECT_EQ(countOf(nodes, "'op': 'tvm_op'"), 4) << nodes; // x in, conv+bn+relu, conv, y out
  EXPECT_NE(nodes.find("fuse__contrib_conv2d_NCHWc_broadcast_mul_broadcast_add_relu"),
            std::string::npos)
      << nodes;
  EXPECT_LT(absError(e), 2e-5); // outputs about 10: float32 rounding, as at opt level 2

  Engine f;
  run(f, "x = Variable(\"x\", shape=(1, 16, 6, 6))\nhw = Variable(\"hw\", shape=(6, 6))\n"
         "c = conv2d(x, channels=16, kernel_size=(3, 3), padding=(1, 1), use_bias=False)\n"
         "y = conv2d(broadcast_add(c, hw), channels=16, kernel_size=(1, 1))\n:graph y\n"
         ":set target llvm -mcpu=skylake-avx512");
  run(f, ":build opt_level=3 param conv2d0_weight=random conv2d1_weight=random "
         "conv2d1_bias=random");
  EXPECT_NE(output(f, ":nodes").find("fuse___layout_transform___broadcast_add___layout_transform"),
            std::string::npos);
  EXPECT_LT(absError(f), 2e-5);
}

// opt level 3 against opt level 2, computed by different code end to end (blocked layouts,
// SinkLayoutTransform, blocked pools, register tiles, rfactor dense against the seed-era NCHW
// schedules): a small ResNet-style stem and block with batch norm, max and global pooling, a
// residual add and a classifier, on the same input and params.
TEST(SinkLayoutTransform, OptLevel3MatchesOptLevel2OnAResNetBlock) {
  Engine e;
  run(e, "x = Variable(\"x\", shape=(1, 3, 20, 20))\n"
         "c = relu(batch_norm(conv2d(x, channels=32, kernel_size=(3, 3), padding=(1, 1), "
         "use_bias=False, name=\"c0\"), name=\"bn0\"))\n"
         "p = max_pool2d(c, pool_size=(3, 3), strides=(2, 2), padding=(1, 1))\n"
         "r = conv2d(p, channels=32, kernel_size=(3, 3), padding=(1, 1), name=\"c1\")\n"
         "a = avg_pool2d(relu(r + p), pool_size=(2, 2), strides=(2, 2))\n"
         "y = softmax(dense(flatten(global_avg_pool2d(a)), units=10, name=\"fc\"))\n:graph y");
  Graph g = e.current()->graph;
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(-1, 1);
  auto random = [&](const Shape &s) {
    Tensor t(s, kFloat32);
    for (double &v : t.data)
      v = u(rng);
    return t;
  };
  backend::BuildOptions o;
  o.params = {{"c0_weight", random({32, 3, 3, 3})},
              {"bn0_gamma", random({32})},
              {"bn0_beta", random({32})},
              {"bn0_moving_mean", random({32})},
              {"bn0_moving_var", random({32})},
              {"c1_weight", random({32, 32, 3, 3})},
              {"c1_bias", random({32})},
              {"fc_weight", random({10, 32})},
              {"fc_bias", random({10})}};
  for (double &v : o.params["bn0_moving_var"].data)
    v = std::fabs(v) + 0.5;
  Tensor x = random({1, 3, 20, 20});
  std::vector<std::vector<double>> outs;
  for (int level : {2, 3}) {
    o.optLevel = level;
    PassContext ctx;
    ctx.config["target"] = "llvm -mcpu=skylake-avx512"; // 16-lane blocks on any machine
    Graph deploy = backend::build(g, o, ctx);
    std::map<std::string, Tensor> in = loadAll(backend::builtLibrary(deploy)->params);
    in["x"] = x;
    outs.push_back(backend::runDeployGraph(deploy, in).outputs[0].data);
  }
  ASSERT_EQ(outs[0].size(), 10u);
  ASSERT_EQ(outs[1].size(), 10u);
  for (size_t i = 0; i < 10; ++i)
    EXPECT_NEAR(outs[1][i], outs[0][i], 1e-5) << i;
}

// opt_level 3 runs a kernel with a few thousand element statements on the calling thread: the
// 13x13x3x3 weight transform (1,521 elements) has no parallel loop left, while the 13x100x100
// input's transform (130,000) keeps its parallel loop. Both compute what the reference
// interpreter does. (Stride 2, so that the convolution is blocked by channels.)
TEST(FastSchedule, SmallKernelsRunOnTheCallingThread) {
  Engine e;
  run(e, "x = Variable(\"x\", shape=(1, 13, 100, 100))\n"
         "y = relu(conv2d(x, channels=13, kernel_size=(3, 3), strides=(2, 2), padding=(1, 1), "
         "name=\"c\"))\n"
         ":graph y\n:set target llvm -mcpu=skylake-avx512");
  run(e, ":build opt_level=3");
  std::string weights = output(e, ":lower fuse___layout_transform___1");
  EXPECT_EQ(countOf(weights, "parallel ("), 0) << weights;
  EXPECT_NE(weights.find("for (ax0.ax1.fused.ax2.fused, 0, 3) {"), std::string::npos) << weights;
  std::string input = output(e, ":lower fuse___layout_transform__");
  EXPECT_EQ(countOf(input, "parallel ("), 1) << input;
  EXPECT_LT(absError(e), 1e-4);
}

// Opt level 3's dense holds a block of outputs' partial sums in registers (each input vector
// loaded once per block), up to half the target's vector registers: 10 units make two blocks of
// 5, one per thread; 37 (prime) blocks of 8, the last shifted back over the one before; 32 units
// blocks of 16 with AVX-512's 32 registers, of 8 with AVX2's 16. The partial sums are one vector
// of the target (16 or 8 float32 lanes), added pairwise per output (rf8 … rf2). With several rows
// (6 tokens of 200), a tile of rows x outputs: 4 rows x 3 outputs on AVX2 ((16 - 1) / (4 + 1)
// outputs: 12 partial sums, 3 weight vectors and an input vector), 4 x 6 on AVX-512; 6 rows make
// tiles of 4 with the last shifted back, 10 outputs tiles of 3 (or 6) likewise. All match the
// reference interpreter.
TEST(FastSchedule, DenseAccumulatesABlockOfOutputsTogether) {
  struct Case {
    const char *cpu;
    const char *shape;
    int units, rows, block, lanes;
  };
  for (Case c :
       {Case{"skylake-avx512", "(1, 200)", 10, 1, 5, 16},
        Case{"skylake-avx512", "(1, 200)", 37, 1, 8, 16},
        Case{"skylake-avx512", "(1, 200)", 32, 1, 16, 16}, Case{"znver3", "(1, 200)", 10, 1, 5, 8},
        Case{"znver3", "(1, 200)", 37, 1, 8, 8}, Case{"znver3", "(1, 200)", 32, 1, 8, 8},
        Case{"skylake-avx512", "(2, 3, 200)", 10, 4, 6, 16},
        Case{"znver3", "(2, 3, 200)", 10, 4, 3, 8}, Case{"znver3", "(2, 3, 200)", 2, 4, 2, 8}}) {
    SCOPED_TRACE(std::string(c.cpu) + " " + c.shape + " units " + std::to_string(c.units));
    Engine e;
    run(e, std::string("x = Variable(\"x\", shape=") + c.shape + ")\ny = dense(x, units=" +
               std::to_string(c.units) + ")\n:graph y\n:set target llvm -mcpu=" + c.cpu);
    run(e, ":build opt_level=3 dtype=float32");
    std::string knobs = output(e, ":schedule fuse_dense");
    if (c.rows > 1) {
      EXPECT_NE(knobs.find("knob row_block = " + std::to_string(c.rows)), std::string::npos)
          << knobs;
    }
    EXPECT_NE(knobs.find("knob out_block = " + std::to_string(c.block)), std::string::npos)
        << knobs;
    std::string loops = output(e, ":lower fuse_dense");
    EXPECT_NE(loops.find("allocate compute.rf[float32 * " + std::to_string(c.rows) + " * " +
                         std::to_string(c.block) + " * " + std::to_string(c.lanes) + "]"),
              std::string::npos)
        << loops;
    // Each output's partial sums added pairwise: halves down to the last two.
    EXPECT_NE(loops.find("allocate compute.rf2[float32 * " + std::to_string(c.rows) + " * " +
                         std::to_string(c.block) + " * 2]"),
              std::string::npos)
        << loops;
    EXPECT_LT(absError(e), 1e-4);
  }
}

// dense(flatten(x)) of a blocked tensor with a weight bound at build time: the dense reads the
// blocked tensor flattened as it is and its weight's columns are reordered (and zero-padded for
// padded channels) once, at build time — no layout transform before the flatten. Its outputs
// match the reference interpreter in float32 (NCHW13c) and float64 (13 channels padded to 16)
// with an AVX-512 target (named, so that the blocks are the same on any machine).
// Without the weight bound the transform stays, so that no run reorders the weight.
TEST(AlterOpLayout, ADenseAfterFlattenReadsTheBlockedTensor) {
  for (const char *dt : {"float32", "float64"}) {
    Engine e;
    run(e, "x = Variable(\"x\", shape=(1,13,10,10))\n"
           "z = relu(conv2d(data=x, channels=13, kernel_size=(3,3), padding=[1,1]))\n"
           "z = dense(flatten(z), units=10)\n:graph z\n:set target llvm -mcpu=skylake-avx512");
    run(e, std::string(":build opt_level=3 dtype=") + dt +
               " param conv2d0_weight=random conv2d0_bias=random dense0_weight=random "
               "dense0_bias=random");
    std::string ir = output(e, ":ir");
    EXPECT_NE(ir.find("func_name='fuse_flatten'"), std::string::npos) << ir;
    EXPECT_EQ(countOf(ir, "layout_transform"), 1) << ir; // x's, into the convolution
    EXPECT_LT(runError(e), std::string(dt) == "float64" ? 1e-12 : 1e-4) << dt;
    run(e, ":undo");
    run(e, std::string(":build opt_level=3 dtype=") + dt);
    std::string plain = output(e, ":ir");
    EXPECT_EQ(countOf(plain, "fuse_flatten"), 0) << plain;
    EXPECT_NE(plain.find("flatten'"), std::string::npos) << plain; // fused with the transform
    EXPECT_LT(runError(e), std::string(dt) == "float64" ? 1e-12 : 1e-4) << dt;
  }
}

// A MobileNet block at opt level 3 (depthwise 3x3 stride 2, batch norm, relu, pointwise 1x1,
// batch norm, relu) runs in NCHW16c from the first transform to the last: the depthwise
// convolution is blocked like the pointwise one, so nothing converts between them. Compared with
// the reference interpreter on random batch-norm params, float32 and float64.
TEST(AlterOpLayout, AMobileNetBlockStaysBlocked) {
  for (const char *dt : {"float32", "float64"}) {
    Engine e;
    run(e, "x = Variable(\"x\", shape=(1,32,14,14))\n"
           "z = conv2d(x, channels=32, groups=32, kernel_size=(3,3), strides=(2,2), "
           "padding=(1,1), use_bias=False, name=\"dw\")\n"
           "z = relu(batch_norm(z, name=\"bn1\"))\n"
           "z = conv2d(z, channels=64, kernel_size=(1,1), use_bias=False, name=\"pw\")\n"
           "z = relu(batch_norm(z, name=\"bn2\"))\n:graph z\n"
           ":set target llvm -mcpu=skylake-avx512"); // the tile below is AVX-512's
    std::string params;
    for (const char *p : {"dw_weight", "pw_weight", "bn1_gamma", "bn1_beta", "bn1_moving_mean",
                          "bn2_gamma", "bn2_beta", "bn2_moving_mean"})
      params += std::string(" ") + p + "=random";
    run(e, std::string(":build opt_level=3 dtype=") + dt + " param" + params +
               " param bn1_moving_var=ones bn2_moving_var=ones");
    std::string ir = output(e, ":ir");
    EXPECT_EQ(countOf(ir, "layout_transform"), 2) << ir; // the input's and the output's
    EXPECT_NE(ir.find("_contrib_depthwise_conv2d_NCHWc"), std::string::npos) << ir;
    EXPECT_NE(
        output(e, ":schedule fuse__contrib_depthwise_conv2d_NCHWc_broadcast_mul_broadcast_add_relu")
            .find("knob reg_n = 7"),
        std::string::npos);
    EXPECT_LT(absError(e), std::string(dt) == "float64" ? 1e-12 : 1e-5) << dt;
  }
}

// Stride-1 depthwise convolutions at opt level 3 read their input through the padding's bounds
// test; PartitionLoops splits each row of register tiles into the borders and an interior
// without the test, and hoists the row's test out of each kernel tap. Every border case (a
// width of two tiles, a prime width whose last tile is shifted back, a 5x5 kernel with padding
// 2, dilation) against the reference interpreter, float32 and float64.
TEST(AlterOpLayout, DepthwiseBordersMatchTheReferenceAfterPartitioning) {
  const char *cases[] = {
      "x = Variable(\"x\", shape=(1,32,12,56))\nz = conv2d(x, channels=32, groups=32, "
      "kernel_size=(3,3), padding=(1,1), name=\"dw\")",
      "x = Variable(\"x\", shape=(1,16,9,61))\nz = conv2d(x, channels=16, groups=16, "
      "kernel_size=(3,3), padding=(1,1), name=\"dw\")",
      "x = Variable(\"x\", shape=(1,16,20,40))\nz = conv2d(x, channels=16, groups=16, "
      "kernel_size=(5,5), padding=(2,2), name=\"dw\")",
      "x = Variable(\"x\", shape=(1,16,11,30))\nz = conv2d(x, channels=16, groups=16, "
      "kernel_size=(3,3), padding=(2,2), dilation=(2,2), name=\"dw\")",
  };
  for (const char *c : cases)
    for (const char *dt : {"float32", "float64"}) {
      SCOPED_TRACE(std::string(c) + " " + dt);
      Engine e;
      run(e, std::string(c) + "\nz = relu(z)\n:graph z");
      run(e, std::string(":build opt_level=3 dtype=") + dt + " param dw_weight=random" +
                 " dw_bias=random");
      std::string loops = output(e, ":lower fuse__contrib_depthwise_conv2d_NCHWc_relu");
      EXPECT_NE(loops.find("} else {"), std::string::npos) << loops; // a row test hoisted
      EXPECT_LT(absError(e), std::string(dt) == "float64" ? 1e-12 : 1e-5);
    }
}

namespace {

// The deploy graph's storage ids of kernel `name`'s first input and of its output.
std::pair<int64_t, int64_t> storageOf(const Graph &g, const std::string &name) {
  const IndexedGraph &idx = g.index();
  const auto &sid = g.attr("storage_id")->ints;
  for (uint32_t nid = 0; nid < idx.numNodes(); ++nid)
    if (idx.nodes[nid].node->name == name)
      return {sid[idx.entryId(idx.nodes[nid].inputs.at(0))], sid[idx.entryId(nid, 0)]};
  ADD_FAILURE() << "no node " << name;
  return {-1, -1};
}

} // namespace

// At opt_level 3 a kernel that only reshapes (flatten before a dense) is marked reshape_only;
// PlanMemory gives its output its input's storage when nothing reads the input afterwards, and
// the executor then skips it. When the input is still read later, the kernel keeps its own
// buffer and runs. Both match the reference interpreter; opt_level 2 is as before.
TEST(FastPath, ReshapeOnlyKernelsShareTheirInputsStorage) {
  const std::string program = "x = Variable(\"x\", shape=(1, 3, 8, 8))\n"
                              "c = conv2d(x, channels=4, kernel_size=(3, 3), name=\"c\")\n"
                              "f = flatten(c, name=\"f\")\n";
  // Bound weights: the dense then reads the blocked convolution output as it is (its weight
  // reordered at build time), so the flatten is a kernel of its own.
  const std::string kParams =
      " param c_weight=random c_bias=random dense0_weight=random dense0_bias=random";
  for (int level : {2, 3}) {
    Engine e;
    run(e, program + "y = dense(f, units=5)\n:graph y");
    run(e, ":build opt_level=" + std::to_string(level) + kParams);
    const Graph &g = e.current()->graph;
    std::string ir = output(e, ":ir");
    EXPECT_EQ(ir.find("reshape_only='1', flatten_data='0', func_name='fuse_flatten'") !=
                  std::string::npos,
              level == 3)
        << ir;
    auto [in, out] = storageOf(g, "f");
    EXPECT_EQ(in == out, level == 3) << in << " " << out;
    EXPECT_LT(absError(e), 1e-4);
  }
  // The convolution's output is summed after the flatten: no sharing, the copy runs.
  Engine e;
  run(e, program + "y = dense(f, units=5) + sum(c)\n:graph y\n:build opt_level=3" + kParams);
  EXPECT_NE(output(e, ":ir").find("reshape_only='1'"), std::string::npos);
  auto [in, out] = storageOf(e.current()->graph, "f");
  EXPECT_NE(in, out);
  EXPECT_LT(absError(e), 1e-4);
}

namespace {

// The largest of the errors `:run` prints against the reference interpreter, over all outputs.
double largestAbsError(Engine &e) {
  std::string out = output(e, ":run");
  double worst = -1;
  for (size_t at = out.find("max abs error "); at != std::string::npos;
       at = out.find("max abs error ", at + 1))
    worst = std::max(worst, std::stod(out.substr(at + 14)));
  EXPECT_GE(worst, 0) << out;
  return worst < 0 ? 1.0 : worst;
}

} // namespace

// Opt level 3 computes a row's statistics (softmax's max and sum, layer_norm's mean and
// deviation) inside the output's parallel row loop, each statistic that is not an output a local
// of one element, so the row is read from memory once: one parallel loop per function. Each
// reduction accumulates four vectors of partial results along the row (64 floats with AVX-512,
// 32 with AVX2), then adds them pairwise in halves down to two (rf32 … rf2). Rows of a 3-D tensor
// are its two leading axes fused; a row that is not a multiple of the vectors (100 or 1000
// floats) has its partial results guarded and its last output vector shifted back. A reduction
// over two axes, or a row too short for vectors, keeps a loop per stage. All outputs
// (layer_norm's mean and inv_std_dev too) match the reference interpreter.
TEST(FastSchedule, RowStatisticsAreComputedInTheRowLoop) {
  struct Case {
    const char *cpu;
    const char *shape;
    const char *op;    ///< of x, and of g and b shaped `gamma` for layer_norm
    const char *gamma; ///< the normalised axes' shape, or null
    const char *function;
    int parallelLoops;
    const char *expect; ///< in the lowered loops
  };
  for (Case c : {
           Case{"znver4", "(128, 768)", "layer_norm(x, g, b)", "(768,)", "fuse_layer_norm", 1,
                "allocate sum.rf[float32 * 1 * 1 * 64]"},
           Case{"znver3", "(4, 32, 100)", "layer_norm(x, g, b)", "(100,)", "fuse_layer_norm", 1,
                "parallel (ax0.ax1.fused, 0, 128) {"},
           Case{"znver4", "(8, 1000)", "softmax(x)", nullptr, "fuse_softmax", 1,
                "allocate T_softmax_expsum.rf2[float32 * 1 * 2]"},
           Case{"znver3", "(3, 5, 200)", "log_softmax(x)", nullptr, "fuse_log_softmax", 1,
                "allocate T_softmax_maxelem.rf[float32 * 1 * 1 * 32]"},
           // Not rows: normalised over the last two axes, or rows shorter than four vectors.
           Case{"znver4", "(16, 8, 80)", "layer_norm(x, g, b, axis=-2)", "(8, 80)",
                "fuse_layer_norm", 5, "produce sum {\n  parallel"},
           Case{"znver4", "(4096, 10)", "softmax(x)", nullptr, "fuse_softmax", 3,
                "produce T_softmax_maxelem {\n  parallel"},
       }) {
    SCOPED_TRACE(std::string(c.cpu) + " " + c.op + " of " + c.shape);
    std::string program = std::string("x = Variable(\"x\", shape=") + c.shape + ")\n";
    if (c.gamma)
      program += std::string("g = Variable(\"g\", shape=") + c.gamma +
                 ")\nb = Variable(\"b\", shape=" + c.gamma + ")\nl = " + c.op +
                 "\ny = Group([l[0], l[1], l[2]])\n";
    else
      program += std::string("y = ") + c.op + "\n";
    Engine e;
    run(e, program + ":graph y\n:set target llvm -mcpu=" + c.cpu);
    run(e, ":build opt_level=3 dtype=float32");
    std::string loops = output(e, std::string(":lower ") + c.function);
    EXPECT_EQ(countOf(loops, "parallel ("), c.parallelLoops) << loops;
    EXPECT_NE(loops.find(c.expect), std::string::npos) << loops;
    EXPECT_LT(largestAbsError(e), 1e-5);
  }
}

// Opt level 3's batch_matmul accumulates a tile of rows x vectors of columns in registers over
// k (no horizontal sums): 6 x 4 vectors of 16 on AVX-512, 4 x 3 vectors of 8 on AVX2; 13 rows
// and 70 columns end with tiles shifted back; an rhs given as (n, k) is copied to (k, n) first;
// a scale after it is applied to the tile before the store. Fewer columns than a vector keep
// the generic schedule. All match the reference interpreter.
TEST(FastSchedule, BatchMatmulAccumulatesARegisterTile) {
  struct Case {
    const char *cpu;
    const char *rhs;
    const char *op;
    int rows, vectors, lanes;
    bool copied; ///< the rhs copied to (k, n)
  };
  for (Case c : {Case{"skylake-avx512", "(2, 40, 70)", "batch_matmul(a, b) * 0.5", 6, 4, 16, false},
                 Case{"znver3", "(2, 40, 70)", "batch_matmul(a, b) * 0.5", 4, 3, 8, false},
                 Case{"skylake-avx512", "(2, 70, 40)", "batch_matmul(a, b, transpose_b=True)", 6, 4,
                      16, true},
                 Case{"skylake-avx512", "(2, 40, 7)", "batch_matmul(a, b)", 0, 0, 16, false}}) {
    SCOPED_TRACE(std::string(c.cpu) + " " + c.op + " by " + c.rhs);
    Engine e;
    run(e, std::string("a = Variable(\"a\", shape=(2, 13, 40))\nb = Variable(\"b\", shape=") +
               c.rhs + ")\ny = " + c.op + "\n:graph y\n:set target llvm -mcpu=" + c.cpu);
    run(e, ":build opt_level=3 dtype=float32");
    std::string function = std::string(c.op).find('*') != std::string::npos
                               ? "fuse_batch_matmul___mul_scalar__"
                               : "fuse_batch_matmul";
    std::string steps = output(e, ":schedule " + function);
    std::string loops = output(e, ":lower " + function);
    if (c.rows == 0) {
      EXPECT_EQ(steps.find("knob row_block"), std::string::npos) << steps;
    } else {
      EXPECT_NE(steps.find("knob row_block = " + std::to_string(c.rows)), std::string::npos)
          << steps;
      EXPECT_NE(steps.find("knob col_vectors = " + std::to_string(c.vectors)), std::string::npos)
          << steps;
      EXPECT_NE(loops.find("allocate T_batch_matmul.global[float32 * 1 * " +
                           std::to_string(c.rows) + " * " + std::to_string(c.vectors * c.lanes) +
                           "]"),
                std::string::npos)
          << loops;
      EXPECT_EQ(loops.find("produce rhs_rows") != std::string::npos, c.copied) << loops;
    }
    EXPECT_LT(absError(e), 1e-5);
  }
}

// A dense over rows whose weight is a bound param becomes _contrib_dense_pack, its weight packed
// NC<n>n once at build time (PrecomputePrune folds the transform into the param), n the
// register tile's columns for the target: 64 (4 vectors of 16) with AVX-512, 24 (3 of 8) with
// AVX2, fewer vectors when the units are not a multiple (AVX2's 16 for 400 units); units that
// are no multiple of a vector, fewer than 16 rows, or a weight that is not a param stay dense.
// Every build computes what the reference interpreter does.
TEST(AlterOpLayout, ADenseOverRowsHasItsWeightPackedAtOptLevel3) {
  struct Want {
    const char *cpu;
    int64_t rows, units;
    bool param;
    const char *op; ///< the built function
    const char *weight;
  };
  for (const Want &w :
       {Want{"znver4", 128, 768, true, "fuse__contrib_dense_pack", "fc_weight_pack"},
        Want{"znver3", 128, 768, true, "fuse__contrib_dense_pack", "fc_weight_pack"},
        Want{"znver3", 20, 400, true, "fuse__contrib_dense_pack", "fc_weight_pack"},
        Want{"znver4", 20, 100, true, "fuse_dense", "fc_weight"},
        Want{"znver4", 15, 768, true, "fuse_dense", "fc_weight"},
        Want{"znver4", 128, 768, false, "fuse_dense", "fc_weight"}}) {
    std::string what = std::string(w.cpu) + " rows " + std::to_string(w.rows) + " units " +
                       std::to_string(w.units) + (w.param ? "" : " unbound");
    SCOPED_TRACE(what);
    Engine e;
    run(e, std::string(":set target llvm -mcpu=") + w.cpu + "\nx = Variable(\"x\", shape=(" +
               std::to_string(w.rows) + ", 96))\ny = dense(x, units=" + std::to_string(w.units) +
               ", name=\"fc\")\n:graph y");
    std::string built = output(e, std::string(":build opt_level=3") +
                                      (w.param ? " param fc_weight=random fc_bias=random" : ""));
    EXPECT_NE(built.find(std::string("func_name='") + w.op + "'"), std::string::npos) << built;
    EXPECT_NE(built.find(std::string("%") + w.weight + ","), std::string::npos) << built;
    if (w.param) {
      auto lib = backend::builtLibrary(e.current()->graph);
      ASSERT_TRUE(lib);
      const Tensor packed = lib->params.at(w.weight).load();
      int64_t n = std::string(w.weight) == "fc_weight" ? 0
                  : std::string(w.cpu) == "znver4"     ? 64
                  : w.units % 24 == 0                  ? 24
                                                       : 16;
      Shape want = n ? Shape{w.units / n, 96, n} : Shape{w.units, 96};
      EXPECT_EQ(packed.shape, want);
    }
    EXPECT_LT(absError(e), 1e-4); // float32 sums of 96 terms against the reference's doubles
  }
}

// The packed dense's accumulators stay in registers across each block of k only if LLVM knows
// its buffers do not alias in the parallel loop's body, as the kernel's `noalias` arguments say:
// the body is outlined with `noalias` pointers and inlined, which leaves scope metadata.
TEST(AlterOpLayout, APackedDensesParallelBodyKnowsItsBuffersApart) {
  Engine e;
  run(e, ":set target llvm -mcpu=znver4\nx = Variable(\"x\", shape=(20, 1024))\n"
         "y = dense(x, units=192, name=\"fc\")\n:graph y\n"
         ":build opt_level=3 param fc_weight=random fc_bias=random");
  std::string ir = output(e, ":llvm fuse__contrib_dense_pack");
  size_t body = ir.find("define internal void @fuse__contrib_dense_pack_parallel0");
  ASSERT_NE(body, std::string::npos) << ir;
  EXPECT_NE(ir.find("!noalias", body), std::string::npos) << ir.substr(body, 2000);
}

// Torchvision's mnasnet0_5 and mobilenet_v3_small at opt_level 3 with 16-channel blocks: a
// residual block whose input is a convolution's output cut from 48 channels back to 40. The
// next convolution reads the cut padded to 48 again before the residual add reads the cut. The
// pad's layout was taken from the cut before the add recorded it, so CorrectLayout put no
// transform between the plain pad and the blocked convolution ("shape [1, 48, 14, 14] does not
// have the 5 axes of layout NCHW16c"). The shapes are the exports' own.
TEST(AlterOpLayout, AConvolutionReadsAChannelCutBeforeTheResidualAddDoes) {
  struct Case {
    const char *network;
    int expand, kernel;
  };
  for (Case c :
       {Case{"mnasnet0_5 layers.10.1", 240, 5}, Case{"mobilenet_v3_small features.5", 240, 5}}) {
    SCOPED_TRACE(c.network);
    Engine e;
    std::string k = std::to_string(c.kernel), pad = std::to_string(c.kernel / 2);
    run(e, "x = Variable(\"x\", shape=(1, 48, 14, 14))\n"
           "y = conv2d(data=x, channels=40, kernel_size=(1, 1))\n"
           "a = relu(conv2d(data=y, channels=" +
               std::to_string(c.expand) +
               ", kernel_size=(1, 1)))\n"
               "a = relu(conv2d(data=a, channels=" +
               std::to_string(c.expand) + ", groups=" + std::to_string(c.expand) +
               ", kernel_size=(" + k + ", " + k + "), padding=(" + pad + ", " + pad +
               ")))\n"
               "b = conv2d(data=a, channels=40, kernel_size=(1, 1))\n"
               "z = b + y\n:graph z\n:set target llvm -mcpu=skylake-avx512");
    run(e, ":build opt_level=3 dtype=float32");
    EXPECT_NE(output(e, ":ir").find("func_name='fuse__contrib_conv2d_NCHWc"), std::string::npos);
    EXPECT_LT(largestAbsError(e), 1e-3);
  }
}

// Torchvision's convnext_tiny at opt_level 3: its zero biases are one initializer, which a dense
// reads first and a convolution reads through an exporter's Identity. EliminateIdentity lets the
// convolution read the param itself, whose layout was then unknown to the CorrectLayout after
// AlterOpLayout, which took the blocked convolution's need (C16c) as the param's own and put no
// transform before it ("input 'bias' has shape [384] but [24, 16] is required").
TEST(AlterOpLayout, AParamReadByADenseAndThroughACopyByABlockedConvolution) {
  Engine e;
  run(e, "x = Variable(\"x\", shape=(1, 192, 14, 14))\n"
         "v = Variable(\"v\", shape=(5, 96))\n"
         "b = Variable(\"b\", shape=(384,))\n"
         "d = dense(data=v, units=384, bias=b)\n"
         "c = conv2d(data=x, bias=copy(b), channels=384, kernel_size=(2, 2), strides=(2, 2))\n"
         "y = Group([d, c])\n:graph y\n:set target llvm -mcpu=skylake-avx512");
  run(e, ":build opt_level=3 dtype=float32");
  // The bias converted to C16c by a kernel of its own, and the convolution blocked.
  std::string ir = output(e, ":ir");
  EXPECT_NE(ir.find("tvm_op(%b, num_outputs='1', num_inputs='1'"), std::string::npos) << ir;
  EXPECT_NE(ir.find("func_name='fuse__contrib_conv2d_NCHWc'"), std::string::npos) << ir;
  EXPECT_LT(largestAbsError(e), 1e-3);
}

// With precision bf16 a dense over rows packs its weight in pairs of steps of k, NC<n>n2c
// ((units / n, k / 2, n, 2): vdpbf16ps's operands); without it NC<n>n; the packed graph computes
// what the dense did (the reference unpacks either layout).
TEST(AlterOpLayout, BFloat16DensesPackTheirWeightsInPairs) {
  for (std::string precision : {"bf16", "fp32"}) {
    SCOPED_TRACE(precision);
    Graph g = inferred("x = Variable(\"x\", shape=(32, 96))\n"
                       "y = dense(x, units=64, use_bias=False, name=\"fc\")");
    std::mt19937 rng(3);
    std::uniform_real_distribution<double> u(-1, 1);
    Tensor x({32, 96}, kFloat32), w({64, 96}, kFloat32);
    for (Tensor *t : {&x, &w})
      for (double &v : t->data)
        v = roundToDType(u(rng), kFloat32);
    PassContext ctx;
    ctx.config["target"] = "llvm -mcpu=skylake-avx512";
    ctx.config["precision"] = precision;
    StoredTensors stored = storeAll({{"fc_weight", w}});
    ctx.params = &stored;
    std::map<std::string, Tensor> in = {{"x", x}, {"fc_weight", w}};
    Graph altered = applyPasses(withInputs(g, in), {"AlterOpLayout"}, ctx);
    const IndexedGraph &idx = altered.index();
    const Node &fc = *idx.nodes[idx.findByName("fc")].node;
    ASSERT_EQ(fc.op->name, "_contrib_dense_pack");
    std::string layout = fc.parsed.getStr("weight_layout");
    EXPECT_EQ(layout.ends_with("n2c"), precision == "bf16") << layout;
    Graph shaped = applyPasses(withInputs(altered, in), {"InferShape"});
    const Shape &packed = shaped.attr("shape")->shapes[shaped.index().entryId(
        shaped.index().nodes[shaped.index().findByName("fc")].inputs[1])];
    EXPECT_EQ(packed.size(), precision == "bf16" ? 4u : 3u);
    Tensor want = interpret(withInputs(g, in), in).at(0);
    Tensor got = interpret(withInputs(altered, in), in).at(0);
    EXPECT_EQ(got.data, want.data);
  }
}
