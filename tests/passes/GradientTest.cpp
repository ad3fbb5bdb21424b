// GradientTest: every op with a gradient rule checked against central finite differences of the
// reference interpreter (float64), plus the seed's gradient graph structure and errors.
#include "TestUtil.h"

#include "core/Error.h"
#include "core/Printer.h"
#include "passes/Gradient.h"

#include <cmath>
#include <random>

using namespace loupe;
using namespace loupe::test;

namespace {

/// Checks d(sum(y * r))/d(x) for each x in `wrt` against central differences, where `program`
/// defines y from the variables in `shapes` (filled with values from `lo` to `hi`).
void checkGradient(const std::string &program, const std::map<std::string, Shape> &shapes,
                   const std::vector<std::string> &wrt, double lo = -1, double hi = 1) {
  SCOPED_TRACE(program);
  Engine e;
  run(e, program);
  run(e, ":graph y");
  Graph fwd = e.current()->graph;
  std::mt19937 rng(42);
  std::uniform_real_distribution<double> u(lo, hi), ur(-1, 1);
  std::map<std::string, Tensor> in;
  for (const auto &[name, s] : shapes) {
    Tensor t(s, kFloat64);
    for (double &v : t.data)
      v = u(rng);
    in[name] = t;
  }
  Graph fwdInferred = withInputs(fwd, in);
  const IndexedGraph &fidx = fwdInferred.index();
  Tensor r(fwdInferred.attr("shape")->shapes[fidx.entryId(fidx.heads[0])], kFloat64);
  for (double &v : r.data)
    v = ur(rng);
  in["head_grad"] = r;
  std::vector<NodeEntry> xs;
  for (const auto &name : wrt) {
    int nid = fwd.index().findByName(name);
    ASSERT_GE(nid, 0) << name;
    xs.push_back({fwd.index().nodes[nid].node, 0, 0});
  }
  NodeEntry head{makeVariable("head_grad"), 0, 0};
  Graph grad = gradientGraph(fwd.outputs(), xs, {head});
  auto analytic = interpret(withInputs(grad, in), in);
  auto f = [&](const std::map<std::string, Tensor> &vals) {
    Tensor y = interpret(fwdInferred, vals).at(0);
    double s = 0;
    for (size_t i = 0; i < y.data.size(); ++i)
      s += y.data[i] * r.data[i];
    return s;
  };
  const double h = 1e-6;
  for (size_t k = 0; k < wrt.size(); ++k) {
    Tensor &x = in.at(wrt[k]);
    ASSERT_EQ(analytic[k].shape, x.shape) << wrt[k];
    for (size_t i = 0; i < x.data.size(); ++i) {
      double save = x.data[i];
      x.data[i] = save + h;
      double up = f(in);
      x.data[i] = save - h;
      double down = f(in);
      x.data[i] = save;
      double numeric = (up - down) / (2 * h);
      EXPECT_NEAR(analytic[k].data[i], numeric, 1e-5 * (1 + std::fabs(numeric)))
          << "d/d" << wrt[k] << "[" << i << "]";
    }
  }
}

std::string var(const std::string &name) { return name + " = Variable(\"" + name + "\")\n"; }

} // namespace

TEST(Gradient, UnaryOps) {
  for (const char *op : {"sigmoid", "tanh", "exp", "negative", "copy", "zeros_like", "ones_like"})
    checkGradient(var("x") + "y = " + op + "(x)", {{"x", {2, 3}}}, {"x"});
  checkGradient(var("x") + "y = log(x)", {{"x", {2, 3}}}, {"x"}, 0.5, 2);
  checkGradient(var("x") + "y = sqrt(x)", {{"x", {2, 3}}}, {"x"}, 0.5, 2);
  // Away from the kinks (|x| >= 0.1) relu, leaky_relu and clip are differentiable.
  checkGradient(var("x") + "y = relu(x)", {{"x", {2, 3}}}, {"x"}, 0.1, 1);
  checkGradient(var("x") + "y = relu(x)", {{"x", {2, 3}}}, {"x"}, -1, -0.1);
  checkGradient(var("x") + "y = leaky_relu(x, alpha=0.3)", {{"x", {2, 3}}}, {"x"}, -1, -0.1);
  checkGradient(var("x") + "y = clip(x, a_min=-0.5, a_max=0.5)", {{"x", {4, 4}}}, {"x"});
  checkGradient(var("x") + "y = full_like(x, fill_value=3)", {{"x", {2}}}, {"x"});
}

