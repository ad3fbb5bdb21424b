// Pooling ops: max/avg pooling over 2-D (NCHW, or NCHW<k>c at opt level 3) and 3-D (NCDHW) data,
// global pooling and upsampling (NCHW), with their gradients.
#include "core/ops/OpHelpers.h"
#include "core/ops/Window.h"

#include "core/Error.h"
#include "core/Layout.h"

#include <cmath>
#include <functional>
#include <limits>

namespace loupe::ops {

namespace {

struct PoolParams {
  int64_t kh, kw, sh, sw, pt, pl, pb, pr;
  bool ceil;
};

PoolParams poolParams(const Attrs &a, ShapeCtx *c) {
  auto err = [&](const std::string &m) {
    if (c)
      c->error(m);
    fail(m);
  };
  const auto &k = a.getTuple("pool_size");
  const auto &s = a.getTuple("strides");
  const auto &p = a.getTuple("padding");
  if (k.size() != 2)
    err(cat("attribute 'pool_size' must have 2 values, got ", shapeToTuple(k)));
  if (s.size() != 2)
    err(cat("attribute 'strides' must have 2 values, got ", shapeToTuple(s)));
  if (p.size() != 2 && p.size() != 4)
    err(cat("attribute 'padding' must have 2 or 4 values, got ", shapeToTuple(p)));
  if (k[0] <= 0 || k[1] <= 0 || s[0] <= 0 || s[1] <= 0)
    err("pool_size and strides must be positive");
  PoolParams r{k[0], k[1], s[0], s[1], p[0], p[1], p[0], p[1], a.getBool("ceil_mode")};
  if (p.size() == 4) {
    r.pb = p[2];
    r.pr = p[3];
  }
  return r;
}

int64_t poolOut(int64_t in, int64_t k, int64_t s, int64_t pa, int64_t pb, bool ceil) {
  int64_t span = in + pa + pb - k;
  return (ceil ? span + s - 1 : span) / s + 1;
}

// The channel block of a pool's layout: 0 for NCHW, k for NCHW<k>c (opt level 3 runs pools on
// blocked data: H and W stay axes 2 and 3, the block trails).
int64_t poolBlock(const std::string &layout) {
  if (layout == "NCHW")
    return 0;
  std::vector<LayoutAxis> axes = parseLayout(layout);
  if (axes.size() == 5 && layout.rfind("NCHW", 0) == 0 && axes[4].name == 'c')
    return axes[4].factor;
  fail("layout '", layout, "' is not supported (only NCHW and NCHW<k>c)");
}

// Checks a pool's data against its layout; false while the shape is unknown.
bool poolInput(ShapeCtx &c) {
  int64_t block = 0;
  try {
    block = poolBlock(c.attrs.getStr("layout"));
  } catch (const Error &e) {
    c.error(e.what());
  }
  if (block == 0)
    return nchwInput(c);
  if (!c.in[0].rankKnown())
    return false;
  if (c.in[0].size() != 5 || c.in[0][4] != block)
    c.error(cat("data must be 5-D (", c.attrs.getStr("layout"), "), got ", shapeToList(c.in[0])));
  return true;
}

// A pool's reference kernel on any layout: NCHW as it is, a blocked layout through NCHW.
ComputeFn anyLayout(ComputeFn nchw) {
  return [nchw](const Attrs &a, const std::vector<const Tensor *> &in, std::vector<Tensor> &out) {
    const std::string &layout = a.getStr("layout");
    if (poolBlock(layout) == 0)
      return nchw(a, in, out);
    Tensor x = transformLayout(*in[0], layout, "NCHW");
    std::vector<Tensor> plain = {
        Tensor(convertLayoutShape(out[0].shape, layout, "NCHW"), out[0].dtype)};
    nchw(a, {&x}, plain);
    out[0] = transformLayout(plain[0], "NCHW", layout);
  };
}

// The input element at (n, c, y, x) of output index `i`, in a 4-D or blocked 5-D layout.
std::vector<loop::Expr> poolIndex(const std::vector<loop::Expr> &i, loop::Expr y, loop::Expr x) {
  std::vector<loop::Expr> idx = {i[0], i[1], std::move(y), std::move(x)};
  if (i.size() == 5)
    idx.push_back(i[4]);
  return idx;
}

void poolShape(ShapeCtx &c) {
  PoolParams p = poolParams(c.attrs, &c);
  if (!poolInput(c))
    return;
  const Shape &d = c.in[0];
  if (d[2] && d[3] && (d[2] + p.pt + p.pb < p.kh || d[3] + p.pl + p.pr < p.kw))
    c.error(
        cat("pool_size ", p.kh, "x", p.kw, " is larger than the padded input ", shapeToList(d)));
  Shape o = d;
  o[2] = d[2] ? poolOut(d[2], p.kh, p.sh, p.pt, p.pb, p.ceil) : 0;
  o[3] = d[3] ? poolOut(d[3], p.kw, p.sw, p.pl, p.pr, p.ceil) : 0;
  c.assignOut(0, o);
}

// poolShape's rule over symbolic dimensions (NCHW or NCHW<k>c: H and W are axes 2 and 3).
std::vector<SymDims> symPool(const SymShapeCtx &c) {
  PoolParams p = poolParams(c.attrs, nullptr);
  SymDims o = c.in[0];
  if (o.size() < 4)
    c.error("data must be 4-D or blocked 5-D");
  auto out = [](const SymExpr &in, int64_t k, int64_t s, int64_t pa, int64_t pb, bool ceil) {
    SymExpr span = in + SymExpr(pa + pb - k + (ceil ? s - 1 : 0));
    return SymExpr::floorDiv(span, s) + SymExpr(1);
  };
  o[2] = out(o[2], p.kh, p.sh, p.pt, p.pb, p.ceil);
  o[3] = out(o[3], p.kw, p.sw, p.pl, p.pr, p.ceil);
  return {o};
}

std::vector<SymDims> symGlobalPool(const SymShapeCtx &c) {
  SymDims o = c.in[0];
  if (o.size() < 4)
    c.error("data must be 4-D or blocked 5-D");
  o[2] = o[3] = SymExpr(1);
  return {o};
}

ComputeFn poolKernel(bool isMax) {
  return [isMax](const Attrs &a, const std::vector<const Tensor *> &in, std::vector<Tensor> &out) {
    PoolParams p = poolParams(a, nullptr);
    bool includePad = !isMax && a.getBool("count_include_pad");
    const Tensor &x = *in[0];
    int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3];
    int64_t OH = out[0].shape[2], OW = out[0].shape[3];
    for (int64_t nc = 0; nc < N * C; ++nc)
      for (int64_t oy = 0; oy < OH; ++oy)
        for (int64_t ox = 0; ox < OW; ++ox) {
          double acc = isMax ? -std::numeric_limits<double>::infinity() : 0.0;
          int64_t count = 0;
          int64_t y0 = oy * p.sh - p.pt, x0 = ox * p.sw - p.pl;
          for (int64_t ky = 0; ky < p.kh; ++ky)
            for (int64_t kx = 0; kx < p.kw; ++kx) {
              int64_t iy = y0 + ky, ix = x0 + kx;
              bool inside = iy >= 0 && iy < H && ix >= 0 && ix < W;
              // count_include_pad counts the padding cells, but not cells past the padded
              // border that ceil_mode adds.
              if (includePad && iy < H + p.pb && ix < W + p.pr)
                ++count;
              if (!inside)
                continue;
              double v = x.data[(nc * H + iy) * W + ix];
              if (isMax)
                acc = std::max(acc, v);
              else
                acc += v;
              if (!includePad)
                ++count;
            }
          out[0].data[(nc * OH + oy) * OW + ox] =
              isMax ? acc : (count ? acc / static_cast<double>(count) : 0.0);
        }
  };
}

// Pool gradients: each window's output gradient goes to the window's maximum (the first one,
// row-major, on ties) or is spread evenly over the cells the average counted.
ComputeFn poolGradKernel(bool isMax) {
  return [isMax](const Attrs &a, const std::vector<const Tensor *> &in, std::vector<Tensor> &out) {
    PoolParams p = poolParams(a, nullptr);
    bool includePad = !isMax && a.getBool("count_include_pad");
    const Tensor &g = *in[0], &x = *in[1];
    int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3];
    int64_t OH = g.shape[2], OW = g.shape[3];
    for (int64_t nc = 0; nc < N * C; ++nc)
      for (int64_t oy = 0; oy < OH; ++oy)
        for (int64_t ox = 0; ox < OW; ++ox) {
          double gv = g.data[(nc * OH + oy) * OW + ox];
          int64_t y0 = oy * p.sh - p.pt, x0 = ox * p.sw - p.pl, best = -1, count = 0;
          double bestV = 0;
          std::vector<int64_t> cells;
          for (int64_t ky = 0; ky < p.kh; ++ky)
            for (int64_t kx = 0; kx < p.kw; ++kx) {
              int64_t iy = y0 + ky, ix = x0 + kx;
              if (includePad && iy < H + p.pb && ix < W + p.pr)
                ++count;
              if (iy < 0 || iy >= H || ix < 0 || ix >= W)
                continue;
              int64_t off = (nc * H + iy) * W + ix;
              cells.push_back(off);
              if (!includePad)
                ++count;
              if (best < 0 || x.data[off] > bestV) {
                best = off;
                bestV = x.data[off];
              }
            }
          if (isMax && best >= 0)
            out[0].data[best] += gv;
          else if (!isMax && count > 0)
            for (int64_t off : cells)
              out[0].data[off] += gv / static_cast<double>(count);
        }
  };
}

