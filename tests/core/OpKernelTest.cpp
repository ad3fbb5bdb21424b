// OpKernelTest: every op's reference kernel against values worked out by hand.
#include "TestUtil.h"

#include "repl/TextFile.h"

#include <cmath>
#include <functional>

using namespace loupe;
using namespace loupe::test;

namespace {

void expectValues(const Tensor &t, const std::vector<double> &want, double tol = 1e-6) {
  ASSERT_EQ(t.data.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_NEAR(t.data[i], want[i], tol) << "element " << i;
}

/// y = OP(x, attrs) on a float64 x of the given shape and values.
Tensor unary(const std::string &op, const std::string &attrs, Shape s, std::vector<double> v) {
  std::string shape = shapeToTuple(s);
  return eval("x = Variable(\"x\", shape=" + shape + ", dtype=1)\ny = " + op + "(x" +
                  (attrs.empty() ? "" : ", " + attrs) + ")",
              {{"x", tensor(s, v, kFloat64)}});
}

Tensor binary(const std::string &op, Shape sa, std::vector<double> a, Shape sb,
              std::vector<double> b) {
  return eval("a = Variable(\"a\", shape=" + shapeToTuple(sa) +
                  ", dtype=1)\nb = Variable(\"b\", "
                  "shape=" +
                  shapeToTuple(sb) + ", dtype=1)\ny = " + op + "(a, b)",
              {{"a", tensor(sa, a, kFloat64)}, {"b", tensor(sb, b, kFloat64)}});
}

} // namespace

TEST(OpKernel, UnaryMath) {
  std::vector<double> x{-2, -0.5, 0, 1.5};
  expectValues(unary("relu", "", {4}, x), {0, 0, 0, 1.5});
  expectValues(unary("leaky_relu", "alpha=0.1", {4}, x), {-0.2, -0.05, 0, 1.5});
  expectValues(unary("sigmoid", "", {4}, x),
               {1 / (1 + std::exp(2.0)), 1 / (1 + std::exp(0.5)), 0.5, 1 / (1 + std::exp(-1.5))});
  expectValues(unary("tanh", "", {4}, x), {std::tanh(-2.0), std::tanh(-0.5), 0, std::tanh(1.5)});
  expectValues(unary("exp", "", {2}, {0, 1}), {1, std::exp(1.0)});
  expectValues(unary("log", "", {2}, {1, std::exp(2.0)}), {0, 2});
  expectValues(unary("sqrt", "", {2}, {4, 2.25}), {2, 1.5});
  expectValues(unary("negative", "", {4}, x), {2, 0.5, 0, -1.5});
  expectValues(unary("copy", "", {4}, x), x);
  expectValues(unary("block_grad", "", {4}, x), x);
  expectValues(unary("zeros_like", "", {4}, x), {0, 0, 0, 0});
  expectValues(unary("ones_like", "", {4}, x), {1, 1, 1, 1});
  expectValues(unary("full_like", "fill_value=7", {2}, {1, 2}), {7, 7});
  expectValues(unary("clip", "a_min=-1, a_max=1", {4}, x), {-1, -0.5, 0, 1});
  // cast to int32 truncates toward zero.
  expectValues(unary("cast", "dtype=\"int32\"", {4}, {-2.7, -0.5, 0.9, 3.99}), {-2, 0, 0, 3});
}

TEST(OpKernel, ScalarOps) {
  std::vector<double> x{1, 2, 4};
  expectValues(unary("__add_scalar__", "scalar=2", {3}, x), {3, 4, 6});
  expectValues(unary("__sub_scalar__", "scalar=2", {3}, x), {-1, 0, 2});
  expectValues(unary("__rsub_scalar__", "scalar=2", {3}, x), {1, 0, -2});
  expectValues(unary("__mul_scalar__", "scalar=2", {3}, x), {2, 4, 8});
  expectValues(unary("__div_scalar__", "scalar=2", {3}, x), {0.5, 1, 2});
  expectValues(unary("__rdiv_scalar__", "scalar=2", {3}, x), {2, 1, 0.5});
  expectValues(unary("__pow_scalar__", "scalar=2", {3}, x), {1, 4, 16});
  expectValues(unary("__rpow_scalar__", "scalar=2", {3}, x), {2, 4, 16});
}

TEST(OpKernel, Float32ResultsAreRounded) {
  Tensor t =
      eval("x = Variable(\"x\", shape=(1,), dtype=0)\ny = x / 3", {{"x", tensor({1}, {1.0})}});
  EXPECT_EQ(t.data[0], static_cast<double>(1.0f / 3.0f));
}

TEST(OpKernel, Binary) {
  Shape s{2, 2};
  std::vector<double> a{1, 2, 3, 4}, b{4, 3, 2, 1};
  expectValues(binary("elemwise_add", s, a, s, b), {5, 5, 5, 5});
  expectValues(binary("elemwise_sub", s, a, s, b), {-3, -1, 1, 3});
  expectValues(binary("elemwise_mul", s, a, s, b), {4, 6, 6, 4});
  expectValues(binary("elemwise_div", s, a, s, b), {0.25, 2.0 / 3, 1.5, 4});
  expectValues(binary("greater", s, a, s, b), {0, 0, 1, 1});
  expectValues(binary("less", s, a, s, b), {1, 1, 0, 0});
  // Broadcasting (2,1) with (3,): rows of b shifted by a.
  expectValues(binary("broadcast_add", {2, 1}, {10, 20}, {3}, {1, 2, 3}), {11, 12, 13, 21, 22, 23});
  expectValues(binary("broadcast_sub", {2, 1}, {10, 20}, {3}, {1, 2, 3}), {9, 8, 7, 19, 18, 17});
  expectValues(binary("broadcast_mul", {2, 1}, {10, 20}, {3}, {1, 2, 3}), {10, 20, 30, 20, 40, 60});
  expectValues(binary("broadcast_div", {2, 1}, {10, 20}, {3}, {1, 2, 4}), {10, 5, 2.5, 20, 10, 5});
  expectValues(binary("reshape_like", {2, 3}, {1, 2, 3, 4, 5, 6}, {3, 2}, {0, 0, 0, 0, 0, 0}),
               {1, 2, 3, 4, 5, 6});
  expectValues(eval("a = Variable(\"a\", shape=(2,))\nb = Variable(\"b\", shape=(2,))\n"
                    "y = elemwise_sum(a, b, a)",
                    {{"a", tensor({2}, {1, 2})}, {"b", tensor({2}, {10, 20})}}),
               {12, 24});
  expectValues(eval("a = Variable(\"a\", shape=(1,2))\ny = broadcast_to(a, shape=(3,2))",
                    {{"a", tensor({1, 2}, {1, 2})}}),
               {1, 2, 1, 2, 1, 2});
}

TEST(OpKernel, Reductions) {
  // x = [[1, 2, 3], [4, 5, 6]]
  Shape s{2, 3};
  std::vector<double> x{1, 2, 3, 4, 5, 6};
  expectValues(unary("sum", "", s, x), {21});
  expectValues(unary("sum", "axis=0", s, x), {5, 7, 9});
  expectValues(unary("sum", "axis=1, keepdims=True", s, x), {6, 15});
  expectValues(unary("max", "axis=1", s, x), {3, 6});
  expectValues(unary("min", "axis=0", s, x), {1, 2, 3});
  expectValues(unary("mean", "axis=1", s, x), {2, 5});
  expectValues(unary("prod", "axis=0", s, x), {4, 10, 18});
  expectValues(unary("sum", "axis=0, exclude=True", s, x), {6, 15});
}

TEST(OpKernel, SoftmaxFamily) {
  // softmax([0, ln 3]) = [1/4, 3/4]
  double l3 = std::log(3.0);
  expectValues(unary("softmax", "", {1, 2}, {0, l3}), {0.25, 0.75});
  expectValues(unary("softmax", "axis=0", {2, 1}, {0, l3}), {0.25, 0.75});
  expectValues(unary("log_softmax", "", {1, 2}, {0, l3}), {std::log(0.25), std::log(0.75)});
}

TEST(OpKernel, DenseAndMatmul) {
  // x = [[1, 2]], W = [[1, 0], [2, 3], [-1, 1]], b = [10, 20, 30] -> [11, 28, 31]
  Tensor y = eval("x = Variable(\"x\", shape=(1,2))\nw = Variable(\"w\")\nb = Variable(\"b\")\n"
                  "y = dense(x, w, b, units=3)",
                  {{"x", tensor({1, 2}, {1, 2})},
                   {"w", tensor({3, 2}, {1, 0, 2, 3, -1, 1})},
                   {"b", tensor({3}, {10, 20, 30})}});
  expectValues(y, {11, 28, 31});
  expectValues(binary("matmul", {2, 2}, {1, 2, 3, 4}, {2, 1}, {5, 6}), {17, 39});
  // aᵀ·b with a = [[1, 2], [3, 4]] -> [[1, 3], [2, 4]]·[5, 6]ᵀ = [23, 34]
  expectValues(eval("a = Variable(\"a\", shape=(2,2))\nb = Variable(\"b\", shape=(2,1))\n"
                    "y = matmul(a, b, transpose_a=True)",
                    {{"a", tensor({2, 2}, {1, 2, 3, 4})}, {"b", tensor({2, 1}, {5, 6})}}),
               {23, 34});
}

TEST(OpKernel, Conv2d) {
  // 1x1x3x3 input 1..9, 2x2 kernel [[1, 0], [0, -1]], bias 1: out[i][j] = x[i][j] - x[i+1][j+1] + 1
  Tensor y = eval("x = Variable(\"x\", shape=(1,1,3,3))\nw = Variable(\"w\")\nb = Variable(\"b\")\n"
                  "y = conv2d(x, w, b, channels=1, kernel_size=(2,2))",
                  {{"x", tensor({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9})},
                   {"w", tensor({1, 1, 2, 2}, {1, 0, 0, -1})},
                   {"b", tensor({1}, {1})}});
  expectValues(y, {-3, -3, -3, -3});
  // Padding 1, stride 2, all-ones 3x3 kernel: window sums of the zero-padded input.
  Tensor z = eval("x = Variable(\"x\", shape=(1,1,3,3))\nw = Variable(\"w\")\n"
                  "y = conv2d(x, w, channels=1, kernel_size=(3,3), padding=(1,1), "
                  "strides=(2,2), use_bias=False)",
                  {{"x", tensor({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9})},
                   {"w", tensor({1, 1, 3, 3}, std::vector<double>(9, 1.0))}});
  expectValues(z, {12, 16, 24, 28});
  // Groups: two channels, each convolved with its own 1x1 weight.
  Tensor g =
      eval("x = Variable(\"x\", shape=(1,2,1,2))\nw = Variable(\"w\")\n"
           "y = conv2d(x, w, channels=2, kernel_size=(1,1), groups=2, use_bias=False)",
           {{"x", tensor({1, 2, 1, 2}, {1, 2, 3, 4})}, {"w", tensor({2, 1, 1, 1}, {10, 100})}});
  expectValues(g, {10, 20, 300, 400});
  // Dilation 2 on a 1x5 row with a 1x2 kernel [1, 1]: x[j] + x[j+2].
  Tensor d =
      eval("x = Variable(\"x\", shape=(1,1,1,5))\nw = Variable(\"w\")\n"
           "y = conv2d(x, w, channels=1, kernel_size=(1,2), dilation=(1,2), use_bias=False)",
           {{"x", tensor({1, 1, 1, 5}, {1, 2, 3, 4, 5})}, {"w", tensor({1, 1, 1, 2}, {1, 1})}});
  expectValues(d, {4, 6, 8});
}

TEST(OpKernel, Conv2dNCHWc) {
  // Two channels in blocks of 2, 1x1 kernel W = [[1, 2], [3, 4]] (OIHW), bias [100, 200].
  // NCHW x: channel 0 = [1, 2], channel 1 = [10, 20]; NCHW2c stores (w, c): 1, 10, 2, 20.
  // OIHW2i2o stores (i, o): W00, W10, W01, W11 = 1, 3, 2, 4.
  // out channel 0 = x0 + 2 x1 + 100 = [121, 142]; channel 1 = 3 x0 + 4 x1 + 200 = [243, 286],
  // stored (w, c).
  Tensor y = eval("x = Variable(\"x\", shape=(1,1,1,2,2))\nw = Variable(\"w\")\n"
                  "b = Variable(\"b\")\ny = _contrib_conv2d_NCHWc(x, w, b, channels=2, "
                  "kernel_size=(1,1), layout=\"NCHW2c\", kernel_layout=\"OIHW2i2o\", "
                  "out_layout=\"NCHW2c\")",
                  {{"x", tensor({1, 1, 1, 2, 2}, {1, 10, 2, 20})},
                   {"w", tensor({1, 1, 1, 1, 2, 2}, {1, 3, 2, 4})},
                   {"b", tensor({1, 2}, {100, 200})}});
  EXPECT_EQ(y.shape, (Shape{1, 1, 1, 2, 2}));
  expectValues(y, {121, 243, 142, 286});
}

TEST(OpKernel, DepthwiseConv2dNCHWc) {
  // Two channels in one block of 2, each convolved with its own 1x2 kernel: channel 0 with
  // [1, 2], channel 1 with [10, 100] (OIHW1i2o stores (kw, o): 1, 10, 2, 100), bias [0.5, 5].
  // NCHW x: channel 0 = [1, 2, 3], channel 1 = [4, 5, 6]; NCHW2c stores (w, c).
  // out channel 0 = [1 + 4, 2 + 6] + 0.5 = [5.5, 8.5]; channel 1 = [40 + 500, 50 + 600] + 5,
  // stored (w, c).
  Tensor y = eval("x = Variable(\"x\", shape=(1,1,1,3,2))\nw = Variable(\"w\")\n"
                  "b = Variable(\"b\")\ny = _contrib_depthwise_conv2d_NCHWc(x, w, b, channels=2, "
                  "groups=2, kernel_size=(1,2), layout=\"NCHW2c\", kernel_layout=\"OIHW1i2o\", "
                  "out_layout=\"NCHW2c\")",
                  {{"x", tensor({1, 1, 1, 3, 2}, {1, 4, 2, 5, 3, 6})},
                   {"w", tensor({1, 1, 1, 2, 1, 2}, {1, 10, 2, 100})},
                   {"b", tensor({1, 2}, {0.5, 5})}});
  EXPECT_EQ(y.shape, (Shape{1, 1, 1, 2, 2}));
  expectValues(y, {5.5, 545, 8.5, 655});
}

TEST(OpKernel, Conv2dTranspose) {
  // 1x1x2x2 input [[1, 2], [3, 4]], 2x2 ones kernel, stride 2: each input spreads to a 2x2 block.
  Tensor y = eval("x = Variable(\"x\", shape=(1,1,2,2))\nw = Variable(\"w\")\nb = Variable(\"b\")\n"
                  "y = conv2d_transpose(x, w, b, channels=1, kernel_size=(2,2), strides=(2,2))",
                  {{"x", tensor({1, 1, 2, 2}, {1, 2, 3, 4})},
                   {"w", tensor({1, 1, 2, 2}, {1, 1, 1, 1})},
                   {"b", tensor({1}, {0.5})}});
  expectValues(y, {1.5, 1.5, 2.5, 2.5, 1.5, 1.5, 2.5, 2.5, 3.5, 3.5, 4.5, 4.5, 3.5, 3.5, 4.5, 4.5});
  // Stride 1 with a [1, 2] kernel on [1, 2]: full convolution [1, 4, 4].
  Tensor z = eval("x = Variable(\"x\", shape=(1,1,1,2))\nw = Variable(\"w\")\n"
                  "y = conv2d_transpose(x, w, channels=1, kernel_size=(1,2), use_bias=False)",
                  {{"x", tensor({1, 1, 1, 2}, {1, 2})}, {"w", tensor({1, 1, 1, 2}, {1, 2})}});
  expectValues(z, {1, 4, 4});
}

TEST(OpKernel, Pooling) {
  // 4x4 input 0..15
  std::vector<double> x;
  for (int i = 0; i < 16; ++i)
    x.push_back(i);
  Shape s{1, 1, 4, 4};
  expectValues(unary("max_pool2d", "pool_size=(2,2), strides=(2,2)", s, x), {5, 7, 13, 15});
  expectValues(unary("avg_pool2d", "pool_size=(2,2), strides=(2,2)", s, x), {2.5, 4.5, 10.5, 12.5});
  // Padding 1 with a 2x2 window, stride 2: corner windows hold one real cell each edge.
  expectValues(unary("avg_pool2d", "pool_size=(2,2), strides=(2,2), padding=(1,1)", {1, 1, 2, 2},
                     {1, 2, 3, 4}),
               {1, 2, 3, 4});
  expectValues(unary("avg_pool2d",
                     "pool_size=(2,2), strides=(2,2), padding=(1,1), count_include_pad=True",
                     {1, 1, 2, 2}, {1, 2, 3, 4}),
               {0.25, 0.5, 0.75, 1});
  expectValues(unary("max_pool2d", "pool_size=(3,3), strides=(2,2), ceil_mode=True", s, x),
               {10, 11, 14, 15});
  expectValues(unary("global_max_pool2d", "", {1, 2, 1, 2}, {1, 5, -3, -2}), {5, -2});
  expectValues(unary("global_avg_pool2d", "", {1, 2, 1, 2}, {1, 5, -3, -2}), {3, -2.5});
  expectValues(unary("upsampling", "scale=2", {1, 1, 1, 2}, {1, 2}), {1, 1, 2, 2, 1, 1, 2, 2});
  // Bilinear with aligned corners: a 1x2 row [0, 3] to 2x4 -> [0, 1, 2, 3] on both rows.
  expectValues(unary("upsampling", "scale=2, method=\"BILINEAR\"", {1, 1, 1, 2}, {0, 3}),
               {0, 1, 2, 3, 0, 1, 2, 3});
}

// 3-D convolution and pooling by hand on a 2x2x2 volume 1 … 8.
TEST(OpKernel, VolumeConvolutionAndPooling) {
  std::vector<double> x = {1, 2, 3, 4, 5, 6, 7, 8};
  Shape s{1, 1, 2, 2, 2};
  std::string decl = "x = Variable(\"x\", shape=(1,1,2,2,2), dtype=1)\nw = Variable(\"w\")\n";
  // A 2x2x2 kernel of ones sums the volume (36), plus the bias.
  expectValues(eval(decl + "b = Variable(\"b\")\ny = conv3d(x, w, b, channels=1, "
                           "kernel_size=(2,2,2))",
                    {{"x", tensor(s, x)},
                     {"w", tensor(s, std::vector<double>(8, 1))},
                     {"b", tensor({1}, {0.5})}}),
               {36.5});
  // Padded by one and strided by two, each window holds one cell of the volume: the identity.
  expectValues(eval(decl + "y = conv3d(x, w, channels=1, kernel_size=(2,2,2), strides=(2,2,2), "
                           "padding=(1,1,1), use_bias=False)",
                    {{"x", tensor(s, x)}, {"w", tensor(s, std::vector<double>(8, 1))}}),
               x);
  expectValues(unary("max_pool3d", "pool_size=(2,2,2)", s, x), {8});
  expectValues(unary("avg_pool3d", "pool_size=(2,2,2)", s, x), {4.5});
  // The same one-cell windows: the padding left out of the mean, or counted (one cell in 8).
  expectValues(unary("avg_pool3d", "pool_size=(2,2,2), strides=(2,2,2), padding=(1,1,1)", s, x), x);
  expectValues(unary("avg_pool3d",
                     "pool_size=(2,2,2), strides=(2,2,2), padding=(1,1,1), count_include_pad=True",
                     s, x),
               {0.125, 0.25, 0.375, 0.5, 0.625, 0.75, 0.875, 1});
  // (front, top, left) padding only: 2 windows per axis, the first reading cell 0 alone.
  expectValues(unary("max_pool3d", "pool_size=(2,2,2), padding=(1,1,1,0,0,0)", s, x), x);
  // Gradients of one window: the max's goes to the largest cell, the mean's is spread evenly,
  // and the data gradient of a full-size kernel is the kernel times ograd.
  std::string grads = "g = Variable(\"g\", shape=(1,1,1,1,1), dtype=1)\n" + decl;
  std::map<std::string, Tensor> in = {{"g", tensor({1, 1, 1, 1, 1}, {2})}, {"x", tensor(s, x)}};
  expectValues(eval(grads + "y = _max_pool3d_grad(g, x, pool_size=(2,2,2))", in),
               {0, 0, 0, 0, 0, 0, 0, 2});
  expectValues(eval(grads + "y = _avg_pool3d_grad(g, x, pool_size=(2,2,2))", in),
               std::vector<double>(8, 0.25));
  in["w"] = tensor(s, {8, 7, 6, 5, 4, 3, 2, 1});
  expectValues(eval(grads + "y = _conv3d_grad(g, x, w, channels=1, kernel_size=(2,2,2), "
                            "use_bias=False)",
                    in),
               {16, 14, 12, 10, 8, 6, 4, 2});
}

TEST(OpKernel, NormAndDropout) {
  // (x - mean) / sqrt(var + eps) * gamma + beta per channel; eps = 0 for exact numbers.
  Tensor y = eval("x = Variable(\"x\", shape=(1,2,1,2))\ng = Variable(\"g\")\nb = Variable(\"b\")\n"
                  "m = Variable(\"m\")\nv = Variable(\"v\")\n"
                  "y = batch_norm(x, g, b, m, v, epsilon=0)",
                  {{"x", tensor({1, 2, 1, 2}, {1, 3, 10, 20})},
                   {"g", tensor({2}, {2, 1})},
                   {"b", tensor({2}, {0, 5})},
                   {"m", tensor({2}, {1, 10})},
                   {"v", tensor({2}, {4, 100})}});
  expectValues(y, {0, 2, 5, 6});
  expectValues(unary("dropout", "rate=0.3", {3}, {1, 2, 3}), {1, 2, 3});
  expectValues(eval("x = Variable(\"x\", shape=(1,2,1,2))\na = Variable(\"a\")\ny = prelu(x, a)",
                    {{"x", tensor({1, 2, 1, 2}, {-1, 2, -4, 5})}, {"a", tensor({2}, {0.5, 0.25})}}),
               {-0.5, 2, -1, 5});
}

TEST(OpKernel, Transforms) {
  std::vector<double> x{1, 2, 3, 4, 5, 6};
  Shape s{2, 3};
  expectValues(unary("flatten", "", {2, 1, 3}, x), x);
  expectValues(unary("reshape", "shape=(3, 2)", s, x), x);
  expectValues(unary("transpose", "", s, x), {1, 4, 2, 5, 3, 6});
  expectValues(unary("transpose", "axes=(1, 0, 2)", {2, 2, 1}, {1, 2, 3, 4}), {1, 3, 2, 4});
  expectValues(unary("flip", "axis=1", s, x), {3, 2, 1, 6, 5, 4});
  expectValues(unary("flip", "", s, x), {4, 5, 6, 1, 2, 3});
  expectValues(unary("expand_dims", "axis=0", s, x), x);
  expectValues(unary("squeeze", "", {1, 6}, x), x);
  expectValues(unary("pad", "pad_width=((0,0),(1,1)), pad_value=9", {1, 2}, {1, 2}), {9, 1, 2, 9});
  expectValues(binary("concatenate", {2, 1}, {1, 2}, {2, 2}, {3, 4, 5, 6}), {1, 3, 4, 2, 5, 6});
  Tensor second = eval("x = Variable(\"x\", shape=(2,3))\ns = split(x, indices_or_sections=(1,))\n"
                       "y = s[1]",
                       {{"x", tensor(s, x)}});
  expectValues(second, {2, 3, 5, 6});
  // sum over axis 1 of a (2,3) gives (2,); expand_like broadcasts it back along axis 1.
  expectValues(eval("a = Variable(\"a\", shape=(2,))\nt = Variable(\"t\", shape=(2,3))\n"
                    "y = expand_like(a, t, axis=1)",
                    {{"a", tensor({2}, {7, 8})}, {"t", tensor(s, x)}}),
               {7, 7, 7, 8, 8, 8});
  // With keepdims the reduced form has the same rank: (1, 1) broadcasts everywhere.
  expectValues(eval("a = Variable(\"a\", shape=(1,1))\nt = Variable(\"t\", shape=(2,3))\n"
                    "y = expand_like(a, t)",
                    {{"a", tensor({1, 1}, {4})}, {"t", tensor(s, x)}}),
               {4, 4, 4, 4, 4, 4});
}

TEST(OpKernel, InitOps) {
  expectValues(eval("y = zeros(shape=(2,))", {}), {0, 0});
  expectValues(eval("y = ones(shape=(2,), dtype=\"int8\")", {}), {1, 1});
  expectValues(eval("y = full(shape=(3,), fill_value=2.5)", {}), {2.5, 2.5, 2.5});
}

TEST(OpKernel, LayoutTransform) {
  // NHWC (1,2,2,3) -> NCHW is transpose(0, 3, 1, 2).
  std::vector<double> x;
  for (int i = 0; i < 12; ++i)
    x.push_back(i);
  expectValues(
      unary("__layout_transform__", "src_layout=\"NHWC\", dst_layout=\"NCHW\"", {1, 2, 2, 3}, x),
      {0, 3, 6, 9, 1, 4, 7, 10, 2, 5, 8, 11});
  // NCHW (1,4,1,1) -> NCHW2c (1,2,1,1,2): channels 0,1 then 2,3 — the same order here.
  EXPECT_EQ(outShape("x = Variable(\"x\", shape=(1,4,1,3))\n"
                     "y = __layout_transform__(x, src_layout=\"NCHW\", dst_layout=\"NCHW2c\")"),
            (Shape{1, 2, 1, 3, 2}));
  // Channel c at (h, w) of NCHW lands at [c / 2, h, w, c % 2] of NCHW2c.
  expectValues(unary("__layout_transform__", "src_layout=\"NCHW\", dst_layout=\"NCHW2c\"",
                     {1, 4, 1, 2}, {0, 1, 2, 3, 4, 5, 6, 7}),
               {0, 2, 1, 3, 4, 6, 5, 7});
  EXPECT_NE(inferError("x = Variable(\"x\", shape=(1,3,2,2))\n"
                       "y = __layout_transform__(x, src_layout=\"NCHW\", dst_layout=\"NCHW2c\")")
                .find("does not split by 2"),
            std::string::npos);
}

TEST(OpKernel, Constants) {
  expectValues(eval("y = const(2.5, shape=(3,))", {}), {2.5, 2.5, 2.5});
  expectValues(eval("y = const([[1, 2], [3, 4]])", {}), {1, 2, 3, 4});
  EXPECT_EQ(outShape("y = const([[1, 2], [3, 4]])"), (Shape{2, 2}));
  EXPECT_NE(inferError("y = const([1, 2, 3], shape=(2,))")
                .find("has 3 values but the shape "
                      "holds 2"),
            std::string::npos);
}

TEST(OpKernel, GradientOps) {
  // collapse_sum sums back over broadcast axes: (2,3) -> (3,) and -> (2,1).
  Shape s{2, 3};
  std::vector<double> x{1, 2, 3, 4, 5, 6};
  expectValues(binary("collapse_sum", s, x, {3}, {0, 0, 0}), {5, 7, 9});
  expectValues(binary("collapse_sum", s, x, {2, 1}, {0, 0}), {6, 15});
  // _conv2d_grad with a 1x1 weight 2: dx = 2 g, dw = sum(g x) = 10, db = sum(g) = 4.
  Graph g = inferred("g = Variable(\"g\", shape=(1,1,2,2), dtype=1)\n"
                     "x = Variable(\"x\", shape=(1,1,2,2), dtype=1)\n"
                     "w = Variable(\"w\", shape=(1,1,1,1), dtype=1)\n"
                     "y = _conv2d_grad(g, x, w, channels=1, kernel_size=(1,1))",
                     "Group([y[0], y[1], y[2]])");
  auto outs = interpret(g, {{"g", tensor({1, 1, 2, 2}, {1, 1, 1, 1}, kFloat64)},
                            {"x", tensor({1, 1, 2, 2}, {1, 2, 3, 4}, kFloat64)},
                            {"w", tensor({1, 1, 1, 1}, {2}, kFloat64)}});
  expectValues(outs[0], {2, 2, 2, 2});
  expectValues(outs[1], {10});
  expectValues(outs[2], {4});
  // _concatenate_grad cuts g = [[0, 1, 2], [3, 4, 5]] along axis 1 into widths 1 and 2.
  Graph cg = inferred("g = Variable(\"g\", shape=(2,3), dtype=1)\n"
                      "a = Variable(\"a\", shape=(2,1), dtype=1)\n"
                      "b = Variable(\"b\", shape=(2,2), dtype=1)\n"
                      "y = _concatenate_grad(g, a, b, axis=1, num_args=2)",
                      "Group([y[0], y[1]])");
  auto pieces = interpret(cg, {{"g", tensor({2, 3}, {0, 1, 2, 3, 4, 5}, kFloat64)},
                               {"a", tensor({2, 1}, {0, 0}, kFloat64)},
                               {"b", tensor({2, 2}, {0, 0, 0, 0}, kFloat64)}});
  expectValues(pieces[0], {0, 3});
  expectValues(pieces[1], {1, 2, 4, 5});
  // _prod_others: one zero -> only the zero's slot gets the product of the rest (2*3*4);
  // per row [[1, 2], [3, 4]] -> [[2, 1], [4, 3]]; two zeros -> all 0.
  expectValues(unary("_prod_others", "", {4}, {2, 0, 3, 4}), {0, 24, 0, 0});
  expectValues(unary("_prod_others", "axis=(1,)", {2, 2}, {1, 2, 3, 4}), {2, 1, 4, 3});
  expectValues(unary("_prod_others", "", {3}, {0, 0, 5}), {0, 0, 0});
  // _pad_grad keeps the part of g over the data: pad (1, 1) of 2 elements -> g[1:3].
  expectValues(eval("g = Variable(\"g\")\nx = Variable(\"x\")\n"
                    "y = _pad_grad(g, x, pad_width=((1, 1),))",
                    {{"g", tensor({4}, {1, 2, 3, 4})}, {"x", tensor({2}, {0, 0})}}),
               {2, 3});
  // Edge and reflect padding of (1, 2, 3) by two before and one after, and their gradients:
  // each data cell gets the ograd of every cell that read it.
  expectValues(unary("pad", "pad_width=((2,1),), pad_mode=\"edge\"", {3}, {1, 2, 3}),
               {1, 1, 1, 2, 3, 3});
  expectValues(unary("pad", "pad_width=((2,1),), pad_mode=\"reflect\"", {3}, {1, 2, 3}),
               {3, 2, 1, 2, 3, 2});
  // 2-D: rows reflected, columns edge-padded is not one op; both axes reflected.
  expectValues(unary("pad", "pad_width=((1,0),(0,1)), pad_mode=\"reflect\"", {2, 2}, {1, 2, 3, 4}),
               {3, 4, 3, 1, 2, 1, 3, 4, 3});
  std::map<std::string, Tensor> grads{{"g", tensor({6}, {1, 10, 100, 1000, 10000, 100000})},
                                      {"x", tensor({3}, {0, 0, 0})}};
  std::string gx = "g = Variable(\"g\")\nx = Variable(\"x\")\ny = _pad_grad(g, x, "
                   "pad_width=((2, 1),), pad_mode=";
  expectValues(eval(gx + "\"edge\")", grads), {111, 1000, 110000});
  expectValues(eval(gx + "\"reflect\")", grads), {100, 101010, 10001});
  // _cast_grad: g's values in the data's dtype.
  Graph cast = inferred("g = Variable(\"g\", shape=(2,), dtype=1)\n"
                        "x = Variable(\"x\", shape=(2,), dtype=0)\ny = _cast_grad(g, x)");
  EXPECT_EQ(cast.attr("dtype")->ints.back(), kFloat32);
  expectValues(
      interpret(cast, {{"g", tensor({2}, {3, -1}, kFloat64)}, {"x", tensor({2}, {0, 0})}})[0],
      {3, -1});
  // _prelu_grad, alpha [0.5, 0.25], x = [1, -2 | -3, 4], g = 1: dx = [1, 0.5 | 0.25, 1];
  // dalpha = sum of g x where x <= 0 = [-2, -3].
  Graph pg = inferred("g = Variable(\"g\", shape=(1,2,1,2), dtype=1)\n"
                      "x = Variable(\"x\", shape=(1,2,1,2), dtype=1)\n"
                      "a = Variable(\"a\", shape=(2,), dtype=1)\ny = _prelu_grad(g, x, a)",
                      "Group([y[0], y[1]])");
  auto pgo = interpret(pg, {{"g", tensor({1, 2, 1, 2}, {1, 1, 1, 1}, kFloat64)},
                            {"x", tensor({1, 2, 1, 2}, {1, -2, -3, 4}, kFloat64)},
                            {"a", tensor({2}, {0.5, 0.25}, kFloat64)}});
  expectValues(pgo[0], {1, 0.5, 0.25, 1});
  expectValues(pgo[1], {-2, -3});
  // _batch_norm_grad on x = [1, 3], gamma 2, mean 1, var 3, eps 1 (s = 1/2), g = [1, 1]:
  // dx = g gamma s = [1, 1]; dgamma = sum g (x - mean) s = 1; dbeta = 2;
  // dmean = -sum g gamma s = -2; dvar = -1/2 sum g (x - mean) gamma s^3 = -0.25.
  Graph bg = inferred("g = Variable(\"g\", shape=(1,1,1,2), dtype=1)\n"
                      "gm = Variable(\"gm\", shape=(1,), dtype=1)\n"
                      "gv = Variable(\"gv\", shape=(1,), dtype=1)\n"
                      "x = Variable(\"x\", shape=(1,1,1,2), dtype=1)\n"
                      "ga = Variable(\"ga\", shape=(1,), dtype=1)\n"
                      "be = Variable(\"be\", shape=(1,), dtype=1)\n"
                      "mu = Variable(\"mu\", shape=(1,), dtype=1)\n"
                      "va = Variable(\"va\", shape=(1,), dtype=1)\n"
                      "y = _batch_norm_grad(g, gm, gv, x, ga, be, mu, va, epsilon=1.0)",
                      "Group([y[0], y[1], y[2], y[3], y[4]])");
  auto bgo = interpret(bg, {{"g", tensor({1, 1, 1, 2}, {1, 1}, kFloat64)},
                            {"gm", tensor({1}, {0}, kFloat64)},
                            {"gv", tensor({1}, {0}, kFloat64)},
                            {"x", tensor({1, 1, 1, 2}, {1, 3}, kFloat64)},
                            {"ga", tensor({1}, {2}, kFloat64)},
                            {"be", tensor({1}, {0}, kFloat64)},
                            {"mu", tensor({1}, {1}, kFloat64)},
                            {"va", tensor({1}, {3}, kFloat64)}});
  expectValues(bgo[0], {1, 1});
  expectValues(bgo[1], {1});
  expectValues(bgo[2], {2});
  expectValues(bgo[3], {-2});
  expectValues(bgo[4], {-0.25});
  // _conv2d_transpose_grad of x = [1, 2] with w = [1, 2] (output [1, 4, 4]) and g = 1: each
  // input touches two outputs, dx = 1 + 2 = 3 each; dw = 1 + 2 = 3 each; db = 3.
  Graph tg = inferred("g = Variable(\"g\", shape=(1,1,1,3), dtype=1)\n"
                      "x = Variable(\"x\", shape=(1,1,1,2), dtype=1)\n"
                      "w = Variable(\"w\", shape=(1,1,1,2), dtype=1)\n"
                      "y = _conv2d_transpose_grad(g, x, w, channels=1, kernel_size=(1,2))",
                      "Group([y[0], y[1], y[2]])");
  auto tgo = interpret(tg, {{"g", tensor({1, 1, 1, 3}, {1, 1, 1}, kFloat64)},
                            {"x", tensor({1, 1, 1, 2}, {1, 2}, kFloat64)},
                            {"w", tensor({1, 1, 1, 2}, {1, 2}, kFloat64)}});
  expectValues(tgo[0], {3, 3});
  expectValues(tgo[1], {3, 3});
  expectValues(tgo[2], {3});
  // _upsampling_grad, bilinear, data 1x2 -> output 2x4 with g rows [1, 2, 3, 4]: output
  // columns read x0 with weights 1, 2/3, 1/3, 0 and x1 with 0, 1/3, 2/3, 1, so
  // dx0 = 2 (1 + 4/3 + 1) = 20/3 and dx1 = 2 (2/3 + 2 + 4) = 40/3.
  expectValues(eval("g = Variable(\"g\")\nx = Variable(\"x\")\n"
                    "y = _upsampling_grad(g, x, scale=2, method=\"BILINEAR\")",
                    {{"g", tensor({1, 1, 2, 4}, {1, 2, 3, 4, 1, 2, 3, 4})},
                     {"x", tensor({1, 1, 1, 2}, {0, 0})}}),
               {20.0 / 3, 40.0 / 3}, 1e-5);
  // Pool gradients over a 2x2 window holding [1, 4, 3, 2]: max routes to the 4, avg spreads.
  expectValues(eval("g = Variable(\"g\")\nx = Variable(\"x\")\no = Variable(\"o\")\n"
                    "y = _max_pool2d_grad(g, x, o, pool_size=(2,2))",
                    {{"g", tensor({1, 1, 1, 1}, {5})},
                     {"x", tensor({1, 1, 2, 2}, {1, 4, 3, 2})},
                     {"o", tensor({1, 1, 1, 1}, {4})}}),
               {0, 5, 0, 0});
  expectValues(eval("g = Variable(\"g\")\nx = Variable(\"x\")\n"
                    "y = _avg_pool2d_grad(g, x, pool_size=(2,2))",
                    {{"g", tensor({1, 1, 1, 1}, {5})}, {"x", tensor({1, 1, 2, 2}, {1, 4, 3, 2})}}),
               {1.25, 1.25, 1.25, 1.25});
}

// Relay-era math (issue 13), values by hand or from the defining formula.
TEST(OpKernel, RelayEraMath) {
  std::vector<double> x{-2.5, -0.5, 0, 0.5, 1.5, 2.5};
  expectValues(unary("abs", "", {6}, x), {2.5, 0.5, 0, 0.5, 1.5, 2.5});
  expectValues(unary("sign", "", {6}, x), {-1, -1, 0, 1, 1, 1});
  expectValues(unary("floor", "", {6}, x), {-3, -1, 0, 0, 1, 2});
  expectValues(unary("ceil", "", {6}, x), {-2, -0, 0, 1, 2, 3});
  // Halves to even, as ONNX's Round.
  expectValues(unary("round", "", {6}, x), {-2, -0, 0, 0, 2, 2});
  expectValues(unary("trunc", "", {6}, x), {-2, 0, 0, 0, 1, 2});
  expectValues(unary("erf", "", {3}, {0, 1, -1}), {0, 0.8427007929497149, -0.8427007929497149});
  double pi = std::acos(-1.0);
  expectValues(unary("sin", "", {2}, {0, pi / 2}), {0, 1});
  expectValues(unary("cos", "", {2}, {0, pi}), {1, -1});
  expectValues(unary("tan", "", {1}, {pi / 4}), {1});
  expectValues(unary("asin", "", {1}, {1}), {pi / 2});
  expectValues(unary("acos", "", {1}, {-1}), {pi});
  expectValues(unary("atan", "", {1}, {1}), {pi / 4});
  expectValues(unary("sinh", "", {1}, {1}), {(std::exp(1.0) - std::exp(-1.0)) / 2});
  expectValues(unary("cosh", "", {1}, {1}), {(std::exp(1.0) + std::exp(-1.0)) / 2});
  expectValues(unary("asinh", "", {1}, {(std::exp(1.0) - std::exp(-1.0)) / 2}), {1});
  expectValues(unary("acosh", "", {1}, {(std::exp(1.0) + std::exp(-1.0)) / 2}), {1});
  expectValues(unary("atanh", "", {1}, {std::tanh(0.5)}), {0.5});
  expectValues(unary("elu", "alpha=2", {2}, {-1, 3}), {2 * (std::exp(-1.0) - 1), 3});
  // ONNX's Selu defaults; its test data's values at -1 and 1.
  expectValues(unary("selu", "", {2}, {-1, 1}), {-1.1113307378125625, 1.0507010221481323});
  expectValues(unary("celu", "alpha=2", {2}, {-2, 1}), {2 * (std::exp(-1.0) - 1), 1});
  expectValues(unary("thresholded_relu", "alpha=1", {3}, {0.5, 1, 2}), {0, 0, 2});
  expectValues(unary("softsign", "", {2}, {-3, 1}), {-0.75, 0.5});
  // x relu6(x + 3) / 6: 0 at -3 and below, x from 3 up, x (x + 3) / 6 between.
  expectValues(unary("hard_swish", "", {4}, {-4, -1, 1, 4}), {0, -1.0 / 3, 2.0 / 3, 4});
  // gelu(1) = Phi(1) = 0.8413447460685429; its tanh form 0.8411919906082768.
  expectValues(unary("gelu", "", {2}, {0, 1}), {0, 0.8413447460685429});
  expectValues(unary("gelu", "approximate=\"tanh\"", {1}, {1}), {0.8411919906082768});
  expectValues(unary("silu", "", {2}, {0, 1}), {0, 1 / (1 + std::exp(-1.0))});
  expectValues(unary("mish", "", {2}, {0, 1}), {0, std::tanh(std::log1p(std::exp(1.0)))});
  std::vector<double> special{NAN, INFINITY, -INFINITY, 1};
  expectValues(unary("isnan", "", {4}, special), {1, 0, 0, 0});
  expectValues(unary("isinf", "", {4}, special), {0, 1, 1, 0});
  expectValues(unary("isinf", "detect_negative=False", {4}, special), {0, 1, 0, 0});
  EXPECT_EQ(unary("isinf", "", {4}, special).dtype, kBoolean);
}

// Broadcasting arithmetic, comparisons (bool results), logic and where.
TEST(OpKernel, RelayEraBinaryAndLogic) {
  expectValues(binary("broadcast_max", {2, 1}, {1, 5}, {3}, {0, 2, 6}), {1, 2, 6, 5, 5, 6});
  expectValues(binary("broadcast_min", {2, 1}, {1, 5}, {3}, {0, 2, 6}), {0, 1, 1, 0, 2, 5});
  expectValues(binary("broadcast_pow", {2}, {2, 9}, {1}, {0.5}), {std::sqrt(2.0), 3});
  // mod keeps the dividend's sign (C's fmod), floor_mod the divisor's (Python's %).
  std::vector<double> a{-7, 7, -7, 7}, b{3, 3, -3, -3};
  expectValues(binary("broadcast_mod", {4}, a, {4}, b), {-1, 1, -1, 1});
  expectValues(binary("broadcast_floor_mod", {4}, a, {4}, b), {2, 1, -1, -2});
  std::vector<double> l{1, 2, 3}, r{2};
  expectValues(binary("broadcast_equal", {3}, l, {1}, r), {0, 1, 0});
  expectValues(binary("broadcast_not_equal", {3}, l, {1}, r), {1, 0, 1});
  expectValues(binary("broadcast_greater", {3}, l, {1}, r), {0, 0, 1});
  expectValues(binary("broadcast_less", {3}, l, {1}, r), {1, 0, 0});
  expectValues(binary("broadcast_greater_equal", {3}, l, {1}, r), {0, 1, 1});
  expectValues(binary("broadcast_less_equal", {3}, l, {1}, r), {1, 1, 0});
  EXPECT_EQ(binary("broadcast_less", {3}, l, {1}, r).dtype, kBoolean);
  // Logic on the truth tables, with bools made by comparisons.
  std::string pq = "a = Variable(\"a\", shape=(4,), dtype=1)\nb = Variable(\"b\", shape=(4,), "
                   "dtype=1)\np = broadcast_greater(a, 0 * a)\nq = broadcast_greater(b, 0 * b)\n";
  std::map<std::string, Tensor> tt{{"a", tensor({4}, {0, 0, 1, 1}, kFloat64)},
                                   {"b", tensor({4}, {0, 1, 0, 1}, kFloat64)}};
  expectValues(eval(pq + "y = logical_and(p, q)", tt), {0, 0, 0, 1});
  expectValues(eval(pq + "y = logical_or(p, q)", tt), {0, 1, 1, 1});
  expectValues(eval(pq + "y = logical_xor(p, q)", tt), {0, 1, 1, 0});
  expectValues(eval(pq + "y = logical_not(p)", tt), {1, 1, 0, 0});
  // where broadcasts its three operands: a (2,1) condition, a (3,) x and a (1,) y.
  expectValues(
      eval("c = Variable(\"c\", shape=(2, 1), dtype=1)\nx = Variable(\"x\", shape=(3,), "
           "dtype=1)\ny = where(broadcast_greater(c, 0 * c), x, -1 + 0 * "
           "broadcast_to(c, shape=(2, 1)))",
           {{"c", tensor({2, 1}, {1, 0}, kFloat64)}, {"x", tensor({3}, {7, 8, 9}, kFloat64)}}),
      {7, 8, 9, -1, -1, -1});
}

// argmax/argmin: first of equal extremes unless select_last_index; int64 results.
TEST(OpKernel, ArgExtremaAndShapeOf) {
  std::vector<double> x{3, 7, 7, 1, 0, 5};
  expectValues(unary("argmax", "axis=1", {2, 3}, x), {1, 2});
  expectValues(unary("argmax", "axis=1, select_last_index=True", {2, 3}, x), {2, 2});
  expectValues(unary("argmin", "axis=0, keepdims=True", {2, 3}, x), {1, 1, 1});
  expectValues(unary("argmin", "axis=-1", {6}, x), {4});
  EXPECT_EQ(unary("argmax", "axis=0", {2, 3}, x).dtype, kInt64);
  EXPECT_EQ(unary("argmax", "axis=0", {2, 3}, x).shape, (Shape{3}));
  EXPECT_EQ(unary("argmin", "axis=0, keepdims=True", {2, 3}, x).shape, (Shape{1, 3}));
  std::vector<double> z(24, 0.0);
  expectValues(unary("shape_of", "", {2, 3, 4}, z), {2, 3, 4});
  expectValues(unary("shape_of", "start=1", {2, 3, 4}, z), {3, 4});
  expectValues(unary("shape_of", "start=-2, end=-1", {2, 3, 4}, z), {3});
  expectValues(unary("shape_of", "start=-10, end=10", {2, 3, 4}, z), {2, 3, 4}); // clipped
}

// layer_norm over the last axis and over the last two; mean and inv_std_dev as outputs.
TEST(OpKernel, LayerNorm) {
  std::string prog = "x = Variable(\"x\", shape=(2, 2), dtype=1)\ng = Variable(\"g\", shape=(2,), "
                     "dtype=1)\nb = Variable(\"b\", shape=(2,), dtype=1)\n";
  std::map<std::string, Tensor> in{{"x", tensor({2, 2}, {1, 3, 5, 8}, kFloat64)},
                                   {"g", tensor({2}, {2, 1}, kFloat64)},
                                   {"b", tensor({2}, {0, 10}, kFloat64)}};
  // Row (1, 3): mean 2, variance 1, normalised (-1, 1); row (5, 8): mean 6.5, variance 2.25,
  // normalised (-1, 1) too; then gamma (2, 1) and beta (0, 10).
  expectValues(eval(prog + "y = layer_norm(x, g, b, epsilon=0)[0]", in), {-2, 11, -2, 11}, 1e-9);
  expectValues(eval(prog + "y = layer_norm(x, g, b)[1]", in), {2, 6.5});
  expectValues(eval(prog + "y = layer_norm(x, g, b)[2]", in),
               {1 / std::sqrt(1 + 1e-5), 1 / std::sqrt(2.25 + 1e-5)}, 1e-9);
  // Over both axes (axis=0): one group of four, mean 4.25, variance 6.6875.
  std::string all = "x = Variable(\"x\", shape=(2, 2), dtype=1)\ng = Variable(\"g\", shape=(2, 2), "
                    "dtype=1)\ny = layer_norm(x, g, 0 * g, axis=0, epsilon=0)[0]";
  double sd = std::sqrt(6.6875);
  expectValues(eval(all, {{"x", in.at("x")}, {"g", tensor({2, 2}, {1, 1, 1, 1}, kFloat64)}}),
               {-3.25 / sd, -1.25 / sd, 0.75 / sd, 3.75 / sd}, 1e-9);
}

// group_norm and instance_norm of one image with 4 channels of 2 pixels each.
TEST(OpKernel, GroupAndInstanceNorm) {
  std::string prog = "x = Variable(\"x\", shape=(1, 4, 2), dtype=1)\ng = Variable(\"g\", "
                     "dtype=1)\nb = Variable(\"b\", dtype=1)\n";
  std::map<std::string, Tensor> in{{"x", tensor({1, 4, 2}, {1, 3, 5, 7, 0, 0, 2, 6}, kFloat64)},
                                   {"g", tensor({4}, {1, 2, 1, 1}, kFloat64)},
                                   {"b", tensor({4}, {0, 0, 0, 10}, kFloat64)}};
  // Two groups of two channels: (1, 3, 5, 7) has mean 4 and variance 5; (0, 0, 2, 6) mean 2
  // and variance 6. Channel 1 is scaled by 2, channel 3 shifted by 10.
  double s5 = std::sqrt(5.0), s6 = std::sqrt(6.0);
  expectValues(eval(prog + "y = group_norm(x, g, b, num_groups=2, epsilon=0)", in),
               {-3 / s5, -1 / s5, 2 / s5, 6 / s5, -2 / s6, -2 / s6, 10 + 0 / s6, 10 + 4 / s6},
               1e-9);
  // One group: all eight, mean 3, variance 6.5.
  double s65 = std::sqrt(6.5);
  expectValues(eval(prog + "y = group_norm(x, g, b, num_groups=1, epsilon=0)", in),
               {-2 / s65, 0, 4 / s65, 8 / s65, -3 / s65, -3 / s65, 10 - 1 / s65, 10 + 3 / s65},
               1e-9);
  // instance_norm: each channel's two pixels become -1 and 1 (a constant channel 0, 0 stays 0
  // up to epsilon).
  expectValues(eval(prog + "y = instance_norm(x, g, b, epsilon=0.25)", in),
               {-1 / std::sqrt(1.25), 1 / std::sqrt(1.25), -2 / std::sqrt(1.25),
                2 / std::sqrt(1.25), 0, 0, 10 - 2 / std::sqrt(4.25), 10 + 2 / std::sqrt(4.25)},
               1e-9);
  // The channel axis last: x as (2, 4) with the pixels first, two groups per pixel row.
  std::map<std::string, Tensor> rows{{"x", tensor({2, 4}, {1, 3, 0, 2, 4, 6, 1, 5}, kFloat64)},
                                     {"g", tensor({4}, {1, 1, 1, 1}, kFloat64)},
                                     {"b", tensor({4}, {0, 0, 0, 0}, kFloat64)}};
  expectValues(eval("x = Variable(\"x\", shape=(2, 4), dtype=1)\ng = Variable(\"g\", "
                    "dtype=1)\nb = Variable(\"b\", dtype=1)\ny = group_norm(x, g, b, "
                    "num_groups=2, axis=1, epsilon=0)",
                    rows),
               {-1, 1, -1, 1, -1, 1, -1, 1}, 1e-9);
}

// take (ONNX's Gather) and gather_elements, with negative indices wrapped or clipped.
TEST(OpKernel, TakeAndGatherElements) {
  std::vector<double> x{1, 2, 3, 4, 5, 6};                                   // (2, 3)
  expectValues(binary("take", {2, 3}, x, {2}, {2, -1}), {4, 5, 6, 1, 2, 3}); // clip: 2→1, -1→0
  std::string take =
      "a = Variable(\"a\", shape=(2, 3), dtype=1)\ni = Variable(\"i\", shape=(2, 2), "
      "dtype=6)\ny = take(a, i, axis=1, mode=\"wrap\")";
  Tensor t = eval(
      take, {{"a", tensor({2, 3}, x, kFloat64)}, {"i", tensor({2, 2}, {0, -1, 2, 1}, kInt64)}});
  EXPECT_EQ(t.shape, (Shape{2, 2, 2}));
  expectValues(t, {1, 3, 3, 2, 4, 6, 6, 5});
  std::string ge = "a = Variable(\"a\", shape=(2, 3), dtype=1)\ni = Variable(\"i\", shape=(2, 2), "
                   "dtype=6)\ny = gather_elements(a, i, axis=1, mode=\"wrap\")";
  expectValues(
      eval(ge, {{"a", tensor({2, 3}, x, kFloat64)}, {"i", tensor({2, 2}, {2, 0, -1, 1}, kInt64)}}),
      {3, 1, 6, 5});
}

// strided_slice with ONNX's Slice rules: negative bounds and steps, clamping, listed axes.
TEST(OpKernel, StridedSlice) {
  std::vector<double> x{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}; // (3, 4)
  expectValues(unary("strided_slice", "begin=(1, 0), end=(3, 4), strides=(1, 2)", {3, 4}, x),
               {4, 6, 8, 10});
  // Reversed rows, from the last to the first (end -1000 clamps to "before 0").
  expectValues(unary("strided_slice", "begin=(-1,), end=(-1000,), strides=(-1,)", {3, 4}, x),
               {8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3});
  // Only axis 1, an end beyond the size clamped.
  Tensor t = unary("strided_slice", "begin=(2,), end=(100,), axes=(-1,)", {3, 4}, x);
  EXPECT_EQ(t.shape, (Shape{3, 2}));
  expectValues(t, {2, 3, 6, 7, 10, 11});
  std::string err =
      inferError("x = Variable(\"x\", shape=(3, 4))\ny = strided_slice(x, begin=(2,), end=(1,))");
  EXPECT_NE(err.find("the slice [2, 1) step 1 of axis 0 (size 3) is empty"), std::string::npos)
      << err;
}

TEST(OpKernel, Tile) {
  expectValues(unary("tile", "reps=(2, 2)", {1, 2}, {1, 2}), {1, 2, 1, 2, 1, 2, 1, 2});
  // reps longer than the rank: a leading axis.
  Tensor t = unary("tile", "reps=(2, 1, 3)", {1, 2}, {1, 2});
  EXPECT_EQ(t.shape, (Shape{2, 1, 6}));
  expectValues(t, {1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2});
  expectValues(unary("tile", "reps=(2,)", {2, 1}, {7, 8}), {7, 7, 8, 8});
}

TEST(OpKernel, Resize2d) {
  // Linear, half_pixel, 2x2 -> 4x4 (ONNX's resize_upsample_scales_linear): the border rows and
  // columns read the edge cells.
  expectValues(unary("resize2d", "size=(4, 4)", {1, 1, 2, 2}, {1, 2, 3, 4}),
               {1, 1.25, 1.75, 2, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75, 3.25, 3.5, 3, 3.25, 3.75, 4});
  // Nearest, asymmetric, rounding down (ONNX's Upsample): source o / 2.
  expectValues(unary("resize2d",
                     "size=(1, 6), method=\"nearest_neighbor\", "
                     "coordinate_transformation_mode=\"asymmetric\", rounding_method=\"floor\"",
                     {1, 1, 1, 3}, {1, 2, 3}),
               {1, 1, 2, 2, 3, 3});
  // Nearest, half_pixel, 4 -> 2: sources 0.5 and 2.5, halves rounded down or up.
  const char *nearest = "size=(1, 2), method=\"nearest_neighbor\", rounding_method=";
  expectValues(unary("resize2d", std::string(nearest) + "\"round_prefer_floor\"", {1, 1, 1, 4},
                     {1, 2, 3, 4}),
               {1, 3});
  expectValues(
      unary("resize2d", std::string(nearest) + "\"round_prefer_ceil\"", {1, 1, 1, 4}, {1, 2, 3, 4}),
      {2, 4});
  // Linear, align_corners, 3 -> 5: sources o * 2 / 4.
  expectValues(unary("resize2d", "size=(1, 5), coordinate_transformation_mode=\"align_corners\"",
                     {1, 1, 1, 3}, {0, 3, 6}),
               {0, 1.5, 3, 4.5, 6});
  // A given scale is what the coordinates use even when the size was rounded down from it
  // (ONNX: 4 * 0.6 -> 2 cells, sources (o + 0.5) / 0.6 - 0.5 = 0.333 and 2).
  expectValues(unary("resize2d", "size=(1, 2), scale_w=0.6", {1, 1, 1, 4}, {1, 2, 3, 4}),
               {1 + 1.0 / 3, 3});
  // Cubic, half_pixel, 4 -> 2 of (1, 2, 4, 8): sources 0.5 and 2.5 (fraction 0.5), where the
  // weights of cells f-1 … f+2 are A/8, 1/2 - A/8, 1/2 - A/8, A/8; f-1 = -1 and f+2 = 4 read the
  // edge cells. ONNX's A = -0.75: (-3/32, 19/32, 19/32, -3/32).
  std::vector<double> ramp = {1, 2, 4, 8};
  const char *cubic = "size=(1, 2), method=\"cubic\", cubic_alpha=-0.75";
  expectValues(unary("resize2d", cubic, {1, 1, 1, 4}, ramp), {1.3125, 6.1875});
  // exclude_outside: the cells beyond the axis weigh 0, the other three scaled by 32/35.
  expectValues(unary("resize2d", std::string(cubic) + ", cubic_exclude=1", {1, 1, 1, 4}, ramp),
               {9.0 / 7, 222.0 / 35});
  // Relay's default A = -0.5: (-1/16, 9/16, 9/16, -1/16).
  expectValues(unary("resize2d", "size=(1, 2), method=\"cubic\"", {1, 1, 1, 4}, ramp),
               {1.375, 6.125});
  std::string err = inferError("x = Variable(\"x\", shape=(1, 1, 2, 2))\n"
                               "y = resize2d(x, size=(0, 2))");
  EXPECT_NE(err.find("attribute 'size' must be two positive sizes (H, W)"), std::string::npos)
      << err;
  err = inferError("x = Variable(\"x\", shape=(2, 2))\ny = resize2d(x, size=(4, 4))");
  EXPECT_NE(err.find("data must be 4-D (NCHW), got [2, 2]"), std::string::npos) << err;
  // A scale that would put coordinates beyond a double's exact integers is refused.
  err = inferError("x = Variable(\"x\", shape=(1, 1, 2, 2))\n"
                   "y = resize2d(x, size=(4, 4), scale_w=1e-300)");
  EXPECT_NE(err.find("attribute 'scale_w' must be 0 (out / in) or between 1e-6 and 1e6"),
            std::string::npos)
      << err;
}

// Every registered op has a kernel and is exercised in this file: its name appears here as a
// call (`relu(`) or a quoted op name (`"relu"`), so adding an op without a test fails.
TEST(OpKernel, EveryOpHasAKernelTest) {
  registerAllOps();
  std::string self = readTextFile(__FILE__);
  for (const OpDef *op : OpRegistry::get().all()) {
    if (op->name == "tvm_op")
      continue; // runs its fused function's body; PassesTest checks deploy graphs numerically
    if (op->name == "__undef__")
      continue; // stands for "no value"; EngineTest checks that reading one is an error
    EXPECT_TRUE(op->compute) << op->name << " has no reference kernel";
    bool named = self.find("\"" + op->name + "\"") != std::string::npos ||
                 self.find(" " + op->name + "(") != std::string::npos;
    EXPECT_TRUE(named) << op->name << " has no kernel test in " << __FILE__;
  }
}

// gather_nd, scatter_elements, scatter_nd and one_hot by hand (ONNX's own examples where they
// have one).
TEST(OpKernel, GatherNdScattersAndOneHot) {
  auto prog = [](const std::string &decls, const std::string &op, const std::string &args) {
    return decls + "\ny = " + op + "(" + args + ")";
  };
  std::string two = "d = Variable(\"d\", shape=(2, 2), dtype=1)\ni = Variable(\"i\", shape=(2, 2), "
                    "dtype=6)";
  std::vector<double> d{0, 1, 2, 3};
  // ONNX's GatherND example 1: [[0, 0], [1, 1]] picks 0 and 3.
  expectValues(eval(prog(two, "gather_nd", "d, i"), {{"d", tensor({2, 2}, d, kFloat64)},
                                                     {"i", tensor({2, 2}, {0, 0, 1, 1}, kInt64)}}),
               {0, 3});
  // ScatterElements' example: data zeros (3, 3), indices [[1, 0, 2], [0, 2, 1]] on axis 0.
  std::string se = "d = Variable(\"d\", shape=(3, 3), dtype=1)\ni = Variable(\"i\", shape=(2, 3), "
                   "dtype=6)\nu = Variable(\"u\", shape=(2, 3), dtype=1)";
  std::map<std::string, Tensor> in = {
      {"d", tensor({3, 3}, std::vector<double>(9, 0.0), kFloat64)},
      {"i", tensor({2, 3}, {1, 0, 2, 0, 2, 1}, kInt64)},
      {"u", tensor({2, 3}, {1.0, 1.1, 1.2, 2.0, 2.1, 2.2}, kFloat64)}};
  expectValues(eval(prog(se, "scatter_elements", "d, i, u"), in),
               {2.0, 1.1, 0.0, 1.0, 0.0, 2.2, 0.0, 2.1, 1.2});
  // Repeated indices with add: both updates land on (0, 0)… and -1 is the last row.
  in["i"] = tensor({2, 3}, {0, 0, -1, 0, 0, -1}, kInt64);
  expectValues(eval(prog(se, "scatter_elements", "d, i, u, reduction=\"add\""), in),
               {3.0, 3.2, 0, 0, 0, 0, 0, 0, 3.4});
  // ScatterND: rows 2 and 0 of a (4, 2) replaced; max keeps the larger.
  std::string sn = "d = Variable(\"d\", shape=(4, 2), dtype=1)\ni = Variable(\"i\", shape=(2, 1), "
                   "dtype=6)\nu = Variable(\"u\", shape=(2, 2), dtype=1)";
  std::map<std::string, Tensor> nd = {{"d", tensor({4, 2}, {1, 2, 3, 4, 5, 6, 7, 8}, kFloat64)},
                                      {"i", tensor({2, 1}, {2, 0}, kInt64)},
                                      {"u", tensor({2, 2}, {9, 0, 0, 9}, kFloat64)}};
  expectValues(eval(prog(sn, "scatter_nd", "d, i, u"), nd), {0, 9, 3, 4, 9, 0, 7, 8});
  expectValues(eval(prog(sn, "scatter_nd", "d, i, u, reduction=\"max\""), nd),
               {1, 9, 3, 4, 9, 6, 7, 8});
  // one_hot of [1, -1, 3] with depth 3 (3 is out of range: all off), off 0 and on 5.
  std::string oh = "i = Variable(\"i\", shape=(3,), dtype=6)\nv = Variable(\"v\", shape=(2,), "
                   "dtype=1)";
  Tensor t = eval(prog(oh, "one_hot", "i, v, depth=3"),
                  {{"i", tensor({3}, {1, -1, 3}, kInt64)}, {"v", tensor({2}, {0, 5}, kFloat64)}});
  EXPECT_EQ(t.shape, (Shape{3, 3}));
  expectValues(t, {0, 5, 0, 0, 0, 5, 0, 0, 0});
}

// cumsum both ways and topk with ties (the lower index first).
TEST(OpKernel, CumsumAndTopk) {
  std::vector<double> x{1, 2, 3, 4, 5, 6}; // (2, 3)
  expectValues(unary("cumsum", "axis=1", {2, 3}, x), {1, 3, 6, 4, 9, 15});
  expectValues(unary("cumsum", "axis=0", {2, 3}, x), {1, 2, 3, 5, 7, 9});
  expectValues(unary("cumsum", "axis=1, exclusive=True, reverse=True", {2, 3}, x),
               {5, 3, 0, 11, 6, 0});
  std::string tk = "x = Variable(\"x\", shape=(5,), dtype=1)\nt = topk(x, k=3)";
  std::map<std::string, Tensor> in = {{"x", tensor({5}, {2, 7, 2, 9, 7}, kFloat64)}};
  expectValues(eval(tk + "\ny = t[0]", in), {9, 7, 7});
  expectValues(eval(tk + "\ny = t[1]", in), {3, 1, 4});
  std::string small = "x = Variable(\"x\", shape=(5,), dtype=1)\nt = topk(x, k=2, largest=False)";
  expectValues(eval(small + "\ny = t[1]", in), {0, 2});
  std::string err = inferError("x = Variable(\"x\", shape=(3, 4))\ny = topk(x, k=5)");
  EXPECT_NE(err.find("k 5 must be 1 … 4 (the size of axis 1)"), std::string::npos) << err;
}

// batch_matmul by hand: two batches of (2, 2) products, and one lhs broadcast over both.
TEST(OpKernel, BatchMatmul) {
  std::string two = "a = Variable(\"a\", shape=(2, 2, 2), dtype=1)\nb = Variable(\"b\", "
                    "shape=(2, 2, 2), dtype=1)\ny = batch_matmul(a, b)";
  std::vector<double> a{1, 2, 3, 4, 0, 1, 1, 0}, b{5, 6, 7, 8, 1, 2, 3, 4};
  // [[1,2],[3,4]]·[[5,6],[7,8]] = [[19,22],[43,50]]; [[0,1],[1,0]]·[[1,2],[3,4]] swaps rows.
  expectValues(
      eval(two, {{"a", tensor({2, 2, 2}, a, kFloat64)}, {"b", tensor({2, 2, 2}, b, kFloat64)}}),
      {19, 22, 43, 50, 3, 4, 1, 2});
  std::string bc = "a = Variable(\"a\", shape=(2, 2), dtype=1)\nb = Variable(\"b\", shape=(2, 2, "
                   "2), dtype=1)\ny = batch_matmul(a, b, transpose_b=True)";
  // [[1,2],[3,4]]·[[5,7],[6,8]] and ·[[1,3],[2,4]].
  expectValues(eval(bc, {{"a", tensor({2, 2}, {1, 2, 3, 4}, kFloat64)},
                         {"b", tensor({2, 2, 2}, b, kFloat64)}}),
               {17, 23, 39, 53, 5, 11, 11, 25});
  std::string err = inferError("a = Variable(\"a\", shape=(2, 3, 4))\nb = Variable(\"b\", "
                               "shape=(3, 5, 2))\ny = batch_matmul(a, b)");
  EXPECT_NE(err.find("cannot multiply [2, 3, 4] by [3, 5, 2] (4 and 5 columns and rows)"),
            std::string::npos)
      << err;
}

// conv2d's reference kernel against the definition written out here — every output element the
// sum over input channels of its group and kernel taps of x at (oh s - p + k d) times w, taps
// outside the input skipped — over strides 1 to 3, paddings 0 to 2, dilations 1 and 2, one and
// two groups, and inputs narrower than the dilated kernel's reach: the kernel finds each tap's
// columns once per row instead of testing each element, and must find exactly these.
TEST(OpKernel, Conv2dMatchesItsDefinitionOverStridesPadsDilationsAndGroups) {
  auto value = [](int64_t i, int seed) { return std::sin(0.37 * static_cast<double>(i) + seed); };
  int cases = 0;
  for (int64_t s : {1, 2, 3})
    for (int64_t pad : {0, 1, 2})
      for (int64_t d : {1, 2})
        for (int64_t groups : {1, 2})
          for (int64_t width : {3, 7})
            for (int64_t K : {1, 3}) {
              // Six input channels: a 1×1 kernel's four at once, then two alone.
              int64_t C = K == 1 ? 6 : 4, OC = 4, H = 5, W = width;
              int64_t OH = (H + 2 * pad - d * (K - 1) - 1) / s + 1;
              int64_t OW = (W + 2 * pad - d * (K - 1) - 1) / s + 1;
              if (H + 2 * pad < d * (K - 1) + 1 || W + 2 * pad < d * (K - 1) + 1)
                continue; // the dilated kernel reaches past the padded input: refused
              SCOPED_TRACE("stride " + std::to_string(s) + " pad " + std::to_string(pad) +
                           " dilation " + std::to_string(d) + " groups " + std::to_string(groups) +
                           " width " + std::to_string(W) + " kernel " + std::to_string(K));
              Tensor x({1, C, H, W}, kFloat64), w({OC, C / groups, K, K}, kFloat64);
              for (int64_t i = 0; i < x.size(); ++i)
                x.data[i] = value(i, 1);
              for (int64_t i = 0; i < w.size(); ++i)
                w.data[i] = value(i, 2);
              std::string t = "(" + std::to_string(s) + ", " + std::to_string(s) + ")";
              std::string program =
                  "x = Variable(\"x\")\nw = Variable(\"w\")\ny = conv2d(x, w, channels=4, "
                  "kernel_size=(" +
                  std::to_string(K) + ", " + std::to_string(K) + "), use_bias=False, strides=" + t +
                  ", padding=(" + std::to_string(pad) + ", " + std::to_string(pad) +
                  "), dilation=(" + std::to_string(d) + ", " + std::to_string(d) +
                  "), groups=" + std::to_string(groups) + ")";
              Tensor got = eval(program, {{"x", x}, {"w", w}});
              ASSERT_EQ(got.shape, (Shape{1, OC, OH, OW}));
              int64_t icg = C / groups, ocg = OC / groups;
              for (int64_t oc = 0; oc < OC; ++oc)
                for (int64_t oh = 0; oh < OH; ++oh)
                  for (int64_t ow = 0; ow < OW; ++ow) {
                    double want = 0;
                    for (int64_t ic = 0; ic < icg; ++ic)
                      for (int64_t ky = 0; ky < K; ++ky)
                        for (int64_t kx = 0; kx < K; ++kx) {
                          int64_t iy = oh * s - pad + ky * d, ix = ow * s - pad + kx * d;
                          if (iy >= 0 && iy < H && ix >= 0 && ix < W)
                            want += x.data[(((oc / ocg) * icg + ic) * H + iy) * W + ix] *
                                    w.data[((oc * icg + ic) * K + ky) * K + kx];
                        }
                    EXPECT_EQ(got.data[(oc * OH + oh) * OW + ow], want)
                        << "at " << oc << ", " << oh << ", " << ow;
                  }
              ++cases;
            }
  // 144 less, for 3 × 3 kernels, width 3 unpadded at dilation 2 for 3 strides and 2 groupings.
  EXPECT_EQ(cases, 138);
}

// left_shift and right_shift worked by hand on uint8 and uint64, broadcasting a row of shift
// amounts: 3 << 0..9 is 3, 6, 12, …, 192, then 128 (384 wraps), then 0; 200 >> 0..9 halves down
// to 0; a shift by 64 or more is 0. Floats are refused by name.
TEST(OpKernel, ShiftsAreLogicalOnUnsignedIntegers) {
  Tensor x({2, 1}, kUint8), y({1, 10}, kUint8);
  x.data = {3, 200};
  for (int64_t i = 0; i < 10; ++i)
    y.data[i] = static_cast<double>(i);
  std::map<std::string, Tensor> in{{"a", x}, {"b", y}};
  Tensor left = eval("a = Variable(\"a\")\nb = Variable(\"b\")\ny = left_shift(a, b)", in);
  Tensor right = eval("a = Variable(\"a\")\nb = Variable(\"b\")\ny = right_shift(a, b)", in);
  EXPECT_EQ(left.data, (std::vector<double>{3,   6,   12, 24, 48,  96, 192, 128, 0, 0,
                                            200, 144, 32, 64, 128, 0,  0,   0,   0, 0}));
  EXPECT_EQ(right.data, (std::vector<double>{3,   1,   0,  0,  0,  0, 0, 0, 0, 0,
                                             200, 100, 50, 25, 12, 6, 3, 1, 0, 0}));
  Tensor big({1}, kUint64), by({3}, kUint64);
  big.data = {1u << 20};
  by.data = {40, 63, 64};
  Tensor far = eval("a = Variable(\"a\")\nb = Variable(\"b\")\ny = right_shift(a, b)",
                    {{"a", big}, {"b", by}});
  EXPECT_EQ(far.data, (std::vector<double>{0, 0, 0}));
  Tensor up = eval("a = Variable(\"a\")\nb = Variable(\"b\")\ny = left_shift(a, b)",
                   {{"a", big}, {"b", by}});
  EXPECT_EQ(up.data, (std::vector<double>{std::ldexp(1.0, 60), 0, 0}));
  Tensor f({2}, kFloat32);
  try {
    eval("x = Variable(\"x\")\ny = left_shift(x, x)", {{"x", f}});
    ADD_FAILURE() << "a float shift was accepted";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("shifts take unsigned integers"), std::string::npos)
        << e.what();
  }
}