TEST(Gradient, ScalarOps) {
  for (const char *e :
       {"x + 2", "x - 2", "2 - x", "x * 3", "x / 4", "2 / x", "x ** 3", "2 ** x", "-x"})
    checkGradient(var("x") + "y = " + e, {{"x", {2, 3}}}, {"x"}, 0.5, 2);
}

TEST(Gradient, BinaryAndBroadcastOps) {
  std::map<std::string, Shape> same{{"a", {2, 3}}, {"b", {2, 3}}};
  for (const char *op : {"elemwise_add", "elemwise_sub", "elemwise_mul", "greater", "less"})
    checkGradient(var("a") + var("b") + "y = " + op + "(a, b)", same, {"a", "b"});
  checkGradient(var("a") + var("b") + "y = elemwise_div(a, b)", same, {"a", "b"}, 0.5, 2);
  checkGradient(var("a") + var("b") + "y = elemwise_sum(a, b, a)", same, {"a", "b"});
  std::map<std::string, Shape> bc{{"a", {2, 1, 3}}, {"b", {4, 1}}};
  for (const char *e : {"a + b", "a - b", "a * b", "a / b"})
    checkGradient(var("a") + var("b") + "y = " + e, bc, {"a", "b"}, 0.5, 2);
  checkGradient(var("a") + "y = broadcast_to(a, shape=(3,2,4))", {{"a", {1, 2, 1}}}, {"a"});
  checkGradient(var("a") + var("b") + "y = collapse_sum(a, b)", {{"a", {2, 3}}, {"b", {3}}}, {"a"});
}

TEST(Gradient, Reductions) {
  std::map<std::string, Shape> s{{"x", {2, 3, 4}}};
  for (const char *attrs : {"", ", axis=1", ", axis=(0, 2), keepdims=True",
                            ", axis=1, exclude=True", ", keepdims=True"}) {
    for (const char *op : {"sum", "mean", "max", "min"})
      checkGradient(var("x") + "y = " + op + "(x" + attrs + ")", s, {"x"});
  }
}

TEST(Gradient, NnOps) {
  checkGradient(var("x") + "y = softmax(x)", {{"x", {2, 5}}}, {"x"});
  checkGradient(var("x") + "y = softmax(x, axis=0)", {{"x", {3, 2}}}, {"x"});
  checkGradient(var("x") + "y = log_softmax(x)", {{"x", {2, 5}}}, {"x"});
  checkGradient(var("x") + var("w") + var("b") + "y = dense(x, w, b, units=3)",
                {{"x", {2, 4}}, {"w", {3, 4}}, {"b", {3}}}, {"x", "w", "b"});
  checkGradient(var("x") + var("w") + "y = dense(x, w, units=3, use_bias=False)",
                {{"x", {2, 4}}, {"w", {3, 4}}}, {"x", "w"});
  checkGradient(var("a") + var("b") + "y = matmul(a, b)", {{"a", {2, 3}}, {"b", {3, 4}}},
                {"a", "b"});
  checkGradient(var("a") + var("b") + "y = matmul(a, b, transpose_a=True)",
                {{"a", {3, 2}}, {"b", {3, 4}}}, {"a", "b"});
  checkGradient(var("a") + var("b") + "y = matmul(a, b, transpose_b=True)",
                {{"a", {2, 3}}, {"b", {4, 3}}}, {"a", "b"});
  checkGradient(var("a") + var("b") + "y = matmul(a, b, transpose_a=True, transpose_b=True)",
                {{"a", {3, 2}}, {"b", {4, 3}}}, {"a", "b"});
  // batch_matmul: per batch, and with lhs's batch broadcast over rhs's (its gradient summed).
  checkGradient(var("a") + var("b") + "y = batch_matmul(a, b)",
                {{"a", {2, 2, 3}}, {"b", {2, 3, 4}}}, {"a", "b"});
  checkGradient(var("a") + var("b") + "y = batch_matmul(a, b, transpose_a=True, transpose_b=True)",
                {{"a", {1, 3, 2}}, {"b", {2, 2, 4, 3}}}, {"a", "b"});
  checkGradient(var("a") + var("b") + "y = batch_matmul(a, b, transpose_b=True)",
                {{"a", {2, 2, 3}}, {"b", {4, 3}}}, {"a", "b"});
  checkGradient(var("a") + var("b") + "y = batch_matmul(a, b, transpose_a=True)",
                {{"a", {2, 3, 2}}, {"b", {3, 4}}}, {"a", "b"});
}