// Pooling and upsampling work in their `layout`: data and output both use it.
void layoutFromAttr(const Attrs &a, std::vector<std::string> &in, const std::vector<std::string> &,
                    std::vector<std::string> &out) {
  in[0] = a.getStr("layout");
  out[0] = a.getStr("layout");
}

// How many cells the average of window (oy, ox) divides by, as the reference kernel counts.
loop::Expr windowCount(const PoolParams &p, int64_t H, int64_t W, bool includePad,
                       const loop::Expr &oy, const loop::Expr &ox) {
  using namespace loop;
  Expr y0 = oy * p.sh - p.pt, x0 = ox * p.sw - p.pl;
  Expr rows = includePad ? min(intImm(p.kh), intImm(H + p.pb) - y0)
                         : min(y0 + p.kh, intImm(H)) - max(y0, intImm(0));
  Expr cols = includePad ? min(intImm(p.kw), intImm(W + p.pr) - x0)
                         : min(x0 + p.kw, intImm(W)) - max(x0, intImm(0));
  return rows * cols;
}

// Pool gradients gather: each data cell sums over the kernel taps (ry, rx) whose window
// (oy, ox) = ((h + pt - ry) / sh, (w + pl - rx) / sw) exists. Max sends a window's gradient to
// its first maximum in row-major order (a stage finds the maximum, another its first tap);
// average divides it by the window's count.
LowerFn poolGradLower(bool isMax) {
  return [isMax](const Attrs &a, const std::vector<loop::ComputeRef> &in,
                 const std::vector<Shape> &shapes, const std::vector<int> &types) {
    using namespace loop;
    PoolParams p = poolParams(a, nullptr);
    ComputeRef g = in[0], x = in[1];
    int64_t H = x->shape[2], W = x->shape[3], OH = g->shape[2], OW = g->shape[3];
    int dt = types[0];
    ComputeRef first;
    if (isMax) {
      auto windowStage = [&](Combiner c,
                             const std::function<Expr(const std::vector<Expr> &, const Expr &,
                                                      const Expr &, const Expr &)> &term) {
        IterVar rv = reduceAxis(p.kh, "rv"), rw = reduceAxis(p.kw, "rw");
        return compute(
            g->shape, dt,
            [&](const std::vector<Expr> &i) {
              Expr iy = i[2] * p.sh + rv.var - p.pt, ix = i[3] * p.sw + rw.var - p.pl;
              Expr inside = land(land(le(intImm(0), iy), lt(iy, intImm(H))),
                                 land(le(intImm(0), ix), lt(ix, intImm(W))));
              return reduce(c, term(i, read(x, {i[0], i[1], iy, ix}), rv.var, rw.var), {rv, rw},
                            inside);
            },
            "tensor", "pool", "ax");
      };
      ComputeRef m = windowStage(Combiner::Max, [](const std::vector<Expr> &, const Expr &v,
                                                   const Expr &, const Expr &) { return v; });
      first = windowStage(Combiner::Min, [&](const std::vector<Expr> &i, const Expr &v,
                                             const Expr &ry, const Expr &rx) {
        return select(eq(v, read(m, i)), cast(dt, ry * p.kw + rx), constant(p.kh * p.kw, dt));
      });
    }
    bool includePad = !isMax && a.getBool("count_include_pad");
    IterVar ry = reduceAxis(p.kh, "ry"), rx = reduceAxis(p.kw, "rx");
    return std::vector<ComputeRef>{compute(
        shapes[0], dt,
        [&](const std::vector<Expr> &i) {
          auto [oy, cy] = exactQuotient(i[2] + p.pt - ry.var, p.sh, OH);
          auto [ox, cx] = exactQuotient(i[3] + p.pl - rx.var, p.sw, OW);
          std::vector<Expr> o = {i[0], i[1], oy, ox};
          Expr v = isMax ? select(eq(read(first, o), cast(dt, ry.var * p.kw + rx.var)), read(g, o),
                                  constant(0, dt))
                         : read(g, o) / cast(dt, windowCount(p, H, W, includePad, oy, ox));
          return reduce(Combiner::Sum, v, {ry, rx}, land(cy, cx));
        },
        "compute", "pool_grad", "ax")};
  };
}