namespace {

// Fills the k-th tensor's element i with value(i, k + 1).
void fillBySeed(std::initializer_list<Tensor *> tensors,
                const std::function<double(int64_t, int)> &value) {
  int seed = 1;
  for (Tensor *t : tensors) {
    for (int64_t i = 0; i < t->size(); ++i)
      t->data[i] = value(i, seed);
    ++seed;
  }
}

} // namespace

// _contrib_dense_pack's reference against its definition: the weight (units / n, k, n) read at
// [j / n, k, j % n], each sum in k's order, then the bias; equal to the bit. A layout that is not
// NC<n>n, or units that are not a multiple of n, are refused by name.
TEST(OpKernel, DensePackReadsItsPackedWeight) {
  auto value = [](int64_t i, int seed) { return std::sin(0.37 * static_cast<double>(i) + seed); };
  // Widths of whole 8-unit blocks (8, 16) are read in place, the others unpacked; rows in whole
  // blocks of 4 and after them.
  for (int64_t n : {1, 2, 4, 8, 16})
    for (const Shape &xs : {Shape{3, 5}, Shape{2, 2, 6}, Shape{9, 5}}) {
      SCOPED_TRACE("NC" + std::to_string(n) + "n " + shapeToTuple(xs));
      int64_t units = n <= 4 ? 4 : 2 * n, K = xs.back();
      Tensor x(xs, kFloat64), w({units / n, K, n}, kFloat64), b({units}, kFloat64);
      fillBySeed({&x, &w, &b}, value);
      Tensor got =
          eval("x = Variable(\"x\")\nw = Variable(\"w\")\nb = Variable(\"b\")\n"
               "y = _contrib_dense_pack(x, w, b, units=" +
                   std::to_string(units) + ", weight_layout=\"NC" + std::to_string(n) + "n\")",
               {{"x", x}, {"w", w}, {"b", b}});
      int64_t rows = x.size() / K;
      Shape want = xs;
      want.back() = units;
      ASSERT_EQ(got.shape, want);
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t j = 0; j < units; ++j) {
          double want = 0;
          for (int64_t k = 0; k < K; ++k)
            want += x.data[r * K + k] * w.data[((j / n) * K + k) * n + j % n];
          EXPECT_EQ(got.data[r * units + j], want + b.data[j]) << "at " << r << ", " << j;
        }
    }
  Tensor x({2, 3}, kFloat64);
  for (const char *layout : {"NC3n", "NCn", "NC0n", "NCHW4c"}) {
    try {
      eval(std::string("x = Variable(\"x\")\ny = _contrib_dense_pack(x, units=4, "
                       "weight_layout=\"") +
               layout + "\")",
           {{"x", x}});
      ADD_FAILURE() << layout << " was accepted";
    } catch (const Error &e) {
      std::string what = e.what();
      EXPECT_NE(what.find(layout), std::string::npos) << what;
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    }
  }
}