TEST(Gradient, ConvAndPooling) {
  checkGradient(var("x") + var("w") + var("b") +
                    "y = conv2d(x, w, b, channels=4, kernel_size=(3,3), padding=(1,1))",
                {{"x", {1, 2, 5, 5}}, {"w", {4, 2, 3, 3}}, {"b", {4}}}, {"x", "w", "b"});
  checkGradient(var("x") + var("w") +
                    "y = conv2d(x, w, channels=4, kernel_size=(3,2), strides=(2,1), "
                    "dilation=(1,2), groups=2, use_bias=False)",
                {{"x", {2, 4, 7, 6}}, {"w", {4, 2, 3, 2}}}, {"x", "w"});
  checkGradient(var("x") + "y = max_pool2d(x, pool_size=(2,2), strides=(2,2))",
                {{"x", {1, 2, 4, 4}}}, {"x"});
  checkGradient(var("x") + "y = max_pool2d(x, pool_size=(3,3), strides=(2,2), padding=(1,1))",
                {{"x", {1, 1, 5, 5}}}, {"x"});
  checkGradient(var("x") + "y = avg_pool2d(x, pool_size=(3,3), strides=(2,2), padding=(1,1))",
                {{"x", {1, 2, 5, 5}}}, {"x"});
  checkGradient(var("x") + "y = avg_pool2d(x, pool_size=(3,3), strides=(2,2), padding=(1,1), "
                           "count_include_pad=True, ceil_mode=True)",
                {{"x", {1, 1, 6, 6}}}, {"x"});
  checkGradient(var("x") + "y = global_avg_pool2d(x)", {{"x", {2, 3, 2, 3}}}, {"x"});
  checkGradient(var("x") + "y = global_max_pool2d(x)", {{"x", {2, 3, 2, 3}}}, {"x"});
}

TEST(Gradient, VolumeConvolutionAndPooling) {
  checkGradient(var("x") + var("w") + var("b") +
                    "y = conv3d(x, w, b, channels=3, kernel_size=(2,3,2), padding=(1,1,0))",
                {{"x", {1, 2, 3, 4, 3}}, {"w", {3, 2, 2, 3, 2}}, {"b", {3}}}, {"x", "w", "b"});
  checkGradient(var("x") + var("w") +
                    "y = conv3d(x, w, channels=4, kernel_size=(1,2,2), strides=(1,2,1), "
                    "dilation=(1,1,2), padding=(0,1,0,1,0,1), groups=2, use_bias=False)",
                {{"x", {2, 4, 2, 5, 5}}, {"w", {4, 2, 1, 2, 2}}}, {"x", "w"});
  checkGradient(var("x") + "y = max_pool3d(x, pool_size=(2,3,3), strides=(2,2,2), "
                           "padding=(0,1,1))",
                {{"x", {1, 2, 4, 5, 5}}}, {"x"});
  checkGradient(var("x") + "y = avg_pool3d(x, pool_size=(3,3,3), strides=(2,2,2), "
                           "padding=(1,1,1), count_include_pad=True, ceil_mode=True)",
                {{"x", {1, 1, 4, 4, 5}}}, {"x"});
  checkGradient(var("x") + "y = avg_pool3d(x, pool_size=(2,2,2), padding=(1,0,1,0,1,0))",
                {{"x", {1, 2, 3, 3, 3}}}, {"x"});
}