// A pool's result from its window reductions `acc`: the maxima as they are, or the sums divided
// by each window's count (`count` of an output index; 0 where a window counts nothing).
std::vector<loop::ComputeRef>
poolResult(bool isMax, const loop::ComputeRef &acc,
           const std::function<loop::Expr(const std::vector<loop::Expr> &)> &count) {
  using namespace loop;
  if (isMax)
    return {acc};
  int dt = acc->dtype;
  return {compute(
      acc->shape, dt,
      [&](const std::vector<Expr> &i) {
        Expr n = count(i);
        return select(gt(n, intImm(0)), read(acc, i) / cast(dt, n), constant(0, dt));
      },
      "tensor", "elemwise", "ax")};
}

// topi's pool: a max or sum over the window (cells outside the input skipped, read lazily),
// then for the average a division by the count the reference kernel uses.
LowerFn poolLower(bool isMax) {
  return [isMax](const Attrs &a, const std::vector<loop::ComputeRef> &in,
                 const std::vector<Shape> &shapes, const std::vector<int> &types) {
    using namespace loop;
    PoolParams p = poolParams(a, nullptr);
    ComputeRef x = in[0];
    int64_t H = x->shape[2], W = x->shape[3];
    int dt = types[0];
    IterVar rv = reduceAxis(p.kh, "rv"), rw = reduceAxis(p.kw, "rw");
    ComputeRef acc = compute(
        shapes[0], dt,
        [&](const std::vector<Expr> &i) {
          Expr iy = i[2] * p.sh + rv.var - p.pt, ix = i[3] * p.sw + rw.var - p.pl;
          Expr inside = land(land(land(le(intImm(0), iy), lt(iy, intImm(H))), le(intImm(0), ix)),
                             lt(ix, intImm(W)));
          return reduce(isMax ? Combiner::Max : Combiner::Sum, read(x, poolIndex(i, iy, ix)),
                        {rv, rw}, inside);
        },
        "tensor", "pool", "ax");
    // (Only an average pool has count_include_pad, and only its result counts.)
    return poolResult(isMax, acc, [&](const std::vector<Expr> &i) {
      return windowCount(p, H, W, a.getBool("count_include_pad"), i[2], i[3]);
    });
  };
}