// dense's reference kernel against its definition — each output the sum over k, in order, of
// x times w, then the bias — for row and unit counts on both sides of its 4 x 8 blocks (whole
// blocks, ragged units, ragged rows), N-D data, with and without a bias; equal to the bit, since
// the blocks keep each sum's order (whichever vector width the CPU's version of the loop has).
TEST(OpKernel, DenseMatchesItsDefinitionAcrossItsBlocks) {
  auto value = [](int64_t i, int seed) { return std::cos(0.61 * static_cast<double>(i) + seed); };
  for (const Shape &xs : {Shape{1, 3}, Shape{4, 5}, Shape{9, 2}, Shape{2, 3, 7}, Shape{8, 16}})
    for (int64_t units : {1, 4, 6, 9, 16, 17})
      for (bool bias : {false, true}) {
        SCOPED_TRACE(shapeToTuple(xs) + " units " + std::to_string(units) + (bias ? " bias" : ""));
        int64_t K = xs.back();
        Tensor x(xs, kFloat64), w({units, K}, kFloat64), b({units}, kFloat64);
        fillBySeed({&x, &w, &b}, value);
        std::map<std::string, Tensor> in{{"x", x}, {"w", w}};
        std::string args = "x, w";
        if (bias) {
          in["b"] = b;
          args += ", b";
        }
        Tensor got = eval("x = Variable(\"x\")\nw = Variable(\"w\")\nb = Variable(\"b\")\n"
                          "y = dense(" +
                              args + ", units=" + std::to_string(units) +
                              ", use_bias=" + (bias ? "True" : "False") + ")",
                          in);
        int64_t rows = x.size() / K;
        ASSERT_EQ(got.size(), rows * units);
        for (int64_t r = 0; r < rows; ++r)
          for (int64_t u = 0; u < units; ++u) {
            double want = 0;
            for (int64_t k = 0; k < K; ++k)
              want += x.data[r * K + k] * w.data[u * K + k];
            if (bias)
              want += b.data[u];
            EXPECT_EQ(got.data[r * units + u], want) << "at " << r << ", " << u;
          }
      }
}

