// LoweringTest: every op with a lowering, alone and inside fused groups, on several shapes and
// both float types: the lowered, scheduled loops (run by the loop-IR interpreter) must give what
// the reference interpreter gives for the same fused function, and so must the same loops
// compiled by LLVM and run through the JIT.
#include "KernelCall.h"
#include "TestUtil.h"

#include "backend/x86/FastSchedules.h"

#include "backend/Codegen.h"
#include "backend/LowerFunction.h"
#include "backend/llvm/HostTarget.h"
#include "core/DType.h"
#include "core/Error.h"
#include "core/FusedModule.h"
#include "core/ops/OpHelpers.h"
#include "repl/TextFile.h"

#include <cmath>
#include <functional>
#include <random>

using namespace loupe;
using namespace loupe::test;

namespace {

struct Case {
  std::string expr;                       ///< y = …, over variables a, b, c
  std::vector<std::vector<Shape>> shapes; ///< shape sets for a, b, c
  double lo = -2, hi = 2;                 ///< input range (log/sqrt need positives)
};

std::string vars(const std::vector<Shape> &shapes, int dtype) {
  std::string s;
  const char *names[] = {"a", "b", "c"};
  for (size_t i = 0; i < shapes.size(); ++i)
    s += std::string(names[i]) + " = Variable(\"" + names[i] +
         "\", shape=" + shapeToTuple(shapes[i]) + ", dtype=" + std::to_string(dtype) + ")\n";
  return s;
}

void expectClose(const std::vector<Tensor> &got, const std::vector<Tensor> &want, double tol,
                 const char *what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t k = 0; k < want.size(); ++k) {
    ASSERT_EQ(got[k].data.size(), want[k].data.size()) << what;
    for (size_t i = 0; i < want[k].data.size(); ++i)
      ASSERT_NEAR(got[k].data[i], want[k].data[i], tol * (1 + std::fabs(want[k].data[i])))
          << what << ": output " << k << " element " << i;
  }
}

// Runs a JIT-compiled function on tensors: arguments go into buffers of their dtypes.
// The one fused function of the current step's module (GraphFuseCompile applied), or null when it
// has another number of them. The step's graph keeps the module alive.
const FusedFunction *onlyFunction(const Engine &e) {
  auto module =
      std::static_pointer_cast<const FusedModule>(e.current()->graph.attr("module")->opaque);
  return module->functions.size() == 1 ? module->functions.begin()->second.get() : nullptr;
}

// A hand-scheduled function `f` of one input and one output (buffer "out"), lowered.
backend::LoweredFunction loweredOf(const backend::Schedule &s, const loop::ComputeRef &in,
                                   const loop::ComputeRef &out) {
  backend::LoweredFunction lf;
  lf.name = "f";
  lf.inputs = {in};
  lf.outputs = {out};
  lf.outputBuffers = {"out"};
  lf.schedule = std::make_shared<backend::Schedule>(s);
  lf.body = backend::lower(s);
  return lf;
}

// Builds, fuses and compiles the program at `optLevel`, then checks every fused function of the
// module, lowered and compiled, on `values(shape, dtype)` per input against the reference
// interpreter within `tol`. At opt level 3 the functions get the fast schedules (and FMA
// contraction).
void checkFunctions(const std::string &program, int optLevel,
                    const std::function<Tensor(const Shape &, int)> &values, double tol) {
  SCOPED_TRACE(program);
  Engine e;
  run(e, program + "\n:graph y\n:set opt_level " + std::to_string(optLevel) +
             "\n:apply InferShape InferType GraphFusePartition GraphFuseCompile");
  const Graph &g = e.current()->graph;
  auto module = std::static_pointer_cast<const FusedModule>(g.attr("module")->opaque);
  std::vector<backend::LoweredFunction> lowered;
  for (const auto &[name, f] : module->functions)
    lowered.push_back(backend::lowerFunction(*f));
  auto compiled = backend::CompiledModule::compile(lowered);
  size_t fi = 0;
  for (const auto &[name, f] : module->functions) {
    SCOPED_TRACE(name);
    const backend::LoweredFunction &lf = lowered[fi++];
    std::map<std::string, Tensor> byName;
    std::vector<Tensor> args;
    for (const auto &p : lf.inputs) {
      Tensor t = values(p->shape, p->dtype);
      byName[p->name] = t;
      args.push_back(t);
    }
    std::vector<Tensor> want = interpret(f->body, byName);
    expectClose(backend::evalLowered(lf, args), want, tol, "loop interpreter");
    expectClose(callCompiled(*compiled, lf.name, args, lf.outputs), want, tol, "LLVM");
  }
}

// checkFunctions on values uniform in [lo, hi) (rounded to each input's dtype), within a
// tolerance for `dtype`: float32's and float64's rounding, integers exact.
void checkLowering(const std::string &program, double lo, double hi, int dtype, int optLevel = 2) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(lo, hi);
  // bfloat16 rounds each op's result as the reference does, but an op the kernel computes in
  // float32 (exp through expf) may round to the neighbouring bfloat16: one step, up to 2^-7 of the
  // value.
  double tol = dtype == kFloat32    ? 1e-5
               : dtype == kFloat64  ? 1e-12
               : dtype == kBFloat16 ? 0x1p-7
                                    : 0;
  checkFunctions(
      program, optLevel,
      [&](const Shape &shape, int dt) {
        Tensor t(shape, dt);
        for (double &v : t.data)
          v = roundToDType(u(rng), dt);
        return t;
      },
      tol);
}

const std::vector<Shape> kOddShapes = {{1},        {7},           {3, 5},
                                       {2, 3, 17}, {1, 4, 3, 19}, {2, 2, 1, 3, 5}};

std::vector<std::vector<Shape>> same(int arity) {
  std::vector<std::vector<Shape>> out;
  for (const Shape &s : kOddShapes)
    out.push_back(std::vector<Shape>(arity, s));
  return out;
}

