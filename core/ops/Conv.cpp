// Convolution ops: conv2d and conv2d_transpose (NCHW data, OIHW / IOHW weights), with their
// gradients (the blocked-layout forms are ConvNCHWc.cpp's).
#include "core/ops/ConvCommon.h"
#include "core/ops/OpHelpers.h"
#include "core/ops/Window.h"

#include "core/Layout.h"

#include <algorithm>
#include <cctype>
#include <functional>

namespace loupe::ops {

namespace {

std::vector<int64_t> pair(ShapeCtx *c, const Attrs &a, const char *key) {
  const auto &t = a.getTuple(key);
  if (t.size() != 2) {
    std::string msg = cat("attribute '", key, "' must have 2 values, got ", shapeToTuple(t));
    if (c)
      c->error(msg);
    fail(msg);
  }
  return t;
}

} // namespace

// Reads and (with `c`) checks the attributes; `blocked` ops check their layouts themselves.
ConvParams convParams(const Attrs &a, ShapeCtx *c, bool blocked) {
  auto k = pair(c, a, "kernel_size"), s = pair(c, a, "strides"), p = pair(c, a, "padding"),
       d = pair(c, a, "dilation");
  ConvParams r{
      a.getInt("channels"), k[0], k[1], s[0], s[1], p[0], p[1], d[0], d[1], a.getInt("groups"),
      a.getBool("use_bias")};
  if (c) {
    if (r.channels <= 0)
      c->error("attribute 'channels' must be positive");
    if (r.groups <= 0)
      c->error("attribute 'groups' must be positive");
    if (r.sh <= 0 || r.sw <= 0 || r.dh <= 0 || r.dw <= 0 || r.kh <= 0 || r.kw <= 0)
      c->error("kernel_size, strides and dilation must be positive");
    if (!blocked && a.getStr("kernel_layout") != "OIHW" && a.getStr("kernel_layout") != "IOHW")
      c->error(cat("kernel_layout '", a.getStr("kernel_layout"), "' is not supported"));
  }
  return r;
}

namespace {

void conv2dShape(ShapeCtx &c) {
  ConvParams p = convParams(c.attrs, &c);
  if (!nchwInput(c))
    return;
  const Shape &d = c.in[0];
  if (d[1] % p.groups != 0)
    c.error(cat("input channels ", d[1], " are not divisible by groups ", p.groups));
  if (p.channels % p.groups != 0)
    c.error(cat("channels ", p.channels, " are not divisible by groups ", p.groups));
  c.assignIn(1, {p.channels, d[1] / p.groups, p.kh, p.kw});
  if (p.bias)
    c.assignIn(2, {p.channels});
  int64_t ekh = 1 + (p.kh - 1) * p.dh, ekw = 1 + (p.kw - 1) * p.dw;
  int64_t oh = (d[2] + 2 * p.ph - ekh) / p.sh + 1, ow = (d[3] + 2 * p.pw - ekw) / p.sw + 1;
  if (d[2] && d[3] && (d[2] + 2 * p.ph < ekh || d[3] + 2 * p.pw < ekw))
    c.error(cat("kernel ", p.kh, "x", p.kw, " is larger than the padded input ", shapeToList(d)));
  c.assignOut(0, {d[0], p.channels, d[2] ? oh : 0, d[3] ? ow : 0});
}

// conv2dShape's rule over symbolic dimensions (NCHW): the window's output size by floor
// division when the height or width is symbolic.
std::vector<SymDims> symConv2d(const SymShapeCtx &c) {
  ConvParams p = convParams(c.attrs, nullptr);
  const SymDims &d = c.in[0];
  if (d.size() != 4 || c.attrs.getStr("layout") != "NCHW")
    c.error("symbolic shapes reach conv2d in NCHW layout only, 4-D");
  int64_t ekh = 1 + (p.kh - 1) * p.dh, ekw = 1 + (p.kw - 1) * p.dw;
  SymExpr oh = SymExpr::floorDiv(d[2] + SymExpr(2 * p.ph - ekh), p.sh) + SymExpr(1);
  SymExpr ow = SymExpr::floorDiv(d[3] + SymExpr(2 * p.pw - ekw), p.sw) + SymExpr(1);
  return {{d[0], SymExpr(p.channels), oh, ow}};
}

// conv2d_transpose over symbolic sizes: each spatial size s becomes stride·(s - 1) + the
// dilated kernel - both paddings + output_padding, as the concrete rule computes it.
std::vector<SymDims> symConv2dTranspose(const SymShapeCtx &c) {
  ConvParams p = convParams(c.attrs, nullptr);
  const auto &op = c.attrs.getTuple("output_padding");
  const SymDims &d = c.in[0];
  if (d.size() != 4 || c.attrs.getStr("layout") != "NCHW" || op.size() != 2)
    c.error("symbolic shapes reach conv2d_transpose in NCHW layout only, 4-D, with 2 "
            "output_padding values");
  int64_t ekh = 1 + (p.kh - 1) * p.dh, ekw = 1 + (p.kw - 1) * p.dw;
  SymExpr oh = SymExpr(p.sh) * d[2] + SymExpr(ekh - p.sh - 2 * p.ph + op[0]);
  SymExpr ow = SymExpr(p.sw) * d[3] + SymExpr(ekw - p.sw - 2 * p.pw + op[1]);
  return {{d[0], SymExpr(p.channels), oh, ow}};
}

// Visits every (output, input, weight) triple of a grouped, strided, dilated, padded NCHW
// convolution — the one window walk the forward kernel and its gradient share. Order: n, output
// channel, output row, output column, then input channel and kernel taps.
template <typename Tap>
void forEachConvTap(const ConvParams &p, const Shape &xs, const Shape &os, Tap tap) {
  int64_t N = xs[0], C = xs[1], H = xs[2], W = xs[3], OC = os[1], OH = os[2], OW = os[3];
  int64_t icg = C / p.groups, ocg = OC / p.groups;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t oc = 0; oc < OC; ++oc) {
      int64_t g = oc / ocg;
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          int64_t oi = ((n * OC + oc) * OH + oh) * OW + ow;
          for (int64_t ic = 0; ic < icg; ++ic)
            for (int64_t ky = 0; ky < p.kh; ++ky) {
              int64_t iy = oh * p.sh - p.ph + ky * p.dh;
              if (iy < 0 || iy >= H)
                continue;
              for (int64_t kx = 0; kx < p.kw; ++kx) {
                int64_t ix = ow * p.sw - p.pw + kx * p.dw;
                if (ix < 0 || ix >= W)
                  continue;
                tap(oi, ((n * C + g * icg + ic) * H + iy) * W + ix,
                    ((oc * icg + ic) * p.kh + ky) * p.kw + kx);
              }
            }
        }
    }
}

} // namespace