// Global pools: max or mean over H and W.
LowerFn globalPoolLower(bool isMax) {
  return [isMax](const Attrs &, const std::vector<loop::ComputeRef> &in,
                 const std::vector<Shape> &shapes, const std::vector<int> &types) {
    using namespace loop;
    ComputeRef x = in[0];
    IterVar rv = reduceAxis(x->shape[2], "rv"), rw = reduceAxis(x->shape[3], "rw");
    ComputeRef acc = compute(
        shapes[0], types[0],
        [&](const std::vector<Expr> &i) {
          return reduce(isMax ? Combiner::Max : Combiner::Sum,
                        read(x, poolIndex(i, rv.var, rw.var)), {rv, rw});
        },
        "tensor", "pool", "ax");
    if (isMax)
      return std::vector<ComputeRef>{acc};
    double n = static_cast<double>(x->shape[2] * x->shape[3]);
    return std::vector<ComputeRef>{compute(
        shapes[0], types[0],
        [&](const std::vector<Expr> &i) { return read(acc, i) / constant(n, types[0]); }, "tensor",
        "elemwise", "ax")};
  };
}

// The attributes every max or average pool of the family declares.
OpDef &poolCommon(const char *name, const char *doc, bool isMax, const SpatialAxes &ax) {
  OpDef &op = OpRegistry::get()
                  .add(name)
                  .describe(doc)
                  .param("pool_size", ParamKind::Tuple, std::nullopt, ax.window)
                  .param("strides", ParamKind::Tuple, ax.ones, ax.strides)
                  .param("padding", ParamKind::Tuple, ax.zeros, ax.poolPadding)
                  .param("layout", ParamKind::Str, ax.layout, "data layout")
                  .param("ceil_mode", ParamKind::Bool, "False", "round the output size up");
  if (!isMax)
    op.param("count_include_pad", ParamKind::Bool, "False", "count padding cells in the mean");
  return op;
}