std::vector<Case> cases() {
  std::vector<Case> c;
  for (const char *op : {"relu", "sigmoid", "tanh", "exp", "negative", "copy", "block_grad",
                         "zeros_like", "ones_like"})
    c.push_back({std::string("y = ") + op + "(a)", same(1)});
  c.push_back({"y = log(a)", same(1), 0.1, 3});
  c.push_back({"y = sqrt(a)", same(1), 0.1, 3});
  c.push_back({"y = leaky_relu(a, alpha=0.1)", same(1)});
  c.push_back({"y = clip(a, a_min=-0.5, a_max=0.7)", same(1)});
  c.push_back({"y = full_like(a, fill_value=2.5)", same(1)});
  for (const char *op :
       {"__add_scalar__", "__sub_scalar__", "__rsub_scalar__", "__mul_scalar__", "__div_scalar__"})
    c.push_back({std::string("y = ") + op + "(a, scalar=1.5)", same(1)});
  c.push_back({"y = __rdiv_scalar__(a, scalar=1.5)", same(1), 0.5, 2});
  c.push_back({"y = __pow_scalar__(a, scalar=1.5)", same(1), 0.5, 2});
  c.push_back({"y = __rpow_scalar__(a, scalar=1.5)", same(1)});
  for (const char *op : {"elemwise_add", "elemwise_sub", "elemwise_mul", "greater", "less"})
    c.push_back({std::string("y = ") + op + "(a, b)", same(2)});
  c.push_back({"y = elemwise_div(a, b)", same(2), 0.5, 2});
  std::vector<std::vector<Shape>> bshapes = {
      {{1}, {5}}, {{3, 1}, {1, 4}}, {{2, 3, 17}, {17}}, {{1, 4, 3, 19}, {4, 1, 1}}, {{5}, {5}}};
  for (const char *op : {"broadcast_add", "broadcast_sub", "broadcast_mul"})
    c.push_back({std::string("y = ") + op + "(a, b)", bshapes});
  c.push_back({"y = broadcast_div(a, b)", bshapes, 0.5, 2});
  // Relay-era ops (issue 13): math and activations, broadcasting arithmetic, comparisons with
  // bool results, logic on them and where.
  for (const char *op : {"abs",  "sign", "floor", "ceil", "round", "trunc", "erf",      "sin",
                         "cos",  "tan",  "atan",  "sinh", "cosh",  "asinh", "softsign", "silu",
                         "mish", "elu",  "selu",  "celu", "isnan", "isinf"})
    c.push_back({std::string("y = ") + op + "(a)", same(1), -3, 3});
  c.push_back({"y = hard_swish(a)", same(1), -5, 5});
  c.push_back({"y = gelu(a) + gelu(a, approximate=\"tanh\")", same(1), -3, 3});
  c.push_back({"y = thresholded_relu(a, alpha=0.5)", same(1)});
  c.push_back({"y = asin(a) + acos(a) + atanh(a)", same(1), -0.9, 0.9});
  c.push_back({"y = acosh(a)", same(1), 1.1, 3});
  for (const char *op : {"broadcast_max", "broadcast_min", "broadcast_mod", "broadcast_floor_mod",
                         "broadcast_equal", "broadcast_not_equal", "broadcast_greater",
                         "broadcast_less", "broadcast_greater_equal", "broadcast_less_equal"})
    c.push_back({std::string("y = ") + op + "(a, b)", bshapes});
  c.push_back({"y = broadcast_pow(a, b)", bshapes, 0.5, 2});
  c.push_back({"y = broadcast_equal(floor(a), floor(b))", bshapes}); // some equal elements
  for (const char *op : {"logical_and", "logical_or", "logical_xor"})
    c.push_back({std::string("y = ") + op + "(broadcast_greater(a, b), broadcast_less(a * 0.5, b))",
                 bshapes});
  c.push_back({"y = logical_not(broadcast_less(a, b))", bshapes});
  // argmax/argmin along each axis kind, ties included (floor makes equal elements).
  c.push_back({"y = argmax(floor(a), axis=-1)", {{{7}}, {{3, 5}}, {{2, 3, 17}}}});
  c.push_back({"y = argmax(a, axis=0, keepdims=True, select_last_index=True)", {{{3, 5}}}});
  c.push_back({"y = argmin(floor(a), axis=1, select_last_index=True)", {{{2, 3, 17}}}});
  c.push_back({"y = argmin(a, axis=1)", {{{1, 4, 3, 19}}}});
  c.push_back({"y = shape_of(a, start=1)", {{{2, 3, 17}}, {{1, 4, 3, 19}}}});
  // take and gather_elements, indices made from b (negative ones wrapped, or clipped).
  c.push_back(
      {"y = take(a, floor(b * 2), axis=1, mode=\"wrap\")", {{{3, 5}, {4}}, {{2, 3, 17}, {2, 2}}}});
  c.push_back({"y = take(a, floor(b * 4), axis=-1)", {{{3, 5}, {7}}}});
  c.push_back({"y = gather_elements(a, floor(b * 2), axis=0, mode=\"wrap\")",
               {{{3, 5}, {2, 5}}, {{2, 3, 17}, {4, 2, 17}}}});
  c.push_back({"y = strided_slice(a, begin=(1, -2), end=(100, -100), strides=(2, -3))",
               {{{3, 5}}, {{2, 3, 17}}, {{2, 4, 3, 19}}}});
  c.push_back({"y = tile(a, reps=(2, 1, 3))", {{{3, 5}}, {{2, 3, 17}}}});
  // gather_nd (a batch axis too), the scatters (every reduction; repeated indices), one_hot.
  c.push_back({"y = gather_nd(a, floor(b * 2))", {{{3, 5}, {4, 2}}, {{2, 3, 17}, {2, 2, 1}}}});
  c.push_back({"y = gather_nd(a, floor(b * 2), batch_dims=1)", {{{2, 3, 17}, {2, 4, 1}}}});
  for (const char *r : {"none", "add", "mul", "max", "min"}) {
    std::string red = std::string(", reduction=\"") + r + "\"";
    c.push_back({"y = scatter_elements(a, floor(b * 3), c, axis=1" + red + ")",
                 {{{3, 5}, {2, 4}, {2, 4}}, {{2, 3, 17}, {2, 6, 17}, {2, 6, 17}}}});
    c.push_back({"y = scatter_nd(a, floor(b * 2), c" + red + ")",
                 {{{4, 5}, {3, 1}, {3, 5}}, {{2, 3, 17}, {2, 2, 2}, {2, 2, 17}}}});
  }
  c.push_back({"y = one_hot(floor(a * 2), b, depth=4, axis=1)", {{{3, 5}, {2}}, {{7}, {2}}}});
  // cumsum both ways, topk's values and indices.
  // batch_matmul: equal batches, broadcast ones, transposes.
  c.push_back({"y = batch_matmul(a, b)", {{{2, 3, 5}, {2, 5, 7}}, {{3, 5}, {4, 1, 5, 2}}}});
  c.push_back(
      {"y = batch_matmul(a, b, transpose_a=True, transpose_b=True)", {{{1, 5, 3}, {2, 7, 5}}}});
  // Long enough for opt level 3's tiles (k of 40 in vectors of partial sums): rows and outputs
  // not multiples of the tile, a broadcast batch, each operand's k first or last, a scale after.
  c.push_back(
      {"y = batch_matmul(a, b) * 0.5", {{{2, 6, 40}, {2, 40, 7}}, {{2, 3, 5, 40}, {1, 40, 4}}}});
  c.push_back(
      {"y = batch_matmul(a, b, transpose_a=True, transpose_b=True)", {{{3, 40, 5}, {3, 2, 40}}}});
  // Wide enough for opt level 3's register tiles (rows x vectors of columns): 13 rows and 70
  // columns, neither a multiple of the tile, a broadcast batch, rhs as (n, k).
  c.push_back(
      {"y = batch_matmul(a, b) * 0.5", {{{2, 13, 40}, {2, 40, 70}}, {{2, 3, 13, 9}, {9, 70}}}});
  c.push_back({"y = batch_matmul(a, b, transpose_b=True)", {{{3, 13, 20}, {1, 70, 20}}}});
  c.push_back({"y = cumsum(a, axis=1)", {{{3, 5}}, {{2, 3, 17}}}});
  c.push_back({"y = cumsum(a, axis=-1, exclusive=True, reverse=True)", {{{7}}, {{2, 3, 17}}}});
  c.push_back({"y = topk(a, k=3, axis=1)[0]", {{{3, 5}}, {{2, 3, 17}}}});
  c.push_back({"y = topk(a, k=2, largest=False)[1]", {{{7}}, {{2, 3, 17}}}});
  // layer_norm over the last axis and the last two, its three outputs used.
  c.push_back({"l = layer_norm(a, b, c)\ny = l[0] + l[1] * l[2]",
               {{{3, 17}, {17}, {17}}, {{2, 3, 17}, {17}, {17}}}});
  c.push_back(
      {"y = layer_norm(a, b, c, axis=-2, epsilon=0.01)[0]", {{{2, 3, 17}, {3, 17}, {3, 17}}}});
  c.push_back(
      {"y = group_norm(a, b, c, num_groups=3)", {{{2, 6, 5, 3}, {6}, {6}}, {{1, 6}, {6}, {6}}}});
  c.push_back(
      {"y = group_norm(a, b, c, num_groups=2, axis=2, epsilon=0.01)", {{{2, 3, 4}, {4}, {4}}}});
  c.push_back(
      {"y = instance_norm(a, b, c)", {{{2, 3, 17}, {3}, {3}}, {{1, 5, 2, 3, 4}, {5}, {5}}}});
  c.push_back({"y = where(broadcast_greater(a, b), a, b * 2)", bshapes});
  // Reductions over every axis, some axes, with keepdims and exclude.
  std::vector<std::vector<Shape>> rshapes = {{{7}}, {{3, 5}}, {{2, 3, 17}}, {{1, 4, 3, 19}}};
  for (const char *op : {"sum", "max", "min", "mean", "prod"}) {
    c.push_back({std::string("y = ") + op + "(a)", rshapes, 0.5, 1.5});
    c.push_back({std::string("y = ") + op + "(a, axis=0, keepdims=True)", rshapes, 0.5, 1.5});
    c.push_back({std::string("y = ") + op + "(a, axis=0, exclude=True)", rshapes, 0.5, 1.5});
  }
  c.push_back({"y = flatten(a)", {{{1, 4, 3, 19}}, {{2, 3, 17}}, {{3, 5}}}});
  c.push_back({"y = reshape(a, shape=(-1,))", {{{1, 4, 3, 19}}, {{2, 3, 17}}}});
  c.push_back({"y = reshape(a, shape=(3, -1))", {{{2, 3, 17}}, {{3, 5}}}});
  c.push_back({"y = pad(a, pad_width=((0, 0), (1, 2), (0, 3)), pad_value=0.5)",
               {{{2, 3, 17}}, {{1, 1, 1}}}});
  c.push_back({"y = pad(a, pad_width=((0, 0), (2, 2), (1, 3)), pad_mode=\"reflect\")",
               {{{2, 3, 17}}, {{1, 5, 4}}}});
  c.push_back({"y = pad(a, pad_width=((1, 0), (1, 2), (0, 3)), pad_mode=\"edge\")",
               {{{2, 3, 17}}, {{1, 1, 1}}}});
  // conv2d: odd widths (the W split by 16 leaves a tail), size-1 sizes, padding, stride,
  // dilation, groups, with and without bias.
  std::vector<std::vector<Shape>> img = {{{1, 3, 7, 9}}, {{2, 2, 5, 17}}, {{1, 1, 3, 33}}};
  c.push_back({"y = conv2d(a, channels=4, kernel_size=(3,3))", img});
  c.push_back({"y = conv2d(a, channels=3, kernel_size=(3,3), padding=(1,2), use_bias=False)", img});
  c.push_back({"y = conv2d(a, channels=2, kernel_size=(1,3), strides=(2,3), dilation=(1,2))", img});
  c.push_back({"y = conv2d(a, channels=4, kernel_size=(1,1), groups=2)",
               {{{1, 4, 3, 5}}, {{2, 2, 1, 19}}}});
  // Depthwise with rows longer than 64: at opt 3 the padded rows and the output columns are
  // vectors with the last one shifted back, the padding a masked select.
  c.push_back({"y = relu(conv2d(a, channels=4, kernel_size=(3,3), padding=(1,1), groups=4))",
               {{{1, 4, 3, 70}}, {{1, 4, 2, 9}}}});
  c.push_back(
      {"y = conv2d(a, channels=2, kernel_size=(3,3), strides=(2,2), groups=2)", {{{1, 2, 5, 71}}}});
  c.push_back({"y = dense(a, units=5)", {{{3, 7}}, {{1, 16}}, {{2, 1}}}});
  c.push_back({"y = dense(a, units=3, use_bias=False)", {{{4, 5}}, {{1, 8}}}});
  c.push_back({"y = relu(dense(a, units=9)) * 2", {{{3, 13}}, {{1, 4}}}});
  std::vector<std::vector<Shape>> nchw = {{{1, 3, 7, 9}}, {{2, 2, 5, 17}}, {{1, 1, 3, 3}}};
  c.push_back({"y = softmax(a)", {{{3, 5}}, {{2, 3, 17}}, {{7}}}});
  c.push_back({"y = softmax(a, axis=0)", {{{3, 5}}, {{2, 3, 17}}}});
  c.push_back({"y = log_softmax(a, axis=1)", {{{3, 5}}, {{2, 3, 17}}}});
  c.push_back({"y = max_pool2d(a, pool_size=(2,2), strides=(2,2))", nchw});
  c.push_back(
      {"y = max_pool2d(a, pool_size=(3,3), strides=(2,2), padding=(1,1), ceil_mode=True)", nchw});
  c.push_back({"y = avg_pool2d(a, pool_size=(3,2), strides=(1,2), padding=(1,1))", nchw});
  c.push_back({"y = avg_pool2d(a, pool_size=(3,3), strides=(2,2), padding=(1,1), "
               "count_include_pad=True, ceil_mode=True)",
               nchw});
  c.push_back({"y = global_max_pool2d(a)", nchw});
  c.push_back({"y = global_avg_pool2d(a)", nchw});
  std::vector<std::vector<Shape>> ncdhw = {{{1, 2, 5, 6, 7}}, {{2, 3, 3, 4, 17}}};
  c.push_back({"y = conv3d(a, channels=4, kernel_size=(3,2,3), padding=(1,0,1))", ncdhw});
  c.push_back({"y = relu(conv3d(a, channels=2, kernel_size=(2,3,1), strides=(2,1,2), "
               "dilation=(1,2,1), padding=(0,1,1,1,0,0), use_bias=False))",
               ncdhw});
  c.push_back({"y = conv3d(a, channels=4, kernel_size=(1,3,3), groups=2)", {{{1, 2, 3, 5, 9}}}});
  c.push_back({"y = max_pool3d(a, pool_size=(2,2,2), strides=(2,2,2))", ncdhw});
  c.push_back({"y = max_pool3d(a, pool_size=(3,3,3), strides=(2,2,2), padding=(1,1,1), "
               "ceil_mode=True)",
               ncdhw});
  c.push_back(
      {"y = avg_pool3d(a, pool_size=(2,3,2), strides=(1,2,1), padding=(1,1,0,0,1,1))", ncdhw});
  c.push_back({"y = avg_pool3d(a, pool_size=(3,3,3), strides=(2,2,2), padding=(1,1,1), "
               "count_include_pad=True, ceil_mode=True)",
               ncdhw});
  c.push_back({"y = upsampling(a, scale=2)", nchw});
  c.push_back({"y = resize2d(a, size=(9, 4))", nchw});
  c.push_back({"y = resize2d(a, size=(3, 11), method=\"nearest_neighbor\", "
               "coordinate_transformation_mode=\"asymmetric\", "
               "rounding_method=\"round_prefer_ceil\", scale_w=1.6)",
               nchw});
  c.push_back(
      {"y = resize2d(a, size=(8, 8), coordinate_transformation_mode=\"align_corners\")", nchw});
  c.push_back({"y = resize2d(a, size=(9, 4), method=\"cubic\")", nchw});
  c.push_back({"y = resize2d(a, size=(2, 11), method=\"cubic\", cubic_alpha=-0.75, "
               "cubic_exclude=1, coordinate_transformation_mode=\"asymmetric\")",
               nchw});
  c.push_back({"y = resize2d(a, size=(2, 3), method=\"nearest_neighbor\", "
               "coordinate_transformation_mode=\"pytorch_half_pixel\", rounding_method=\"ceil\")",
               nchw});
  c.push_back({"y = matmul(a, b)", {{{3, 4}, {4, 5}}, {{1, 7}, {7, 1}}}});
  c.push_back({"y = matmul(a, b, transpose_a=True, transpose_b=True)", {{{4, 3}, {5, 4}}}});
  c.push_back({"y = prelu(a, b)", {{{1, 3, 7, 9}, {3}}, {{2, 2, 5, 17}, {2}}}});
  c.push_back({"y = dropout(a, rate=0.3)", same(1)});
  c.push_back({"y = batch_norm(a, b, b, b, c, epsilon=0.01)",
               {{{2, 3, 4, 5}, {3}, {3}}, {{1, 4, 3, 19}, {4}, {4}}},
               0.5,
               2});
  c.push_back({"y = transpose(a)", {{{3, 5}}, {{2, 3, 17}}, {{1, 4, 3, 19}}}});
  c.push_back({"y = transpose(a, axes=(1, 2, 0))", {{{2, 3, 17}}}});
  c.push_back({"y = expand_dims(a, axis=1, num_newaxis=2)", {{{3, 5}}, {{7}}}});
  c.push_back({"y = squeeze(a)", {{{1, 4, 1, 19}}, {{3, 1}}}});
  c.push_back({"y = reshape_like(a, b)", {{{3, 4}, {2, 6}}, {{1, 4, 3, 19}, {12, 19}}}});
  c.push_back({"y = flip(a, axis=1)", {{{3, 5}}, {{2, 3, 17}}}});
  c.push_back({"y = concatenate(a, b, c, axis=1)", {{{2, 1, 3}, {2, 4, 3}, {2, 2, 3}}}});
  c.push_back({"y = concatenate(a, b, axis=0)", {{{3, 5}, {1, 5}}, {{7}, {9}}}});
  c.push_back({"y = split(a, indices_or_sections=(1, 3), axis=1)", {{{2, 5, 3}}, {{1, 4, 3, 19}}}});
  c.push_back({"y = split(a, indices_or_sections=3, axis=0)", {{{6, 5}}, {{3}}}});
  c.push_back({"y = __layout_transform__(a, src_layout=\"NCHW\", dst_layout=\"NCHW2c\")",
               {{{1, 4, 3, 5}}, {{2, 6, 1, 17}}}});
  c.push_back({"y = __layout_transform__(a, src_layout=\"NCHW4c\", dst_layout=\"NCHW2c\")",
               {{{1, 2, 3, 5, 4}}}});
  c.push_back(
      {"y = __layout_transform__(a, src_layout=\"NCHW\", dst_layout=\"NHWC\")", {{{2, 3, 4, 5}}}});
  c.push_back(
      {"y = a + zeros(shape=(3, 5), dtype=dt) + ones(shape=(3, 5), dtype=dt)"
       " * full(shape=(3, 5), fill_value=2.5, dtype=dt) + const(0.5, shape=(3, 5), dtype=dt)",
       {{{3, 5}}}});
  c.push_back({"y = elemwise_sum(a, b, c)", same(3)});
  c.push_back({"y = cast(a * 4, dtype=\"int32\")", same(1)});
  // Bit shifts of unsigned integers, broadcasting: uint8 by 0-12 bits (past its width: a left
  // shift wraps to 0, a right one gives 0) and uint32 by 0-40 bits.
  c.push_back({"s = left_shift(cast(a * 4 + 9, dtype=\"uint8\"), cast(b * 3 + 6, "
               "dtype=\"uint8\"))\ny = cast(s, dtype=dt)",
               {{{2, 5}, {5}}, {{3, 1}, {1, 4}}}});
  c.push_back({"s = right_shift(cast(a * 40 + 90, dtype=\"uint32\"), cast(b * 10 + 20, "
               "dtype=\"uint32\"))\ny = cast(s, dtype=dt)",
               {{{2, 5}, {5}}}});
  c.push_back({"y = broadcast_to(a, shape=(4, 3, 5))", {{{4, 1, 5}}, {{1, 3, 1}}}});
  c.push_back({"y = conv2d_transpose(a, channels=3, kernel_size=(3,3), strides=(2,2), "
               "padding=(1,1))",
               img});
  c.push_back({"y = conv2d_transpose(a, channels=4, kernel_size=(2,1), groups=2, "
               "dilation=(2,1), use_bias=False)",
               {{{1, 2, 3, 5}}, {{2, 4, 1, 17}}}});
  c.push_back({"y = _contrib_conv2d_NCHWc(a, channels=8, kernel_size=(3,3), padding=(1,1), "
               "layout=\"NCHW2c\", kernel_layout=\"OIHW2i4o\", out_layout=\"NCHW4c\")",
               {{{1, 2, 5, 9, 2}}, {{2, 1, 3, 17, 2}}}});
  c.push_back({"y = _contrib_conv2d_NCHWc(a, channels=4, kernel_size=(1,1), strides=(2,2), "
               "use_bias=False, layout=\"NCHW3c\", kernel_layout=\"OIHW3i2o\", "
               "out_layout=\"NCHW2c\")",
               {{{1, 1, 5, 7, 3}}}});
  // The register-tiled schedule of opt level 3 (16-lane blocks as AlterOpLayout picks them on
  // AVX-512): widths whose reg_n is the width, a divisor or shifted tiles (29 is prime), two
  // input chunks, width 7 with two output channel blocks per tile (oc_tiles 2),
  // stride 2 with dilation, a 1x1, and the epilogue of bias, relu and a residual add.
  const std::string blocked16 =
      "layout=\"NCHW16c\", kernel_layout=\"OIHW16i16o\", out_layout=\"NCHW16c\"";
  c.push_back(
      {"y = relu(_contrib_conv2d_NCHWc(a, channels=32, kernel_size=(3,3), "
       "padding=(1,1), " +
           blocked16 + "))",
       {{{1, 2, 5, 13, 16}}, {{1, 1, 3, 29, 16}}, {{2, 1, 4, 12, 16}}, {{1, 2, 3, 7, 16}}}});
  // Four output channel blocks: a 4x6 register tile at width 12 (oc_tiles 4), 2x7 at 14.
  c.push_back({"y = relu(_contrib_conv2d_NCHWc(a, channels=64, kernel_size=(3,3), "
               "padding=(1,1), " +
                   blocked16 + "))",
               {{{1, 1, 4, 12, 16}}}});
  c.push_back({"y = _contrib_conv2d_NCHWc(a, channels=64, kernel_size=(1,1), " + blocked16 + ")",
               {{{1, 2, 3, 14, 16}}}});
  // A narrow 1x1 summed over its pixels: with 8-lane blocks on AVX2, a 4 x 3 tile of pixels
  // across the rows of a 7x7 image, the last tile shifted back (49 = 16 x 3 + 1).
  c.push_back({"y = relu(_contrib_conv2d_NCHWc(a, channels=32, kernel_size=(1,1), "
               "layout=\"NCHW8c\", kernel_layout=\"OIHW8i8o\", out_layout=\"NCHW8c\"))",
               {{{1, 2, 7, 7, 8}}}});
  // 5 chunks of 8 channels over pixels: 3 blocks per tile, the last tile of blocks shifted back.
  c.push_back({"y = relu(_contrib_conv2d_NCHWc(a, channels=40, kernel_size=(1,1), "
               "layout=\"NCHW8c\", kernel_layout=\"OIHW8i8o\", out_layout=\"NCHW8c\"))",
               {{{1, 2, 7, 7, 8}}}});
  // A strided 1x1 reads its input through a unit-stride copy (data_unit_stride).
  c.push_back({"y = relu(_contrib_conv2d_NCHWc(a, channels=32, kernel_size=(1,1), strides=(2,3), " +
                   blocked16 + "))",
               {{{1, 2, 9, 13, 16}}}});
  c.push_back({"y = _contrib_conv2d_NCHWc(a, channels=16, kernel_size=(3,3), strides=(2,2), "
               "dilation=(2,2), padding=(2,2), layout=\"NCHW8c\", kernel_layout=\"OIHW8i16o\", "
               "out_layout=\"NCHW16c\")",
               {{{1, 2, 11, 29, 8}}}});
  // The depthwise convolution in blocks (opt level 3 for MobileNet): widths whose register tile
  // is the width, a divisor, or shifted tiles (29 is prime), stride 2 with padding, dilation,
  // 8-lane blocks, and the fused epilogue of bias and relu.
  c.push_back({"y = relu(_contrib_depthwise_conv2d_NCHWc(a, channels=32, groups=32, "
               "kernel_size=(3,3), padding=(1,1), layout=\"NCHW16c\", "
               "kernel_layout=\"OIHW1i16o\", out_layout=\"NCHW16c\"))",
               {{{1, 2, 5, 14, 16}}, {{1, 2, 3, 29, 16}}, {{2, 2, 4, 7, 16}}}});
  c.push_back({"y = _contrib_depthwise_conv2d_NCHWc(a, channels=16, groups=16, kernel_size=(3,3), "
               "strides=(2,2), padding=(1,1), dilation=(1,2), use_bias=False, "
               "layout=\"NCHW8c\", kernel_layout=\"OIHW1i8o\", out_layout=\"NCHW8c\")",
               {{{1, 2, 9, 13, 8}}}});
  // Pools on blocked data (opt level 3 runs them on NCHW16c), padded, strided, both counts.
  c.push_back({"y = max_pool2d(a, pool_size=(3,3), strides=(2,2), padding=(1,1), "
               "layout=\"NCHW16c\")",
               {{{1, 2, 7, 9, 16}}}});
  c.push_back({"y = avg_pool2d(a, pool_size=(2,3), padding=(1,1), count_include_pad=True, "
               "layout=\"NCHW8c\")",
               {{{1, 1, 5, 6, 8}}}});
  c.push_back({"y = global_avg_pool2d(a, layout=\"NCHW8c\")", {{{2, 2, 3, 5, 8}}}});
  c.push_back({"y = global_max_pool2d(a, layout=\"NCHW4c\")", {{{1, 3, 4, 4, 4}}}});
  // Dense with a reduction long enough for opt level 3's rfactor (a multiple of 16 lanes, and
  // 100 with a partial last vector), batch 1 and 2, with its bias.
  c.push_back({"y = relu(dense(a, units=7))", {{{1, 160}}, {{2, 100}}}});
  // Opt level 3 holds blocks of outputs' partial sums together: 10 units in two blocks of 5,
  // 64 in four of 16, and 37 (prime) in blocks of 8 with the last one shifted back.
  c.push_back({"y = dense(a, units=10)", {{{1, 160}}}});
  c.push_back({"y = dense(a, units=64)", {{{1, 80}}}});
  c.push_back({"y = dense(a, units=37)", {{{2, 100}}}});
  // Several rows (an N-D input as rows): tiles of rows x outputs, 10 rows in tiles of 4 and 7
  // outputs in tiles of 3 (AVX2) or 6, the last of each shifted back; with its bias and a gelu.
  c.push_back({"y = gelu(dense(a, units=7))", {{{2, 5, 40}}, {{4, 33}}}});
  // Dense over a packed weight (what AlterOpLayout makes of a dense over rows): rows padded to
  // whole register tiles (20 and 13 rows), N-D data, a bias and a gelu after it; 1024 steps of
  // k in blocks (the panel of 64 columns takes an eighth of the L2 at 256 or 512 steps); a k of
  // 37 in one block; a pack of 4 lanes, not whole vectors, which the fast schedule leaves to the
  // default one.
  c.push_back({"y = _contrib_dense_pack(a, units=32, use_bias=False, weight_layout=\"NC16n\")",
               {{{20, 96}}, {{3, 7, 40}}}});
  c.push_back({"y = gelu(_contrib_dense_pack(a, units=24, weight_layout=\"NC8n\"))", {{{13, 37}}}});
  // (Inputs in [-0.5, 0.5], so that float32's error over 1024 terms stays in the tolerance.)
  c.push_back(
      {"y = _contrib_dense_pack(a, units=64, weight_layout=\"NC64n\")", {{{10, 1024}}}, -0.5, 0.5});
  c.push_back({"y = _contrib_dense_pack(a, units=12, use_bias=False, weight_layout=\"NC4n\")",
               {{{5, 20}}}});
  c.push_back(
      {"y = relu(_contrib_conv2d_NCHWc(a, channels=16, kernel_size=(1,1), " + blocked16 + ")) + b",
       {{{1, 1, 6, 14, 16}, {1, 1, 6, 14, 16}}}});
  // The ops gradients bring: each checked against its reference kernel.
  c.push_back({"y = expand_like(b, a, axis=1)", {{{2, 3, 4}, {2, 4}}, {{2, 3, 4}, {2, 1, 4}}}});
  c.push_back({"y = expand_like(b, a, axis=1, exclude=True)", {{{2, 3, 4}, {3}}}});
  c.push_back({"y = expand_like(b, a)", {{{2, 3}, {1}}}});
  c.push_back({"y = collapse_sum(a, b)",
               {{{2, 3, 4}, {3, 1}}, {{3, 4}, {4}}, {{5}, {1}}, {{2, 3}, {2, 3}}}});
  c.push_back({"y = _cast_grad(a, b)", same(2)});
  c.push_back({"y = a + const([[1, 2.5, -3], [4, 0.25, 6]], dtype=dt)", {{{2, 3}}}});
  c.push_back({"y = a * const([7], dtype=dt)", {{{1}}}});
  c.push_back({"y = _batch_norm_grad(a, b, b, a, b, b, b, c, epsilon=0.01)",
               {{{2, 3, 4, 5}, {3}, {3}}, {{1, 4, 3, 19}, {4}, {4}}},
               0.5,
               2});
  c.push_back({"y = _batch_norm_grad(a, b, b, a, b, b, b, c, center=False, scale=False)",
               {{{2, 3, 4, 5}, {3}, {3}}},
               0.5,
               2});
  c.push_back({"y = _prelu_grad(a, b, c)", {{{1, 3, 7, 9}, {1, 3, 7, 9}, {3}}}});
  c.push_back(
      {"y = _pad_grad(a, b, pad_width=((0, 0), (1, 2), (0, 3)))", {{{2, 6, 20}, {2, 3, 17}}}});
  c.push_back({"y = _pad_grad(a, b, pad_width=((0, 0), (2, 2), (1, 3)), pad_mode=\"reflect\")",
               {{{2, 7, 21}, {2, 3, 17}}, {{1, 9, 8}, {1, 5, 4}}}});
  c.push_back({"y = _pad_grad(a, b, pad_width=((1, 0), (1, 2), (0, 3)), pad_mode=\"edge\")",
               {{{3, 6, 20}, {2, 3, 17}}, {{2, 4, 4}, {1, 1, 1}}}});
  c.push_back({"y = _prod_others(a)", {{{3, 5}}, {{7}}}, 0.5, 1.5});
  c.push_back({"y = _prod_others(a, axis=1)", {{{3, 5}}, {{2, 3, 17}}}, 0.5, 1.5});
  c.push_back({"y = _prod_others(a, axis=1, exclude=True)", {{{2, 3, 4}}}, 0.5, 1.5});
  c.push_back({"y = _max_pool2d_grad(a, b, c, pool_size=(2,2), strides=(2,2))",
               {{{1, 3, 3, 4}, {1, 3, 7, 9}, {1, 3, 3, 4}}}});
  c.push_back(
      {"y = _max_pool2d_grad(a, b, c, pool_size=(3,3), strides=(2,2), padding=(1,1), "
       "ceil_mode=True)",
       {{{1, 3, 4, 5}, {1, 3, 7, 9}, {1, 3, 4, 5}}, {{2, 2, 3, 9}, {2, 2, 5, 17}, {2, 2, 3, 9}}}});
  c.push_back({"y = _avg_pool2d_grad(a, b, pool_size=(3,2), strides=(1,2), padding=(1,1))",
               {{{1, 3, 7, 5}, {1, 3, 7, 9}}}});
  c.push_back({"y = _avg_pool2d_grad(a, b, pool_size=(3,3), strides=(2,2), padding=(1,1), "
               "count_include_pad=True, ceil_mode=True)",
               {{{1, 3, 4, 5}, {1, 3, 7, 9}}}});
  c.push_back({"y = upsampling(a, scale=3, method=\"BILINEAR\")", nchw});
  c.push_back({"y = _upsampling_grad(a, b, scale=2)", {{{1, 3, 14, 18}, {1, 3, 7, 9}}}});
  c.push_back({"y = _upsampling_grad(a, b, scale=2, method=\"BILINEAR\")",
               {{{1, 3, 14, 18}, {1, 3, 7, 9}}, {{1, 1, 2, 6}, {1, 1, 1, 3}}}});
  c.push_back({"y = _upsampling_grad(a, b, scale=3, method=\"BILINEAR\")",
               {{{2, 2, 15, 3}, {2, 2, 5, 1}}}});
  c.push_back({"y = _conv3d_grad(a, b, c, channels=4, kernel_size=(3,2,3), strides=(2,1,1), "
               "padding=(1,0,1))",
               {{{1, 4, 3, 5, 7}, {1, 2, 5, 6, 7}, {4, 2, 3, 2, 3}}}});
  c.push_back({"y = _conv3d_grad(a, b, c, channels=4, kernel_size=(1,2,2), dilation=(1,2,1), "
               "groups=2, use_bias=False)",
               {{{2, 4, 3, 2, 4}, {2, 2, 3, 4, 5}, {4, 1, 1, 2, 2}}}});
  c.push_back({"y = _max_pool3d_grad(a, b, pool_size=(3,3,3), strides=(2,2,2), "
               "padding=(1,1,1), ceil_mode=True)",
               {{{1, 2, 4, 4, 4}, {1, 2, 6, 7, 7}}}});
  c.push_back({"y = _avg_pool3d_grad(a, b, pool_size=(2,3,2), strides=(1,2,1), "
               "padding=(1,1,0,0,1,1), count_include_pad=True)",
               {{{1, 2, 6, 4, 7}, {1, 2, 6, 7, 7}}}});
  c.push_back({"y = _conv2d_grad(a, b, c, channels=4, kernel_size=(3,3))",
               {{{1, 4, 5, 7}, {1, 3, 7, 9}, {4, 3, 3, 3}}}});
  c.push_back({"y = _conv2d_grad(a, b, c, channels=2, kernel_size=(1,3), strides=(2,3), "
               "dilation=(1,2), padding=(1,1))",
               {{{2, 2, 4, 5}, {2, 2, 5, 17}, {2, 2, 1, 3}}}});
  c.push_back({"y = _conv2d_grad(a, b, c, channels=4, kernel_size=(1,1), groups=2, "
               "use_bias=False)",
               {{{1, 4, 3, 5}, {1, 4, 3, 5}, {4, 2, 1, 1}}}});
  c.push_back({"y = _conv2d_transpose_grad(a, b, c, channels=3, kernel_size=(3,3), "
               "strides=(2,2), padding=(1,1))",
               {{{1, 3, 13, 17}, {1, 3, 7, 9}, {3, 3, 3, 3}}}});
  c.push_back({"y = _conv2d_transpose_grad(a, b, c, channels=4, kernel_size=(2,1), groups=2, "
               "dilation=(2,1), use_bias=False)",
               {{{1, 4, 5, 5}, {1, 2, 3, 5}, {2, 2, 2, 1}}}});
  c.push_back(
      {"y = _concatenate_grad(a, b, c, axis=1, num_args=2)", {{{2, 7, 3}, {2, 4, 3}, {2, 3, 3}}}});
  // Fused groups: conv2d with bias, relu and a residual add (seed 000/001 shapes), elementwise
  // chains (flatten_data), broadcast chains, a reduction after elementwise work.
  c.push_back({"y = relu(conv2d(a, channels=3, kernel_size=(5,5), padding=(2,2))) + a",
               {{{7, 3, 11, 13}}, {{1, 3, 4, 20}}}});
  c.push_back({"y = exp(relu(a) * 2 + b) - b", same(2)});
  c.push_back({"y = broadcast_mul(tanh(a), b) + 1", bshapes});
  c.push_back({"y = sum(exp(a) * 0.5, axis=1)", {{{3, 5}}, {{2, 3, 17}}}});
  // Reductions along a row of 64 or more: vectors of partial results at opt level 3 (a tail
  // lane guarded when the row is not a multiple of the vector), and along a column (not).
  c.push_back({"y = softmax(a)", {{{3, 100}}, {{2, 128}}}});
  c.push_back({"y = log_softmax(a)", {{{2, 70}}}});
  c.push_back({"y = max(a, axis=2)", {{{2, 3, 70}}}});
  c.push_back({"y = sum(exp(a) * 0.5, axis=1)", {{{2, 80}}}});
  c.push_back({"y = sum(a, axis=0)", {{{100, 3}}}});
  c.push_back({"y = flatten(relu(conv2d(a, channels=2, kernel_size=(3,3), padding=(1,1))))",
               {{{1, 3, 6, 6}}}});
  return c;
}

} // namespace