// The bias as its own stage over a convolution's result, on the output's channel index.
loop::ComputeRef
addBias(const loop::ComputeRef &conv, const loop::ComputeRef &b,
        const std::function<std::vector<loop::Expr>(const std::vector<loop::Expr> &)> &biasIndex) {
  return loop::compute(
      conv->shape, conv->dtype,
      [&](const std::vector<loop::Expr> &i) {
        return loop::read(conv, i) + loop::read(b, biasIndex(i));
      },
      "compute", "broadcast", "ax");
}

// An operand read as the convolution's output type: with out_dtype int32, 8-bit operands are
// widened before they multiply (their product would not fit their own type).
loop::Expr widened(const loop::Expr &e, int dtype) {
  return e->dtype == dtype ? e : loop::cast(dtype, e);
}

namespace {

// topi's conv2d_nchw: `pad_temp` (when padding is non-zero), then a sum over rc, ry, rx on
// axes nn, ff, yy, xx; with a bias, an add stage over it (as NNVM's compute did).
std::vector<loop::ComputeRef> conv2dLower(const Attrs &a, const std::vector<loop::ComputeRef> &in,
                                          const std::vector<Shape> &shapes,
                                          const std::vector<int> &types) {
  using namespace loop;
  ConvParams p = convParams(a, nullptr);
  ComputeRef x = in[0], w = in[1];
  // topi pads H by ph and W by pw on both sides; no padding, no stage.
  ComputeRef data = p.ph || p.pw ? padCompute(x, {0, 0, p.ph, p.pw}, {0, 0, p.ph, p.pw}, 0) : x;
  int64_t icg = x->shape[1] / p.groups, ocg = p.channels / p.groups;
  IterVar rc = reduceAxis(icg, "rc"), ry = reduceAxis(p.kh, "ry"), rx = reduceAxis(p.kw, "rx");
  ComputeRef conv = compute(shapes[0], types[0],
                            [&](const std::vector<Expr> &i) {
                              Expr channel = p.groups == 1 ? rc.var : (i[1] / ocg) * icg + rc.var;
                              Expr src =
                                  widened(read(data, {i[0], channel, i[2] * p.sh + ry.var * p.dh,
                                                      i[3] * p.sw + rx.var * p.dw}),
                                          types[0]) *
                                  widened(read(w, {i[1], rc.var, ry.var, rx.var}), types[0]);
                              return reduce(Combiner::Sum, src, {rc, ry, rx});
                            },
                            "compute", "conv2d", "", {"nn", "ff", "yy", "xx"});
  if (!p.bias)
    return {conv};
  return {addBias(conv, in[2], [](const std::vector<Expr> &i) { return std::vector<Expr>{i[1]}; })};
}

// The bias channel of each output element, for adding the bias and for its gradient.
int64_t outputChannel(const Shape &os, int64_t i) { return (i / (os[2] * os[3])) % os[1]; }

// A convolution's reference kernels, over the taps `walk(p, xs, os, tap)` visits (the direct or
// the transposed window walk): the forward product with its bias per channel, and the gradients
// of data, weight and (with use_bias) bias.
template <typename Walk>
void convForward(Walk walk, const Attrs &a, const std::vector<const Tensor *> &in,
                 std::vector<Tensor> &out) {
  ConvParams p = convParams(a, nullptr);
  const Tensor &x = *in[0], &w = *in[1];
  Tensor &y = out[0];
  walk(p, x.shape, y.shape,
       [&](int64_t oi, int64_t xi, int64_t wi) { y.data[oi] += x.data[xi] * w.data[wi]; });
  if (p.bias)
    for (int64_t i = 0; i < y.size(); ++i)
      y.data[i] += in[2]->data[outputChannel(y.shape, i)];
}

template <typename Walk>
void convBackward(Walk walk, const Attrs &a, const std::vector<const Tensor *> &in,
                  std::vector<Tensor> &out) {
  ConvParams p = convParams(a, nullptr);
  const Tensor &g = *in[0], &x = *in[1], &w = *in[2];
  walk(p, x.shape, g.shape, [&](int64_t oi, int64_t xi, int64_t wi) {
    out[0].data[xi] += g.data[oi] * w.data[wi];
    out[1].data[wi] += g.data[oi] * x.data[xi];
  });
  if (p.bias)
    for (int64_t i = 0; i < g.size(); ++i)
      out[2].data[outputChannel(g.shape, i)] += g.data[i];
}

// The two window walks as values (they are templates over the tap).
const auto directTaps = [](const ConvParams &p, const Shape &xs, const Shape &os, auto tap) {
  forEachConvTap(p, xs, os, tap);
};

// The forward direct convolution by whole output rows: for each image, output channel, input
// channel and kernel tap, one multiply-add over the columns of every output row whose input row
// exists, the columns whose input column exists found once per tap — the taps of each output
// element are added in the order forEachConvTap visits them (input channel, row, column), so the
// sums are the same to the bit, without a bounds test per tap and with the inner loop along
// memory, which the compiler vectorises (a resnet's :run check was mostly this kernel). Terms
// that follow one another in every output's sum share a pass over the output row, added in
// that order, so each output is loaded and stored once for them: the three taps of a row of a
// 3-wide kernel (over the columns all three reach; the edge columns tap by tap), four input
// channels of a 1×1 kernel.
// Output planes (image, channel) are independent: a large convolution shares them out among
// the machine's cores, each plane computed as alone.

// The columns ow with 0 <= ow * sw + off < W, as [lo, hi).
std::pair<int64_t, int64_t> tapColumns(const ConvParams &p, int64_t off, int64_t W, int64_t OW) {
  int64_t lo = off >= 0 ? 0 : (-off + p.sw - 1) / p.sw;
  int64_t hi = W - 1 - off < 0 ? 0 : std::min(OW, (W - 1 - off) / p.sw + 1);
  return {lo, std::max(lo, hi)};
}

// Output planes [first, last) of directConvForward. Built for AVX-512, AVX2 and the baseline,
// the best the CPU has chosen at load time (the column loops vectorise 8, 4 or 2 wide); each
// output still gets its multiply and add one tap at a time, rounded apart (the core is built
// without floating-point contraction), so every version computes the same bits.
LOUPE_REFERENCE_CLONES
void directConvPlanes(const ConvParams &p, const Tensor &x, const Tensor &w, Tensor &y,
                      int64_t first, int64_t last) {
  int64_t C = x.shape[1], H = x.shape[2], W = x.shape[3];
  int64_t OC = y.shape[1], OH = y.shape[2], OW = y.shape[3];
  int64_t icg = C / p.groups, ocg = OC / p.groups;
  const int64_t sw = p.sw;
  for (int64_t plane = first; plane < last; ++plane) {
    int64_t n = plane / OC, oc = plane % OC;
    double *out = y.data.data() + (n * OC + oc) * OH * OW;
    int64_t g = oc / ocg;
    const double *wp = w.data.data() + oc * icg * p.kh * p.kw;
    for (int64_t ic = 0; ic < icg;) {
      const double *in = x.data.data() + (n * C + g * icg + ic) * H * W;
      if (p.kh == 1 && p.kw == 1 && ic + 4 <= icg) { // four channels' terms in one pass
        const double w0 = wp[ic], w1 = wp[ic + 1], w2 = wp[ic + 2], w3 = wp[ic + 3];
        auto [lo, hi] = tapColumns(p, -p.pw, W, OW);
        for (int64_t oh = 0; oh < OH; ++oh) {
          int64_t iy = oh * p.sh - p.ph;
          if (iy < 0 || iy >= H)
            continue;
          const double *__restrict r0 = in + iy * W - p.pw;
          const double *__restrict r1 = r0 + H * W, *__restrict r2 = r1 + H * W,
                                   *__restrict r3 = r2 + H * W;
          double *__restrict o = out + oh * OW;
          if (sw == 1) // (apart, so that the compiler sees unit strides)
            for (int64_t ow = lo; ow < hi; ++ow)
              o[ow] = (((o[ow] + w0 * r0[ow]) + w1 * r1[ow]) + w2 * r2[ow]) + w3 * r3[ow];
          else
            for (int64_t ow = lo; ow < hi; ++ow)
              o[ow] = (((o[ow] + w0 * r0[ow * sw]) + w1 * r1[ow * sw]) + w2 * r2[ow * sw]) +
                      w3 * r3[ow * sw];
        }
        ic += 4;
        continue;
      }
      for (int64_t ky = 0; ky < p.kh; ++ky) {
        const double *wk = wp + (ic * p.kh + ky) * p.kw;
        if (p.kw == 3) { // the row's three taps in one pass where all three reach
          int64_t off[3] = {-p.pw, p.dw - p.pw, 2 * p.dw - p.pw};
          std::pair<int64_t, int64_t> cols[3] = {tapColumns(p, off[0], W, OW),
                                                 tapColumns(p, off[1], W, OW),
                                                 tapColumns(p, off[2], W, OW)};
          int64_t bothLo = std::max({cols[0].first, cols[1].first, cols[2].first});
          int64_t bothHi =
              std::max(bothLo, std::min({cols[0].second, cols[1].second, cols[2].second}));
          for (int64_t oh = 0; oh < OH; ++oh) {
            int64_t iy = oh * p.sh - p.ph + ky * p.dh;
            if (iy < 0 || iy >= H)
              continue;
            const double *__restrict row = in + iy * W;
            double *__restrict o = out + oh * OW;
            for (int k = 0; k < 3; ++k) { // the edge columns, each tap in order
              for (int64_t ow = cols[k].first; ow < std::min(cols[k].second, bothLo); ++ow)
                o[ow] += wk[k] * row[ow * sw + off[k]];
              for (int64_t ow = std::max(cols[k].first, bothHi); ow < cols[k].second; ++ow)
                o[ow] += wk[k] * row[ow * sw + off[k]];
            }
            const double *__restrict a = row + off[0], *__restrict b = row + off[1],
                                     *__restrict c = row + off[2];
            const double w0 = wk[0], w1 = wk[1], w2 = wk[2];
            if (sw == 1)
              for (int64_t ow = bothLo; ow < bothHi; ++ow)
                o[ow] = ((o[ow] + w0 * a[ow]) + w1 * b[ow]) + w2 * c[ow];
            else
              for (int64_t ow = bothLo; ow < bothHi; ++ow)
                o[ow] = ((o[ow] + w0 * a[ow * sw]) + w1 * b[ow * sw]) + w2 * c[ow * sw];
          }
          continue;
        }
        for (int64_t kx = 0; kx < p.kw; ++kx) {
          double wv = wk[kx];
          int64_t off = kx * p.dw - p.pw;
          auto [lo, hi] = tapColumns(p, off, W, OW);
          for (int64_t oh = 0; oh < OH; ++oh) {
            int64_t iy = oh * p.sh - p.ph + ky * p.dh;
            if (iy < 0 || iy >= H)
              continue;
            const double *__restrict row = in + iy * W + off;
            double *__restrict o = out + oh * OW;
            if (sw == 1)
              for (int64_t ow = lo; ow < hi; ++ow)
                o[ow] += wv * row[ow];
            else
              for (int64_t ow = lo; ow < hi; ++ow)
                o[ow] += wv * row[ow * sw];
          }
        }
      }
      ++ic;
    }
  }
}

void directConvForward(const ConvParams &p, const Tensor &x, const Tensor &w, Tensor &y) {
  int64_t N = x.shape[0], C = x.shape[1];
  int64_t OC = y.shape[1], OH = y.shape[2], OW = y.shape[3];
  int64_t icg = C / p.groups;
  parallelParts(N * OC, N * OC * OH * OW * icg * p.kh * p.kw,
                [&](int64_t first, int64_t last) { directConvPlanes(p, x, w, y, first, last); });
}

} // namespace