OpDef &pool(const char *name, const char *doc, bool isMax) {
  OpDef &op = poolCommon(name, doc, isMax, kPlanarAxes)
                  .setPattern(kOutEWiseFusable)
                  .layout(layoutFromAttr)
                  .shape(poolShape)
                  .symbolic(symPool)
                  .kernel(anyLayout(poolKernel(isMax)));
  if (std::string(name)[0] != '_')
    op.lowerSymbolicBatch(poolLower(isMax)); // H and W read, the batch carried through
  return op;
}

ComputeFn globalPoolKernel(bool isMax) {
  return [isMax](const Attrs &, const std::vector<const Tensor *> &in, std::vector<Tensor> &out) {
    const Tensor &x = *in[0];
    int64_t HW = x.shape[2] * x.shape[3];
    for (int64_t nc = 0; nc < x.shape[0] * x.shape[1]; ++nc) {
      double acc = isMax ? -std::numeric_limits<double>::infinity() : 0.0;
      for (int64_t i = 0; i < HW; ++i)
        acc = isMax ? std::max(acc, x.data[nc * HW + i]) : acc + x.data[nc * HW + i];
      out[0].data[nc] = isMax ? acc : acc / static_cast<double>(HW);
    }
  };
}

OpDef &globalPool(const char *name, const char *doc, bool isMax) {
  return OpRegistry::get()
      .add(name)
      .describe(doc)
      .param("layout", ParamKind::Str, "NCHW", "data layout")
      .setPattern(kOutEWiseFusable)
      .layout(layoutFromAttr)
      .symbolic(symGlobalPool)
      .shape([](ShapeCtx &c) {
        if (!poolInput(c))
          return;
        Shape o = c.in[0];
        o[2] = o[3] = 1;
        c.assignOut(0, o);
      })
      .kernel(anyLayout(globalPoolKernel(isMax)))
      .lowerSymbolicBatch(globalPoolLower(isMax));
}

// Bilinear upsampling with aligned corners along one axis: output position `o` of `out` reads
// input positions `lo` and `hi` of `in` with weights 1 - w and w (as forEachUpsamplingTap).
struct AlignedTap {
  loop::Expr lo, hi, w;
  AlignedTap(const loop::Expr &o, int64_t in, int64_t out, int dt) {
    using namespace loop;
    if (out == 1 || in == 1) {
      lo = hi = intImm(0);
      w = constant(0, dt);
      return;
    }
    Expr scaled = o * (in - 1); // the source position is scaled / (out - 1)
    lo = scaled / (out - 1);
    hi = min(lo + 1, intImm(in - 1));
    w = cast(dt, scaled % (out - 1)) / constant(static_cast<double>(out - 1), dt);
  }
  /// The weight with which this output reads input position `h`.
  loop::Expr weightOf(const loop::Expr &h) const {
    using namespace loop;
    int dt = w->dtype;
    return select(eq(lo, h), constant(1, dt) - w, constant(0, dt)) +
           select(eq(hi, h), w, constant(0, dt));
  }
};

// Visits, for every output pixel of upsampling, the input pixels it reads and their weights
// (one at weight 1 for nearest neighbour, four for bilinear with align_corners). The kernel
// and its gradient share it.
template <typename Tap>
void forEachUpsamplingTap(const Attrs &a, const Shape &xs, const Shape &os, Tap tap) {
  int64_t H = xs[2], W = xs[3], OH = os[2], OW = os[3];
  bool bilinear = a.getStr("method") == "BILINEAR";
  for (int64_t nc = 0; nc < xs[0] * xs[1]; ++nc)
    for (int64_t oy = 0; oy < OH; ++oy)
      for (int64_t ox = 0; ox < OW; ++ox) {
        int64_t src = nc * H * W, oi = (nc * OH + oy) * OW + ox;
        if (!bilinear) {
          tap(oi, src + (oy * H / OH) * W + ox * W / OW, 1.0);
          continue;
        }
        // align_corners: output corners map onto input corners.
        double fy = OH > 1 ? static_cast<double>(oy) * (H - 1) / (OH - 1) : 0.0;
        double fx = OW > 1 ? static_cast<double>(ox) * (W - 1) / (OW - 1) : 0.0;
        int64_t y0 = static_cast<int64_t>(std::floor(fy)),
                x0 = static_cast<int64_t>(std::floor(fx));
        int64_t y1 = std::min(y0 + 1, H - 1), x1 = std::min(x0 + 1, W - 1);
        double wy = fy - y0, wx = fx - x0;
        tap(oi, src + y0 * W + x0, (1 - wy) * (1 - wx));
        tap(oi, src + y0 * W + x1, (1 - wy) * wx);
        tap(oi, src + y1 * W + x0, wy * (1 - wx));
        tap(oi, src + y1 * W + x1, wy * wx);
      }
}