/// (dtype, opt level): the seed-era schedules at 2, the fast ones at 3.
class Lowering : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(Lowering, MatchesTheReferenceInterpreter) {
  auto [dtype, optLevel] = GetParam();
  for (const Case &cs : cases())
    for (const auto &shapes : cs.shapes)
      checkLowering(vars(shapes, dtype) + "dt = \"" + std::string(dtypeName(dtype)) + "\"\n" +
                        cs.expr,
                    cs.lo, cs.hi, dtype, optLevel);
}

INSTANTIATE_TEST_SUITE_P(Dtypes, Lowering,
                         ::testing::Combine(::testing::Values(kFloat32, kFloat64, kBFloat16),
                                            ::testing::Values(2, 3)));

namespace {

// The integer kernels a quantized network runs (ONNX's ConvInteger, MatMulInteger and QLinear ops
// as imported, and the ops around them), over `a` and `b` of the swept dtype — int8, uint8 or
// int32 — with small integer values: products and sums accumulate in int32 as QNN's do, so the
// compiled code must agree with the reference interpreter exactly.
std::vector<Case> integerCases() {
  const std::string wide = "dtype=\"int32\"";
  std::vector<Case> c;
  c.push_back({"y = conv2d(cast(a, " + wide + "), cast(b, " + wide +
                   "), channels=4, kernel_size=(3,3), padding=(1,1), use_bias=False)",
               {{{1, 3, 7, 9}, {4, 3, 3, 3}}, {{2, 8, 5, 6}, {4, 8, 3, 3}}}});
  c.push_back({"y = conv2d(cast(a, " + wide + "), cast(b, " + wide +
                   "), channels=6, kernel_size=(1,1), strides=(2,2), use_bias=False)",
               {{{1, 16, 9, 9}, {6, 16, 1, 1}}}});
  // The 8-bit operands themselves summed in int32 (QnnCanonicalize's qnn.dense).
  c.push_back({"y = dense(a, b, units=5, use_bias=False, out_dtype=\"int32\")",
               {{{3, 7}, {5, 7}}, {{1, 70}, {5, 70}}}});
  c.push_back({"y = dense(cast(a, " + wide + "), cast(b, " + wide + "), units=5, use_bias=False)",
               {{{3, 17}, {5, 17}}, {{1, 64}, {5, 64}}}});
  c.push_back(
      {"y = batch_matmul(cast(a, " + wide + "), cast(b, " + wide + "))", {{{2, 3, 7}, {2, 7, 5}}}});
  c.push_back({"y = matmul(cast(a, " + wide + "), cast(b, " + wide + "))", {{{3, 7}, {7, 5}}}});
  // Zero points subtracted, a bias added, saturated and narrowed back (a requantize's tail).
  c.push_back({"y = cast(clip(broadcast_sub(cast(a, " + wide + "), cast(b, " + wide +
                   ")) * 9, a_min=-128, a_max=127), dtype=\"int8\")",
               {{{2, 3, 17}, {1}}, {{1, 4, 3, 19}, {1, 4, 1, 1}}}});
  for (const char *op : {"relu", "negative", "copy"})
    c.push_back({std::string("y = ") + op + "(a)", same(1)});
  for (const char *op :
       {"elemwise_add", "elemwise_sub", "elemwise_mul", "broadcast_max", "broadcast_min"})
    c.push_back({std::string("y = ") + op + "(a, b)", same(2)});
  c.push_back({"y = clip(a, a_min=-3, a_max=5)", same(1)});
  c.push_back(
      {"y = max_pool2d(a, pool_size=(3,3), strides=(2,2), padding=(1,1))", {{{1, 4, 9, 11}}}});
  c.push_back({"y = concatenate(a, b, axis=1)", {{{2, 3, 5}, {2, 4, 5}}}});
  c.push_back({"y = transpose(a, axes=(0, 2, 1))", {{{2, 3, 17}}}});
  c.push_back({"y = pad(a, pad_width=((0,0),(0,0),(1,2),(2,1)))", {{{1, 2, 5, 6}}}});
  return c;
}

class IntegerLowering : public ::testing::TestWithParam<std::tuple<int, int>> {};

} // namespace