TEST(Gradient, Transforms) {
  std::map<std::string, Shape> s{{"x", {2, 3, 4}}};
  for (const char *e :
       {"flatten(x)", "reshape(x, shape=(4, -1))", "transpose(x)", "transpose(x, axes=(1, 2, 0))",
        "expand_dims(x, axis=1, num_newaxis=2)", "flip(x, axis=1)"})
    checkGradient(var("x") + "y = " + e, s, {"x"});
  checkGradient(var("x") + "y = squeeze(x)", {{"x", {2, 1, 3}}}, {"x"});
  checkGradient(var("x") + var("t") + "y = reshape_like(x, t)", {{"x", {2, 6}}, {"t", {3, 4}}},
                {"x", "t"});
  checkGradient(var("a") + var("t") + "y = expand_like(a, t, axis=1)",
                {{"a", {2, 4}}, {"t", {2, 3, 4}}}, {"a", "t"});
}

// Ops NNVM left without a gradient, where one exists mathematically.
TEST(Gradient, BeyondNNVM) {
  checkGradient(var("a") + var("b") + var("c") + "y = concatenate(a, b, c, axis=1)",
                {{"a", {2, 1, 3}}, {"b", {2, 2, 3}}, {"c", {2, 3, 3}}}, {"a", "b", "c"});
  checkGradient(var("a") + var("b") + "y = concatenate(a, b, axis=-1)",
                {{"a", {2, 3}}, {"b", {2, 1}}}, {"a", "b"});
  // s[1] is unused: its gradient enters the concatenate as zeros.
  checkGradient(var("x") + "s = split(x, indices_or_sections=3, axis=1)\ny = s[0] * s[2]",
                {{"x", {2, 6, 2}}}, {"x"});
  checkGradient(var("x") + "s = split(x, indices_or_sections=(1, 4), axis=0)\ny = s[1]",
                {{"x", {5, 2}}}, {"x"});
  checkGradient(var("x") + "y = __layout_transform__(x, src_layout=\"NCHW\", "
                           "dst_layout=\"NCHW2c\")",
                {{"x", {1, 4, 2, 3}}}, {"x"});
  checkGradient(var("x") + "y = dropout(x, rate=0.3) * x", {{"x", {2, 3}}}, {"x"});
  checkGradient(var("x") + "y = upsampling(x, scale=2)", {{"x", {1, 2, 2, 3}}}, {"x"});
  checkGradient(var("x") + "y = upsampling(x, scale=2, method=\"BILINEAR\")", {{"x", {1, 2, 2, 3}}},
                {"x"});
  checkGradient(var("x") + "y = upsampling(x, scale=3) * upsampling(x, scale=3)",
                {{"x", {2, 1, 2, 2}}}, {"x"});
  checkGradient(var("x") + "d = \"float64\"\ny = x * const(2.5, shape=(3,), dtype=d) + "
                           "zeros(shape=(3,), dtype=d) + full(shape=(3,), fill_value=1.5, "
                           "dtype=d) * ones(shape=(3,), dtype=d)",
                {{"x", {3}}}, {"x"});
}