// qnn.quantize: x / scale rounded half to even, plus the zero point, saturated — by hand:
// -1 / 0.5 = -2, 0.25 / 0.5 = 0.5 → 0, 0.75 / 0.5 = 1.5 → 2, 100 / 0.5 = 200; plus 10 into
// uint8; into int8 without a shift, 200 saturates to 127. Per channel along axis 0: row 1 is
// 3 / 0.5 + 1 = 7 and 4 / 0.5 + 1 = 9. qnn.dequantize takes the steps back.
TEST(OpKernel, QnnQuantizeAndDequantize) {
  std::string q = "x = Variable(\"x\")\ns = Variable(\"s\")\nz = Variable(\"z\")\n";
  std::map<std::string, Tensor> in = {{"x", tensor({4}, {-1, 0.25, 0.75, 100})},
                                      {"s", tensor({1}, {0.5})},
                                      {"z", tensor({1}, {10}, kUint8)}};
  Tensor u8 = eval(q + "y = qnn.quantize(x, s, z, out_dtype=\"uint8\")", in);
  EXPECT_EQ(u8.dtype, kUint8);
  expectValues(u8, {8, 10, 12, 210}, 0);
  in["z"] = tensor({1}, {0}, kInt8);
  expectValues(eval(q + "y = qnn.quantize(x, s, z, out_dtype=\"int8\")", in), {-2, 0, 2, 127}, 0);
  expectValues(eval(q + "y = qnn.quantize(x, s, z, out_dtype=\"int8\", axis=0)",
                    {{"x", tensor({2, 2}, {1, 2, 3, 4})},
                     {"s", tensor({2}, {1, 0.5})},
                     {"z", tensor({2}, {0, 1}, kInt8)}}),
               {1, 2, 7, 9}, 0);
  Tensor back =
      eval(q + "y = qnn.dequantize(x, s, z)", {{"x", tensor({4}, {8, 10, 12, 210}, kUint8)},
                                               {"s", tensor({1}, {0.5})},
                                               {"z", tensor({1}, {10}, kUint8)}});
  EXPECT_EQ(back.dtype, kFloat32);
  expectValues(back, {-1, 0, 1, 100}, 0);
}