TEST_P(IntegerLowering, MatchesTheReferenceInterpreterExactly) {
  auto [dtype, optLevel] = GetParam();
  // Values a quantized tensor holds near its zero point: small enough that every product and sum
  // of these cases fits int32, and every narrowing saturates rather than wraps.
  double lo = dtype == kUint8 ? 0 : -8, hi = dtype == kUint8 ? 16 : 8;
  for (const Case &cs : integerCases())
    for (const auto &shapes : cs.shapes)
      checkLowering(vars(shapes, dtype) + cs.expr, lo, hi, dtype, optLevel);
}

INSTANTIATE_TEST_SUITE_P(Integers, IntegerLowering,
                         ::testing::Combine(::testing::Values(kInt8, kUint8, kInt32),
                                            ::testing::Values(2, 3)));

TEST(LoweringCoverage, EveryLoweredOpIsSwept) {
  registerAllOps();
  std::string self = readTextFile(__FILE__);
  int lowered = 0;
  for (const OpDef *op : OpRegistry::get().all()) {
    if (!op->lowering)
      continue;
    ++lowered;
    bool named = self.find("\"" + op->name + "\"") != std::string::npos ||
                 self.find(" " + op->name + "(") != std::string::npos;
    EXPECT_TRUE(named) << op->name << " has a lowering but no case in " << __FILE__;
  }
  EXPECT_GT(lowered, 40);
}

