// QuantizeTest: a float graph made QDQ in the workbench (:quantize) — the calibrated scales and
// zero points against hand-worked values, what is skipped, and the command's errors.
#include "TestUtil.h"

#include "core/Npy.h"
#include "passes/Quantize.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

using namespace loupe;
using namespace loupe::test;

namespace {

// The value of const node `name` of `g` (its one element).
double constValue(const Graph &g, const std::string &name) {
  const IndexedGraph &idx = g.index();
  int nid = idx.findByName(name);
  if (nid < 0)
    return NAN;
  const Node &n = *idx.nodes[nid].node;
  return n.op->name == "const" ? n.parsed.getFloat("value") : NAN;
}

// One 1×1 convolution of x (1, 1, 2, 2) by a bound weight of 2, calibrated on x = [-1, 0, 1, 2].
struct OneConv {
  Engine e;
  Tensor w = tensor({1, 1, 1, 1}, {2});
  ValueSource params = [this](const std::string &n) -> std::optional<Tensor> {
    return n == "w" ? std::optional<Tensor>(w) : std::nullopt;
  };
  OneConv() {
    run(e, "x = Variable(\"x\", shape=(1, 1, 2, 2))\nw = Variable(\"w\", shape=(1, 1, 1, 1))\n"
           "y = conv2d(x, w, channels=1, kernel_size=(1, 1), use_bias=False, name=\"conv\")\n"
           ":graph y");
  }
  Graph quantized(const QuantizeOptions &o, QuantizeReport *report = nullptr) {
    return quantizeGraph(e.current()->graph, params, {{{"x", tensor({1, 1, 2, 2}, {-1, 0, 1, 2})}}},
                         o, report);
  }
};

} // namespace

// One 1×1 convolution by 2 calibrated on x = [-1, 0, 1, 2]: its data in uint8 steps of 3/255
// (the range -1 … 2) with zero point 1 / (3/255) = 85; its weight in int8 steps of 2/127,
// zero point 0; its output (-2 … 4) in steps of 6/255, zero point 85. Each scale is a float32.
TEST(Quantize, CalibratedParametersByHand) {
  OneConv c;
  Engine &e = c.e;
  const Tensor &w = c.w;
  const ValueSource &params = c.params;
  QuantizeReport report;
  Graph q = c.quantized(QuantizeOptions(), &report);
  EXPECT_EQ(report.quantized, std::vector<std::string>{"conv"});
  EXPECT_EQ(constValue(q, "conv_data_scale"), static_cast<double>(3.0f / 255.0f));
  EXPECT_EQ(constValue(q, "conv_data_zero_point"), 85);
  EXPECT_EQ(constValue(q, "conv_output_scale"), static_cast<double>(6.0f / 255.0f));
  EXPECT_EQ(constValue(q, "conv_output_zero_point"), 85);
  // The weight's per-channel scale is a one-element data tensor here.
  const IndexedGraph &idx = q.index();
  const Node &ws = *idx.nodes[idx.findByName("conv_weight_scale")].node;
  EXPECT_EQ(ws.parsed.getFloat("value"), static_cast<double>(static_cast<float>(2.0 / 127)));
  for (const char *n : {"conv_data_quantize", "conv_weight_quantize", "conv_output_quantize"})
    EXPECT_GE(idx.findByName(n), 0) << n;
  EXPECT_EQ(idx.nodes[idx.findByName("conv_weight_quantize")].node->parsed.getStr("out_dtype"),
            "int8");
  // Skipped, nothing is left to quantize; an unknown name is refused.
  QuantizeOptions skip;
  skip.skip = {"conv"};
  expectError(
      [&] {
        quantizeGraph(e.current()->graph, params, {{{"x", w}}}, skip);
      },
      "quantize: the graph has no conv2d or dense with a bound weight to quantize");
  skip.skip = {"nope"};
  expectError(
      [&] {
        quantizeGraph(e.current()->graph, params, {{{"x", w}}}, skip);
      },
      "quantize: skip names no node 'nope'");
}

// The same convolution calibrated at the 75th percentile of magnitudes: x's {1, 0, 1, 2} have top
// 2 (bins of 2/2048), and three of four lie at or under 1, in bin 1024, so T = 1025 * 2 / 2048;
// -1 is within it and stays, 2 is clipped to T: steps of (T + 1)/255, zero point
// round(1 / step) = 127. The output's {2, 0, 2, 4} likewise: T = 1025 * 4 / 2048, range -2 … T.
TEST(Quantize, PercentileCalibrationClipsTheLargestMagnitudes) {
  QuantizeOptions o;
  o.method = CalibrationMethod::Percentile;
  o.percentile = 75;
  Graph q = OneConv().quantized(o);
  double dataStep = static_cast<float>((1025.0 * 2 / 2048 + 1) / 255);
  double outStep = static_cast<float>((1025.0 * 4 / 2048 + 2) / 255);
  EXPECT_EQ(constValue(q, "conv_data_scale"), dataStep);
  EXPECT_EQ(constValue(q, "conv_data_zero_point"), 127);
  EXPECT_EQ(constValue(q, "conv_output_scale"), outStep);
  EXPECT_EQ(constValue(q, "conv_output_zero_point"), 127);
}