// qnn.requantize from scale 0.25 to 1 (zero point 3, int8): the multiplier 0.25 is 2^30 · 2^-32
// in fixed point, so each step is x / 4 rounded with ties upward — 100 → 25, -100 → -25,
// 6 → 1.5 → 2, -6 → -1.5 → -1, 1000 → 250 — plus 3, saturated: 28, -22, 5, 2, 127.
TEST(OpKernel, QnnRequantize) {
  Tensor y = eval("x = Variable(\"x\")\nsi = Variable(\"si\")\nzi = Variable(\"zi\")\n"
                  "so = Variable(\"so\")\nzo = Variable(\"zo\")\n"
                  "y = qnn.requantize(x, si, zi, so, zo, out_dtype=\"int8\")",
                  {{"x", tensor({5}, {100, -100, 6, -6, 1000}, kInt32)},
                   {"si", tensor({1}, {0.25})},
                   {"zi", tensor({1}, {0}, kInt32)},
                   {"so", tensor({1}, {1})},
                   {"zo", tensor({1}, {3}, kInt32)}});
  EXPECT_EQ(y.dtype, kInt8);
  expectValues(y, {28, -22, 5, 2, 127}, 0);
}

// qnn.requantize with compute_dtype float32 (ONNX Runtime's and fbgemm's arithmetic): x · 0.25
// in float32 rounded half to even — 100 → 25, -100 → -25, 6 → 1.5 → 2, -6 → -1.5 → -2 (where
// fixed point rounds upward to -1), 10 → 2.5 → 2 (fixed point: 3), 1000 → 250 — plus 3,
// saturated to int8. A float32 requantize to int32 is refused: its sum is not exact there.
TEST(OpKernel, QnnRequantizeInFloat32) {
  std::string vars = "x = Variable(\"x\")\nsi = Variable(\"si\")\nzi = Variable(\"zi\")\n"
                     "so = Variable(\"so\")\nzo = Variable(\"zo\")\n";
  std::map<std::string, Tensor> in = {{"x", tensor({6}, {100, -100, 6, -6, 10, 1000}, kInt32)},
                                      {"si", tensor({1}, {0.25})},
                                      {"zi", tensor({1}, {0}, kInt32)},
                                      {"so", tensor({1}, {1})},
                                      {"zo", tensor({1}, {3}, kInt32)}};
  Tensor y = eval(
      vars + "y = qnn.requantize(x, si, zi, so, zo, out_dtype=\"int8\", compute_dtype=\"float32\")",
      in);
  EXPECT_EQ(y.dtype, kInt8);
  expectValues(y, {28, -22, 5, 1, 5, 127}, 0);
  expectValues(eval(vars + "y = qnn.requantize(x, si, zi, so, zo, out_dtype=\"int8\")", in),
               {28, -22, 5, 2, 6, 127}, 0);
  try {
    eval(vars + "y = qnn.requantize(x, si, zi, so, zo, out_dtype=\"int32\", "
                "compute_dtype=\"float32\")",
         in);
    FAIL() << "a float32 requantize to int32 was accepted";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("compute_dtype float32 needs an 8-bit out_dtype"),
              std::string::npos)
        << e.what();
  }
}

