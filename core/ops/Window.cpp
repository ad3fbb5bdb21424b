// Window: the N-D sliding window of the volume convolution and pooling ops.
#include "core/ops/Window.h"

namespace loupe::ops {

using namespace loupe::loop;

const SpatialAxes kPlanarAxes = {"(kh, kw)",
                                 "(1, 1)",
                                 "(0, 0)",
                                 "(sh, sw)",
                                 "(dh, dw)",
                                 "(ph, pw), applied on both sides",
                                 "(ph, pw) on both sides, or (top, left, bottom, right)",
                                 "NCHW",
                                 "OIHW"};
const SpatialAxes kVolumeAxes = {
    "(kd, kh, kw)",
    "(1, 1, 1)",
    "(0, 0, 0)",
    "(sd, sh, sw)",
    "(dd, dh, dw)",
    "(pd, ph, pw) on both sides, or (front, top, left, back, bottom, right)",
    "(pd, ph, pw) on both sides, or (front, top, left, back, bottom, right)",
    "NCDHW",
    "OIDHW"};

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

bool ncdhwInput(ShapeCtx &c) {
  if (c.attrs.getStr("layout") != "NCDHW")
    c.error(cat("layout '", c.attrs.getStr("layout"), "' is not supported (only NCDHW)"));
  if (!c.in[0].rankKnown())
    return false;
  if (c.in[0].size() != 2 + kAxes)
    c.error(cat("data must be 5-D (NCDHW), got ", shapeToList(c.in[0])));
  return true;
}

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

SymDims symWindowOutput(const SymShapeCtx &c, const Window &w, const SymDims &d, bool ceil) {
  if (d.size() != 5 || c.attrs.getStr("layout") != "NCDHW")
    c.error("symbolic shapes reach the volume ops in NCDHW layout only, 5-D");
  SymDims o;
  for (size_t a = 0; a < kAxes; ++a) {
    int64_t room = w.before[a] + w.after[a] - w.span(a) + (ceil ? w.stride[a] - 1 : 0);
    o.push_back(SymExpr::floorDiv(d[2 + a] + SymExpr(room), w.stride[a]) + SymExpr(1));
  }
  return o;
}

std::vector<WindowTap> windowTaps(const Window &w, const Shape &in, const Shape &out) {
  std::vector<WindowTap> taps;
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

Expr within(const Expr &v, int64_t n) { return land(le(intImm(0), v), lt(v, intImm(n))); }

std::vector<IterVar> spatialAxes(const Shape &extents, const std::string &prefix) {
  std::vector<IterVar> r;
  for (size_t a = 0; a < kAxes; ++a)
    r.push_back(reduceAxis(extents[a], prefix + "zyx"[a]));
  return r;
}

std::vector<Expr> vars(const std::vector<IterVar> &r) {
  std::vector<Expr> v;
  for (const IterVar &i : r)
    v.push_back(i.var);
  return v;
}

void volumeLayout(const Attrs &a, std::vector<std::string> &in, const std::vector<std::string> &,
                  std::vector<std::string> &out) {
  in[0] = a.getStr("layout");
  if (in.size() > 1)
    in[1] = a.getStr("kernel_layout");
  if (in.size() > 2)
    in[2] = "C";
  out[0] = a.getStr("layout");
}

} // namespace loupe::ops