void conv2dKernel(const Attrs &a, const std::vector<const Tensor *> &in, std::vector<Tensor> &out) {
  ConvParams p = convParams(a, nullptr);
  directConvForward(p, *in[0], *in[1], out[0]);
  if (p.bias)
    for (int64_t i = 0; i < out[0].size(); ++i)
      out[0].data[i] += in[2]->data[outputChannel(out[0].shape, i)];
}

namespace {

void conv2dTransposeShape(ShapeCtx &c) {
  ConvParams p = convParams(c.attrs, &c);
  const auto &op = c.attrs.getTuple("output_padding");
  if (op.size() != 2)
    c.error("attribute 'output_padding' must have 2 values");
  if (!nchwInput(c))
    return;
  const Shape &d = c.in[0];
  if (p.channels % p.groups != 0 || d[1] % p.groups != 0)
    c.error(cat("channels must be divisible by groups ", p.groups));
  c.assignIn(1, {d[1], p.channels / p.groups, p.kh, p.kw});
  if (p.bias)
    c.assignIn(2, {p.channels});
  int64_t ekh = 1 + (p.kh - 1) * p.dh, ekw = 1 + (p.kw - 1) * p.dw;
  int64_t oh = p.sh * (d[2] - 1) + ekh - 2 * p.ph + op[0];
  int64_t ow = p.sw * (d[3] - 1) + ekw - 2 * p.pw + op[1];
  if (d[2] && d[3] && (oh <= 0 || ow <= 0))
    c.error("padding leaves an empty output");
  c.assignOut(0, {d[0], p.channels, d[2] ? oh : 0, d[3] ? ow : 0});
}

// Visits every (output, input, weight) triple of a transposed convolution: each input pixel
// scatters its weighted kernel into the output. Shared by the kernel and its gradient.
template <typename Tap>
void forEachTransposeTap(const ConvParams &p, const Shape &xs, const Shape &os, Tap tap) {
  int64_t N = xs[0], C = xs[1], H = xs[2], W = xs[3], OC = os[1], OH = os[2], OW = os[3];
  int64_t icg = C / p.groups, ocg = OC / p.groups;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t ic = 0; ic < C; ++ic) {
      int64_t g = ic / icg;
      for (int64_t iy = 0; iy < H; ++iy)
        for (int64_t ix = 0; ix < W; ++ix) {
          int64_t xi = ((n * C + ic) * H + iy) * W + ix;
          for (int64_t o = 0; o < ocg; ++o)
            for (int64_t ky = 0; ky < p.kh; ++ky) {
              int64_t oy = iy * p.sh + ky * p.dh - p.ph;
              if (oy < 0 || oy >= OH)
                continue;
              for (int64_t kx = 0; kx < p.kw; ++kx) {
                int64_t ox = ix * p.sw + kx * p.dw - p.pw;
                if (ox < 0 || ox >= OW)
                  continue;
                int64_t oc = g * ocg + o;
                tap(((n * OC + oc) * OH + oy) * OW + ox, xi,
                    ((ic * ocg + o) * p.kh + ky) * p.kw + kx);
              }
            }
        }
    }
}

