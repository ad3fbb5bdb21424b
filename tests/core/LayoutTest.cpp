// LayoutTest: layout strings, shape conversion, and the CorrectLayout pass.
#include "TestUtil.h"

#include "core/Error.h"
#include "core/Layout.h"

#include <random>

using namespace loupe;
using namespace loupe::test;

TEST(Layout, ParsesPrimalAndSubAxes) {
  auto axes = parseLayout("NCHW16c");
  ASSERT_EQ(axes.size(), 5u);
  EXPECT_EQ(axes[4].name, 'c');
  EXPECT_EQ(axes[4].factor, 16);
  EXPECT_THROW(parseLayout("NCHWc"), Error);  // sub-axis without a factor
  EXPECT_THROW(parseLayout("NCHW16"), Error); // trailing number
  EXPECT_THROW(parseLayout("NCCH"), Error);   // repeated axis
  EXPECT_THROW(parseLayout("NHW4c"), Error);  // sub-axis without its primal axis
}

TEST(Layout, ConvertsShapes) {
  EXPECT_EQ(convertLayoutShape({1, 32, 7, 9}, "NCHW", "NCHW16c"), (Shape{1, 2, 7, 9, 16}));
  EXPECT_EQ(convertLayoutShape({1, 2, 7, 9, 16}, "NCHW16c", "NHWC"), (Shape{1, 7, 9, 32}));
  EXPECT_EQ(convertLayoutShape({8, 3, 5, 5}, "OIHW", "HWIO"), (Shape{5, 5, 3, 8}));
  EXPECT_THROW(convertLayoutShape({1, 3, 2, 2}, "NCHW", "NCHW2c"), Error);
  EXPECT_THROW(convertLayoutShape({1, 3, 2, 2}, "NCHW", "NCDHW"), Error);
}

TEST(Layout, SourceMapGivesTheOffsetOfEachElement) {
  // x of shape (1, 32, 3, 5) in NCHW; element (n, c, h, w) of its NCHW16c form (1, 2, 3, 5, 16)
  // is x[n, 16*C + c, h, w]: by hand, (0, 1, 2, 4, 3) is channel 19, offset 19*15 + 2*5 + 4.
  LayoutSourceMap toBlocked({1, 32, 3, 5}, "NCHW", "NCHW16c");
  EXPECT_EQ(toBlocked.offset({0, 1, 2, 4, 3}), 19 * 15 + 2 * 5 + 4);
  EXPECT_EQ(toBlocked.offset({0, 0, 0, 0, 0}), 0);
  // And back: NCHW (0, 19, 2, 4) of a (1, 2, 3, 5, 16) NCHW16c tensor is block 1, lane 3.
  LayoutSourceMap toPlain({1, 2, 3, 5, 16}, "NCHW16c", "NCHW");
  EXPECT_EQ(toPlain.offset({0, 19, 2, 4}), ((1 * 3 + 2) * 5 + 4) * 16 + 3);
  // Weights: OIHW (8, 4, 3, 3) to OIHW2i4o (2, 2, 3, 3, 2, 4); element (1, 0, 2, 1, 1, 3) is
  // o = 4 + 3 = 7, i = 1, h = 2, w = 1.
  LayoutSourceMap packed({8, 4, 3, 3}, "OIHW", "OIHW2i4o");
  EXPECT_EQ(packed.offset({1, 0, 2, 1, 1, 3}), ((7 * 4 + 1) * 3 + 2) * 3 + 1);
  EXPECT_THROW(LayoutSourceMap({1, 3, 2, 2}, "NCHW", "NCHW2c"), Error);
}

TEST(Layout, RoundTripThroughABlockedLayoutKeepsEveryValue) {
  Graph g = built("x = Variable(\"x\", shape=(2,8,3,5), dtype=1)\n"
                  "b = __layout_transform__(x, src_layout=\"NCHW\", dst_layout=\"NCHW4c\")\n"
                  "y = __layout_transform__(b, src_layout=\"NCHW4c\", dst_layout=\"NCHW\")");
  Tensor x({2, 8, 3, 5}, kFloat64);
  for (size_t i = 0; i < x.data.size(); ++i)
    x.data[i] = static_cast<double>(i);
  Tensor y = interpret(withInputs(g, {{"x", x}}), {{"x", x}}).at(0);
  EXPECT_EQ(y.data, x.data);
}

