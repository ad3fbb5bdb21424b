// LayerwiseTest: two graphs' values compared node by node — SQNR, largest errors and the error
// histogram against hand-worked values, quantized steps compared in real units, a graph against
// another runtime's tensors, :layerwise's table, and the heatmap's colours.
#include "TestUtil.h"

#include "core/Npy.h"
#include "passes/Layerwise.h"
#include "passes/QuantSteps.h"
#include "view/GraphSvg.h"
#include "view/LayerwiseView.h"

#include <unistd.h>

#include <cmath>
#include <filesystem>

using namespace loupe;
using namespace loupe::test;

namespace {

Graph graphOf(const std::string &program) {
  Engine e;
  run(e, program + "\n:graph y");
  return e.current()->graph;
}

ValueSource valuesOf(const std::map<std::string, Tensor> &m) {
  return [m](const std::string &name) -> std::optional<Tensor> {
    auto it = m.find(name);
    return it == m.end() ? std::nullopt : std::optional<Tensor>(it->second);
  };
}

} // namespace

// x = [1, 2, 3, 4] doubled against multiplied by 2.1: the errors are 5% of each value, so the
// SQNR is 10·log10(1 / 0.05²) = 26.02 dB, the largest error 0.4 (at 8) and relatively 0.05.
// The node both graphs name alike is compared; one only the second has is not.
TEST(Layerwise, SqnrAndErrorsByHand) {
  Graph a = graphOf("x = Variable(\"x\", shape=(4,), dtype=1)\n"
                    "y = __mul_scalar__(x, scalar=2, name=\"y\")");
  Graph b = graphOf("x = Variable(\"x\", shape=(4,), dtype=1)\n"
                    "t = __mul_scalar__(x, scalar=2.1, name=\"y\")\ny = negative(t, name=\"n\")");
  auto cs = compareLayers(a, b, valuesOf({{"x", tensor({4}, {1, 2, 3, 4}, kFloat64)}}));
  ASSERT_EQ(cs.size(), 1u);
  EXPECT_EQ(cs[0].name, "y");
  EXPECT_EQ(cs[0].op, "__mul_scalar__");
  EXPECT_EQ(cs[0].elements, 4);
  EXPECT_NEAR(cs[0].sqnr, 10 * std::log10(400.0), 1e-9);
  EXPECT_NEAR(cs[0].maxAbs, 0.4, 1e-12);
  EXPECT_NEAR(cs[0].maxRel, 0.05, 1e-12);
  EXPECT_FALSE(cs[0].dequantized);
  // The errors b − a = 0.1, 0.2, 0.3, 0.4 in 21 bins over [−0.4, 0.4] (0.8/21 wide): bins
  // ⌊(d + 0.4)/0.8·21⌋ = 13, 15, 18 and 21, the largest error closing the last bin (20).
  std::vector<int64_t> bins(kErrorBins, 0);
  bins[13] = bins[15] = bins[18] = bins[20] = 1;
  EXPECT_EQ(cs[0].histogram, bins);
  // Equal values: +∞ dB.
  auto same = compareLayers(a, a, valuesOf({{"x", tensor({4}, {1, 2, 3, 4}, kFloat64)}}));
  EXPECT_TRUE(std::isinf(same[0].sqnr) && same[0].sqnr > 0);
  std::vector<int64_t> middle(kErrorBins, 0);
  middle[kErrorBins / 2] = 4; // no error: every element in the middle bin
  EXPECT_EQ(same[0].histogram, middle);
  // A variable without a value is named.
  expectError([&] { compareLayers(a, b, valuesOf({})); }, "layerwise: variable x has no value");
}