const auto transposedTaps = [](const ConvParams &p, const Shape &xs, const Shape &os, auto tap) {
  forEachTransposeTap(p, xs, os, tap);
};

void conv2dTransposeKernel(const Attrs &a, const std::vector<const Tensor *> &in,
                           std::vector<Tensor> &out) {
  convForward(transposedTaps, a, in, out);
}

// _conv2d_transpose_grad(g, data, weight): the adjoint of each tap, plus the bias sum.
void conv2dTransposeGradKernel(const Attrs &a, const std::vector<const Tensor *> &in,
                               std::vector<Tensor> &out) {
  convBackward(transposedTaps, a, in, out);
}

// _conv2d_grad(ograd, data, weight): gradients of data, weight and (with use_bias) bias.
void conv2dGradShape(ShapeCtx &c) {
  ConvParams p = convParams(c.attrs, &c);
  if (c.in[1].rankKnown())
    c.assignOut(0, c.in[1]);
  if (c.in[2].rankKnown())
    c.assignOut(1, c.in[2]);
  if (p.bias)
    c.assignOut(2, {p.channels});
}

void conv2dGradKernel(const Attrs &a, const std::vector<const Tensor *> &in,
                      std::vector<Tensor> &out) {
  convBackward(directTaps, a, in, out);
}