TEST(Gradient, BeyondNNVMWithGradientOps) {
  std::string bn = var("x") + var("g") + var("b") + var("m") + var("v");
  std::map<std::string, Shape> bnShapes{
      {"x", {2, 3, 2, 2}}, {"g", {3}}, {"b", {3}}, {"m", {3}}, {"v", {3}}};
  for (const char *flags : {"", ", scale=False, center=False", ", epsilon=0.1"})
    checkGradient(bn + "y = batch_norm(x, g, b, m, v" + flags + ")", bnShapes,
                  {"x", "g", "b", "m", "v"}, 0.5, 1.5);
  checkGradient(bn + "y = batch_norm(x, g, b, m, v, axis=3)",
                {{"x", {2, 2, 2, 3}}, {"g", {3}}, {"b", {3}}, {"m", {3}}, {"v", {3}}},
                {"x", "g", "b", "m", "v"}, 0.5, 1.5);
  checkGradient(var("x") + var("a") + "y = prelu(x, a)", {{"x", {2, 3, 2, 2}}, {"a", {3}}},
                {"x", "a"});
  checkGradient(var("x") + "y = pad(x, pad_width=((0, 0), (1, 2), (2, 0)), pad_value=3.0)",
                {{"x", {2, 3, 2}}}, {"x"});
  for (const char *mode : {"edge", "reflect"})
    checkGradient(var("x") + "y = pad(x, pad_width=((1, 0), (2, 2), (0, 1)), pad_mode=\"" + mode +
                      "\") * pad(x, pad_width=((1, 0), (2, 2), (0, 1)), pad_mode=\"" + mode + "\")",
                  {{"x", {2, 3, 2}}}, {"x"});
  for (const char *e : {"prod(x)", "prod(x, axis=1)", "prod(x, axis=(0, 2), keepdims=True)",
                        "prod(x, axis=1, exclude=True)"})
    checkGradient(var("x") + "y = " + e, {{"x", {2, 3, 2}}}, {"x"}, 0.5, 1.5);
  checkGradient(var("x") + "y = cast(x, dtype=\"float64\") * x", {{"x", {4}}}, {"x"});
  checkGradient(var("x") + "y = cast(cast(x * 10, dtype=\"int32\"), dtype=\"float64\") + x",
                {{"x", {4}}}, {"x"});
  checkGradient(var("x") + var("w") + var("b") +
                    "y = conv2d_transpose(x, w, b, channels=2, kernel_size=(3,3), strides=(2,2), "
                    "padding=(1,1))",
                {{"x", {1, 2, 3, 3}}, {"w", {2, 2, 3, 3}}, {"b", {2}}}, {"x", "w", "b"});
  checkGradient(var("x") + var("w") +
                    "y = conv2d_transpose(x, w, channels=4, kernel_size=(2,1), groups=2, "
                    "dilation=(2,1), use_bias=False)",
                {{"x", {2, 2, 3, 2}}, {"w", {2, 2, 2, 1}}}, {"x", "w"});
  checkGradient(var("x") + var("w") + var("b") +
                    "y = _contrib_conv2d_NCHWc(x, w, b, channels=4, kernel_size=(3,3), "
                    "padding=(1,1), layout=\"NCHW2c\", kernel_layout=\"OIHW2i2o\", "
                    "out_layout=\"NCHW2c\")",
                {{"x", {1, 2, 4, 3, 2}}, {"w", {2, 2, 3, 3, 2, 2}}, {"b", {2, 2}}},
                {"x", "w", "b"});
}

TEST(Gradient, SharedInputsAreSummed) {
  checkGradient(var("x") + "r = relu(x)\ny = r * r + exp(r)", {{"x", {3}}}, {"x"}, 0.1, 1);
  Engine e;
  run(e, var("x") + "r = exp(x)\ny = r + r\n:grad y wrt x");
  std::string ir = printGraphIR(e.current()->graph);
  EXPECT_NE(ir.find("elemwise_sum("), std::string::npos) << ir;
  EXPECT_NE(ir.find("num_args='2'"), std::string::npos) << ir;
}

TEST(Gradient, ErrorsNameTheOp) {
  Engine e;
  run(e, var("x") + "y = _prod_others(x)");
  std::ostringstream out;
  EXPECT_FALSE(e.execute(":grad y wrt x", out, out));
  EXPECT_EQ(out.str(), "error: Operator _prod_others is non-differentiable because it "
                       "didn't register FGradient attribute.\n");
  std::ostringstream out2;
  run(e, "z = Variable(\"z\")\nw = relu(x)");
  EXPECT_FALSE(e.execute(":grad w wrt z", out2, out2));
  EXPECT_NE(out2.str().find("z is not an input of the outputs"), std::string::npos) << out2.str();
}

TEST(Gradient, BlockGradStopsTheFlow) {
  Engine e;
  run(e, var("x") + "y = block_grad(x) * 2\n:grad y wrt x");
  std::string ir = printGraphIR(e.current()->graph);
  EXPECT_NE(ir.find("zeros_like(%x)"), std::string::npos) << ir;
}