// Integer steps are compared as the real numbers each graph's quantization says they are:
// x = [0.5, 1] in steps of 0.5 is [1, 2]; in steps of 1 (half to even) [0, 1], that is [0, 1]
// against [0.5, 1]: noise 0.25 against a signal of 1.25, 10·log10(5) = 6.99 dB, the largest error
// 0.5 — through the cast after the quantize too. In steps of 0.25 ([2, 4]) the values are equal.
TEST(Layerwise, QuantizedStepsAreComparedInRealUnits) {
  std::string vars = "x = Variable(\"x\", shape=(2,))\ns = Variable(\"s\", shape=(1,))\n"
                     "z = Variable(\"z\", shape=(1,), dtype=5)\n";
  Graph a = graphOf(vars + "q = qnn.quantize(x, s, z, out_dtype=\"int8\", name=\"q\")\n"
                           "y = cast(q, dtype=\"int8\", name=\"c\")");
  auto scaled = [&](const char *factor) {
    return graphOf(vars + "t = __mul_scalar__(s, scalar=" + factor +
                   ", name=\"t\")\nq = qnn.quantize(x, t, z, out_dtype=\"int8\", name=\"q\")\n"
                   "y = cast(q, dtype=\"int8\", name=\"c\")");
  };
  ValueSource values = valuesOf(
      {{"x", tensor({2}, {0.5, 1})}, {"s", tensor({1}, {0.5})}, {"z", tensor({1}, {0}, kInt8)}});
  auto coarse = compareLayers(a, scaled("2"), values);
  ASSERT_EQ(coarse.size(), 2u);
  for (const LayerComparison &c : coarse) {
    EXPECT_TRUE(c.dequantized) << c.name;
    EXPECT_NEAR(c.sqnr, 10 * std::log10(5.0), 1e-9) << c.name;
    EXPECT_EQ(c.maxAbs, 0.5) << c.name;
  }
  for (const LayerComparison &c : compareLayers(a, scaled("0.5"), values))
    EXPECT_TRUE(std::isinf(c.sqnr) && c.maxAbs == 0) << c.name;
}

// The median of the values that differ: equal ones (+inf) left out, a middle pair averaged, −∞
// (a zero made nonzero) counted as the worst.
TEST(Layerwise, MedianOfTheValuesThatDiffer) {
  auto with = [](std::vector<double> sqnrs) {
    std::vector<LayerComparison> all;
    for (double s : sqnrs) {
      LayerComparison c;
      c.sqnr = s;
      all.push_back(c);
    }
    return all;
  };
  size_t n = 0;
  EXPECT_EQ(medianSqnr(with({30, INFINITY, 10, 20}), &n), 20.0);
  EXPECT_EQ(n, 3u);
  EXPECT_EQ(medianSqnr(with({40, 10, 20, 30})), 25.0);
  EXPECT_EQ(medianSqnr(with({-INFINITY, 10})), -INFINITY);
  EXPECT_EQ(medianSqnr(with({INFINITY, INFINITY}), &n), std::nullopt);
  EXPECT_EQ(n, 0u);
}

// :layerwise prints the values worst first, limits them with top=, names the first under sqnr=
// in graph order, and refuses a built step and unknown inputs in one line.
TEST(Layerwise, CommandTable) {
  Engine e;
  run(e, "x = Variable(\"x\", shape=(4,), dtype=1)\ny = __mul_scalar__(x, scalar=2, name=\"y\")\n"
         "z = __add_scalar__(y, scalar=1, name=\"z\")\n:graph z");
  run(e, "x = Variable(\"x\", shape=(4,), dtype=1)\ny = __mul_scalar__(x, scalar=2.1, "
         "name=\"y\")\nz = __add_scalar__(y, scalar=1, name=\"z\")\n:graph z");
  std::string out = output(e, ":layerwise 0 1 x=ones sqnr=30");
  EXPECT_EQ(out, "step 1 against step 0: 2 values compared, worst SQNR first\n"
                 "node  op              SQNR dB  max abs  max rel\n"
                 "y     __mul_scalar__  26.0     1.0e-01  5.0e-02\n"
                 "z     __add_scalar__  29.5     1.0e-01  3.3e-02\n"
                 "median SQNR 27.8 dB over the 2 values that differ\n"
                 "first under 30.0 dB in graph order: y (__mul_scalar__, 26.0 dB)\n");
  EXPECT_NE(output(e, ":layerwise 0 1 x=ones top=1").find("… 1 more value\n"), std::string::npos);
  EXPECT_EQ(output(e, ":layerwise 0 1 w=ones"),
            "error: layerwise: neither step has an input 'w'\n");
  EXPECT_EQ(output(e, ":layerwise 0 7"),
            "error: no step '7'; steps are 0 to 1 (:history lists them)\n");
  run(e, ":build");
  EXPECT_EQ(output(e, ":layerwise 0 2"),
            "error: layerwise: step 2 is built; compare the graphs a build starts from (the "
            "steps before :build)\n");
}

