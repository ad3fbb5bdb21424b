// Reduce ops: sum, max, min, mean and prod over axes, with NNVM's keepdims/exclude rules.
#include "core/ops/OpHelpers.h"

#include <cmath>
#include <limits>

namespace loupe::ops {

namespace {

/// NNVM's reduce shape: all axes reduced → (1,) (or all ones with keepdims); otherwise the
/// reduced axes are dropped, or kept as 1 with keepdims.
Shape reducedShape(const Shape &in, const std::vector<int> &axes, bool keepdims) {
  if (axes.size() == in.size())
    return Shape(keepdims ? in.size() : 1, 1);
  Shape out;
  size_t k = 0;
  for (size_t d = 0; d < in.size(); ++d) {
    bool reduced = k < axes.size() && axes[k] == static_cast<int>(d);
    if (reduced)
      ++k;
    if (!reduced)
      out.push_back(in[d]);
    else if (keepdims)
      out.push_back(1);
  }
  return out;
}

void reduceShape(ShapeCtx &c) {
  if (c.in[0].empty())
    return;
  auto axes = reduceAxes(c.attrs.getTuple("axis"), c.attrs.getBool("exclude"),
                         static_cast<int>(c.in[0].size()), c.node);
  c.assignOut(0, reducedShape(c.in[0], axes, c.attrs.getBool("keepdims")));
}

enum class Kind { Sum, Max, Min, Mean, Prod };

ComputeFn reduceKernel(Kind kind) {
  return [kind](const Attrs &a, const std::vector<const Tensor *> &in, std::vector<Tensor> &out) {
    const Tensor &x = *in[0];
    int nd = static_cast<int>(x.shape.size());
    auto axes = reduceAxes(a.getTuple("axis"), a.getBool("exclude"), nd, "reduce");
    std::vector<bool> red(nd, false);
    for (int ax : axes)
      red[ax] = true;
    double init = kind == Kind::Max    ? -std::numeric_limits<double>::infinity()
                  : kind == Kind::Min  ? std::numeric_limits<double>::infinity()
                  : kind == Kind::Prod ? 1.0
                                       : 0.0;
    std::vector<double> acc(out[0].size(), init);
    // Output offset of an input index: the kept axes, row-major.
    Shape kept;
    for (int d = 0; d < nd; ++d)
      if (!red[d])
        kept.push_back(x.shape[d]);
    int64_t k = 0, count = 1;
    for (int ax : axes)
      count *= x.shape[ax];
    forEachIndex(x.shape, [&](const std::vector<int64_t> &idx) {
      int64_t o = 0, j = 0;
      for (int d = 0; d < nd; ++d)
        if (!red[d])
          o = o * kept[j++] + idx[d];
      double v = x.data[k++];
      double &r = acc[o];
      switch (kind) {
      case Kind::Sum:
      case Kind::Mean:
        r += v;
        break;
      case Kind::Max:
        r = std::max(r, v);
        break;
      case Kind::Min:
        r = std::min(r, v);
        break;
      case Kind::Prod:
        r *= v;
        break;
      }
    });
    for (size_t i = 0; i < acc.size(); ++i)
      out[0].data[i] = kind == Kind::Mean ? acc[i] / static_cast<double>(count) : acc[i];
  };
}

void reduceOp(const char *name, const char *doc, Kind kind) {
  OpRegistry::get()
      .add(name)
      .describe(doc)
      .param("axis", ParamKind::Tuple, "()", "axes to reduce; () means all")
      .param("keepdims", ParamKind::Bool, "False", "keep reduced axes as size 1")
      .param("exclude", ParamKind::Bool, "False", "reduce every axis except `axis`")
      .setPattern(kCommReduce)
      .shape(reduceShape)
      .kernel(reduceKernel(kind));
}

} // namespace

void registerReduceOps() {
  reduceOp("sum", "sum over axes", Kind::Sum);
  reduceOp("max", "maximum over axes", Kind::Max);
  reduceOp("min", "minimum over axes", Kind::Min);
  reduceOp("mean", "mean over axes", Kind::Mean);
  reduceOp("prod", "product over axes", Kind::Prod);
}

} // namespace loupe::ops