// Relay-era ops (issue 13): the smooth ones against finite differences on their domains, the
// piecewise ones away from their kinks.
TEST(Gradient, RelayEraUnaryOps) {
  for (const char *op :
       {"erf",  "sin", "cos",  "tan",  "atan", "sinh", "cosh",  "asinh", "softsign", "silu", "mish",
        "gelu", "elu", "selu", "celu", "abs",  "sign", "floor", "round", "ceil",     "trunc"})
    checkGradient(var("x") + "y = " + op + "(x * 1.7 + 0.05)", {{"x", {2, 3}}}, {"x"}, 0.1, 0.9);
  checkGradient(var("x") + "y = gelu(x, approximate=\"tanh\")", {{"x", {2, 3}}}, {"x"}, -2, 2);
  for (const char *op : {"elu(x, alpha=0.5)", "selu(x)", "celu(x, alpha=2)", "abs(x)", "mish(x)"})
    checkGradient(var("x") + "y = " + op, {{"x", {2, 3}}}, {"x"}, -2, -0.1);
  for (const char *op : {"asin", "acos", "atanh"})
    checkGradient(var("x") + "y = " + std::string(op) + "(x)", {{"x", {5}}}, {"x"}, -0.9, 0.9);
  checkGradient(var("x") + "y = acosh(x)", {{"x", {5}}}, {"x"}, 1.1, 3);
  // hard_swish's three pieces, and thresholded_relu's two.
  for (auto [lo, hi] : {std::pair{-5.0, -3.1}, {-2.9, 2.9}, {3.1, 5.0}})
    checkGradient(var("x") + "y = hard_swish(x)", {{"x", {4}}}, {"x"}, lo, hi);
  for (auto [lo, hi] : {std::pair{-1.0, 0.4}, {0.6, 2.0}})
    checkGradient(var("x") + "y = thresholded_relu(x, alpha=0.5)", {{"x", {4}}}, {"x"}, lo, hi);
}

TEST(Gradient, RelayEraBinaryOps) {
  std::map<std::string, Shape> bc{{"a", {2, 1, 3}}, {"b", {4, 1}}};
  for (const char *op :
       {"broadcast_max", "broadcast_min", "broadcast_pow", "broadcast_mod", "broadcast_floor_mod"})
    checkGradient(var("a") + var("b") + "y = " + op + "(a, b)", bc, {"a", "b"}, 0.5, 2);
  // Comparisons and logic are piecewise constant; where routes the gradient by its condition.
  for (const char *op : {"broadcast_equal", "broadcast_less_equal", "broadcast_greater"})
    checkGradient(var("a") + var("b") + "y = cast(" + op + "(a, b), dtype=\"float64\") * a", bc,
                  {"a", "b"});
  checkGradient(var("c") + var("a") + var("b") + "y = where(broadcast_greater(c, a), a * a, b * 3)",
                {{"c", {2, 1, 3}}, {"a", {3}}, {"b", {4, 1}}}, {"c", "a", "b"});
}

TEST(Gradient, LayerNorm) {
  std::string v = var("x") + var("g") + var("b");
  std::map<std::string, Shape> last{{"x", {2, 3, 4}}, {"g", {4}}, {"b", {4}}};
  checkGradient(v + "y = layer_norm(x, g, b)[0]", last, {"x", "g", "b"});
  std::map<std::string, Shape> two{{"x", {2, 3, 4}}, {"g", {3, 4}}, {"b", {3, 4}}};
  checkGradient(v + "y = layer_norm(x, g, b, axis=1, epsilon=0.1)[0]", two, {"x", "g", "b"});
  checkGradient(v + "y = layer_norm(x, g, b, axis=-2)[0]", two, {"x", "g", "b"});
  // The statistics outputs carry gradient too.
  checkGradient(v + "l = layer_norm(x, g, b)\ny = l[0] + l[1] * l[2]", last, {"x", "g", "b"});
}

TEST(Gradient, GroupAndInstanceNorm) {
  std::string v = var("x") + var("g") + var("b");
  std::map<std::string, Shape> image{{"x", {2, 6, 3, 2}}, {"g", {6}}, {"b", {6}}};
  checkGradient(v + "y = group_norm(x, g, b, num_groups=3)", image, {"x", "g", "b"});
  checkGradient(v + "y = group_norm(x, g, b, num_groups=1, epsilon=0.1)", image, {"x", "g", "b"});
  checkGradient(v + "y = instance_norm(x, g, b)", image, {"x", "g", "b"});
  // Channels on axis 2, after two leading axes; nothing after them.
  std::map<std::string, Shape> last{{"x", {2, 3, 4}}, {"g", {4}}, {"b", {4}}};
  checkGradient(v + "y = group_norm(x, g, b, num_groups=2, axis=2)", last, {"x", "g", "b"});
}
