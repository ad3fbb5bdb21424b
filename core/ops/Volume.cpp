// Volume ops: 3-D convolution and pooling over NCDHW data (conv3d with OIDHW weights,
// max_pool3d, avg_pool3d) and their gradients, for video and medical-imaging networks.
#include "core/ops/OpHelpers.h"

#include <cmath>
#include <limits>

namespace loupe::ops {

namespace {

using namespace loupe::loop;

constexpr size_t kAxes = 3; // D, H, W

/// A sliding window over the spatial axes: per axis its size, stride, dilation and padding
/// before and after.
struct Window {
  std::vector<int64_t> size, stride, dilation, before, after;
  /// The span of input the window covers along axis a.
  int64_t span(size_t a) const { return (size[a] - 1) * dilation[a] + 1; }
};

// Reads a volume op's window from its attributes, checking them (errors through `c` while
// inferring shapes). `sizeKey` names the window's size; `dilated` ops have `dilation`.
Window windowOf(const Attrs &a, ShapeCtx *c, const char *sizeKey, bool dilated) {
  auto err = [&](const std::string &m) {
    if (c)
      c->error(m);
    fail(m);
  };
  auto three = [&](const char *key) {
    const auto &t = a.getTuple(key);
    if (t.size() != kAxes)
      err(cat("attribute '", key, "' must have 3 values, got ", shapeToTuple(t)));
    return t;
  };
  Window w;
  w.size = three(sizeKey);
  w.stride = three("strides");
  w.dilation = dilated ? three("dilation") : std::vector<int64_t>(kAxes, 1);
  const auto &p = a.getTuple("padding");
  if (p.size() != kAxes && p.size() != 2 * kAxes)
    err(cat("attribute 'padding' must have 3 or 6 values, got ", shapeToTuple(p)));
  w.before.assign(p.begin(), p.begin() + kAxes);
  w.after.assign(p.end() - kAxes, p.end());
  for (size_t d = 0; d < kAxes; ++d) {
    if (w.size[d] <= 0 || w.stride[d] <= 0 || w.dilation[d] <= 0)
      err(cat(sizeKey, ", strides and dilation must be positive"));
    if (w.before[d] < 0 || w.after[d] < 0)
      err("padding must not be negative");
  }
  return w;
}

// Checks the layout (NCDHW) and, once known, that the data is 5-D; false while it is unknown.
bool ncdhwInput(ShapeCtx &c) {
  if (c.attrs.getStr("layout") != "NCDHW")
    c.error(cat("layout '", c.attrs.getStr("layout"), "' is not supported (only NCDHW)"));
  if (c.in[0].empty())
    return false;
  if (c.in[0].size() != 2 + kAxes)
    c.error(cat("data must be 5-D (NCDHW), got ", shapeToList(c.in[0])));
  return true;
}

// The output's D, H, W for data `d`: (in + before + after - span) / stride + 1, rounded up
// with `ceil`. An unknown (0) input size stays unknown.
Shape windowOutput(ShapeCtx &c, const Window &w, const Shape &d, bool ceil) {
  Shape o(kAxes);
  for (size_t a = 0; a < kAxes; ++a) {
    int64_t in = d[2 + a], room = in + w.before[a] + w.after[a] - w.span(a);
    if (in && room < 0)
      c.error(cat("the window ", shapeToTuple(w.size), " is larger than the padded input ",
                  shapeToList(d)));
    o[a] = in ? (ceil ? room + w.stride[a] - 1 : room) / w.stride[a] + 1 : 0;
  }
  return o;
}

/// One tap of a window: output position `out` and kernel tap `tap` (flat over D, H, W) read
/// input position `in`, or -1 in the padding; `counted` when it lies inside the padded input
/// (what count_include_pad counts).
struct Tap {
  int64_t out, tap, in;
  bool counted;
};

// Every tap of every output position, in order of output position, then tap.
std::vector<Tap> windowTaps(const Window &w, const Shape &in, const Shape &out) {
  std::vector<Tap> taps;
  int64_t o = 0;
  forEachIndex(Shape(out.begin() + 2, out.end()), [&](const std::vector<int64_t> &op) {
    int64_t t = 0;
    forEachIndex(w.size, [&](const std::vector<int64_t> &k) {
      int64_t flat = 0;
      bool inside = true, counted = true;
      for (size_t a = 0; a < kAxes; ++a) {
        int64_t at = op[a] * w.stride[a] - w.before[a] + k[a] * w.dilation[a];
        inside = inside && at >= 0 && at < in[2 + a];
        counted = counted && at < in[2 + a] + w.after[a];
        flat = flat * in[2 + a] + at;
      }
      taps.push_back({o, t++, inside ? flat : -1, counted});
    });
    ++o;
  });
  return taps;
}

int64_t spatialSize(const Shape &s) { return s[2] * s[3] * s[4]; }

// ---- conv3d -------------------------------------------------------------------------------

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

// Calls fn(output, input, weight) flat offsets for every product of a grouped conv3d: the walk
// the forward kernel and its gradient share.
template <typename Fn>
void forEachConvProduct(const Attrs &a, const Shape &xs, const Shape &os, Fn fn) {
  Window w = convWindow(a, nullptr);
  int64_t groups = a.getInt("groups"), icg = xs[1] / groups, ocg = os[1] / groups;
  int64_t in = spatialSize(xs), out = spatialSize(os), taps = numElements(w.size);
  std::vector<Tap> walk = windowTaps(w, xs, os);
  for (int64_t n = 0; n < xs[0]; ++n)
    for (int64_t oc = 0; oc < os[1]; ++oc)
      for (int64_t ic = 0; ic < icg; ++ic) {
        int64_t x0 = (n * xs[1] + oc / ocg * icg + ic) * in, o0 = (n * os[1] + oc) * out,
                w0 = (oc * icg + ic) * taps;
        for (const Tap &t : walk)
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
Expr within(const Expr &v, int64_t n) { return land(le(intImm(0), v), lt(v, intImm(n))); }

// One reduction axis per spatial axis, named prefix + z, y, x.
std::vector<IterVar> spatialAxes(const Shape &extents, const std::string &prefix) {
  std::vector<IterVar> r;
  for (size_t a = 0; a < kAxes; ++a)
    r.push_back(reduceAxis(extents[a], prefix + "zyx"[a]));
  return r;
}

// topi's conv3d_ncdhw: the padded input (when there is padding), then a sum over rc, rz, ry,
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

// ---- max_pool3d, avg_pool3d -----------------------------------------------------------------

Window poolWindow(const Attrs &a, ShapeCtx *c) { return windowOf(a, c, "pool_size", false); }

void pool3dShape(ShapeCtx &c) {
  Window w = poolWindow(c.attrs, &c);
  if (!ncdhwInput(c))
    return;
  const Shape &d = c.in[0];
  Shape o = {d[0], d[1]};
  Shape spatial = windowOutput(c, w, d, c.attrs.getBool("ceil_mode"));
  o.insert(o.end(), spatial.begin(), spatial.end());
  c.assignOut(0, o);
}

// Calls fn(nc, out, cells, count) for every window: its flat output offset, the flat input
// offsets it reads and the count an average divides by (the cells, or with count_include_pad
// the cells inside the padded input).
template <typename Fn>
void forEachPoolWindow(const Attrs &a, bool isMax, const Shape &xs, const Shape &os, Fn fn) {
  Window w = poolWindow(a, nullptr);
  bool includePad = !isMax && a.getBool("count_include_pad");
  std::vector<Tap> walk = windowTaps(w, xs, os);
  int64_t in = spatialSize(xs), out = spatialSize(os);
  std::vector<int64_t> cells;
  for (int64_t nc = 0; nc < xs[0] * xs[1]; ++nc)
    for (size_t t = 0; t < walk.size();) {
      int64_t o = walk[t].out, count = 0;
      cells.clear();
      for (; t < walk.size() && walk[t].out == o; ++t) {
        if (walk[t].in >= 0)
          cells.push_back(nc * in + walk[t].in);
        count += includePad ? walk[t].counted : walk[t].in >= 0;
      }
      fn(nc * out + o, cells, count);
    }
}

ComputeFn pool3dKernel(bool isMax) {
  return [isMax](const Attrs &a, const std::vector<const Tensor *> &in, std::vector<Tensor> &out) {
    const Tensor &x = *in[0];
    forEachPoolWindow(a, isMax, x.shape, out[0].shape,
                      [&](int64_t o, const std::vector<int64_t> &cells, int64_t count) {
                        double acc = isMax ? -std::numeric_limits<double>::infinity() : 0.0;
                        for (int64_t c : cells)
                          acc = isMax ? std::max(acc, x.data[c]) : acc + x.data[c];
                        out[0].data[o] =
                            isMax ? acc : (count ? acc / static_cast<double>(count) : 0.0);
                      });
  };
}

// Pool gradients: a window's output gradient goes to its first maximum (row-major over D, H,
// W) or is spread evenly over the count the average divided by.
ComputeFn pool3dGradKernel(bool isMax) {
  return [isMax](const Attrs &a, const std::vector<const Tensor *> &in, std::vector<Tensor> &out) {
    const Tensor &g = *in[0], &x = *in[1];
    forEachPoolWindow(a, isMax, x.shape, g.shape,
                      [&](int64_t o, const std::vector<int64_t> &cells, int64_t count) {
                        if (isMax && !cells.empty()) {
                          int64_t best = cells[0];
                          for (int64_t c : cells)
                            if (x.data[c] > x.data[best])
                              best = c;
                          out[0].data[best] += g.data[o];
                        } else if (!isMax && count > 0) {
                          for (int64_t c : cells)
                            out[0].data[c] += g.data[o] / static_cast<double>(count);
                        }
                      });
  };
}

// The input coordinates window `o` (output indices) reads at taps `k`, and whether all lie
// inside the input.
std::pair<std::vector<Expr>, Expr> windowRead(const Window &w, const Shape &xs,
                                              const std::vector<Expr> &o,
                                              const std::vector<Expr> &k) {
  std::vector<Expr> idx = {o[0], o[1]};
  Expr inside;
  for (size_t d = 0; d < kAxes; ++d) {
    Expr at = o[2 + d] * w.stride[d] + k[d] - w.before[d];
    idx.push_back(at);
    inside = inside ? land(inside, within(at, xs[2 + d])) : within(at, xs[2 + d]);
  }
  return {idx, inside};
}

// The count an average pool's window at output `o` divides by, as the reference kernel counts.
Expr windowCount(const Window &w, const Shape &xs, bool includePad, const std::vector<Expr> &o) {
  Expr count;
  for (size_t d = 0; d < kAxes; ++d) {
    Expr start = o[2 + d] * w.stride[d] - w.before[d];
    Expr n = includePad ? min(intImm(w.size[d]), intImm(xs[2 + d] + w.after[d]) - start)
                        : min(start + w.size[d], intImm(xs[2 + d])) - max(start, intImm(0));
    count = count ? count * n : n;
  }
  return count;
}

std::vector<Expr> vars(const std::vector<IterVar> &r) {
  std::vector<Expr> v;
  for (const IterVar &i : r)
    v.push_back(i.var);
  return v;
}

// A max or sum over each window (cells outside the input skipped), then for the average a
// division by the reference kernel's count.
LowerFn pool3dLower(bool isMax) {
  return [isMax](const Attrs &a, const std::vector<ComputeRef> &in,
                 const std::vector<Shape> &shapes, const std::vector<int> &types) {
    Window w = poolWindow(a, nullptr);
    ComputeRef x = in[0];
    int dt = types[0];
    std::vector<IterVar> r = spatialAxes(w.size, "r");
    ComputeRef acc = compute(
        shapes[0], dt,
        [&](const std::vector<Expr> &i) {
          auto [idx, inside] = windowRead(w, x->shape, i, vars(r));
          return reduce(isMax ? Combiner::Max : Combiner::Sum, read(x, idx), r, inside);
        },
        "tensor", "pool3d", "ax");
    if (isMax)
      return std::vector<ComputeRef>{acc};
    bool includePad = a.getBool("count_include_pad");
    return std::vector<ComputeRef>{compute(
        shapes[0], dt,
        [&](const std::vector<Expr> &i) {
          Expr count = windowCount(w, x->shape, includePad, i);
          return select(gt(count, intImm(0)), read(acc, i) / cast(dt, count), constant(0, dt));
        },
        "tensor", "elemwise", "ax")};
  };
}

// Pool gradients gather: each data cell sums over the taps whose window exists. Max sends a
// window's gradient to its first maximum (a stage finds the maximum, another its first tap);
// the average divides it by the window's count.
LowerFn pool3dGradLower(bool isMax) {
  return [isMax](const Attrs &a, const std::vector<ComputeRef> &in,
                 const std::vector<Shape> &shapes, const std::vector<int> &types) {
    Window w = poolWindow(a, nullptr);
    ComputeRef g = in[0], x = in[1];
    int dt = types[0];
    int64_t taps = numElements(w.size);
    // The flat tap number of tap indices k.
    auto tapNumber = [&](const std::vector<Expr> &k) {
      return (k[0] * w.size[1] + k[1]) * w.size[2] + k[2];
    };
    ComputeRef first;
    if (isMax) {
      auto windowStage = [&](Combiner c,
                             const std::function<Expr(const std::vector<Expr> &, const Expr &,
                                                      const std::vector<Expr> &)> &term) {
        std::vector<IterVar> r = spatialAxes(w.size, "r");
        return compute(
            g->shape, dt,
            [&](const std::vector<Expr> &i) {
              auto [idx, inside] = windowRead(w, x->shape, i, vars(r));
              return reduce(c, term(i, read(x, idx), vars(r)), r, inside);
            },
            "tensor", "pool3d", "ax");
      };
      ComputeRef m = windowStage(Combiner::Max, [](const std::vector<Expr> &, const Expr &v,
                                                   const std::vector<Expr> &) { return v; });
      first = windowStage(Combiner::Min, [&](const std::vector<Expr> &i, const Expr &v,
                                             const std::vector<Expr> &k) {
        return select(eq(v, read(m, i)), cast(dt, tapNumber(k)), constant(taps, dt));
      });
    }
    bool includePad = !isMax && a.getBool("count_include_pad");
    std::vector<IterVar> k = spatialAxes(w.size, "k");
    return std::vector<ComputeRef>{compute(
        shapes[0], dt,
        [&](const std::vector<Expr> &i) {
          std::vector<Expr> o = {i[0], i[1]};
          Expr cond;
          for (size_t d = 0; d < kAxes; ++d) {
            auto [at, exact] =
                exactQuotient(i[2 + d] + w.before[d] - k[d].var, w.stride[d], g->shape[2 + d]);
            o.push_back(at);
            cond = cond ? land(cond, exact) : exact;
          }
          Expr v = isMax ? select(eq(read(first, o), cast(dt, tapNumber(vars(k)))), read(g, o),
                                  constant(0, dt))
                         : read(g, o) / cast(dt, windowCount(w, x->shape, includePad, o));
          return reduce(Combiner::Sum, v, k, cond);
        },
        "compute", "pool3d_grad", "ax")};
  };
}

// Data (and output) in `layout`; a convolution's weight in `kernel_layout`, its bias "C".
void volumeLayout(const Attrs &a, std::vector<std::string> &in, const std::vector<std::string> &,
                  std::vector<std::string> &out) {
  in[0] = a.getStr("layout");
  if (in.size() > 1)
    in[1] = a.getStr("kernel_layout");
  if (in.size() > 2)
    in[2] = "C";
  out[0] = a.getStr("layout");
}

OpDef &conv3dOp(const char *name, const char *doc) {
  return OpRegistry::get()
      .add(name)
      .describe(doc)
      .param("channels", ParamKind::Int, std::nullopt, "number of output channels")
      .param("kernel_size", ParamKind::Tuple, std::nullopt, "(kd, kh, kw)")
      .param("strides", ParamKind::Tuple, "(1, 1, 1)", "(sd, sh, sw)")
      .param("padding", ParamKind::Tuple, "(0, 0, 0)",
             "(pd, ph, pw) on both sides, or (front, top, left, back, bottom, right)")
      .param("dilation", ParamKind::Tuple, "(1, 1, 1)", "(dd, dh, dw)")
      .param("groups", ParamKind::Int, "1", "grouped convolution")
      .param("layout", ParamKind::Str, "NCDHW", "data layout")
      .param("kernel_layout", ParamKind::Str, "OIDHW", "weight layout")
      .param("use_bias", ParamKind::Bool, "True", "whether a bias input exists");
}

OpDef &pool3dOp(const char *name, const char *doc, bool isMax) {
  OpDef &op = OpRegistry::get()
                  .add(name)
                  .describe(doc)
                  .param("pool_size", ParamKind::Tuple, std::nullopt, "(kd, kh, kw)")
                  .param("strides", ParamKind::Tuple, "(1, 1, 1)", "(sd, sh, sw)")
                  .param("padding", ParamKind::Tuple, "(0, 0, 0)",
                         "(pd, ph, pw) on both sides, or (front, top, left, back, bottom, right)")
                  .param("layout", ParamKind::Str, "NCDHW", "data layout")
                  .param("ceil_mode", ParamKind::Bool, "False", "round the output size up");
  if (!isMax)
    op.param("count_include_pad", ParamKind::Bool, "False", "count padding cells in the mean");
  return op;
}

} // namespace

void registerVolumeOps() {
  OpDef &conv = conv3dOp("conv3d", "3-D convolution (NCDHW data, OIDHW weight)");
  conv.argsFn = dataWeightBias;
  conv.setPattern(kOutEWiseFusable)
      .layout(volumeLayout)
      .shape(conv3dShape)
      .kernel(conv3dKernel)
      .lower(conv3dLower)
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        NodeEntry cg =
            mk("_conv3d_grad", n->name + "_grad", {g[0], n->inputs[0], n->inputs[1]}, n->attrs);
        std::vector<NodeEntry> out;
        for (uint32_t k = 0; k < n->inputs.size(); ++k)
          out.push_back(outOf(cg.node, k));
        return out;
      });
  OpDef &cgrad = conv3dOp("_conv3d_grad", "gradients of conv3d's data, weight and bias");
  cgrad.arguments({"ograd", "data", "weight"});
  cgrad.numOutputsFn = [](const Attrs &a) { return a.getBool("use_bias") ? 3 : 2; };
  cgrad.setPattern(kOpaque)
      .shape([](ShapeCtx &c) {
        convWindow(c.attrs, &c);
        for (size_t k : {1, 2})
          if (!c.in[k].empty())
            c.assignOut(k - 1, c.in[k]);
        if (c.attrs.getBool("use_bias"))
          c.assignOut(2, {c.attrs.getInt("channels")});
      })
      .kernel(conv3dGradKernel)
      .lower(conv3dGradLower);

  for (bool isMax : {true, false}) {
    std::string name = isMax ? "max_pool3d" : "avg_pool3d", grad = "_" + name + "_grad";
    pool3dOp(name.c_str(), isMax ? "3-D max pooling (NCDHW)" : "3-D average pooling (NCDHW)", isMax)
        .setPattern(kOutEWiseFusable)
        .layout(volumeLayout)
        .shape(pool3dShape)
        .kernel(pool3dKernel(isMax))
        .lower(pool3dLower(isMax))
        .grad([grad](const NodePtr &n, const std::vector<NodeEntry> &g) {
          return std::vector<NodeEntry>{
              mk(grad, n->name + "_grad", {g[0], n->inputs[0]}, n->attrs)};
        });
    pool3dOp(grad.c_str(), isMax ? "gradient of max_pool3d" : "gradient of avg_pool3d", isMax)
        .arguments({"ograd", "data"})
        .setPattern(kOpaque)
        .shape([](ShapeCtx &c) {
          poolWindow(c.attrs, &c);
          if (!c.in[1].empty())
            c.assignOut(0, c.in[1]);
        })
        .kernel(pool3dGradKernel(isMax))
        .lower(pool3dGradLower(isMax));
  }
}

} // namespace loupe::ops