TEST(LoweringErrors, WhatCannotBeLoweredIsNamed) {
  // Every op has a compute rule now; a const too large for a select tree says so and how out.
  std::string big = "[";
  for (int k = 0; k < 5000; ++k)
    big += (k ? ", " : "") + std::to_string(k % 7);
  Engine e;
  run(e, "y = const(" + big +
             "]) * 2\n:graph y\n"
             ":apply InferShape InferType GraphFusePartition GraphFuseCompile");
  std::ostringstream out;
  EXPECT_FALSE(e.execute(":lower", out, out));
  EXPECT_EQ(out.str(), "error: const with 5000 values in `data` is too large to lower to loops "
                       "(at most 4096; FoldConstant or PrecomputePrune make it an input)\n");
  std::ostringstream out2;
  EXPECT_FALSE(e.execute(":lower fuse_nothing", out2, out2));
  EXPECT_NE(out2.str().find("the module has no function 'fuse_nothing'"), std::string::npos)
      << out2.str();
}

namespace {

// Runs a schedule step that must throw an Error whose message contains `want`.
void expectScheduleError(const std::function<void()> &step, const std::string &want) {
  try {
    step();
    ADD_FAILURE() << "no error; expected one containing: " << want;
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
  }
}

} // namespace

TEST(ScheduleComputeAt, BoundsComeFromTheConsumersReads) {
  using loop::ComputeRef, loop::compute, loop::placeholder, loop::read, loop::constant;
  using E = std::vector<loop::Expr>;
  // p = a + 1 over (6, 10); c reads p at (i, j) and (i, j + 2) over (6, 8).
  ComputeRef a = placeholder("a", {6, 10}, kFloat32);
  ComputeRef p =
      compute({6, 10}, kFloat32, [&](const E &i) { return read(a, i) + constant(1, kFloat32); });
  ComputeRef c = compute(
      {6, 8}, kFloat32,
      [&](const E &i) {
        return read(p, i) + read(p, {i[0], i[1] + 2});
      },
      "out");
  backend::Schedule s({c});
  backend::Stage &cs = s.stage(c);
  auto [jo, ji] = s.split(cs, cs.leaves[1].var, 4);
  s.computeAt(s.stage(p), s.stage(c), jo);
  // Per (i0, i1.outer): row i0, columns i1.outer*4 .. i1.outer*4 + 5 — six of them.
  EXPECT_EQ(s.stage(p).leaves[0].extent, 1);
  EXPECT_EQ(s.stage(p).leaves[1].extent, 6);
  std::string loops = loop::printStmt(backend::lower(s));
  EXPECT_NE(loops.find("for (i1.outer, 0, 2) {\n      produce compute {"), std::string::npos)
      << loops;
  // The last tile reads columns 4..9 — inside p — so no guard is needed.
  EXPECT_TRUE(s.stage(p).guards.empty());
  // Run it: out = 2*a... shifted, checked against the formula.
  Tensor in({6, 10}, kFloat32);
  for (size_t i = 0; i < in.data.size(); ++i)
    in.data[i] = static_cast<double>(i % 13) - 6;
  backend::LoweredFunction lf = loweredOf(s, a, c);
  std::vector<Tensor> got = backend::evalLowered(lf, {in});
  for (int64_t i = 0; i < 6; ++i)
    for (int64_t j = 0; j < 8; ++j)
      EXPECT_EQ(got[0].data[i * 8 + j], in.data[i * 10 + j] + 1 + in.data[i * 10 + j + 2] + 1)
          << i << ", " << j;
}

TEST(ScheduleComputeAt, RefusesWhatItCannotBound) {
  using loop::ComputeRef, loop::compute, loop::placeholder, loop::read, loop::constant;
  using E = std::vector<loop::Expr>;
  ComputeRef a = placeholder("a", {12}, kFloat32);
  ComputeRef p = compute({12}, kFloat32, [&](const E &i) { return read(a, i); });
  ComputeRef c = compute(
      {3, 4}, kFloat32, [&](const E &i) { return read(p, {i[0] * 4 + i[1]}); }, "out");
  {
    // Inner loops under a division: the region an iteration of the outer loop reads is not an
    // interval of fixed size.
    ComputeRef d = compute(
        {3, 4}, kFloat32, [&](const E &i) { return read(p, {(i[0] * 4 + i[1]) / 2}); }, "out");
    backend::Schedule s({d});
    // An inner loop under a division has no affine bound.
    expectScheduleError([&] { s.computeAt(s.stage(p), s.stage(d), s.stage(d).leaves[0].var); },
                        "is not affine in out's loops");
  }
  {
    backend::Schedule s({c});
    backend::Stage &ps = s.stage(p);
    s.split(ps, ps.leaves[0].var, 2);
    // The producer's data axes were already split.
    expectScheduleError([&] { s.computeAt(s.stage(p), s.stage(c), s.stage(c).leaves[0].var); },
                        "after its data axes were scheduled");
  }
}

// Schedule::skipUpdatesOutside: the test wraps the loops inside the innermost leaf it reads,
// and where it fails the update does not run. Padded with 5 (not zeros, where skipping would
// change nothing), the border outputs show that the padded taps were skipped.
TEST(ScheduleSkipUpdates, TheTestWrapsTheLoopsInsideItsInnermostLeaf) {
  using loop::ComputeRef, loop::compute, loop::placeholder, loop::read, loop::Expr;
  using E = std::vector<Expr>;
  ComputeRef a = placeholder("a", {6}, kFloat32);
  ComputeRef p = ops::padCompute(a, {2}, {1}, 5.0); // 9 elements: 5 5 a0..a5 5
  loop::IterVar k = loop::reduceAxis(3, "k"), j = loop::reduceAxis(4, "j");
  ComputeRef c = compute(
      {7}, kFloat32,
      [&](const E &i) {
        return loop::reduce(loop::Combiner::Sum, read(p, {i[0] + k.var}), {k, j});
      },
      "out");
  backend::Schedule s({c});
  s.computeInline(s.stage(p));
  backend::Stage &cs = s.stage(c);
  Expr row = cs.tensor->axes[0] + k.var;
  s.skipUpdatesOutside(cs,
                       loop::land(loop::le(loop::intImm(2), row), loop::lt(row, loop::intImm(8))),
                       "the taps over the padding");
  EXPECT_NE(s.describe().find("out: updates only where ((2 <= (i0 + k)) && ((i0 + k) < 8)) (the "
                              "taps over the padding)"),
            std::string::npos)
      << s.describe();
  std::string loops = loop::printStmt(backend::lower(s));
  // Inside k (the innermost leaf it reads), around j's loop.
  EXPECT_NE(loops.find("for (k, 0, 3) {\n      if (likely(((2 <= (i0 + k)) && ((i0 + k) < 8)))) "
                       "{\n        for (j, 0, 4) {"),
            std::string::npos)
      << loops;
  Tensor in({6}, kFloat32);
  for (size_t i = 0; i < 6; ++i)
    in.data[i] = static_cast<double>(i) + 1;
  std::vector<Tensor> got = backend::evalLowered(loweredOf(s, a, c), {in});
  for (int64_t i = 0; i < 7; ++i) {
    double want = 0; // four times the taps that read a, none of the 5s
    for (int64_t t = 0; t < 3; ++t)
      if (i + t >= 2 && i + t < 8)
        want += 4 * in.data[static_cast<size_t>(i + t - 2)];
    EXPECT_EQ(got[0].data[static_cast<size_t>(i)], want) << i;
  }
}

TEST(ScheduleSkipUpdates, RefusesWhatItCannotSkip) {
  using loop::ComputeRef, loop::compute, loop::placeholder, loop::read;
  using E = std::vector<loop::Expr>;
  ComputeRef a = placeholder("a", {8}, kFloat32);
  {
    ComputeRef c = compute(
        {8}, kFloat32, [&](const E &i) { return read(a, i); }, "out");
    backend::Schedule s({c});
    expectScheduleError([&] { s.skipUpdatesOutside(s.stage(c), loop::boolImm(true), "why"); },
                        "out is not a reduction; only its updates can be skipped");
  }
  {
    loop::IterVar k = loop::reduceAxis(4, "k");
    ComputeRef c = compute(
        {8}, kFloat32,
        [&](const E &i) {
          return loop::reduce(loop::Combiner::Sum, read(a, {(i[0] + k.var) % 8}), {k});
        },
        "out");
    backend::Schedule s({c});
    backend::Stage &cs = s.stage(c);
    s.reorder(cs, {k.var, cs.leaves[0].var});
    s.vectorize(cs, cs.leaves[1].var);
    s.skipUpdatesOutside(cs, loop::lt(cs.tensor->axes[0], loop::intImm(4)), "why");
    expectScheduleError([&] { backend::lower(s); },
                        "an update's test reads the vectorised loop i0");
  }
}

// opt_level 3's convolution can skip the kernel rows that fall on the zero padding above and
// below the image (the pad_rows knob), and only those: columns padded alone leave it as it was
// (their taps fall inside a register tile). Its rule skips them with input rows outermost, not
// with channel chunks outermost. Results are checked by the Lowering sweep's padded NCHWc cases.
TEST(ScheduleSkipUpdates, AConvolutionSkipsTheKernelRowsOverItsPadding) {
  auto schedule = [](int channels, int size, const std::string &padding) {
    Engine e;
    std::string c = std::to_string(channels), hw = std::to_string(size);
    run(e, "x = Variable(\"x\", shape=(1," + c + "," + hw + "," + hw +
               "))\ny = conv2d(x, channels=" + c + ", kernel_size=(3,3), padding=" + padding +
               ", use_bias=False, name=\"c\")\n:graph y\n"
               ":set target llvm -mcpu=skylake-avx512\n:build opt_level=3 param c_weight=random");
    return output(e, ":schedule fuse__contrib_conv2d_NCHWc");
  };
  // 16 x 28 x 28 inputs outnumber the 16 x 16 x 3 x 3 weights: rows outermost, rows skipped.
  std::string rows = schedule(16, 28, "(1,1)");
  EXPECT_NE(rows.find("knob rows_outer = 1"), std::string::npos) << rows;
  EXPECT_NE(rows.find("knob pad_rows = 1  (kernel rows over the top and bottom padding skipped)"),
            std::string::npos)
      << rows;
  EXPECT_NE(rows.find("conv2d_NCHWc.global: updates only where ((1 <= (oh.c + kh)) && ((oh.c + "
                      "kh) < 29)) (kernel rows over the padding add zeros)"),
            std::string::npos)
      << rows;
  std::string bottom = schedule(16, 28, "(2,0)");
  EXPECT_NE(bottom.find("updates only where ((2 <= (oh.c + kh)) && ((oh.c + kh) < 30))"),
            std::string::npos)
      << bottom;
  std::string columns = schedule(16, 28, "(0,1)");
  EXPECT_NE(columns.find("conv2d_NCHWc.global: vectorize"), std::string::npos) << columns;
  EXPECT_EQ(columns.find("pad_rows"), std::string::npos) << columns;
  EXPECT_EQ(columns.find("updates only where"), std::string::npos) << columns;
  // 32 x 7 x 7 inputs, 32 x 32 x 3 x 3 weights: chunks outermost, the padded rows computed.
  std::string chunks = schedule(32, 7, "(1,1)");
  EXPECT_NE(chunks.find("knob rows_outer = 0"), std::string::npos) << chunks;
  EXPECT_NE(chunks.find("knob pad_rows = 0  (kernel rows over the padding computed (zeros))"),
            std::string::npos)
      << chunks;
  EXPECT_EQ(chunks.find("updates only where"), std::string::npos) << chunks;
}

