// Conv3d: the 3-D convolution (NCDHW data, OIDHW weight) and its gradient, as kernels for the
// reference interpreter and as loops.
#include "core/ops/ConvCommon.h"
#include "core/ops/OpHelpers.h"
#include "core/ops/Window.h"

namespace loupe::ops {

namespace {

using namespace loupe::loop;

Window convWindow(const Attrs &a, ShapeCtx *c) { return windowOf(a, c, "kernel_size", true); }

void conv3dShape(ShapeCtx &c) {
  Window w = convWindow(c.attrs, &c);
  int64_t channels = c.attrs.getInt("channels"), groups = c.attrs.getInt("groups");
  if (channels <= 0 || groups <= 0)
    c.error("channels and groups must be positive");
  if (c.attrs.getStr("kernel_layout") != "OIDHW")
    c.error(
        cat("kernel_layout '", c.attrs.getStr("kernel_layout"), "' is not supported (only OIDHW)"));
  if (!ncdhwInput(c))
    return;
  const Shape &d = c.in[0];
  if (d[1] % groups != 0 || channels % groups != 0)
    c.error(cat("input channels ", d[1], " and channels ", channels,
                " must be divisible by groups ", groups));
  Shape weight = {channels, d[1] / groups};
  weight.insert(weight.end(), w.size.begin(), w.size.end());
  c.assignIn(1, weight);
  if (c.attrs.getBool("use_bias"))
    c.assignIn(2, {channels});
  Shape o = {d[0], channels};
  Shape spatial = windowOutput(c, w, d, false);
  o.insert(o.end(), spatial.begin(), spatial.end());
  c.assignOut(0, o);
}

std::vector<SymDims> symConv3d(const SymShapeCtx &c) {
  Window w = convWindow(c.attrs, nullptr);
  SymDims o = {c.in[0].at(0), SymExpr(c.attrs.getInt("channels"))};
  SymDims spatial = symWindowOutput(c, w, c.in[0], false);
  o.insert(o.end(), spatial.begin(), spatial.end());
  return {o};
}

// Calls fn(output, input, weight) flat offsets for every product of a grouped conv3d: the walk
// the forward kernel and its gradient share.
template <typename Fn>
void forEachConvProduct(const Attrs &a, const Shape &xs, const Shape &os, Fn fn) {
  Window w = convWindow(a, nullptr);
  int64_t groups = a.getInt("groups"), icg = xs[1] / groups, ocg = os[1] / groups;
  int64_t in = spatialSize(xs), out = spatialSize(os), taps = numElements(w.size);
  std::vector<WindowTap> walk = windowTaps(w, xs, os);
  for (int64_t n = 0; n < xs[0]; ++n)
    for (int64_t oc = 0; oc < os[1]; ++oc)
      for (int64_t ic = 0; ic < icg; ++ic) {
        int64_t x0 = (n * xs[1] + oc / ocg * icg + ic) * in, o0 = (n * os[1] + oc) * out,
                w0 = (oc * icg + ic) * taps;
        for (const WindowTap &t : walk)
          if (t.in >= 0)
            fn(o0 + t.out, x0 + t.in, w0 + t.tap);
      }
}

void conv3dKernel(const Attrs &a, const std::vector<const Tensor *> &in, std::vector<Tensor> &out) {
  const Tensor &x = *in[0], &w = *in[1];
  Tensor &y = out[0];
  forEachConvProduct(a, x.shape, y.shape,
                     [&](int64_t o, int64_t i, int64_t k) { y.data[o] += x.data[i] * w.data[k]; });
  if (a.getBool("use_bias"))
    for (int64_t i = 0; i < y.size(); ++i)
      y.data[i] += in[2]->data[(i / spatialSize(y.shape)) % y.shape[1]];
}

// _conv3d_grad(ograd, data, weight): the gradients of data, weight and (with use_bias) bias.
void conv3dGradKernel(const Attrs &a, const std::vector<const Tensor *> &in,
                      std::vector<Tensor> &out) {
  const Tensor &g = *in[0], &x = *in[1], &w = *in[2];
  forEachConvProduct(a, x.shape, g.shape, [&](int64_t o, int64_t i, int64_t k) {
    out[0].data[i] += g.data[o] * w.data[k];
    out[1].data[k] += g.data[o] * x.data[i];
  });
  if (a.getBool("use_bias"))
    for (int64_t i = 0; i < g.size(); ++i)
      out[2].data[(i / spatialSize(g.shape)) % g.shape[1]] += g.data[i];
}

// `0 <= v < n` as an expression.
// rx on axes nn, ff, zz, yy, xx; with a bias, an add stage.
std::vector<ComputeRef> conv3dLower(const Attrs &a, const std::vector<ComputeRef> &in,
                                    const std::vector<Shape> &shapes,
                                    const std::vector<int> &types) {
  Window w = convWindow(a, nullptr);
  ComputeRef x = in[0], weight = in[1];
  std::vector<int64_t> before = {0, 0}, after = {0, 0};
  before.insert(before.end(), w.before.begin(), w.before.end());
  after.insert(after.end(), w.after.begin(), w.after.end());
  bool padded = std::any_of(before.begin(), before.end(), [](int64_t v) { return v; }) ||
                std::any_of(after.begin(), after.end(), [](int64_t v) { return v; });
  ComputeRef data = padded ? padCompute(x, before, after, 0) : x;
  int64_t groups = a.getInt("groups"), icg = x->shape[1] / groups,
          ocg = a.getInt("channels") / groups;
  IterVar rc = reduceAxis(icg, "rc");
  std::vector<IterVar> r = spatialAxes(w.size, "r");
  ComputeRef conv = compute(
      shapes[0], types[0],
      [&](const std::vector<Expr> &i) {
        Expr channel = groups == 1 ? rc.var : (i[1] / ocg) * icg + rc.var;
        std::vector<Expr> src = {i[0], channel}, tap = {i[1], rc.var};
        for (size_t d = 0; d < kAxes; ++d) {
          src.push_back(i[2 + d] * w.stride[d] + r[d].var * w.dilation[d]);
          tap.push_back(r[d].var);
        }
        return reduce(Combiner::Sum, read(data, src) * read(weight, tap), {rc, r[0], r[1], r[2]});
      },
      "compute", "conv3d", "", {"nn", "ff", "zz", "yy", "xx"});
  if (!a.getBool("use_bias"))
    return {conv};
  ComputeRef bias = in[2];
  return {compute(
      conv->shape, conv->dtype,
      [&](const std::vector<Expr> &i) { return read(conv, i) + read(bias, {i[1]}); }, "compute",
      "broadcast", "ax")};
}

// _conv3d_grad lowered as gathers: each data cell sums the output gradients whose window read
// it (a transposed convolution), the weight gradient correlates ograd with the data, the bias
// gradient sums ograd per channel.
std::vector<ComputeRef> conv3dGradLower(const Attrs &a, const std::vector<ComputeRef> &in,
                                        const std::vector<Shape> &shapes,
                                        const std::vector<int> &types) {
  Window w = convWindow(a, nullptr);
  ComputeRef g = in[0], x = in[1], weight = in[2];
  int64_t groups = a.getInt("groups"), channels = a.getInt("channels");
  int64_t icg = x->shape[1] / groups, ocg = channels / groups;
  int dt = types[0];
  IterVar ro = reduceAxis(ocg, "ro");
  std::vector<IterVar> k = spatialAxes(w.size, "k");
  ComputeRef dx = compute(
      shapes[0], dt,
      [&](const std::vector<Expr> &i) {
        Expr oc = groups == 1 ? ro.var : (i[1] / icg) * ocg + ro.var;
        Expr ic = groups == 1 ? i[1] : i[1] % icg;
        std::vector<Expr> o = {i[0], oc}, tap = {oc, ic};
        Expr cond;
        for (size_t d = 0; d < kAxes; ++d) {
          auto [at, exact] = exactQuotient(i[2 + d] + w.before[d] - k[d].var * w.dilation[d],
                                           w.stride[d], g->shape[2 + d]);
          o.push_back(at);
          tap.push_back(k[d].var);
          cond = cond ? land(cond, exact) : exact;
        }
        return reduce(Combiner::Sum, read(g, o) * read(weight, tap), {ro, k[0], k[1], k[2]}, cond);
      },
      "compute", "conv3d_grad", "ax");
  IterVar rn = reduceAxis(g->shape[0], "rn");
  std::vector<IterVar> r = spatialAxes(Shape(g->shape.begin() + 2, g->shape.end()), "r");
  ComputeRef dw = compute(
      shapes[1], dt,
      [&](const std::vector<Expr> &i) {
        Expr c = groups == 1 ? i[1] : (i[0] / ocg) * icg + i[1];
        std::vector<Expr> o = {rn.var, i[0]}, src = {rn.var, c};
        Expr inside;
        for (size_t d = 0; d < kAxes; ++d) {
          Expr at = r[d].var * w.stride[d] - w.before[d] + i[2 + d] * w.dilation[d];
          o.push_back(r[d].var);
          src.push_back(at);
          inside = inside ? land(inside, within(at, x->shape[2 + d])) : within(at, x->shape[2 + d]);
        }
        return reduce(Combiner::Sum, read(g, o) * read(x, src), {rn, r[0], r[1], r[2]}, inside);
      },
      "compute", "conv3d_grad", "ax");
  if (!a.getBool("use_bias"))
    return {dx, dw};
  ComputeRef db = compute(
      {channels}, types[2],
      [&](const std::vector<Expr> &c) {
        return reduce(Combiner::Sum, read(g, {rn.var, c[0], r[0].var, r[1].var, r[2].var}),
                      {rn, r[0], r[1], r[2]});
      },
      "compute", "reduce", "ax");
  return {dx, dw, db};
}

} // namespace

void registerConv3dOps() {
  OpDef &conv3d = convCommon("conv3d", "3-D convolution (NCDHW data, OIDHW weight)", kVolumeAxes);
  conv3d.argsFn = dataWeightBias;
  conv3d.setPattern(kOutEWiseFusable)
      .layout(volumeLayout)
      .shape(conv3dShape)
      .symbolic(symConv3d)
      .kernel(conv3dKernel)
      .lower(conv3dLower)
      .grad(throughGradOp("_conv3d_grad"));
  OpDef &conv3dGrad =
      convCommon("_conv3d_grad", "gradients of conv3d's data, weight and bias", kVolumeAxes);
  conv3dGrad.arguments({"ograd", "data", "weight"});
  conv3dGrad.numOutputsFn = [](const Attrs &a) { return a.getBool("use_bias") ? 3 : 2; };
  conv3dGrad.setPattern(kOpaque)
      .symbolic(symLikeInputs({1, 2}))
      .shape([](ShapeCtx &c) {
        convWindow(c.attrs, &c);
        for (size_t k : {1, 2})
          if (c.in[k].rankKnown())
            c.assignOut(k - 1, c.in[k]);
        if (c.attrs.getBool("use_bias"))
          c.assignOut(2, {c.attrs.getInt("channels")});
      })
      .kernel(conv3dGradKernel)
      .lower(conv3dGradLower);
}

} // namespace loupe::ops