void upsamplingKernel(const Attrs &a, const std::vector<const Tensor *> &in,
                      std::vector<Tensor> &out) {
  const Tensor &x = *in[0];
  forEachUpsamplingTap(a, x.shape, out[0].shape, [&](int64_t oi, int64_t xi, double w) {
    out[0].data[oi] += w * x.data[xi];
  });
}

// _upsampling_grad(g, data): each output's gradient back to the inputs it read, by weight.
void upsamplingGradKernel(const Attrs &a, const std::vector<const Tensor *> &in,
                          std::vector<Tensor> &out) {
  const Tensor &g = *in[0];
  forEachUpsamplingTap(a, out[0].shape, g.shape, [&](int64_t oi, int64_t xi, double w) {
    out[0].data[xi] += w * g.data[oi];
  });
}

// ---- max_pool3d, avg_pool3d -----------------------------------------------------------------

using namespace loupe::loop;

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

std::vector<SymDims> symPool3d(const SymShapeCtx &c) {
  Window w = poolWindow(c.attrs, nullptr);
  SymDims spatial = symWindowOutput(c, w, c.in[0], c.attrs.getBool("ceil_mode"));
  SymDims o = {c.in[0][0], c.in[0][1]};
  o.insert(o.end(), spatial.begin(), spatial.end());
  return {o};
}

// Calls fn(nc, out, cells, count) for every window: its flat output offset, the flat input
// offsets it reads and the count an average divides by (the cells, or with count_include_pad
// the cells inside the padded input).
template <typename Fn>
void forEachPoolWindow(const Attrs &a, bool isMax, const Shape &xs, const Shape &os, Fn fn) {
  Window w = poolWindow(a, nullptr);
  bool includePad = !isMax && a.getBool("count_include_pad");
  std::vector<WindowTap> walk = windowTaps(w, xs, os);
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
    return poolResult(isMax, acc, [&](const std::vector<Expr> &i) {
      return windowCount(w, x->shape, a.getBool("count_include_pad"), i);
    });
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

} // namespace