// TVM's bound inference through a fused loop: the fused loop's `f / 4` and `f % 4` are fixed
// by it, so each iteration needs one element of the producer, held in a local buffer of one.
TEST(ScheduleComputeAt, AtAFusedLoopIntoALocalBuffer) {
  using loop::ComputeRef, loop::compute, loop::placeholder, loop::read;
  using E = std::vector<loop::Expr>;
  ComputeRef a = placeholder("a", {12}, kFloat32);
  ComputeRef p = compute({12}, kFloat32, [&](const E &i) { return read(a, i) * read(a, i); });
  ComputeRef c = compute(
      {3, 4}, kFloat32,
      [&](const E &i) { return read(p, {i[0] * 4 + i[1]}) + loop::constant(1, kFloat32); }, "out");
  backend::Schedule s({c});
  backend::Stage &cs = s.stage(c);
  loop::Expr f = s.fuse(cs, cs.leaves[0].var, cs.leaves[1].var);
  s.computeAt(s.stage(p), s.stage(c), f);
  s.setLocal(s.stage(p));
  EXPECT_EQ(s.stage(p).region, (Shape{1}));
  backend::LoweredFunction lf = loweredOf(s, a, c);
  std::string text = loop::printStmt(lf.body);
  EXPECT_NE(text.find("storage_scope = \"local\""), std::string::npos) << text;
  EXPECT_NE(text.find("allocate compute[float32 * 1]"), std::string::npos) << text;
  Tensor in({12}, kFloat32);
  for (int64_t i = 0; i < 12; ++i)
    in.data[i] = static_cast<double>(i) - 5;
  std::vector<Tensor> got = backend::evalLowered(lf, {in});
  for (int64_t i = 0; i < 12; ++i)
    EXPECT_EQ(got[0].data[i], in.data[i] * in.data[i] + 1) << i;
}

// Bound inference through a chain: the row sums `r` are computed at the output's row loop, then
// the squares `p` they sum at the same loop — the output does not read `p`, but `r`, computed
// inside that loop, reads a row of it per iteration. A stage read outside the loop is refused.
TEST(ScheduleComputeAt, ThroughTheStagesComputedInsideTheLoop) {
  using loop::ComputeRef, loop::compute, loop::placeholder, loop::read;
  using E = std::vector<loop::Expr>;
  ComputeRef a = placeholder("a", {4, 10}, kFloat32);
  ComputeRef p = compute({4, 10}, kFloat32, [&](const E &i) { return read(a, i) * read(a, i); });
  loop::IterVar k = loop::reduceAxis(10, "k");
  ComputeRef r = compute(
      {4}, kFloat32,
      [&](const E &i) {
        return loop::reduce(loop::Combiner::Sum, read(p, {i[0], k.var}), {k});
      },
      "rows");
  ComputeRef c = compute(
      {4, 10}, kFloat32, [&](const E &i) { return read(a, i) / read(r, {i[0]}); }, "out");
  {
    backend::Schedule s({c});
    loop::Expr row = s.stage(c).leaves[0].var;
    s.computeAt(s.stage(r), s.stage(c), row);
    s.computeAt(s.stage(p), s.stage(c), row);
    EXPECT_EQ(s.stage(p).region, (Shape{1, 10}));
    EXPECT_EQ(s.stage(r).region, (Shape{1}));
    EXPECT_TRUE(s.stage(p).guards.empty());
    backend::LoweredFunction lf = loweredOf(s, a, c);
    std::string text = loop::printStmt(lf.body);
    EXPECT_NE(text.find("for (i0, 0, 4) {\n    produce compute {"), std::string::npos) << text;
    Tensor in({4, 10}, kFloat32);
    for (size_t i = 0; i < in.data.size(); ++i)
      in.data[i] = static_cast<double>(i % 7) - 2;
    std::vector<Tensor> got = backend::evalLowered(lf, {in});
    for (int64_t i = 0; i < 4; ++i) {
      double sum = 0;
      for (int64_t j = 0; j < 10; ++j)
        sum += in.data[i * 10 + j] * in.data[i * 10 + j];
      for (int64_t j = 0; j < 10; ++j)
        EXPECT_FLOAT_EQ(got[0].data[i * 10 + j], in.data[i * 10 + j] / sum) << i << ", " << j;
    }
  }
  {
    // Computed at the output's rows, `p` would be missing for `r`, which runs in its own loops.
    backend::Schedule s({c});
    // The output does not read p.
    expectScheduleError([&] { s.computeAt(s.stage(p), s.stage(c), s.stage(c).leaves[0].var); },
                        "out does not read compute");
    ComputeRef d = compute(
        {4, 10}, kFloat32, [&](const E &i) { return read(p, i) + read(r, {i[0]}); }, "both");
    backend::Schedule t({d});
    // rows reads p outside the loop.
    expectScheduleError([&] { t.computeAt(t.stage(p), t.stage(d), t.stage(d).leaves[0].var); },
                        "rows reads it outside that loop");
  }
}

// batch_matmul's register tile, by hand: AVX-512 (32 registers, broadcasts from memory) 6 rows
// x 4 vectors (30 registers; 10 loads per 24 FMAs beats 9 x 3's 12 per 27); AVX2 (16) 4 x 3
// (7 per 12 beats 2 x 4's 6 per 8); two rows make 2 x 4; 20 columns one vector of 29 rows.
TEST(ScheduleMatmulTile, FewestLoadsPerFma) {
  backend::installTargetInfo();
  TargetCpu avx512 = targetCpuOf("llvm -mcpu=znver4"), avx2 = targetCpuOf("llvm -mcpu=znver3");
  using Tile = std::pair<int64_t, int64_t>; // rows, vectors
  auto tile = [](int64_t rows, int64_t cols, const TargetCpu &cpu, int64_t lanes) {
    MatmulTile t = chooseMatmulTile(rows, cols, cpu, lanes);
    return Tile(t.rows, t.vectors);
  };
  EXPECT_EQ(tile(128, 128, avx512, 16), Tile(6, 4));
  EXPECT_EQ(tile(128, 128, avx2, 8), Tile(4, 3));
  EXPECT_EQ(tile(2, 64, avx512, 16), Tile(2, 4));
  EXPECT_EQ(tile(128, 20, avx512, 16), Tile(29, 1));
}

// The convolution's register tile: the fewest loads per FMA among even tiles of 14 or more
// accumulators whose blocks' weights fit half the L2 (hand-counted: 4x6 loads 10 per 24 FMAs,
// 2x7 9 per 14, 1x14 15 per 14), for an AVX-512 CPU with a 1 MB L2.
TEST(ScheduleRegisterTile, FewestLoadsPerFma) {
  auto tile = [](int64_t width, int64_t chunks, int64_t weightBytes) {
    backend::x86::RegisterTile t =
        backend::x86::chooseRegisterTile(width, chunks, 1, weightBytes, {64, 32, 1 << 20, true});
    return std::tuple{t.ocTiles, t.cols.regN, t.cols.shifted};
  };
  EXPECT_EQ(tile(12, 4, 36 << 10), std::tuple(4, 6, false));
  EXPECT_EQ(tile(56, 8, 36 << 10), std::tuple(4, 4, false));    // 4 blocks of 6 columns: 56 shifts
  EXPECT_EQ(tile(14, 16, 64 << 10), std::tuple(2, 7, false));   // 4 blocks: width 14 in 4s shifts
  EXPECT_EQ(tile(27, 16, 36 << 10), std::tuple(2, 9, false));   // 4x3 has 12 accumulators
  EXPECT_EQ(tile(7, 32, 295 << 10), std::tuple(2, 7, false));   // 4 blocks: 1.2 MB of weights
  EXPECT_EQ(tile(14, 16, 400 << 10), std::tuple(1, 14, false)); // 2 blocks: 800 KB
  EXPECT_EQ(tile(13, 63, 32 << 10), std::tuple(1, 13, false));  // 63 chunks: 3 blocks, 13 prime
  EXPECT_EQ(tile(100, 1, 6 << 10), std::tuple(1, 25, false));
}

// The same rule for an AVX2 CPU (16 registers, 512 KB L2: at most 12 accumulators, 8 with several
// blocks; 320 KB of weights). Hand-counted: width 56 as 1x8 loads 9 per 8 FMAs, 2x4 6 per 8 (4x2
// too, not fewer); width 14 in two blocks would shift its tiles (cap 6, largest divisor 2), 4x2
// loads 6 per 8 against 1x7's 8 per 7; width 7 with 147 KB chunks: two blocks would shift,
// four hold 590 KB, so 1x7; 3 blocks (3 x 2 columns) have only 6 accumulators.
TEST(ScheduleRegisterTile, SixteenRegistersOfAvx2) {
  auto tile = [](int64_t width, int64_t chunks, int64_t weightBytes) {
    backend::x86::RegisterTile t =
        backend::x86::chooseRegisterTile(width, chunks, 1, weightBytes, TargetCpu{});
    return std::tuple{t.ocTiles, t.cols.regN, t.cols.shifted};
  };
  EXPECT_EQ(tile(56, 8, 36 << 10), std::tuple(2, 4, false));
  EXPECT_EQ(tile(14, 16, 36 << 10), std::tuple(4, 2, false));
  EXPECT_EQ(tile(7, 64, 147 << 10), std::tuple(1, 7, false));
  EXPECT_EQ(tile(14, 3, 36 << 10), std::tuple(1, 7, false));
  EXPECT_EQ(tile(13, 8, 36 << 10), std::tuple(1, 7, true)); // 13 is prime: 7 + 7 shifted
  EXPECT_EQ(backend::x86::singleBlockAccumulators(TargetCpu{}), 12);
  // 27 columns (3 x 3 x 3), 32 chunks: with taps, four blocks have room for 2 columns (8 + 4
  // weights + 1), which 27 cannot divide, and two blocks' 3 columns are 6 accumulators: 1 x 9.
  // A 1x1 kernel keeps the 3 broadcasts live instead of the 4 weights: 12 + 3 + 1, so 4 x 3.
  EXPECT_EQ(tile(27, 32, 8 << 10), std::tuple(1, 9, false));
  auto pointwise = [](int64_t width, int64_t chunks, int64_t weightBytes) {
    backend::x86::RegisterTile t =
        backend::x86::chooseRegisterTile(width, chunks, 1, weightBytes, TargetCpu{}, true);
    return std::tuple{t.ocTiles, t.cols.regN, t.cols.shifted};
  };
  EXPECT_EQ(pointwise(27, 32, 8 << 10), std::tuple(4, 3, false));
  // Over an image's pixels (a narrow unit-stride 1x1), several blocks may shift their last tile.
  // 7x7 = 49 pixels, 128 chunks: 1 x 7 loads 8 per 7 FMAs; 2 blocks in 9 tiles of 6 (54
  // computed) 8/12 x 54/49 = 0.73; 4 blocks in 17 tiles of 3 (51) 7/12 x 51/49 = 0.61. 13x13 =
  // 169 pixels, 8 chunks: 1 x 12 in 15 tiles 13/12 x 180/169 = 1.15, 2 x 6 in 29 tiles 0.69,
  // 4 x 3 in 57 tiles 7/12 x 171/169 = 0.59. In rows, width 7 stays 1 x 7.
  auto pixels = [](int64_t count, int64_t chunks, int64_t weightBytes) {
    backend::x86::RegisterTile t =
        backend::x86::chooseRegisterTile(count, chunks, 1, weightBytes, TargetCpu{}, true, true);
    return std::tuple{t.ocTiles, t.cols.regN, t.cols.shifted};
  };
  EXPECT_EQ(pixels(49, 128, 32 << 10), std::tuple(4, 3, true));
  EXPECT_EQ(pixels(169, 8, 16 << 10), std::tuple(4, 3, true));
  // 125 chunks (squeezenet's 1000 classes): no 2-4 blocks divide them, so over pixels the last
  // tile of blocks shifts back, its recomputed chunks counted: 3 x 4 in 43 tiles (172 pixels)
  // over 42 tiles of blocks (126 chunks) 7/12 x 172/169 x 126/125 = 0.598 against 4 x 3's
  // 7/12 x 171/169 x 128/125 = 0.604 and 2 x 6's 0.69.
  backend::x86::RegisterTile t =
      backend::x86::chooseRegisterTile(169, 125, 1, 16 << 10, TargetCpu{}, true, true);
  EXPECT_EQ(std::tuple(t.ocTiles, t.cols.regN, t.cols.shifted, t.ocShifted),
            std::tuple(3, 4, true, true));
  EXPECT_FALSE(backend::x86::chooseRegisterTile(7, 125, 1, 16 << 10, TargetCpu{}, true).ocShifted);
  EXPECT_EQ(pointwise(7, 128, 32 << 10), std::tuple(1, 7, false));
}

