// Pad: the pad op (constant, and Relay's edge and reflect modes) and its gradient _pad_grad —
// shape rule, reference kernels, lowering.
#include "core/ops/OpHelpers.h"

#include <string>
#include <vector>

namespace loupe::ops {

namespace {

void padShape(ShapeCtx &c) {
  const auto &pw = c.attrs.getPairs("pad_width");
  if (!c.in[0].rankKnown())
    return;
  if (pw.size() != c.in[0].size())
    c.error(cat("pad_width has ", pw.size(), " pairs but the input has ", c.in[0].size(), " axes"));
  Shape o = c.in[0];
  bool reflect = c.attrs.getStr("pad_mode") == "reflect";
  for (size_t d = 0; d < o.size(); ++d) {
    if (pw[d][0] < 0 || pw[d][1] < 0)
      c.error("pad_width values must be non-negative");
    // A reflection mirrors the axis once, about its first and last cells.
    if (reflect && (pw[d][0] >= o[d] || pw[d][1] >= o[d]))
      c.error(cat("reflect padding of axis ", d, " (", pw[d][0], ", ", pw[d][1],
                  ") must be less than its length ", o[d]));
    if (o[d])
      o[d] += pw[d][0] + pw[d][1];
  }
  c.assignOut(0, o);
}

// padShape over symbolic dimensions: each axis grows by its two pads (a reflection of a
// symbolic axis is checked by the run that binds it).
std::vector<SymDims> symPad(const SymShapeCtx &c) {
  const auto &pw = c.attrs.getPairs("pad_width");
  SymDims o = c.in[0];
  if (pw.size() != o.size())
    c.error(cat("pad_width has ", pw.size(), " pairs but the input has ", o.size(), " axes"));
  for (size_t d = 0; d < o.size(); ++d) {
    if (pw[d][0] < 0 || pw[d][1] < 0)
      c.error("pad_width values must be non-negative");
    o[d] = o[d] + SymExpr(pw[d][0] + pw[d][1]);
  }
  return {o};
}

// Where position i - before of an axis of n cells reads for pad_mode edge (the nearest end
// cell) and reflect (mirrored about the end cells, without repeating them); inside the axis
// both read i - before itself. T is int64_t (the kernels) or a loop expression (the lowering).
int64_t padSource(const std::string &mode, int64_t i, int64_t n) {
  if (mode == "edge")
    return std::clamp<int64_t>(i, 0, n - 1);
  return i < 0 ? -i : i >= n ? 2 * (n - 1) - i : i;
}

loop::Expr padSource(const std::string &mode, const loop::Expr &i, int64_t n) {
  using namespace loop;
  if (mode == "edge")
    return min(max(i, intImm(0)), intImm(n - 1));
  return select(lt(i, intImm(0)), intImm(0) - i,
                select(ge(i, intImm(n)), intImm(2 * (n - 1)) - i, i));
}

// Edge and reflect padding: every output cell reads a data cell (padSource per axis).
loop::ComputeRef padMirrorCompute(const loop::ComputeRef &x, const std::string &mode,
                                  const std::vector<std::vector<int64_t>> &pw) {
  Shape shape = x->shape;
  for (size_t d = 0; d < shape.size(); ++d)
    shape[d] += pw[d][0] + pw[d][1];
  return loop::compute(
      shape, x->dtype,
      [&](const std::vector<loop::Expr> &i) {
        std::vector<loop::Expr> idx;
        for (size_t d = 0; d < i.size(); ++d)
          idx.push_back(pw[d][0] == 0 && pw[d][1] == 0
                            ? i[d]
                            : padSource(mode, i[d] - pw[d][0], x->shape[d]));
        return loop::read(x, idx);
      },
      "pad", "injective");
}

} // namespace

void padInto(const Tensor &x, const std::vector<std::vector<int64_t>> &pw, const std::string &mode,
             double fillv, Tensor &out) {
  auto st = stridesOf(x.shape);
  int64_t k = 0;
  forEachIndex(out.shape, [&](const std::vector<int64_t> &idx) {
    int64_t off = 0;
    bool inside = true;
    for (size_t d = 0; d < idx.size(); ++d) {
      int64_t i = idx[d] - pw[d][0];
      if (i < 0 || i >= x.shape[d]) {
        if (mode == "constant") {
          inside = false;
          break;
        }
        i = padSource(mode, i, x.shape[d]);
      }
      off += i * st[d];
    }
    out.data[k++] = inside ? x.data[off] : fillv;
  });
}

namespace {

void padKernel(const Attrs &a, const std::vector<const Tensor *> &in, std::vector<Tensor> &out) {
  padInto(*in[0], a.getPairs("pad_width"), a.getStr("pad_mode"), a.getFloat("pad_value"), out[0]);
}

// _pad_grad(g, data): the part of g that covers the data (the padding gets no gradient).
void padGradKernel(const Attrs &a, const std::vector<const Tensor *> &in,
                   std::vector<Tensor> &out) {
  const auto &pw = a.getPairs("pad_width");
  const Tensor &g = *in[0];
  std::string mode = a.getStr("pad_mode");
  const Shape &x = out[0].shape;
  if (mode == "constant") {
    auto st = stridesOf(g.shape);
    int64_t k = 0;
    forEachIndex(x, [&](const std::vector<int64_t> &idx) {
      int64_t off = 0;
      for (size_t d = 0; d < idx.size(); ++d)
        off += (idx[d] + pw[d][0]) * st[d];
      out[0].data[k++] = g.data[off];
    });
    return;
  }
  // Edge and reflect: each ograd cell adds to the data cell it was read from.
  auto st = stridesOf(x);
  std::fill(out[0].data.begin(), out[0].data.end(), 0.0);
  int64_t k = 0;
  forEachIndex(g.shape, [&](const std::vector<int64_t> &idx) {
    int64_t off = 0;
    for (size_t d = 0; d < idx.size(); ++d)
      off += padSource(mode, idx[d] - pw[d][0], x[d]) * st[d];
    out[0].data[off] += g.data[k++];
  });
}

// The ograd cells that read data cell j of an axis of n cells (edge and reflect padding), as
// candidates r of a reduction: r = 0 is the cell's own position; for reflect r = 1 is its
// mirror before the axis and r = 2 its mirror after it; for edge the end cells also gather the
// `before` cells before the axis (r = 1 … before, for j = 0) and the `after` cells after it
// (r = before + 1 …, for j = n - 1). Each candidate has a position (clamped into ograd, so that
// an invalid one reads in bounds) and whether it counts.
struct PadCandidate {
  loop::Expr position, valid;
};

int64_t padCandidates(const std::string &mode, int64_t before, int64_t after) {
  return mode == "reflect" ? 3 : before + after + 1;
}

PadCandidate padCandidate(const std::string &mode, const loop::Expr &j, const loop::Expr &r,
                          int64_t n, int64_t before, int64_t after) {
  using namespace loop;
  Expr own = j + intImm(before), isOwn = eq(r, intImm(0));
  Expr last = intImm(before + after + n - 1);
  auto clamp = [&](const Expr &o) { return min(max(o, intImm(0)), last); };
  if (mode == "reflect") {
    Expr front = intImm(before) - j, back = intImm(before + 2 * (n - 1)) - j;
    Expr frontOk = land(eq(r, intImm(1)), land(ge(j, intImm(1)), le(j, intImm(before))));
    Expr backOk = land(eq(r, intImm(2)), land(ge(j, intImm(n - 1 - after)), le(j, intImm(n - 2))));
    return {select(isOwn, own, clamp(select(eq(r, intImm(1)), front, back))),
            lor(isOwn, lor(frontOk, backOk))};
  }
  Expr inFront = land(ge(r, intImm(1)), le(r, intImm(before)));
  Expr frontOk = land(eq(j, intImm(0)), inFront);
  Expr backOk = land(eq(j, intImm(n - 1)), gt(r, intImm(before)));
  Expr pos = select(inFront, intImm(before) - r, intImm(n - 1) + r);
  return {select(isOwn, own, clamp(pos)), lor(isOwn, lor(frontOk, backOk))};
}

} // namespace

void registerPadOps() {
  OpRegistry::get()
      .add("pad")
      .describe("pads every axis with a constant, or (Relay's pad_mode) with its edge cells or "
                "its reflection")
      .param("pad_width", ParamKind::TupleOfPairs, std::nullopt, "((before, after), …) per axis")
      .param("pad_value", ParamKind::Float, "0.0", "the fill value")
      .param("pad_mode", ParamKind::Enum, "constant", "what fills the padding",
             {"constant", "edge", "reflect"})
      .layout(layoutFixed(1, false))
      .setPattern(kInjective)
      .shape(padShape)
      .symbolic(symPad)
      .kernel(padKernel)
      // A constant pad bounds a symbolic axis by its expression (padCompute).
      .lowerSymbolicBatch([](const Attrs &a, const std::vector<loop::ComputeRef> &in,
                             const std::vector<Shape> &, const std::vector<int> &) {
        if (a.getStr("pad_mode") != "constant" && in[0]->shape.isSymbolic())
          fail("pad: ", a.getStr("pad_mode"), " padding is not lowered over a symbolic shape");
        if (a.getStr("pad_mode") != "constant")
          return std::vector<loop::ComputeRef>{
              padMirrorCompute(in[0], a.getStr("pad_mode"), a.getPairs("pad_width"))};
        std::vector<int64_t> before, after;
        for (const auto &pr : a.getPairs("pad_width")) {
          before.push_back(pr[0]);
          after.push_back(pr[1]);
        }
        return std::vector<loop::ComputeRef>{
            padCompute(in[0], before, after, a.getFloat("pad_value"), "pad")};
      })
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        AttrDict a;
        for (const auto &[k, v] : n->attrs)
          if (k == "pad_width" || k == "pad_mode")
            a.emplace_back(k, v);
        return std::vector<NodeEntry>{mk("_pad_grad", n->name + "_grad", {g[0], n->inputs[0]}, a)};
      });
  OpRegistry::get()
      .add("_pad_grad")
      .describe("gradient of pad: the part of ograd over the unpadded data (with edge and "
                "reflect padding, plus the padding cells read from each data cell)")
      .arguments({"ograd", "data"})
      .param("pad_width", ParamKind::TupleOfPairs, std::nullopt, "((before, after), …) per axis")
      .param("pad_mode", ParamKind::Enum, "constant", "pad's pad_mode",
             {"constant", "edge", "reflect"})
      .setPattern(kOpaque)
      .symbolic(symLikeInputs({1}))
      .shape([](ShapeCtx &c) {
        if (c.in[1].rankKnown())
          c.assignOut(0, c.in[1]);
      })
      .kernel(padGradKernel)
      .lower([](const Attrs &a, const std::vector<loop::ComputeRef> &in,
                const std::vector<Shape> &shapes, const std::vector<int> &types) {
        // The data's part of ograd: read it shifted by the padding before each axis.
        const auto &pw = a.getPairs("pad_width");
        loop::ComputeRef g = in[0];
        std::string mode = a.getStr("pad_mode");
        if (mode != "constant") {
          // Each data cell sums its candidates over the padded axes (padCandidate).
          std::vector<loop::IterVar> r;
          std::vector<size_t> axes;
          for (size_t d = 0; d < pw.size(); ++d)
            if (pw[d][0] != 0 || pw[d][1] != 0) {
              axes.push_back(d);
              r.push_back(loop::reduceAxis(padCandidates(mode, pw[d][0], pw[d][1]),
                                           "r" + std::to_string(d)));
            }
          return std::vector<loop::ComputeRef>{loop::compute(
              shapes[0], types[0],
              [&](const std::vector<loop::Expr> &i) {
                std::vector<loop::Expr> idx = i;
                loop::Expr valid;
                for (size_t k = 0; k < axes.size(); ++k) {
                  size_t d = axes[k];
                  PadCandidate c =
                      padCandidate(mode, i[d], r[k].var, shapes[0][d], pw[d][0], pw[d][1]);
                  idx[d] = c.position;
                  valid = valid ? loop::land(valid, c.valid) : c.valid;
                }
                loop::Expr v = loop::read(g, idx);
                if (valid)
                  v = loop::select(valid, v, loop::constant(0, types[0]));
                return r.empty() ? v : loop::reduce(loop::Combiner::Sum, v, r);
              },
              "compute", "reduce", "ax")};
        }
        return std::vector<loop::ComputeRef>{loop::compute(
            shapes[0], types[0],
            [&](const std::vector<loop::Expr> &i) {
              std::vector<loop::Expr> idx;
              for (size_t d = 0; d < i.size(); ++d)
                idx.push_back(i[d] + pw[d][0]);
              return loop::read(g, idx);
            },
            "compute", "injective", "ax")};
      });
}

} // namespace loupe::ops