// The bias gradient: ograd summed over N, H and W per channel.
loop::ComputeRef biasGrad(const loop::ComputeRef &g, int64_t channels, int dtype) {
  using namespace loop;
  IterVar rn = reduceAxis(g->shape[0], "rn"), ry = reduceAxis(g->shape[2], "ry"),
          rx = reduceAxis(g->shape[3], "rx");
  return compute(
      {channels}, dtype,
      [&](const std::vector<Expr> &c) {
        return reduce(Combiner::Sum, read(g, {rn.var, c[0], ry.var, rx.var}), {rn, ry, rx});
      },
      "compute", "reduce", "ax");
}

// _conv2d_grad lowered as gathers: the data gradient sums, for each input pixel, the output
// gradients whose window read it (a transposed convolution); the weight gradient correlates
// ograd with the data; the bias gradient sums ograd per channel.
std::vector<loop::ComputeRef> conv2dGradLower(const Attrs &a,
                                              const std::vector<loop::ComputeRef> &in,
                                              const std::vector<Shape> &shapes,
                                              const std::vector<int> &types) {
  using namespace loop;
  ConvParams p = convParams(a, nullptr);
  ComputeRef g = in[0], x = in[1], w = in[2];
  int64_t H = x->shape[2], W = x->shape[3], OH = g->shape[2], OW = g->shape[3];
  int64_t icg = x->shape[1] / p.groups, ocg = p.channels / p.groups;
  int dt = types[0];
  IterVar ro = reduceAxis(ocg, "ro"), ky = reduceAxis(p.kh, "ky"), kx = reduceAxis(p.kw, "kx");
  ComputeRef dx = compute(
      shapes[0], dt,
      [&](const std::vector<Expr> &i) {
        auto [oy, cy] = exactQuotient(i[2] + p.ph - ky.var * p.dh, p.sh, OH);
        auto [ox, cx] = exactQuotient(i[3] + p.pw - kx.var * p.dw, p.sw, OW);
        Expr oc = p.groups == 1 ? ro.var : (i[1] / icg) * ocg + ro.var;
        Expr ic = p.groups == 1 ? i[1] : i[1] % icg;
        return reduce(Combiner::Sum,
                      read(g, {i[0], oc, oy, ox}) * read(w, {oc, ic, ky.var, kx.var}), {ro, ky, kx},
                      land(cy, cx));
      },
      "compute", "conv2d_grad", "ax");
  IterVar rn = reduceAxis(g->shape[0], "rn"), ry = reduceAxis(OH, "ry"), rx = reduceAxis(OW, "rx");
  ComputeRef dw = compute(
      shapes[1], dt,
      [&](const std::vector<Expr> &i) {
        Expr iy = ry.var * p.sh - p.ph + i[2] * p.dh, ix = rx.var * p.sw - p.pw + i[3] * p.dw;
        Expr inside = land(land(le(intImm(0), iy), lt(iy, intImm(H))),
                           land(le(intImm(0), ix), lt(ix, intImm(W))));
        Expr c = p.groups == 1 ? i[1] : (i[0] / ocg) * icg + i[1];
        return reduce(Combiner::Sum,
                      read(g, {rn.var, i[0], ry.var, rx.var}) * read(x, {rn.var, c, iy, ix}),
                      {rn, ry, rx}, inside);
      },
      "compute", "conv2d_grad", "ax");
  if (!p.bias)
    return {dx, dw};
  return {dx, dw, biasGrad(g, p.channels, types[2])};
}