// Room for a multi-block tile's accumulators (hand-counted): AVX2 with taps, blocks x n + blocks
// + 1 <= 16 and at most 12: 2 blocks 12 (n = 6), 3 blocks 12 (n = 4), 4 blocks 8 (n = 2: n = 3
// needs 17); 1x1, blocks x n + min(blocks, n) + 1: 4 blocks 12 (n = 3: 12 + 3 + 1). With
// AVX-512's broadcast operands, 24 of 32 either way.
TEST(ScheduleRegisterTile, RoomForSeveralBlocks) {
  using backend::x86::multiBlockRoom;
  TargetCpu avx2, avx512{64, 32, 1 << 20, true};
  EXPECT_EQ(multiBlockRoom(avx2, 2, false), 12);
  EXPECT_EQ(multiBlockRoom(avx2, 3, false), 12);
  EXPECT_EQ(multiBlockRoom(avx2, 4, false), 8);
  EXPECT_EQ(multiBlockRoom(avx2, 4, true), 12);
  EXPECT_EQ(multiBlockRoom(avx2, 8, true), 8); // 8 + min(8, 1) + 1 = 10; 16 + 2 + 1 > 16
  EXPECT_EQ(multiBlockRoom(avx512, 4, false), 24);
  EXPECT_EQ(multiBlockRoom(avx512, 2, true), 24);
}

// The NCHW tile by hand: (rows + oc) loads per rows x oc FMAs, times the channels a shifted
// last block recomputes. 13 channels, 2 rows: budget 10 gives 5 (7/10 x 15/13 = 0.81; 4: 6/8 x
// 16/13 = 0.92); budget 26 gives 13 (15/26, nothing recomputed). 24 channels in 10: 4 (6/8 =
// 0.75; 5: 0.7 x 25/24 = 0.73 is less: 5, shifted). An odd height has one row: 13 in 10: 10 (11/10
// x 20/13 = 1.69) loses to 7 (8/7 x 14/13 = 1.23).
TEST(ScheduleNchwTile, FewestLoadsPerUsefulFma) {
  auto tile = [](int64_t c, int64_t h, int64_t acc) {
    backend::x86::NchwTile t = backend::x86::chooseNchwTile(c, h, acc);
    return std::tuple{t.ocBlock, t.rows, t.shifted};
  };
  EXPECT_EQ(tile(13, 100, 10), std::tuple(5, 2, true));
  EXPECT_EQ(tile(13, 100, 26), std::tuple(13, 2, false));
  EXPECT_EQ(tile(24, 56, 10), std::tuple(5, 2, true));
  EXPECT_EQ(tile(24, 56, 26), std::tuple(12, 2, false));
  EXPECT_EQ(tile(13, 99, 10), std::tuple(7, 1, true));
  EXPECT_EQ(tile(1, 8, 10), std::tuple(1, 2, false));
}

// A target's CPU, sized from its features as LLVM's tables define them: avx512f gets 64-byte
// vectors, 32 registers, broadcast operands and (named, not measured) a 1 MB L2; avx2 with fma
// 32 bytes, 16 registers and 512 KB; less than that SSE's 16 bytes. A plain "llvm" is
// x86-64-v3 (AVX2); a name LLVM does not know is an error, not a guess.
TEST(TargetCpu, FromTheFeaturesOfTheNamedCpu) {
  backend::installTargetInfo();
  auto of = [](const std::string &t) {
    TargetCpu c = targetCpuOf(t);
    return std::tuple{c.vectorBytes, c.registers, c.l2Bytes, c.broadcastOperand};
  };
  auto avx512 = std::tuple(64, 32, 1 << 20, true), avx2 = std::tuple(32, 16, 512 << 10, false);
  EXPECT_EQ(of("llvm -mcpu=skylake-avx512"), avx512);
  EXPECT_EQ(of("llvm -mcpu=znver4"), avx512);
  EXPECT_EQ(of("llvm -mcpu=znver4 -opt"), avx512);
  // Named by no list: LLVM's features for the Intel CPUs a list of names missed.
  EXPECT_EQ(of("llvm -mcpu=rocketlake"), avx512);
  EXPECT_EQ(of("llvm -mcpu=sapphirerapids"), avx512);
  EXPECT_EQ(of("llvm -mcpu=znver3"), avx2);
  EXPECT_EQ(of("llvm -mcpu=haswell"), avx2);
  EXPECT_EQ(of("llvm"), avx2);
  EXPECT_EQ(of("llvm -mcpu=x86-64"), std::tuple(16, 16, 512 << 10, false));
  EXPECT_EQ(of("llvm -mcpu=skylake-avx512 -mattr=-avx512f"), std::tuple(32, 16, 1 << 20, false));
  EXPECT_EQ(of("llvm -mcpu=znver3 -mattr=+avx512f"), std::tuple(64, 32, 512 << 10, true));
  EXPECT_EQ(targetCpuOf("llvm -mcpu=znver4").lanes(4), 16);
  EXPECT_EQ(targetCpuOf("llvm -mcpu=znver3").lanes(8), 4);
  EXPECT_EQ(targetCpuOf("llvm -mcpu=znver3").isa(), "AVX2");
  EXPECT_NE(targetCpuOf("llvm -mcpu=rocketlake").derivation.find("rocketlake as LLVM defines it"),
            std::string::npos);
  expectError([] { targetCpuOf("llvm -mcpu=znver"); },
              "target 'llvm -mcpu=znver': LLVM does not know the CPU 'znver'");
  expectError([] { targetCpuOf("llvm -mcpu=znver3 -mattr=avx2"); },
              "target 'llvm -mcpu=znver3 -mattr=avx2': -mattr entry 'avx2' is not +FEATURE or "
              "-FEATURE");
}

// The host is sized by what it has: its own features (a VM may hide some its name implies) and
// the L2 its operating system reports, when the target is this machine (-mcpu=native, what a
// plain llvm means at opt_level 3). A named CPU sizes as its class on every machine, on a host of
// that very family too (whose own L2 may differ: the test command once failed on a Sapphire
// Rapids host because the named sapphirerapids took the host's 2 MiB).
TEST(TargetCpu, TheHostFromItsOwnFeaturesAndCache) {
  backend::installTargetInfo();
  // What installTargetInfo set (the host, or the CPU LOUPE_HOST_CPU pins), restored at the end:
  // later tests size "this machine" as their tune workers, fresh processes, do.
  std::optional<HostCpu> installed = hostCpu();
  ASSERT_TRUE(installed);
  setHostCpu({"testhost", {"avx", "avx2", "fma"}, 2 << 20});
  TargetCpu c = targetCpuOf("llvm -mcpu=native");
  EXPECT_EQ(std::tuple(c.vectorBytes, c.registers, c.l2Bytes), std::tuple(32, 16, 2 << 20));
  EXPECT_NE(c.derivation.find("this machine's testhost"), std::string::npos);
  setHostCpu({"testhost", {"avx512f", "avx2", "fma"}, 1 << 20});
  EXPECT_TRUE(targetCpuOf("llvm -mcpu=native").broadcastOperand);
  for (const char *family : {"sapphirerapids", "znver3"}) {
    setHostCpu({family, {"avx512f", "avx2", "fma"}, 2 << 20});
    TargetCpu named = targetCpuOf(std::string("llvm -mcpu=") + family);
    EXPECT_EQ(named.l2Bytes, assumedL2(*backend::cpuFeaturesOf(family))) << family;
    EXPECT_EQ(named.vectorBytes, std::string(family) == "znver3" ? 32 : 64) << family;
    EXPECT_EQ(named.derivation.find("this machine"), std::string::npos) << family;
    EXPECT_EQ(targetCpuOf("llvm -mcpu=native").l2Bytes, 2 << 20) << family;
  }
  setHostCpu(*installed);
}

// LLVM's X86 tables: a name they know gives its features, one they do not nothing.
TEST(TargetCpu, FeaturesOfNamedCpus) {
  auto has = [](const std::string &cpu, const char *f) {
    auto v = backend::cpuFeaturesOf(cpu);
    return v && std::find(v->begin(), v->end(), f) != v->end();
  };
  EXPECT_TRUE(has("znver3", "avx2") && has("znver3", "fma") && !has("znver3", "avx512f"));
  EXPECT_TRUE(has("rocketlake", "avx512f"));
  EXPECT_TRUE(has("x86-64-v3", "avx2"));
  EXPECT_FALSE(backend::cpuFeaturesOf("not-a-cpu"));
}

namespace {

// out[r] = a[r, 0] + … + a[r, cols - 1] over float64 rows, for rfactor by hand.
struct RowSum {
  loop::ComputeRef a, out;
  loop::IterVar k;
};
RowSum rowSum(int64_t rows, int64_t cols) {
  using E = std::vector<loop::Expr>;
  RowSum rs{loop::placeholder("a", {rows, cols}, kFloat64), nullptr, loop::reduceAxis(cols, "k")};
  rs.out = loop::compute(
      {rows}, kFloat64,
      [&](const E &i) {
        return loop::reduce(loop::Combiner::Sum, loop::read(rs.a, {i[0], rs.k.var}), {rs.k});
      },
      "out");
  return rs;
}

// The scheduled row sum run on small integers (exact in float64) against the sums written out.
void expectRowSums(const backend::Schedule &s, const RowSum &rs) {
  int64_t rows = rs.a->shape[0], cols = rs.a->shape[1];
  backend::LoweredFunction lf = loweredOf(s, rs.a, rs.out);
  Tensor in({rows, cols}, kFloat64);
  for (size_t i = 0; i < in.data.size(); ++i)
    in.data[i] = static_cast<double>(i * i % 17);
  std::vector<Tensor> got = backend::evalLowered(lf, {in});
  for (int64_t r = 0; r < rows; ++r) {
    double want = 0;
    for (int64_t j = 0; j < cols; ++j)
      want += in.data[r * cols + j];
    EXPECT_EQ(got[0].data[r], want) << r;
  }
}

} // namespace

