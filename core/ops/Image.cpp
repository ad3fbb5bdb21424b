// Image ops: resize2d scales H and W of an NCHW tensor to a given size by nearest neighbour or
// linear interpolation, with ONNX's coordinate transformation and rounding modes (Relay's
// image.resize2d; ONNX's Resize).
#include "core/ops/OpHelpers.h"

#include <algorithm>
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

// Nearest neighbour's rounding of a source coordinate, ONNX's nearest_mode.
double roundD(const std::string &m, double x) {
  return m == "floor"               ? std::floor(x)
         : m == "ceil"              ? std::ceil(x)
         : m == "round_prefer_ceil" ? std::floor(x + 0.5)
                                    : std::ceil(x - 0.5); // round_prefer_floor
}

Expr roundE(const std::string &m, const Expr &x) {
  return m == "floor"               ? call("floor", {x}, kFloat64)
         : m == "ceil"              ? call("ceil", {x}, kFloat64)
         : m == "round_prefer_ceil" ? call("floor", {x + litE(0.5)}, kFloat64)
                                    : call("ceil", {x - litE(0.5)}, kFloat64);
}

// A source cell from a rounded coordinate, clamped to the axis before it becomes an integer
// (a coordinate far outside the axis would not fit one).
int64_t clampD(double v, int64_t n) {
  return v > 0 ? static_cast<int64_t>(std::min(v, static_cast<double>(n - 1))) : 0;
}

Expr clampE(const Expr &v, int64_t n) {
  return cast(kInt32, min(max(v, litE(0)), litE(static_cast<double>(n - 1))));
}

// The two input cells a linear tap reads and the second one's weight; a coordinate outside
// the axis reads its edge cell (ONNX pads with the edge values).
struct LinearTapD {
  int64_t lo, hi;
  double w;
  LinearTapD(const AxisMap &m, int64_t o) {
    double x = m.source<double>(static_cast<double>(o), litD), f = std::floor(x);
    lo = clampD(f, m.in), hi = clampD(f + 1, m.in), w = x - f;
  }
};

struct LinearTapE {
  Expr lo, hi, w;
  LinearTapE(const AxisMap &m, const Expr &o, int dt) {
    Expr x = m.source<Expr>(cast(kFloat64, o), litE), f = call("floor", {x}, kFloat64);
    lo = clampE(f, m.in), hi = clampE(f + litE(1), m.in), w = cast(dt, x - f);
  }
};

void registerResize2d() {
  OpRegistry::get()
      .add("resize2d")
      .describe("H and W of NCHW data resized to `size` by nearest neighbour or linear "
                "interpolation (ONNX's Resize on the last two axes)")
      .param("size", ParamKind::Tuple, std::nullopt, "the output's (H, W)")
      .param("layout", ParamKind::Str, "NCHW", "data layout (NCHW only)")
      .param("method", ParamKind::Enum, "linear", "interpolation", {"nearest_neighbor", "linear"})
      .param("coordinate_transformation_mode", ParamKind::Enum, "half_pixel",
             "how an output position maps onto the input (ONNX's modes)",
             {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
              "tf_half_pixel_for_nn"})
      .param("rounding_method", ParamKind::Enum, "round_prefer_floor",
             "nearest neighbour's rounding of the source coordinate",
             {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"})
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
            c.error(cat("attribute '", k, "' must be 0 (out / in) or between 1e-6 and 1e6, got ",
                        v));
        }
        if (c.in[0].empty())
          return;
        if (c.in[0].size() != 4)
          c.error(cat("data must be 4-D (NCHW), got ", shapeToList(c.in[0])));
        const Shape &d = c.in[0];
        c.assignOut(0, {d[0], d[1], size[0], size[1]});
      })
      .kernel([](const Attrs &a, const std::vector<const Tensor *> &in, std::vector<Tensor> &out) {
        const Tensor &x = *in[0];
        Tensor &y = out[0];
        int64_t H = x.shape[2], W = x.shape[3], OH = y.shape[2], OW = y.shape[3];
        AxisMap my(a, "scale_h", H, OH), mx(a, "scale_w", W, OW);
        bool nearest = a.getStr("method") == "nearest_neighbor";
        const std::string &rounding = a.getStr("rounding_method");
        int64_t k = 0;
        for (int64_t nc = 0; nc < x.shape[0] * x.shape[1]; ++nc) {
          const double *p = x.data.data() + nc * H * W;
          for (int64_t oy = 0; oy < OH; ++oy)
            for (int64_t ox = 0; ox < OW; ++ox) {
              if (nearest) {
                int64_t sy = clampD(roundD(rounding, my.source<double>(oy, litD)), H);
                int64_t sx = clampD(roundD(rounding, mx.source<double>(ox, litD)), W);
                y.data[k++] = p[sy * W + sx];
                continue;
              }
              LinearTapD ty(my, oy), tx(mx, ox);
              y.data[k++] =
                  (1 - ty.w) * ((1 - tx.w) * p[ty.lo * W + tx.lo] + tx.w * p[ty.lo * W + tx.hi]) +
                  ty.w * ((1 - tx.w) * p[ty.hi * W + tx.lo] + tx.w * p[ty.hi * W + tx.hi]);
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
                    x,
                    {i[0], i[1],
                     clampE(roundE(rounding, my.source<Expr>(cast(kFloat64, i[2]), litE)), my.in),
                     clampE(roundE(rounding, mx.source<Expr>(cast(kFloat64, i[3]), litE)), mx.in)});
              // Integer data is interpolated in float64 and truncated, as the kernel does.
              int ct = dtypeIsFloat(dt) ? dt : kFloat64;
              LinearTapE ty(my, i[2], ct), tx(mx, i[3], ct);
              auto at = [&](const Expr &yy, const Expr &xx) {
                Expr v = read(x, {i[0], i[1], yy, xx});
                return ct == dt ? v : cast(ct, v);
              };
              Expr one = constant(1, ct);
              Expr v = (one - ty.w) * ((one - tx.w) * at(ty.lo, tx.lo) + tx.w * at(ty.lo, tx.hi)) +
                       ty.w * ((one - tx.w) * at(ty.hi, tx.lo) + tx.w * at(ty.hi, tx.hi));
              return ct == dt ? v : cast(dt, v);
            },
            "resize", "injective", "ax")};
      });
}

} // namespace

void registerImageOps() { registerResize2d(); }

} // namespace loupe::ops