// _conv2d_transpose_grad: the data gradient is a convolution of ograd with the weight (each
// input pixel scattered to outputs it now gathers from), the weight gradient a correlation of
// ograd with the data, the bias gradient a per-channel sum.
std::vector<loop::ComputeRef> conv2dTransposeGradLower(const Attrs &a,
                                                       const std::vector<loop::ComputeRef> &in,
                                                       const std::vector<Shape> &shapes,
                                                       const std::vector<int> &types) {
  using namespace loop;
  ConvParams p = convParams(a, nullptr);
  ComputeRef g = in[0], x = in[1], w = in[2];
  int64_t OH = g->shape[2], OW = g->shape[3];
  int64_t icg = x->shape[1] / p.groups, ocg = p.channels / p.groups;
  int dt = types[0];
  auto inside = [&](const Expr &oy, const Expr &ox) {
    return land(land(le(intImm(0), oy), lt(oy, intImm(OH))),
                land(le(intImm(0), ox), lt(ox, intImm(OW))));
  };
  IterVar ro = reduceAxis(ocg, "ro"), ky = reduceAxis(p.kh, "ky"), kx = reduceAxis(p.kw, "kx");
  ComputeRef dx = compute(
      shapes[0], dt,
      [&](const std::vector<Expr> &i) {
        Expr oy = i[2] * p.sh + ky.var * p.dh - p.ph, ox = i[3] * p.sw + kx.var * p.dw - p.pw;
        Expr oc = p.groups == 1 ? ro.var : (i[1] / icg) * ocg + ro.var;
        return reduce(Combiner::Sum,
                      read(g, {i[0], oc, oy, ox}) * read(w, {i[1], ro.var, ky.var, kx.var}),
                      {ro, ky, kx}, inside(oy, ox));
      },
      "compute", "conv2d_grad", "ax");
  IterVar rn = reduceAxis(x->shape[0], "rn"), ry = reduceAxis(x->shape[2], "ry"),
          rx = reduceAxis(x->shape[3], "rx");
  ComputeRef dw = compute(
      shapes[1], dt,
      [&](const std::vector<Expr> &i) {
        Expr oy = ry.var * p.sh + i[2] * p.dh - p.ph, ox = rx.var * p.sw + i[3] * p.dw - p.pw;
        Expr oc = p.groups == 1 ? i[1] : (i[0] / icg) * ocg + i[1];
        return reduce(Combiner::Sum,
                      read(g, {rn.var, oc, oy, ox}) * read(x, {rn.var, i[0], ry.var, rx.var}),
                      {rn, ry, rx}, inside(oy, ox));
      },
      "compute", "conv2d_grad", "ax");
  if (!p.bias)
    return {dx, dw};
  return {dx, dw, biasGrad(g, p.channels, types[2])};
}

} // namespace