// rfactor by hand: a sum over 10 split into 4 partial sums (the last one runs past the end and
// is guarded), then summed; checked against the formula and the printed stages.
TEST(ScheduleRfactor, PartialSumsThenTheirSum) {
  RowSum rs = rowSum(3, 10);
  backend::Schedule s({rs.out});
  backend::Stage &rf = s.rfactor(s.stage(rs.out), rs.k.var, 4);
  EXPECT_EQ(rf.tensor->shape, (Shape{3, 4}));
  EXPECT_NE(s.describe().find("out: rfactor k by 4 -> out.rf"), std::string::npos) << s.describe();
  expectRowSums(s, rs);
}

// Partials of partials: a sum over 16 rfactor'ed by 8, then its 8 partials by 4 and by 2 (the
// pairwise tree of opt level 3's row reductions); each level named by its factor, and the sum
// as the formula gives it.
TEST(ScheduleRfactor, PartialsOfPartialsAreNamedByFactor) {
  RowSum rs = rowSum(3, 16);
  backend::Schedule s({rs.out});
  for (int64_t f : {8, 4, 2}) {
    backend::Stage &st = s.stage(rs.out);
    s.rfactor(st, st.body->reduceAxes[0].var, f);
  }
  std::string steps = s.describe();
  EXPECT_NE(steps.find("out: rfactor k by 8 -> out.rf\nout: rfactor k.inner.r by 4 -> out.rf4\n"
                       "out: rfactor k.inner.r4 by 2 -> out.rf2\n"),
            std::string::npos)
      << steps;
  EXPECT_EQ(s.stage(rs.out).body->reduceAxes[0].var->name, "k.inner.r2");
  expectRowSums(s, rs);
}

TEST(LoweringZeros, ProdOthersWithNoneOneAndTwoZerosPerGroup) {
  Engine e;
  run(e, "a = Variable(\"a\", shape=(3, 4), dtype=1)\ny = _prod_others(a, axis=1)\n:graph y\n"
         ":apply InferShape InferType GraphFusePartition GraphFuseCompile");
  const FusedFunction *only = onlyFunction(e);
  ASSERT_TRUE(only);
  const FusedFunction &f = *only;
  backend::LoweredFunction lf = backend::lowerFunction(f);
  Tensor x({3, 4}, kFloat64);
  x.data = {2, 3, 5, 7, 2, 0, 5, 7, 0, 3, 0, 7};
  std::vector<Tensor> got = backend::evalLowered(lf, {x});
  // By hand: no zero -> 210 / x; one zero -> 70 at the zero, else 0; two zeros -> all 0.
  EXPECT_EQ(got[0].data, (std::vector<double>{105, 70, 42, 30, 0, 70, 0, 0, 0, 0, 0, 0}));
  std::vector<Tensor> want = interpret(f.body, {{lf.inputs[0]->name, x}});
  EXPECT_EQ(got[0].data, want[0].data);
}

// fixed_point_multiply (requantization's q_multiply_shift) over the whole int32 range, with
// 31-bit multipliers per channel and shifts from -20 to 0: products up to 2^62, which the loops
// and LLVM compute in 64-bit integers exactly as the reference does, vector lanes and tails.
TEST(IntegerLowering, FixedPointMultiplyIsExactOverInt32) {
  std::mt19937 rng(11);
  auto values = [&](const Shape &s, int dtype) {
    Tensor t(s, dtype);
    std::uniform_int_distribution<int64_t> data(-2147483648LL, 2147483647LL),
        multiplier(1LL << 30, (1LL << 31) - 1), shift(-20, 0);
    for (double &v : t.data)
      v = static_cast<double>(s.size() == 4   ? data(rng)
                              : s.size() == 3 ? multiplier(rng)
                                              : shift(rng));
    return t;
  };
  for (int opt : {0, 2, 3})
    checkFunctions("x = Variable(\"x\", shape=(2, 3, 5, 7), dtype=4)\n"
                   "m = Variable(\"m\", shape=(3, 1, 1), dtype=4)\n"
                   "s = Variable(\"s\", shape=(1,), dtype=4)\n"
                   "y = fixed_point_multiply(x, m, s)",
                   opt, values, 0);
}

// A max over integers starts from the type's smallest value: 0 in uint8 (it was -255, which
// wrapped to 1, so a window of zeros gave 1) and -128 in int8 (it was -127, above a window of
// -128s).
TEST(IntegerLowering, MaxStartsFromTheTypesSmallestValue) {
  for (int dtype : {kUint8, kInt8})
    for (int opt : {0, 3}) {
      double fill = dtype == kUint8 ? 0 : -128;
      checkFunctions(
          "x = Variable(\"x\", shape=(1, 2, 4, 4), dtype=" + std::to_string(dtype) +
              ")\ny = max_pool2d(x, pool_size=(2, 2), strides=(2, 2), padding=(1, 1))",
          opt,
          [&](const Shape &s, int dt) {
            Tensor t(s, dt);
            std::fill(t.data.begin(), t.data.end(), fill);
            return t;
          },
          0);
    }
}

// At opt_level 3 float multiplies and adds contract to FMAs, except in functions that make 8-bit
// integers (a requantize's float arithmetic, which the reference rounds step by step). By hand:
// a = b = 1 + 2^-23, so a·b = 1 + 2^-22 + 2^-46, which float32 rounds to 1 + 2^-22; with
// c = -(1 + 2^-22) the sum is 0, times k = 2^46 still 0 — an FMA would keep the 2^-46 and give 1.
// The function that casts to uint8 computes 0, the reference's value, at opt_level 3.
TEST(IntegerLowering, EightBitFunctionsDoNotContract) {
  for (bool eightBit : {true, false}) {
    SCOPED_TRACE(eightBit ? "uint8" : "float32");
    Engine e;
    std::string y = "round(elemwise_mul(elemwise_add(elemwise_mul(a, b), c), k))";
    run(e, "a = Variable(\"a\", shape=(16,), dtype=0)\nb = Variable(\"b\", shape=(16,), dtype=0)\n"
           "c = Variable(\"c\", shape=(16,), dtype=0)\nk = Variable(\"k\", shape=(16,), dtype=0)\n"
           "y = " +
               (eightBit ? "cast(" + y + ", dtype=\"uint8\")" : y) +
               "\n:graph y\n:set opt_level 3\n"
               ":apply InferShape InferType GraphFusePartition GraphFuseCompile");
    const FusedFunction *only = onlyFunction(e);
    ASSERT_TRUE(only);
    const FusedFunction &f = *only;
    backend::LoweredFunction lf = backend::lowerFunction(f);
    EXPECT_TRUE(lf.fast);
    EXPECT_EQ(lf.contract, !eightBit);
    if (!eightBit)
      continue;
    // The function's inputs in the graph's order: a, b, c, k (the reference's 0 below checks).
    std::vector<double> value = {1 + std::ldexp(1.0, -23), 1 + std::ldexp(1.0, -23),
                                 -(1 + std::ldexp(1.0, -22)), std::ldexp(1.0, 46)};
    ASSERT_EQ(lf.inputs.size(), value.size());
    std::map<std::string, Tensor> byName;
    std::vector<Tensor> args;
    for (const auto &p : lf.inputs) {
      Tensor t(p->shape, p->dtype);
      std::fill(t.data.begin(), t.data.end(), value[args.size()]);
      byName[p->name] = t;
      args.push_back(t);
    }
    std::vector<Tensor> want = interpret(f.body, byName);
    ASSERT_EQ(want[0].data[0], 0);
    auto compiled = backend::CompiledModule::compile({lf});
    EXPECT_EQ(callCompiled(*compiled, lf.name, args, lf.outputs)[0].data, want[0].data);
  }
}

namespace {

// `op` (y of bfloat16 a, b and c of these shapes) checked against the reference interpreter at
// `opt` (checkLowering) and lowered with dot2 steps; returns its loops (`:lower`).
std::string bfloat16PairLoops(const Shape &data, const Shape &weight, const Shape &bias,
                              const std::string &op, int opt) {
  std::string program = "a = Variable(\"a\", shape=" + shapeToTuple(data) +
                        ", dtype=12)\nb = Variable(\"b\", shape=" + shapeToTuple(weight) +
                        ", dtype=12)\nc = Variable(\"c\", shape=" + shapeToTuple(bias) +
                        ", dtype=12)\n" + op;
  checkLowering(program, -1, 1, kBFloat16, opt);
  Engine e;
  run(e, program + "\n:graph y\n:set opt_level " + std::to_string(opt) +
             "\n:apply InferShape InferType GraphFusePartition GraphFuseCompile");
  std::string loops = output(e, ":lower");
  EXPECT_NE(loops.find("dot2("), std::string::npos) << op << "\n" << loops;
  return loops;
}

} // namespace

// A bfloat16 convolution with its weights in pairs of input channels (OIHW16o2i, what
// AlterOpLayout gives precision=bf16 on a CPU with vdpbf16ps): each step of the sum is dot2 of
// two input channels and their two weights, accumulated in float32 — vdpbf16ps where the
// compiled code has avx512_bf16, two products and adds elsewhere — and the result is the
// reference interpreter's within one bfloat16 step, at opt_level 2 and 3 (the register tiles):
// a 3x3 with padding, a 1x1 over pixels, a strided one, and bias and relu after it.
TEST(BFloat16Lowering, PairsOfInputChannelsMatchTheReference) {
  const std::string pairs = "layout=\"NCHW16c\", kernel_layout=\"OIHW16o2i\", "
                            "out_layout=\"NCHW16c\"";
  struct PairCase {
    std::string conv;
    Shape data, weight;
  };
  std::vector<PairCase> cases = {
      {"y = _contrib_conv2d_NCHWc(a, b, channels=32, kernel_size=(3,3), padding=(1,1), "
       "use_bias=False, " +
           pairs + ")",
       {1, 2, 5, 13, 16},
       {2, 16, 3, 3, 16, 2}},
      {"y = _contrib_conv2d_NCHWc(a, b, channels=32, kernel_size=(1,1), use_bias=False, " + pairs +
           ")",
       {1, 2, 7, 7, 16},
       {2, 16, 1, 1, 16, 2}},
      {"y = relu(_contrib_conv2d_NCHWc(a, b, c, channels=16, kernel_size=(3,3), strides=(2,2), "
       "padding=(1,1), " +
           pairs + "))",
       {1, 1, 9, 11, 16},
       {1, 8, 3, 3, 16, 2}},
  };
  for (const PairCase &pc : cases)
    for (int opt : {2, 3}) {
      std::string loops = bfloat16PairLoops(pc.data, pc.weight, {1, 16}, pc.conv, opt);
      EXPECT_EQ(loops.find("pad_temp[float32"), std::string::npos) << loops; // read as bfloat16
    }
}

// A packed dense with its bfloat16 weight in pairs of steps of k (NC16n2c, what AlterOpLayout
// gives precision=bf16): dot2 steps summed in float32, the reference's values within one
// bfloat16 step at opt_level 2 and 3 (the packed GEMM's register tiles, rows padded to them),
// with its bias and a gelu after it; an odd k is refused by name.
TEST(BFloat16Lowering, DensesInPairsOfStepsMatchTheReference) {
  struct DenseCase {
    std::string dense;
    Shape data, weight;
  };
  std::vector<DenseCase> cases = {
      {"y = _contrib_dense_pack(a, b, units=32, use_bias=False, weight_layout=\"NC16n2c\")",
       {20, 96},
       {2, 48, 16, 2}},
      {"y = gelu(_contrib_dense_pack(a, b, c, units=16, weight_layout=\"NC16n2c\"))",
       {3, 7, 40},
       {1, 20, 16, 2}},
  };
  for (const DenseCase &dc : cases)
    for (int opt : {2, 3})
      bfloat16PairLoops(dc.data, dc.weight, {dc.weight[0] * dc.weight[2]}, dc.dense, opt);
  std::string odd = inferError("a = Variable(\"a\", shape=(4, 7))\n"
                               "y = _contrib_dense_pack(a, units=16, weight_layout=\"NC16n2c\")");
  EXPECT_NE(odd.find("pairs the steps of k, which must be even, got 7"), std::string::npos) << odd;
}