// qnn.conv2d and qnn.dense accumulate (x - zx) · (w - zw) in int32, the weight's zero point per
// output channel: x - 1 = [0, 1, 2, 3]; the 1×1 weights less their zero points are 2 and 0, so
// channel 0 is 2x and channel 1 nothing, plus the biases 5 and -5.
TEST(OpKernel, QnnConv2dAndDense) {
  std::map<std::string, Tensor> in = {{"x", tensor({1, 1, 2, 2}, {1, 2, 3, 4}, kUint8)},
                                      {"w", tensor({2, 1, 1, 1}, {2, -1}, kInt8)},
                                      {"zx", tensor({1}, {1}, kUint8)},
                                      {"zw", tensor({2}, {0, -1}, kInt8)},
                                      {"b", tensor({2}, {5, -5}, kInt32)}};
  std::string vars = "x = Variable(\"x\")\nw = Variable(\"w\")\nzx = Variable(\"zx\")\n"
                     "zw = Variable(\"zw\")\nb = Variable(\"b\")\n";
  Tensor c = eval(vars + "y = qnn.conv2d(x, w, zx, zw, b, channels=2, kernel_size=(1, 1))", in);
  EXPECT_EQ(c.dtype, kInt32);
  expectValues(c, {5, 7, 9, 11, -5, -5, -5, -5}, 0);
  // dense: x (1, 4) - 1 = [0, 1, 2, 3] against rows [2, 2, 2, 2] and [0, 0, 0, 0] (after their
  // zero points), plus the biases.
  in["x"] = tensor({1, 4}, {1, 2, 3, 4}, kUint8);
  in["w"] = tensor({2, 4}, {2, 2, 2, 2, -1, -1, -1, -1}, kInt8);
  expectValues(eval(vars + "y = qnn.dense(x, w, zx, zw, b, units=2)", in), {17, -5}, 0);
}