// A graph against another runtime's values: the second graph's y = 2.1·x against y = 2·x given
// as a tensor is the hand-worked comparison above; a value the reference lacks (n) or has in
// another shape is left out.
TEST(Layerwise, AgainstAnotherRuntimesTensors) {
  Graph b = graphOf("x = Variable(\"x\", shape=(4,), dtype=1)\n"
                    "t = __mul_scalar__(x, scalar=2.1, name=\"y\")\ny = negative(t, name=\"n\")");
  ValueSource x = valuesOf({{"x", tensor({4}, {1, 2, 3, 4}, kFloat64)}});
  auto cs = compareWithReference(b, x, [](const std::string &name, uint32_t k) {
    return name == "y" && k == 0 ? std::optional<Tensor>(tensor({4}, {2, 4, 6, 8}, kFloat64))
                                 : std::nullopt;
  });
  ASSERT_EQ(cs.size(), 1u);
  EXPECT_EQ(cs[0].name, "y");
  EXPECT_NEAR(cs[0].sqnr, 10 * std::log10(400.0), 1e-9);
  EXPECT_NEAR(cs[0].maxAbs, 0.4, 1e-12);
  auto reshaped = compareWithReference(b, x, [](const std::string &, uint32_t) {
    return std::optional<Tensor>(tensor({2, 2}, {2, 4, 6, 8}, kFloat64));
  });
  EXPECT_TRUE(reshaped.empty());
}

// :layerwise STEP DIR: the step's values against NAME.npy files, its inputs from the folder;
// files that name no value are listed; the comparison is kept on the step (the heatmap's).
TEST(Layerwise, FolderCommand) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("loupe-layerwise-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  Engine e;
  run(e, "x = Variable(\"x\", shape=(4,))\ny = __mul_scalar__(x, scalar=2.1, name=\"y\")\n"
         "z = __add_scalar__(y, scalar=1, name=\"z\")\n:graph z");
  std::string d = dir.string();
  EXPECT_EQ(output(e, ":layerwise 0 " + d),
            "error: layerwise: " + d + " has no x.npy for input 'x'; give it as x=FILE.npy\n");
  writeNpy((dir / "x.npy").string(), tensor({4}, {1, 2, 3, 4}));
  writeNpy((dir / "y.npy").string(), tensor({4}, {2, 4, 6, 8}));
  writeNpy((dir / "gone.npy").string(), tensor({1}, {0}));
  EXPECT_EQ(output(e, ":layerwise 0 " + d),
            "1 file in " + d +
                " names no value of step 0: gone.npy\n"
                "step 0 against " +
                d +
                ": 1 value compared, worst SQNR first\n"
                "node  op              SQNR dB  max abs  max rel\n"
                "y     __mul_scalar__  26.0     4.0e-01  5.0e-02\n"
                "median SQNR 26.0 dB over the 1 value that differs\n");
  ASSERT_EQ(e.current()->layerwise.size(), 1u);
  EXPECT_EQ(e.current()->layerwiseAgainst, d);
  EXPECT_EQ(output(e, ":layerwise 0 " + d + " seed=2"),
            "error: layerwise: seed= makes random inputs; against " + d +
                " the inputs are its files (or NAME=FILE.npy)\n");
  EXPECT_EQ(output(e, ":layerwise 0 no/such/folder"),
            "error: layerwise: 'no/such/folder' is neither a step nor a folder\n");
  fs::remove_all(dir);
}