// The output layout of a convolution: `out_layout`, or the data layout when it is unset.
std::string convOutLayout(const Attrs &a) {
  // conv2d_transpose has no out_layout; an unset one reads "__undef__".
  if (a.given("out_layout") && a.getStr("out_layout") != "__undef__")
    return a.getStr("out_layout");
  return a.getStr("layout");
}

// The bias layout matching an output layout: "C", or "C16c" when the output splits its
// channels by 16 (the block goes on the side the output has it).
std::string biasLayout(const std::string &outLayout) {
  size_t sub = outLayout.find('c');
  if (sub == std::string::npos)
    return "C";
  size_t digits = sub;
  while (digits > 0 && std::isdigit(static_cast<unsigned char>(outLayout[digits - 1])))
    --digits;
  std::string block = outLayout.substr(digits, sub - digits + 1);
  return outLayout.find('C') < sub ? "C" + block : block + "C";
}

// NNVM's Conv2DCorrectLayout: data in `layout`, weight in `kernel_layout`, bias in "C" (split
// like the output's channel axis, e.g. "C16c"), output in `out_layout` or else `layout`.
void convLayout(const Attrs &a, std::vector<std::string> &in, const std::vector<std::string> &,
                std::vector<std::string> &out) {
  std::string data = a.getStr("layout"), outLayout = convOutLayout(a);
  in[0] = data;
  in[1] = a.getStr("kernel_layout");
  if (in.size() > 2)
    in[2] = biasLayout(outLayout);
  out[0] = outLayout;
}

namespace {

// conv2d_transpose: every output gathers the input pixels whose scatter reaches it, i.e.
// iy = (y + ph - ky*dh) / sh when that divides and lies inside the input (read lazily).
std::vector<loop::ComputeRef> conv2dTransposeLower(const Attrs &a,
                                                   const std::vector<loop::ComputeRef> &in,
                                                   const std::vector<Shape> &shapes,
                                                   const std::vector<int> &types) {
  using namespace loop;
  ConvParams p = convParams(a, nullptr);
  ComputeRef x = in[0], w = in[1];
  int64_t H = x->shape[2], W = x->shape[3];
  int64_t icg = x->shape[1] / p.groups, ocg = p.channels / p.groups;
  IterVar rc = reduceAxis(icg, "rc"), ry = reduceAxis(p.kh, "ry"), rx = reduceAxis(p.kw, "rx");
  ComputeRef conv = compute(
      shapes[0], types[0],
      [&](const std::vector<Expr> &i) {
        Expr ty = i[2] + p.ph - ry.var * p.dh, tx = i[3] + p.pw - rx.var * p.dw;
        Expr qy = ty / p.sh, qx = tx / p.sw;
        Expr cond =
            land(land(land(le(intImm(0), ty), eq(ty % p.sh, intImm(0))), lt(qy, intImm(H))),
                 land(land(le(intImm(0), tx), eq(tx % p.sw, intImm(0))), lt(qx, intImm(W))));
        Expr ic = p.groups == 1 ? rc.var : (i[1] / ocg) * icg + rc.var;
        Expr o = p.groups == 1 ? i[1] : i[1] % ocg;
        return reduce(Combiner::Sum, read(x, {i[0], ic, qy, qx}) * read(w, {ic, o, ry.var, rx.var}),
                      {rc, ry, rx}, cond);
      },
      "compute", "conv2d_transpose", "", {"nn", "ff", "yy", "xx"});
  if (!p.bias)
    return {conv};
  return {addBias(conv, in[2], [](const std::vector<Expr> &i) { return std::vector<Expr>{i[1]}; })};
}

} // namespace

// NNVM's convolution gradients: one `gradOp` node carrying the convolution's attributes, whose
// outputs are the gradients of its inputs (data, weight and, with a bias, the bias).
GradientFn throughGradOp(const char *gradOp) {
  return [gradOp](const NodePtr &n, const std::vector<NodeEntry> &g) {
    NodeEntry cg = mk(gradOp, n->name + "_grad", {g[0], n->inputs[0], n->inputs[1]}, n->attrs);
    std::vector<NodeEntry> out;
    for (uint32_t k = 0; k < n->inputs.size(); ++k)
      out.push_back(outOf(cg.node, k));
    return out;
  };
}