// fixed_point_multiply: round(x · m · 2^(s − 31)) with ties upward, m and s broadcast per
// channel: m = 2^30 (one half), s = 0 halves (7 → 3.5 → 4, -7 → -3.5 → -3); m = 3 · 2^29
// (three quarters), s = 2 multiplies by 3 (5 → 15, -5 → -15).
TEST(OpKernel, FixedPointMultiply) {
  Tensor y = eval("x = Variable(\"x\")\nm = Variable(\"m\")\ns = Variable(\"s\")\n"
                  "y = fixed_point_multiply(x, m, s)",
                  {{"x", tensor({2, 2}, {7, -7, 5, -5}, kInt32)},
                   {"m", tensor({2, 1}, {1073741824, 1610612736}, kInt32)},
                   {"s", tensor({2, 1}, {0, 2}, kInt32)}});
  EXPECT_EQ(y.dtype, kInt32);
  expectValues(y, {4, -3, 15, -15}, 0);
}

namespace {

// qnn.add of uint8 steps a (scale 0.5, zero point 10) and b (scale 0.25, zero point 4) in the
// steps of scale 0.5, zero point 2, with `attrs` after its out_dtype.
Tensor qnnAddOfSteps(const Tensor &a, const Tensor &b, const std::string &attrs) {
  return eval("a = Variable(\"a\")\nb = Variable(\"b\")\nsa = Variable(\"sa\")\n"
              "za = Variable(\"za\")\nsb = Variable(\"sb\")\nzb = Variable(\"zb\")\n"
              "so = Variable(\"so\")\nzo = Variable(\"zo\")\n"
              "y = qnn.add(a, b, sa, za, sb, zb, so, zo, out_dtype=\"uint8\"" +
                  attrs + ")",
              {{"a", a},
               {"b", b},
               {"sa", tensor({1}, {0.5})},
               {"za", tensor({1}, {10}, kUint8)},
               {"sb", tensor({1}, {0.25})},
               {"zb", tensor({1}, {4}, kUint8)},
               {"so", tensor({1}, {0.5})},
               {"zo", tensor({1}, {2}, kUint8)}});
}

} // namespace