// The heatmap: each node's worst SQNR over its outputs (NaN where not compared), coloured by
// band — the bounds belong to the band above — in the viewer and in the SVG picture.
TEST(Layerwise, HeatmapBands) {
  using gui::sqnrColour;
  EXPECT_EQ(sqnrColour(-INFINITY), 0xc81e1effu);
  EXPECT_EQ(sqnrColour(9.99), 0xc81e1effu);
  EXPECT_EQ(sqnrColour(10), 0xe67828ffu);
  EXPECT_EQ(sqnrColour(25), 0xebc83cffu);
  EXPECT_EQ(sqnrColour(39.9), 0xa0d278ffu);
  EXPECT_EQ(sqnrColour(40), 0x46a05affu);
  EXPECT_EQ(sqnrColour(INFINITY), 0x46a05affu);
  Engine e;
  run(e, "x = Variable(\"x\", shape=(4,))\ny = __mul_scalar__(x, scalar=2, name=\"y\")\n"
         "z = __add_scalar__(y, scalar=1, name=\"z\")\n:graph z");
  run(e, "x = Variable(\"x\", shape=(4,))\ny = __mul_scalar__(x, scalar=2.1, name=\"y\")\n"
         "z = __add_scalar__(y, scalar=1, name=\"z\")\n:graph z");
  run(e, ":layerwise 0 1 x=ones");
  const Step &s = e.history()[1];
  EXPECT_EQ(s.layerwiseAgainst, "step 0");
  std::vector<double> db = gui::nodeSqnr(s.graph, s.layerwise);
  const IndexedGraph &idx = s.graph.index();
  EXPECT_TRUE(std::isnan(db[static_cast<size_t>(idx.findByName("x"))]));
  EXPECT_NEAR(db[static_cast<size_t>(idx.findByName("y"))], 26.0, 0.05); // 20·log10(2/0.1)
  EXPECT_NEAR(db[static_cast<size_t>(idx.findByName("z"))], 29.5, 0.05); // 20·log10(3/0.1)
  std::string svg = gui::graphSvg(s.graph, {}, &db);
  EXPECT_NE(svg.find("fill=\"#ebc83c\""), std::string::npos); // both in 20-30
  EXPECT_NE(svg.find("SQNR 26.0 dB"), std::string::npos);
  EXPECT_EQ(gui::graphSvg(s.graph).find("#ebc83c"), std::string::npos);
}

// What a node's integer steps stand for, as the inspector and the SVG titles say it: a
// quantize's own scale and zero point, a cast reading it (through the cast), a requantize's
// output parameters and its ratio in fixed point — 0.5 / 0.25 = 2 = 0.5 · 2^2, multiplier
// 0.5 · 2^31 = 1073741824, shift 2 — per-channel scales as their range, and a dequantize's
// float output none.
TEST(QuantSteps, ScalesAndFixedPointByHand) {
  Engine e;
  run(e, "x = Variable(\"x\", shape=(1, 2))\ns = Variable(\"s\", shape=(1,))\n"
         "z = Variable(\"z\", shape=(1,), dtype=3)\n"
         "q = qnn.quantize(x, s, z, out_dtype=\"uint8\", name=\"q\")\n"
         "c = cast(q, dtype=\"int32\", name=\"c\")\n"
         "t = Variable(\"t\", shape=(2,))\nw = Variable(\"w\", shape=(1,), dtype=4)\n"
         "r = qnn.requantize(c, s, z, t, w, out_dtype=\"int8\", axis=1, name=\"r\")\n"
         "y = qnn.dequantize(r, t, w, axis=1, name=\"f\")\n:graph y");
  const Graph &g = e.current()->graph;
  StoredTensors params = {{"s", StoredTensor(tensor({1}, {0.5}))},
                          {"z", StoredTensor(tensor({1}, {66}, kUint8))},
                          {"t", StoredTensor(tensor({2}, {0.25, 0.125}))},
                          {"w", StoredTensor(tensor({1}, {0}, kInt32))}};
  const IndexedGraph &idx = g.index();
  auto lines = [&](const char *name) {
    return quantizationLines(g, static_cast<uint32_t>(idx.findByName(name)), params);
  };
  EXPECT_EQ(lines("q"), (std::vector<std::string>{"steps of scale 0.5, zero point 66"}));
  EXPECT_EQ(lines("c"), (std::vector<std::string>{"steps of scale 0.5, zero point 66 (q)"}));
  // 0.5 / 0.25 = 2 (multiplier 2^30, shift 2) and 0.5 / 0.125 = 4 (shift 3).
  EXPECT_EQ(lines("r"), (std::vector<std::string>{
                            "steps of scales along axis 1 (2): 0.125 to 0.25, zero point 0",
                            "requantized in fixed point per channel (2): multipliers 1073741824 to "
                            "1073741824, shifts 2 to 3"}));
  EXPECT_TRUE(lines("f").empty());
  // Without the params bound, the parameters are named.
  EXPECT_EQ(quantizationLines(g, static_cast<uint32_t>(idx.findByName("q")), {}),
            (std::vector<std::string>{"steps of scale s, zero point z"}));
}