// :quantize on the zoo's MLP: the layers it quantized and kept, one new step; then
// FakeQuantizationToInteger makes its two quantized dense layers qnn.dense; bad words are
// one-line errors that add no step; the calibration methods and folders.
TEST(Quantize, Command) {
  Engine e;
  run(e, ":model mlp");
  EXPECT_EQ(output(e, ":quantize samples=2 per_channel=off skip=fc3"),
            "quantized 2 layers (int8 weights, uint8 activations calibrated on 2 samples); kept "
            "float: fc3\n");
  EXPECT_EQ(e.history().size(), 2u);
  EXPECT_EQ(e.history().back().label, "quantize samples=2 per_channel=off skip=fc3");
  run(e, ":apply InferShape InferType FakeQuantizationToInteger");
  int dense = 0;
  for (const auto &n : e.current()->graph.index().nodes)
    dense += !n.node->isVariable() && n.node->op->name == "qnn.dense";
  EXPECT_EQ(dense, 2);
  EXPECT_EQ(output(e, ":quantize samples=0"),
            "error: samples must be an integer from 1 to 1000, got '0'\n");
  EXPECT_EQ(output(e, ":quantize per_channel=maybe"),
            "error: per_channel must be on or off, got 'maybe'\n");
  EXPECT_EQ(output(e, ":quantize calibrate=a.npy samples=4"),
            "error: calibrate=FILE is one sample; samples= is for calibrate=random or a folder\n");
  EXPECT_EQ(output(e, ":quantize nothere=ones"),
            "error: quantize: the graph has no input 'nothere'\n");
  EXPECT_EQ(output(e, ":quantize method=kl"),
            "error: method must be minmax, percentile or entropy, got 'kl'\n");
  EXPECT_EQ(output(e, ":quantize method=percentile percentile=40"),
            "error: percentile must be above 50 and at most 100, got '40'\n");
  EXPECT_EQ(output(e, ":quantize percentile=99.9"),
            "error: percentile= is for method=percentile\n");
  EXPECT_EQ(e.history().size(), 3u);
  run(e, ":undo");
  run(e, ":undo");
  EXPECT_EQ(output(e, ":quantize samples=2 method=percentile percentile=99.9"),
            "quantized 3 layers (int8 weights per channel, uint8 activations calibrated on 2 "
            "samples, magnitudes clipped at their 99.9th percentile)\n");
  run(e, ":undo");
  // A folder of calibration inputs: each .npy in it one sample, by name; samples= takes the first.
  namespace fs = std::filesystem;
  fs::path dir = fs::path(::testing::TempDir()) / "calibration-folder";
  fs::remove_all(dir);
  fs::create_directories(dir / "empty");
  for (int k = 0; k < 3; ++k) {
    Tensor t({1, 1, 28, 28}, kFloat32);
    std::fill(t.data.begin(), t.data.end(), 0.25 * k);
    writeNpy((dir / ("sample" + std::to_string(k) + ".npy")).string(), t);
  }
  EXPECT_EQ(output(e, ":quantize calibrate=" + dir.string()),
            "quantized 3 layers (int8 weights per channel, uint8 activations calibrated on 3 "
            "samples)\n");
  run(e, ":undo");
  EXPECT_EQ(output(e, ":quantize samples=2 calibrate=" + dir.string()),
            "quantized 3 layers (int8 weights per channel, uint8 activations calibrated on 2 "
            "samples)\n");
  EXPECT_EQ(output(e, ":quantize samples=4 calibrate=" + dir.string()),
            "error: calibrate=" + dir.string() + " holds 3 samples, not 4\n");
  EXPECT_EQ(output(e, ":quantize calibrate=" + (dir / "empty").string()),
            "error: calibrate=" + (dir / "empty").string() +
                ": the folder has no .npy or .npz file\n");
  run(e, ":undo");
  EXPECT_EQ(output(e, ":quantize samples=2 method=entropy"),
            "quantized 3 layers (int8 weights per channel, uint8 activations calibrated on 2 "
            "samples, clipped where the KL divergence is least)\n");
}

// A zoo network quantized in the workbench builds its convolutions as 8-bit ones at opt_level 3:
// FakeQuantizationToInteger in the build's pipeline, the weights quantized by graph ops (not
// constants until PrecomputePrune folds them), so the data zero point's share of each sum is
// computed by graph ops too; every convolution is blocked with its weights in quads and sums
// dot4 steps. Its output is the reference interpreter's (the float epilogues between the integer
// kernels to float32's rounding).
TEST(Quantize, QuantizedNetworksBuildEightBitConvolutions) {
  Engine e;
  run(e, ":model resnet-18_v2 shape=(3, 32, 32) classes=10");
  run(e, ":quantize samples=2");
  run(e, ":set target llvm -mcpu=skylake-avx512");
  std::string deploy = output(e, ":build opt_level=3");
  size_t convs = 0;
  for (const auto &n : e.history().front().graph.index().nodes)
    convs += !n.node->isVariable() && n.node->op->name == "conv2d";
  // The graph's inputs (before its body): one packed 8-bit weight per convolution.
  std::string inputs = deploy.substr(0, deploy.find(") {"));
  size_t quads = 0;
  for (size_t at = inputs.find("_OIHW16o4i"); at != std::string::npos;
       at = inputs.find("_OIHW16o4i", at + 1))
    ++quads;
  EXPECT_EQ(quads, convs) << inputs;
  EXPECT_EQ(convs, 21u);
  std::string out = output(e, ":run");
  size_t at = out.find("vs reference interpreter (IEEE; the kernels flush subnormals): max abs "
                       "error ");
  ASSERT_NE(at, std::string::npos) << out;
  EXPECT_LT(std::stod(out.substr(at + 77)), 1e-4) << out;
  std::string fn = deploy.substr(deploy.find("func_name='fuse__contrib_conv2d_NCHWc") + 11);
  fn = fn.substr(0, fn.find('\''));
  EXPECT_NE(output(e, ":lower " + fn).find("dot4("), std::string::npos) << fn;
}