// qnn.add: lhs (scale 0.5, zero 10) and rhs (scale 0.25, zero 4) in the output's steps (scale
// 0.5, zero 2): the lhs ratio is 1 (steps kept: 0, 10, 20, 0), the rhs ratio a half (0, 2, 4,
// 1 → 0, 1, 2, 0.5), the sums rounded with ties upward (0, 11, 22, 1); plus 2: 2, 13, 24, 3 —
// that is 0 + 0, 5 + 0.5, 10 + 1 and 0 + 0.25 (rounded up to a step).
TEST(OpKernel, QnnAdd) {
  Tensor y =
      qnnAddOfSteps(tensor({4}, {10, 20, 30, 10}, kUint8), tensor({4}, {4, 6, 8, 5}, kUint8), "");
  EXPECT_EQ(y.dtype, kUint8);
  expectValues(y, {2, 13, 24, 3}, 0);
  // The sum is rounded once: 0.25 + 0.25 is one step of 0.5, where rounding each side's half a
  // step upward would make two.
  Tensor once = eval("a = Variable(\"a\")\nb = Variable(\"b\")\ns = Variable(\"s\")\n"
                     "z = Variable(\"z\")\nso = Variable(\"so\")\n"
                     "y = qnn.add(a, b, s, z, s, z, so, z, out_dtype=\"int8\")",
                     {{"a", tensor({2}, {1, -1}, kInt8)},
                      {"b", tensor({2}, {1, -1}, kInt8)},
                      {"s", tensor({1}, {0.25})},
                      {"z", tensor({1}, {0}, kInt8)},
                      {"so", tensor({1}, {0.5})}});
  expectValues(once, {1, -1}, 0);
}

// qnn.add with compute_dtype float32: (a - za) · (sa / so) + (b - zb) · (sb / so) in float32,
// rounded half to even, plus zo. The ratios 1 and 0.5: 0 + 0, 10 + 1, 20 + 2, 0 + 0.5 → 0 (a
// tie to even, where fixed point rounds up to 1), 1 + 0.5 → 2 (a tie to even); plus 2.
TEST(OpKernel, QnnAddInFloat32) {
  Tensor y = qnnAddOfSteps(tensor({5}, {10, 20, 30, 10, 11}, kUint8),
                           tensor({5}, {4, 6, 8, 5, 5}, kUint8), ", compute_dtype=\"float32\"");
  EXPECT_EQ(y.dtype, kUint8);
  expectValues(y, {2, 13, 24, 2, 4}, 0);
}