TEST(CorrectLayout, SeedGraphLayouts) {
  // Seed 000: nothing to transform; x is filled in from conv2d's need.
  Graph g =
      applyPasses(built("x = Variable(\"x\")\nw = Variable(\"w\")\nb = Variable(\"b\")\n"
                        "z = conv2d(data=x, weight=w, bias=b, channels=3, kernel_size=(5,5))\n"
                        "y = z + conv2d(data=z, weight=w, bias=b, channels=3, "
                        "kernel_size=(5,5), padding=[2,2])"),
                  {"CorrectLayout"});
  EXPECT_EQ(g.attr("layout")->strs,
            (std::vector<std::string>{"NCHW", "OIHW", "C", "NCHW", "NCHW", "NCHW"}));
  EXPECT_EQ(orderedAttrKeys(g.attrs), (std::vector<std::string>{"layout"}));
}

TEST(CorrectLayout, TransformsWhereLayoutsDisagreeAndKeepsTheNumbers) {
  std::string prog = "x = Variable(\"x\", dtype=1)\nw = Variable(\"w\", dtype=1)\n"
                     "y = relu(conv2d(x, w, channels=2, kernel_size=(1,1), use_bias=False))";
  Graph g = built(prog);
  g.attrs["layout_inputs"] = GraphAttr::listLayout({"NHWC", "OIHW"});
  Graph laid = applyPasses(g, {"CorrectLayout"});
  std::vector<std::string> ops;
  for (const auto &n : laid.index().nodes)
    ops.push_back(n.node->isVariable() ? n.node->name : n.node->op->name);
  EXPECT_EQ(ops, (std::vector<std::string>{"x", "__layout_transform__", "w", "conv2d", "relu"}));
  EXPECT_EQ(laid.index().nodes[1].node->name, "x_NCHW");
  // x arrives NHWC; the transformed graph computes what the NCHW graph computes on x transposed.
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(-1, 1);
  Tensor xh({1, 3, 3, 2}, kFloat64), w({2, 2, 1, 1}, kFloat64);
  for (double &v : xh.data)
    v = u(rng);
  for (double &v : w.data)
    v = u(rng);
  Tensor xc({1, 2, 3, 3}, kFloat64);
  for (int h = 0; h < 3; ++h)
    for (int ww = 0; ww < 3; ++ww)
      for (int c = 0; c < 2; ++c)
        xc.data[(c * 3 + h) * 3 + ww] = xh.data[(h * 3 + ww) * 2 + c];
  Tensor want = interpret(withInputs(built(prog), {{"x", xc}, {"w", w}}), {{"x", xc}, {"w", w}})[0];
  Graph plain = laid;
  plain.attrs.clear();
  Tensor got = interpret(withInputs(plain, {{"x", xh}, {"w", w}}), {{"x", xh}, {"w", w}})[0];
  EXPECT_EQ(got.data, want.data);
}

TEST(CorrectLayout, RulesOfTheOpFamilies) {
  Graph g =
      applyPasses(built("x = Variable(\"x\", shape=(1,32,4,4))\n"
                        "c = conv2d(x, channels=32, kernel_size=(1,1), out_layout=\"NCHW16c\")\n"
                        "y = Group([relu(c), flatten(relu(c)), sum(c, axis=1)])",
                        "y"),
                  {"CorrectLayout"});
  const IndexedGraph &idx = g.index();
  auto layoutOf = [&](const char *name) {
    return g.attr("layout")->strs[idx.entryId(idx.findByName(name), 0)];
  };
  EXPECT_EQ(layoutOf("conv2d0_bias"), "C16c"); // split like the output's channels
  EXPECT_EQ(layoutOf("conv2d0"), "NCHW16c");
  EXPECT_EQ(layoutOf("relu0"), "NCHW16c");      // elementwise: arbitrary, copied
  EXPECT_EQ(layoutOf("flatten0"), "__undef__"); // fixed input, unknown output
  EXPECT_EQ(layoutOf("sum0"), "__undef__");
}
