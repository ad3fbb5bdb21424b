// Image ops: resize2d scales H and W of an NCHW tensor to a given size by nearest neighbour,
// linear or cubic interpolation, with ONNX's coordinate transformation and rounding modes
// (Relay's image.resize2d; ONNX's Resize).
#include "core/ops/OpHelpers.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace loupe::ops {

using namespace loupe::loop;

namespace {

// How an output position maps back onto the input axis: ONNX's coordinate transformation
// modes, for an axis of `in` cells resized to `out` at scale `scale` (out / in unless given:
// ONNX computes with the scale it was given even when out was rounded down from in * scale).
struct AxisMap {
  std::string mode;
  int64_t in, out;
  double scale;

  AxisMap(const Attrs &a, const char *scaleKey, int64_t in, int64_t out)
      : mode(a.getStr("coordinate_transformation_mode")), in(in), out(out),
        scale(a.getFloat(scaleKey) > 0 ? a.getFloat(scaleKey)
                                       : static_cast<double>(out) / static_cast<double>(in)) {}

  /// The input coordinate of output position `o`, as T (double or a loop expression in
  /// float64): both the reference kernel and the lowering use this one definition. The resized
  /// length in align_corners and pytorch_half_pixel is in * scale, not rounded (as ONNX's
  /// reference computes it).
  template <typename T> T source(const T &o, T (*lit)(double)) const {
    double resized = static_cast<double>(in) * scale;
    if (mode == "align_corners")
      return resized > 1 ? o * lit(static_cast<double>(in - 1) / (resized - 1)) : lit(0);
    if (mode == "asymmetric")
      return o / lit(scale);
    if (mode == "tf_half_pixel_for_nn")
      return (o + lit(0.5)) / lit(scale);
    if (mode == "pytorch_half_pixel" && resized <= 1)
      return lit(0);
    return (o + lit(0.5)) / lit(scale) - lit(0.5); // half_pixel
  }
};

double litD(double v) { return v; }
Expr litE(double v) { return floatImm(v, kFloat64); }
double floorOf(double x) { return std::floor(x); }
Expr floorOf(const Expr &x) { return call("floor", {x}, kFloat64); }
double ceilOf(double x) { return std::ceil(x); }
Expr ceilOf(const Expr &x) { return call("ceil", {x}, kFloat64); }

// Nearest neighbour's rounding of a source coordinate, ONNX's nearest_mode; T as in source().
template <typename T> T rounded(const std::string &m, const T &x, T (*lit)(double)) {
  return m == "floor"               ? floorOf(x)
         : m == "ceil"              ? ceilOf(x)
         : m == "round_prefer_ceil" ? floorOf(x + lit(0.5))
                                    : ceilOf(x - lit(0.5)); // round_prefer_floor
}

// The cell of an axis of `n` at a rounded coordinate, clamped to the axis before it becomes an
// integer (a coordinate far outside the axis would not fit one).
int64_t cellOf(double v, int64_t n) {
  return v > 0 ? static_cast<int64_t>(std::min(v, static_cast<double>(n - 1))) : 0;
}

Expr cellOf(const Expr &v, int64_t n) {
  return cast(kInt32, min(max(v, litE(0)), litE(static_cast<double>(n - 1))));
}

// The two input cells a linear tap reads and the second one's weight (in float64); a
// coordinate outside the axis reads its edge cell (ONNX pads with the edge values).
template <typename T> struct LinearTap {
  decltype(cellOf(T{}, 1)) lo, hi;
  T w;
  LinearTap(const AxisMap &m, const T &o, T (*lit)(double)) {
    T x = m.source<T>(o, lit), f = floorOf(x);
    lo = cellOf(f, m.in), hi = cellOf(f + lit(1), m.in), w = x - f;
  }
};

// Whether cell `idx` (a float64 coordinate) lies on an axis of n cells, and a choice by it; for
// the kernels (double) and the lowering (loop expressions).
bool onAxis(double idx, int64_t n) { return idx >= 0 && idx <= static_cast<double>(n - 1); }
Expr onAxis(const Expr &idx, int64_t n) {
  return land(ge(idx, litE(0)), le(idx, litE(static_cast<double>(n - 1))));
}
double pick(bool c, double a, double b) { return c ? a : b; }
Expr pick(const Expr &c, const Expr &a, const Expr &b) { return select(c, a, b); }

// The four cells a cubic tap reads (floor(x) - 1 … floor(x) + 2, edge cells beyond the axis)
// and their weights, ONNX's cubic convolution with coefficient A of the fraction t; with
// `exclude` (exclude_outside) a cell beyond the axis weighs 0 and the rest are scaled to sum
// to 1.
template <typename T> struct CubicTap {
  std::array<decltype(cellOf(T{}, 1)), 4> cell;
  std::array<T, 4> w;
  CubicTap(const AxisMap &m, const T &o, double A, bool exclude, T (*lit)(double)) {
    T x = m.source<T>(o, lit), f = floorOf(x), t = x - f;
    T a = lit(A), five = lit(5 * A), eight = lit(8 * A), four = lit(4 * A);
    T near = lit(A + 2), far = lit(A + 3), one = lit(1);
    auto outer = [&](const T &d) { return ((a * d - five) * d + eight) * d - four; }; // 1 < d < 2
    auto inner = [&](const T &d) { return (near * d - far) * d * d + one; };          // d <= 1
    w = {outer(t + one), inner(t), inner(one - t), outer(lit(2) - t)};
    for (int k = 0; k < 4; ++k) {
      T idx = f + lit(k - 1);
      cell[k] = cellOf(idx, m.in);
      if (exclude)
        w[k] = pick(onAxis(idx, m.in), w[k], lit(0));
    }
    if (exclude) {
      T sum = w[0] + w[1] + w[2] + w[3];
      for (T &v : w)
        v = v / sum;
    }
  }
};

// The blend of the four cells a pair of linear taps reads, with weights wy and wx (and their
// type's one); at(lowerRow, lowerColumn) reads a cell. The kernel and the lowering share it.
template <typename V, typename At> V blend(const V &wy, const V &wx, const V &one, At at) {
  return (one - wy) * ((one - wx) * at(false, false) + wx * at(false, true)) +
         wy * ((one - wx) * at(true, false) + wx * at(true, true));
}

void registerResize2d() {
  OpRegistry::get()
      .add("resize2d")
      .describe("H and W of NCHW data resized to `size` by nearest neighbour, linear or cubic "
                "interpolation (ONNX's Resize on the last two axes)")
      .param("size", ParamKind::Tuple, std::nullopt, "the output's (H, W)")
      .param("layout", ParamKind::Str, "NCHW", "data layout (NCHW only)")
      .param("method", ParamKind::Enum, "linear", "interpolation",
             {"nearest_neighbor", "linear", "cubic"})
      .param("coordinate_transformation_mode", ParamKind::Enum, "half_pixel",
             "how an output position maps onto the input (ONNX's modes)",
             {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
              "tf_half_pixel_for_nn"})
      .param("rounding_method", ParamKind::Enum, "round_prefer_floor",
             "nearest neighbour's rounding of the source coordinate",
             {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"})
      .param("cubic_alpha", ParamKind::Float, "-0.5",
             "cubic's coefficient A (ONNX's cubic_coeff_a, whose default is -0.75)")
      .param("cubic_exclude", ParamKind::Int, "0",
             "1: cells beyond the input weigh nothing (ONNX's exclude_outside)")
      .param("scale_h", ParamKind::Float, "0", "the scale the coordinates use (0: out / in)")
      .param("scale_w", ParamKind::Float, "0", "the scale the coordinates use (0: out / in)")
      .setPattern(kInjective)
      .layout(layoutFixed(1, true))
      .shape([](ShapeCtx &c) {
        const auto &size = c.attrs.getTuple("size");
        if (size.size() != 2 || size[0] <= 0 || size[1] <= 0)
          c.error("attribute 'size' must be two positive sizes (H, W)");
        if (c.attrs.getStr("layout") != "NCHW")
          c.error("only layout NCHW is supported");
        for (const char *k : {"scale_h", "scale_w"}) {
          // 0 (out / in) or a scale whose coordinates stay far inside a double's integers.
          double v = c.attrs.getFloat(k);
          if (!(v == 0 || (v >= 1e-6 && v <= 1e6)))
            c.error(
                cat("attribute '", k, "' must be 0 (out / in) or between 1e-6 and 1e6, got ", v));
        }
        if (!c.in[0].rankKnown())
          return;
        if (c.in[0].size() != 4)
          c.error(cat("data must be 4-D (NCHW), got ", shapeToList(c.in[0])));
        const Shape &d = c.in[0];
        c.assignOut(0, {d[0], d[1], size[0], size[1]});
      })
      .symbolic([](const SymShapeCtx &c) {
        // The output's H and W are written sizes; batch and channels come through.
        const auto &size = c.attrs.getTuple("size");
        if (c.in[0].size() != 4 || size.size() != 2)
          c.error(cat("data must be 4-D (NCHW), got ", shapeToList(Shape::symbolic(c.in[0]))));
        return std::vector<SymDims>{{c.in[0][0], c.in[0][1], SymExpr(size[0]), SymExpr(size[1])}};
      })
      .kernel([](const Attrs &a, const std::vector<const Tensor *> &in, std::vector<Tensor> &out) {
        const Tensor &x = *in[0];
        Tensor &y = out[0];
        int64_t H = x.shape[2], W = x.shape[3], OH = y.shape[2], OW = y.shape[3];
        AxisMap my(a, "scale_h", H, OH), mx(a, "scale_w", W, OW);
        bool nearest = a.getStr("method") == "nearest_neighbor";
        bool cubic = a.getStr("method") == "cubic", exclude = a.getInt("cubic_exclude") != 0;
        double A = a.getFloat("cubic_alpha");
        const std::string &rounding = a.getStr("rounding_method");
        int64_t k = 0;
        for (int64_t nc = 0; nc < x.shape[0] * x.shape[1]; ++nc) {
          const double *p = x.data.data() + nc * H * W;
          for (int64_t oy = 0; oy < OH; ++oy)
            for (int64_t ox = 0; ox < OW; ++ox) {
              if (nearest) {
                int64_t sy = cellOf(rounded(rounding, my.source<double>(oy, litD), litD), H);
                int64_t sx = cellOf(rounded(rounding, mx.source<double>(ox, litD), litD), W);
                y.data[k++] = p[sy * W + sx];
                continue;
              }
              if (cubic) {
                CubicTap<double> ty(my, static_cast<double>(oy), A, exclude, litD),
                    tx(mx, static_cast<double>(ox), A, exclude, litD);
                double v = 0;
                for (int r = 0; r < 4; ++r)
                  for (int c = 0; c < 4; ++c)
                    v += ty.w[r] * tx.w[c] * p[ty.cell[r] * W + tx.cell[c]];
                y.data[k++] = v;
                continue;
              }
              LinearTap<double> ty(my, static_cast<double>(oy), litD),
                  tx(mx, static_cast<double>(ox), litD);
              y.data[k++] = blend(ty.w, tx.w, 1.0, [&](bool row, bool col) {
                return p[(row ? ty.hi : ty.lo) * W + (col ? tx.hi : tx.lo)];
              });
            }
        }
        if (!dtypeIsFloat(y.dtype))
          for (double &v : y.data)
            v = roundToDType(v, y.dtype);
      })
      .lower([](const Attrs &a, const std::vector<ComputeRef> &in, const std::vector<Shape> &shapes,
                const std::vector<int> &types) {
        ComputeRef x = in[0];
        int dt = types[0];
        AxisMap my(a, "scale_h", x->shape[2], shapes[0][2]),
            mx(a, "scale_w", x->shape[3], shapes[0][3]);
        bool nearest = a.getStr("method") == "nearest_neighbor";
        std::string rounding = a.getStr("rounding_method");
        return std::vector<ComputeRef>{compute(
            shapes[0], dt,
            [&](const std::vector<Expr> &i) {
              if (nearest)
                return read(
                    x, {i[0], i[1],
                        cellOf(rounded(rounding, my.source<Expr>(cast(kFloat64, i[2]), litE), litE),
                               my.in),
                        cellOf(rounded(rounding, mx.source<Expr>(cast(kFloat64, i[3]), litE), litE),
                               mx.in)});
              // Integer data is interpolated in float64 and truncated, as the kernel does.
              int ct = dtypeIsFloat(dt) ? dt : kFloat64;
              if (a.getStr("method") == "cubic") {
                // The 16 cells in the kernel's order, each weighed by its row's and column's.
                bool exclude = a.getInt("cubic_exclude") != 0;
                double A = a.getFloat("cubic_alpha");
                CubicTap<Expr> ty(my, cast(kFloat64, i[2]), A, exclude, litE),
                    tx(mx, cast(kFloat64, i[3]), A, exclude, litE);
                Expr v;
                for (int r = 0; r < 4; ++r)
                  for (int c = 0; c < 4; ++c) {
                    Expr cell = read(x, {i[0], i[1], ty.cell[r], tx.cell[c]});
                    Expr term =
                        cast(ct, ty.w[r]) * cast(ct, tx.w[c]) * (ct == dt ? cell : cast(ct, cell));
                    v = v ? v + term : term;
                  }
                return ct == dt ? v : cast(dt, v);
              }
              LinearTap<Expr> ty(my, cast(kFloat64, i[2]), litE),
                  tx(mx, cast(kFloat64, i[3]), litE);
              Expr v =
                  blend(cast(ct, ty.w), cast(ct, tx.w), constant(1, ct), [&](bool row, bool col) {
                    Expr cell = read(x, {i[0], i[1], row ? ty.hi : ty.lo, col ? tx.hi : tx.lo});
                    return ct == dt ? cell : cast(ct, cell);
                  });
              return ct == dt ? v : cast(dt, v);
            },
            "resize", "injective", "ax")};
      });
}

} // namespace

void registerImageOps() { registerResize2d(); }

} // namespace loupe::ops