// The attributes every convolution of the family declares.
OpDef &convCommon(const char *name, const char *doc, const SpatialAxes &ax) {
  return OpRegistry::get()
      .add(name)
      .describe(doc)
      .param("channels", ParamKind::Int, std::nullopt, "number of output channels")
      .param("kernel_size", ParamKind::Tuple, std::nullopt, ax.window)
      .param("strides", ParamKind::Tuple, ax.ones, ax.strides)
      .param("padding", ParamKind::Tuple, ax.zeros, ax.convPadding)
      .param("dilation", ParamKind::Tuple, ax.ones, ax.dilation)
      .param("groups", ParamKind::Int, "1", "grouped convolution")
      .param("layout", ParamKind::Str, ax.layout, "data layout")
      .param("kernel_layout", ParamKind::Str, ax.kernelLayout, "weight layout")
      .param("use_bias", ParamKind::Bool, "True", "whether a bias input exists")
      .setPattern(kOutEWiseFusable);
}

namespace {

// NNVM's out_dtype: "same" (the same-type rule) or int32, the sum of integer operands up to 32
// bits (a quantized network's uint8 or int8 data and int8 weights, as QnnCanonicalize writes
// them) with an int32 bias.
void convType(TypeCtx &c) {
  if (c.attrs.getStr("out_dtype") == "same")
    return sameTypeRule(c);
  requireInteger(c, 0, "the data");
  requireInteger(c, 1, "the weight");
  if (c.in.size() > 2)
    c.assignIn(2, kInt32);
  c.assignOut(0, kInt32);
}

} // namespace

OpDef &outDtypeParam(OpDef &d) {
  return d
      .param("out_dtype", ParamKind::Enum, "same",
             "the output's type: the data's, or int32 summing integer operands", {"same", "int32"})
      .type(convType);
}

void registerConvOps() {
  OpDef &conv = convCommon("conv2d", "2-D convolution");
  conv.param("out_layout", ParamKind::Str, "__undef__", "output layout");
  outDtypeParam(conv);
  conv.argsFn = dataWeightBias;
  conv.shape(conv2dShape)
      .symbolic(symConv2d)
      .kernel(conv2dKernel)
      .layout(convLayout)
      .lowerSymbolicBatch(conv2dLower); // channels and window read, the batch carried through
  conv.grad(throughGradOp("_conv2d_grad"));
  registerConvNCHWcOps();

  OpDef &cgrad = convCommon("_conv2d_grad", "gradients of conv2d's data, weight and bias");
  cgrad.param("out_layout", ParamKind::Str, "__undef__", "output layout");
  cgrad.arguments({"ograd", "data", "weight"});
  cgrad.setPattern(kOpaque);
  cgrad.numOutputsFn = [](const Attrs &a) { return a.getBool("use_bias") ? 3 : 2; };
  cgrad.shape(conv2dGradShape).kernel(conv2dGradKernel).lower(conv2dGradLower);
  cgrad.symbolic(symLikeInputs({1, 2}));

  OpDef &convT = convCommon("conv2d_transpose", "2-D transposed convolution (deconvolution)");
  convT.param("output_padding", ParamKind::Tuple, "(0, 0)", "extra rows/cols at the end");
  convT.argsFn = dataWeightBias;
  convT.shape(conv2dTransposeShape).kernel(conv2dTransposeKernel).layout(convLayout);
  convT.symbolic(symConv2dTranspose);
  convT.lower(conv2dTransposeLower);
  convT.grad(throughGradOp("_conv2d_transpose_grad"));
  OpDef &convTGrad =
      convCommon("_conv2d_transpose_grad", "gradients of conv2d_transpose's data, weight and bias");
  convTGrad.param("output_padding", ParamKind::Tuple, "(0, 0)", "extra rows/cols at the end");
  convTGrad.arguments({"ograd", "data", "weight"});
  convTGrad.setPattern(kOpaque);
  convTGrad.numOutputsFn = [](const Attrs &a) { return a.getBool("use_bias") ? 3 : 2; };
  convTGrad.shape([](ShapeCtx &c) {
    ConvParams p = convParams(c.attrs, &c);
    if (c.in[1].rankKnown())
      c.assignOut(0, c.in[1]);
    if (c.in[2].rankKnown())
      c.assignOut(1, c.in[2]);
    if (p.bias)
      c.assignOut(2, {p.channels});
  });
  convTGrad.kernel(conv2dTransposeGradKernel).lower(conv2dTransposeGradLower);
  convTGrad.symbolic(symLikeInputs({1, 2}));
}

} // namespace loupe::ops