void registerPoolOps() {
  pool("max_pool2d", "2-D max pooling", true)
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        return std::vector<NodeEntry>{
            mk("_max_pool2d_grad", n->name + "_grad", {g[0], n->inputs[0], outOf(n)}, n->attrs)};
      });
  pool("avg_pool2d", "2-D average pooling", false)
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        return std::vector<NodeEntry>{
            mk("_avg_pool2d_grad", n->name + "_grad", {g[0], n->inputs[0]}, n->attrs)};
      });
  // The gradient ops take the pool's attributes; their output is shaped like the data.
  auto gradShape = [](ShapeCtx &c) {
    poolParams(c.attrs, &c);
    if (c.in[1].rankKnown())
      c.assignOut(0, c.in[1]);
  };
  pool("_max_pool2d_grad", "gradient of max_pool2d", true)
      .arguments({"ograd", "data", "output"})
      .layout(nullptr)
      .setPattern(kOpaque)
      .shape(gradShape)
      .symbolic(symLikeInputs({1}))
      .kernel(poolGradKernel(true))
      .lower(poolGradLower(true));
  pool("_avg_pool2d_grad", "gradient of avg_pool2d", false)
      .arguments({"ograd", "data"})
      .layout(nullptr)
      .setPattern(kOpaque)
      .shape(gradShape)
      .symbolic(symLikeInputs({1}))
      .kernel(poolGradKernel(false))
      .lower(poolGradLower(false));
  globalPool("global_max_pool2d", "max over H and W", true)
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        // g to the elements equal to the maximum of their channel.
        const NodeEntry &x = n->inputs[0];
        AttrDict hw{{"axis", "[2,3]"}, {"exclude", "0"}};
        NodeEntry y = mk("expand_like", n->name + "_grad_sub0", {outOf(n), x}, hw);
        NodeEntry lt = mk("less", n->name + "_grad_sub1", {x, y});
        NodeEntry gt = mk("greater", n->name + "_grad_sub2", {x, y});
        NodeEntry off = mk("elemwise_add", n->name + "_grad_sub3", {lt, gt});
        NodeEntry mask = mk("__rsub_scalar__", n->name + "_grad_sub4", {off}, {{"scalar", "1"}});
        NodeEntry gx = mk("expand_like", n->name + "_grad_sub5", {g[0], x}, hw);
        return std::vector<NodeEntry>{mk("elemwise_mul", n->name + "_grad", {gx, mask})};
      });
  globalPool("global_avg_pool2d", "mean over H and W", false)
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        // g / (H W), broadcast back over H and W.
        const NodeEntry &x = n->inputs[0];
        NodeEntry ones = mk("ones_like", n->name + "_grad_sub0", {x});
        NodeEntry count =
            mk("sum", n->name + "_grad_sub1", {ones}, {{"axis", "(2, 3)"}, {"keepdims", "1"}});
        NodeEntry q = mk("elemwise_div", n->name + "_grad_sub2", {g[0], count});
        return std::vector<NodeEntry>{
            mk("expand_like", n->name + "_grad", {q, x}, {{"axis", "[2,3]"}, {"exclude", "0"}})};
      });

  OpRegistry::get()
      .add("upsampling")
      .describe("scales H and W up by an integer factor")
      .param("scale", ParamKind::Int, std::nullopt, "integer scale factor")
      .param("layout", ParamKind::Str, "NCHW", "data layout")
      .param("method", ParamKind::Enum, "NEAREST_NEIGHBOR", "interpolation",
             {"NEAREST_NEIGHBOR", "BILINEAR"})
      .setPattern(kInjective)
      .layout(layoutFromAttr)
      .shape([](ShapeCtx &c) {
        int64_t s = c.attrs.getInt("scale");
        if (s <= 0)
          c.error("attribute 'scale' must be positive");
        if (!nchwInput(c))
          return;
        const Shape &d = c.in[0];
        c.assignOut(0, {d[0], d[1], d[2] * s, d[3] * s});
      })
      .symbolic([](const SymShapeCtx &c) {
        int64_t s = c.attrs.getInt("scale");
        if (s <= 0)
          c.error("attribute 'scale' must be positive");
        if (c.attrs.getStr("layout") != "NCHW")
          c.error(cat("layout '", c.attrs.getStr("layout"), "' is not supported (only NCHW)"));
        if (c.in[0].size() != 4)
          c.error(cat("data must be 4-D (NCHW), got ", shapeToList(Shape::symbolic(c.in[0]))));
        const SymDims &d = c.in[0];
        return std::vector<SymDims>{{d[0], d[1], d[2] * SymExpr(s), d[3] * SymExpr(s)}};
      })
      .kernel(upsamplingKernel)
      .lower([](const Attrs &a, const std::vector<loop::ComputeRef> &in,
                const std::vector<Shape> &shapes, const std::vector<int> &types) {
        using namespace loop;
        ComputeRef x = in[0];
        int64_t s = a.getInt("scale");
        if (a.getStr("method") == "BILINEAR") {
          int dt = types[0];
          return std::vector<ComputeRef>{compute(
              shapes[0], dt,
              [&](const std::vector<Expr> &i) {
                AlignedTap ty(i[2], x->shape[2], shapes[0][2], dt),
                    tx(i[3], x->shape[3], shapes[0][3], dt);
                auto at = [&](const Expr &y, const Expr &xx) {
                  return read(x, {i[0], i[1], y, xx});
                };
                Expr one = constant(1, dt);
                return (one - ty.w) * (one - tx.w) * at(ty.lo, tx.lo) +
                       (one - ty.w) * tx.w * at(ty.lo, tx.hi) +
                       ty.w * (one - tx.w) * at(ty.hi, tx.lo) + ty.w * tx.w * at(ty.hi, tx.hi);
              },
              "tensor", "injective", "ax")};
        }
        return std::vector<ComputeRef>{compute(
            shapes[0], types[0],
            [&](const std::vector<Expr> &i) {
              return read(x, {i[0], i[1], i[2] / s, i[3] / s});
            },
            "tensor", "injective", "ax")};
      })
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        // Nearest neighbour copies each input cell into an s x s block, so the cell's gradient
        // is the block's sum: s² times its average. Bilinear sends each output's gradient back
        // to its four inputs by weight.
        if (n->parsed.getStr("method") != "NEAREST_NEIGHBOR")
          return std::vector<NodeEntry>{
              mk("_upsampling_grad", n->name + "_grad", {g[0], n->inputs[0]}, n->attrs)};
        int64_t s = n->parsed.getInt("scale");
        std::string window = "(" + std::to_string(s) + ", " + std::to_string(s) + ")";
        NodeEntry avg = mk("avg_pool2d", n->name + "_grad_sub0", {g[0]},
                           {{"pool_size", window}, {"strides", window}});
        return std::vector<NodeEntry>{
            mk("__mul_scalar__", n->name + "_grad", {avg}, {{"scalar", std::to_string(s * s)}})};
      });
  OpRegistry::get()
      .add("_upsampling_grad")
      .describe("gradient of upsampling: each output's gradient back to the inputs it read")
      .arguments({"ograd", "data"})
      .param("scale", ParamKind::Int, std::nullopt, "integer scale factor")
      .param("layout", ParamKind::Str, "NCHW", "data layout")
      .param("method", ParamKind::Enum, "NEAREST_NEIGHBOR", "interpolation",
             {"NEAREST_NEIGHBOR", "BILINEAR"})
      .setPattern(kOpaque)
      .symbolic(symLikeInputs({1}))
      .shape([](ShapeCtx &c) {
        if (c.in[1].rankKnown())
          c.assignOut(0, c.in[1]);
      })
      .kernel(upsamplingGradKernel)
      .lower([](const Attrs &a, const std::vector<loop::ComputeRef> &in,
                const std::vector<Shape> &shapes, const std::vector<int> &types) {
        using namespace loop;
        ComputeRef g = in[0];
        int64_t s = a.getInt("scale"), H = shapes[0][2], W = shapes[0][3], OH = g->shape[2],
                OW = g->shape[3];
        int dt = types[0];
        if (a.getStr("method") != "BILINEAR") {
          // Nearest neighbour: the sum of the cell's s x s block.
          IterVar ry = reduceAxis(s, "ry"), rx = reduceAxis(s, "rx");
          return std::vector<ComputeRef>{compute(
              shapes[0], dt,
              [&](const std::vector<Expr> &i) {
                return reduce(Combiner::Sum,
                              read(g, {i[0], i[1], i[2] * s + ry.var, i[3] * s + rx.var}),
                              {ry, rx});
              },
              "compute", "upsampling_grad", "ax")};
        }
        // Bilinear: the outputs whose taps reach cell (h, w) have their lower tap at h - 1 or h;
        // they lie in a window of the outputs starting at the first with lower tap h - 1.
        auto window = [](int64_t in, int64_t out) {
          return in == 1 ? out : 2 * ((out - 1) / (in - 1) + 1) + 1;
        };
        auto start = [](const Expr &h, int64_t in, int64_t out) {
          if (in == 1)
            return intImm(0);
          return select(gt(h, intImm(0)), ((h - 1) * (out - 1) + (in - 2)) / (in - 1), intImm(0));
        };
        IterVar ry = reduceAxis(window(H, OH), "ry"), rx = reduceAxis(window(W, OW), "rx");
        return std::vector<ComputeRef>{compute(
            shapes[0], dt,
            [&](const std::vector<Expr> &i) {
              Expr oy = start(i[2], H, OH) + ry.var, ox = start(i[3], W, OW) + rx.var;
              AlignedTap ty(oy, H, OH, dt), tx(ox, W, OW, dt);
              Expr wy = ty.weightOf(i[2]), wx = tx.weightOf(i[3]);
              return reduce(Combiner::Sum, read(g, {i[0], i[1], oy, ox}) * wy * wx, {ry, rx},
                            land(lt(oy, intImm(OH)), lt(ox, intImm(OW))));
            },
            "compute", "upsampling_grad", "ax")};
      });

  for (bool isMax : {true, false}) {
    std::string name = isMax ? "max_pool3d" : "avg_pool3d", grad = "_" + name + "_grad";
    poolCommon(name.c_str(), isMax ? "3-D max pooling (NCDHW)" : "3-D average pooling (NCDHW)",
               isMax, kVolumeAxes)
        .setPattern(kOutEWiseFusable)
        .layout(volumeLayout)
        .shape(pool3dShape)
        .symbolic(symPool3d)
        .kernel(pool3dKernel(isMax))
        .lower(pool3dLower(isMax))
        .grad([grad](const NodePtr &n, const std::vector<NodeEntry> &g) {
          return std::vector<NodeEntry>{
              mk(grad, n->name + "_grad", {g[0], n->inputs[0]}, n->attrs)};
        });
    poolCommon(grad.c_str(), isMax ? "gradient of max_pool3d" : "gradient of avg_pool3d", isMax,
               kVolumeAxes)
        .arguments({"ograd", "data"})
        .setPattern(kOpaque)
        .shape([](ShapeCtx &c) {
          poolWindow(c.attrs, &c);
          if (c.in[1].rankKnown())
            c.assignOut(0, c.in[1]);
        })
        .symbolic(symLikeInputs({1}))
        .kernel(pool3dGradKernel(isMax))
        .lower(pool3dGradLower(isMax));
  }
}

} // namespace loupe::ops
