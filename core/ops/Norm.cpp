// layer_norm, group_norm and instance_norm: normalisation by a mean and variance over the trailing
// axes (layer_norm), over groups of channels and the axes after them (group_norm), or over each
// channel's own axes after it (instance_norm, a group per channel), as Relay's.
#include "core/ops/OpHelpers.h"

#include <cmath>

namespace loupe::ops {

using namespace loupe::loop;

namespace {

// The normalised axes [axis, rank) and their element count.
struct Span {
  int first = 0;
  int64_t count = 1;
};

Span spanOf(const Attrs &a, const Shape &x, const std::string &what) {
  Span s;
  s.first = normalizeAxis(a.getInt("axis"), static_cast<int>(x.size()), what);
  for (size_t d = s.first; d < x.size(); ++d)
    s.count *= x[d];
  return s;
}

// The shape of mean and inv_std_dev: x's leading dims, 1 for each normalised one.
Shape statShape(const Shape &x, int first) {
  if (x.isSymbolic()) { // (written through, a symbolic shape would lose its expressions)
    SymDims dims = x.dims();
    for (size_t d = first; d < dims.size(); ++d)
      dims[d] = SymExpr(1);
    return Shape::symbolic(dims);
  }
  Shape s = x;
  for (size_t d = first; d < s.size(); ++d)
    s[d] = 1;
  return s;
}

void layerNormShape(ShapeCtx &c) {
  if (!c.in[0].rankKnown())
    return;
  Span s = spanOf(c.attrs, c.in[0], c.node);
  Shape trailing(c.in[0].begin() + s.first, c.in[0].end());
  c.assignIn(1, trailing);
  c.assignIn(2, trailing);
  c.assignOut(0, c.in[0]);
  c.assignOut(1, statShape(c.in[0], s.first));
  c.assignOut(2, statShape(c.in[0], s.first));
}

std::vector<SymDims> symLayerNorm(const SymShapeCtx &c) {
  Span s = spanOf(c.attrs, Shape::symbolic(c.in[0]), c.node);
  SymDims stat = c.in[0];
  for (size_t i = s.first; i < stat.size(); ++i)
    stat[i] = SymExpr(1);
  return {c.in[0], stat, stat};
}

// The mean and inverse deviation 1 / sqrt(var + eps) of `count` values, in two passes: the
// reference kernels' statistics, as the lowered ones compute them.
std::pair<double, double> meanAndInvDev(const double *v, int64_t count, double eps) {
  double mean = 0, var = 0;
  for (int64_t i = 0; i < count; ++i)
    mean += v[i];
  mean /= static_cast<double>(count);
  for (int64_t i = 0; i < count; ++i)
    var += (v[i] - mean) * (v[i] - mean);
  return {mean, 1 / std::sqrt(var / static_cast<double>(count) + eps)};
}

void layerNormKernel(const Attrs &a, const std::vector<const Tensor *> &in,
                     std::vector<Tensor> &out) {
  const Tensor &x = *in[0], &gamma = *in[1], &beta = *in[2];
  Span s = spanOf(a, x.shape, "layer_norm");
  double eps = a.getFloat("epsilon");
  int64_t groups = x.size() / s.count;
  for (int64_t g = 0; g < groups; ++g) {
    const double *row = x.data.data() + g * s.count;
    auto [mean, inv] = meanAndInvDev(row, s.count, eps);
    for (int64_t i = 0; i < s.count; ++i)
      out[0].data[g * s.count + i] = (row[i] - mean) * inv * gamma.data[i] + beta.data[i];
    out[1].data[g] = mean;
    out[2].data[g] = inv;
  }
}

// Sums a term of each x element and its statistics index over the group of that index.
using GroupSum = std::function<ComputeRef(
    const std::string &, const std::function<Expr(const Expr &, const std::vector<Expr> &)> &)>;

// The mean and inverse deviation of each group of `count` elements, in two passes (the sum,
// then the squared deviations from the mean): layer_norm's, group_norm's and instance_norm's.
std::pair<ComputeRef, ComputeRef> statistics(const Shape &stat, int dt, int64_t count,
                                             double epsilon, const GroupSum &reduceOver) {
  Expr n = constant(static_cast<double>(count), dt);
  ComputeRef sum = reduceOver("sum", [](const Expr &v, const std::vector<Expr> &) { return v; });
  ComputeRef mean = compute(
      stat, dt, [&](const std::vector<Expr> &i) { return read(sum, i) / n; }, "mean");
  ComputeRef sqDev = reduceOver("sq_dev", [&](const Expr &v, const std::vector<Expr> &i) {
    Expr dev = v - read(mean, i);
    return dev * dev;
  });
  ComputeRef inv = compute(
      stat, dt,
      [&](const std::vector<Expr> &i) {
        Expr var = read(sqDev, i) / n + constant(epsilon, dt);
        return constant(1, dt) / call("sqrt", {var}, dt);
      },
      "inv_std_dev");
  return {mean, inv};
}

// Two reductions over the normalised axes (the sum, then the squared deviations from the
// mean), then the elementwise normalisation reading the statistics broadcast back.
std::vector<ComputeRef> layerNormLower(const Attrs &a, const std::vector<ComputeRef> &in,
                                       const std::vector<Shape> &shapes,
                                       const std::vector<int> &types) {
  ComputeRef x = in[0], gamma = in[1], beta = in[2];
  int dt = types[0], nd = static_cast<int>(x->shape.size());
  Span s = spanOf(a, x->shape, "layer_norm");
  // Over symbolic shapes (a generic kernel's rows), the normalised axes must be constants.
  for (int d = s.first; d < nd; ++d)
    if (!x->shape.dim(static_cast<size_t>(d)).isConstant())
      fail("layer_norm: normalising over the symbolic axis ", x->shape.dimText(d),
           " has no generic kernel");
  Shape stat = statShape(x->shape, s.first);
  // sum over the group of statistics index i of term(x element, i)
  auto reduceOver = [&](const std::string &name,
                        const std::function<Expr(const Expr &, const std::vector<Expr> &)> &term) {
    std::vector<IterVar> r;
    for (int d = s.first; d < nd; ++d)
      r.push_back(reduceAxis(x->shape[d], "k" + std::to_string(d)));
    return compute(
        stat, dt,
        [&](const std::vector<Expr> &i) {
          std::vector<Expr> idx(i.begin(), i.begin() + s.first);
          for (const IterVar &v : r)
            idx.push_back(v.var);
          return reduce(Combiner::Sum, term(read(x, idx), i), r);
        },
        name, "reduce", "ax");
  };
  auto [mean, inv] = statistics(stat, dt, s.count, a.getFloat("epsilon"), reduceOver);
  ComputeRef out = compute(
      shapes[0], dt,
      [&](const std::vector<Expr> &i) {
        std::vector<Expr> g = broadcastIndices(stat, i);
        std::vector<Expr> t(i.begin() + s.first, i.end());
        return (read(x, i) - read(mean, g)) * read(inv, g) * read(gamma, t) + read(beta, t);
      },
      "compute", "injective", "ax");
  return {out, mean, inv};
}

// dx = inv (gy - mean(gy) - xhat mean(gy xhat)) with gy = g gamma and xhat = (x - mean) inv,
// plus what flows through the mean and inv_std_dev outputs (d mean/dx = 1/n, d inv/dx =
// -inv^3 (x - mean) / n); dgamma and dbeta are g xhat and g summed down to their shapes.
std::vector<NodeEntry> layerNormGrad(const NodePtr &n, const std::vector<NodeEntry> &g) {
  GradBuilder b{n};
  const NodeEntry &x = n->inputs[0], &gamma = n->inputs[1], &beta = n->inputs[2];
  NodeEntry mu = outOf(n, 1), inv = outOf(n, 2);
  // A reduction over the axes [axis, rank) without knowing the rank: a negative axis lists
  // them (axis … -1); a non-negative one excludes the leading axes (0 … axis-1), and 0 is all.
  int64_t axis = n->parsed.getInt("axis");
  AttrDict over;
  if (axis < 0) {
    std::vector<int64_t> axes;
    for (int64_t d = axis; d < 0; ++d)
      axes.push_back(d);
    over = {{"axis", shapeToTuple(axes)}, {"keepdims", "True"}};
  } else {
    std::vector<int64_t> lead;
    for (int64_t d = 0; d < axis; ++d)
      lead.push_back(d);
    over = {{"axis", shapeToTuple(lead)}, {"keepdims", "True"}, {"exclude", "True"}};
  }
  auto meanOver = [&](const NodeEntry &t) { return b.op("mean", {t}, over); };
  NodeEntry xc = b.op("broadcast_sub", {x, mu});
  NodeEntry xhat = b.op("broadcast_mul", {xc, inv});
  NodeEntry gy = b.op("broadcast_mul", {g[0], gamma});
  NodeEntry m1 = meanOver(gy);
  NodeEntry m2 = meanOver(b.mul(gy, xhat));
  NodeEntry inner =
      b.op("elemwise_sub", {b.op("broadcast_sub", {gy, m1}), b.op("broadcast_mul", {xhat, m2})});
  NodeEntry dx = b.op("broadcast_mul", {inner, inv});
  // 1/n as the mean of ones over the group.
  NodeEntry perN = b.scalar("__rdiv_scalar__", b.op("sum", {b.op("ones_like", {x})}, over), 1);
  NodeEntry viaMean = b.op("broadcast_mul", {g[1], perN});
  NodeEntry viaInv = b.op("broadcast_mul", {b.mul(g[2], b.mul(inv, b.mul(inv, inv))), perN});
  NodeEntry stats = b.op("broadcast_sub", {viaMean, b.op("broadcast_mul", {xc, viaInv})});
  return {mk("elemwise_add", n->name + "_grad_0", {dx, stats}),
          mk("collapse_sum", n->name + "_grad_1", {b.mul(g[0], xhat), gamma}),
          mk("collapse_sum", n->name + "_grad_2", {g[0], beta})};
}

// --- group_norm and instance_norm ---

// Where a channel axis splits into groups: `outer` elements before the axis, C channels in G
// groups of `per`, `inner` elements after it. A group's elements are contiguous, `per * inner`
// of them. instance_norm is one group per channel.
struct Groups {
  int axis = 1;
  int64_t outer = 1, channels = 1, groups = 1, per = 1, inner = 1;
};

Groups groupsOf(const Attrs &a, const Shape &x, bool perChannel, const std::string &what) {
  Groups g;
  int64_t axis = a.getInt("axis");
  // A non-negative axis only: the gradient's reshapes keep the leading axes by count, without
  // knowing the rank.
  if (axis < 0 || axis >= static_cast<int64_t>(x.size()))
    fail(what, ": axis ", axis, " must name an axis of ", shapeToList(x), " (0 to ", x.size() - 1,
         ")");
  g.axis = static_cast<int>(axis);
  for (int d = 0; d < g.axis; ++d)
    g.outer *= x[d];
  g.channels = x[g.axis];
  for (size_t d = g.axis + 1; d < x.size(); ++d)
    g.inner *= x[d];
  g.groups = perChannel ? g.channels : a.getInt("num_groups");
  if (g.groups <= 0 || g.channels % g.groups != 0)
    fail(what, ": num_groups ", g.groups, " does not divide the ", g.channels, " channels");
  g.per = g.channels / g.groups;
  return g;
}

InferShapeFn groupNormShape(bool perChannel) {
  return [perChannel](ShapeCtx &c) {
    if (!c.in[0].rankKnown())
      return;
    Groups g = groupsOf(c.attrs, c.in[0], perChannel, c.node);
    c.assignIn(1, {g.channels});
    c.assignIn(2, {g.channels});
    c.assignOut(0, c.in[0]);
  };
}

ComputeFn groupNormKernel(bool perChannel) {
  return [perChannel](const Attrs &a, const std::vector<const Tensor *> &in,
                      std::vector<Tensor> &out) {
    const Tensor &x = *in[0], &gamma = *in[1], &beta = *in[2];
    Groups g = groupsOf(a, x.shape, perChannel, "group_norm");
    double eps = a.getFloat("epsilon");
    int64_t count = g.per * g.inner;
    for (int64_t b = 0; b < g.outer * g.groups; ++b) {
      const double *block = x.data.data() + b * count;
      auto [mean, inv] = meanAndInvDev(block, count, eps);
      for (int64_t i = 0; i < count; ++i) {
        int64_t c = (b % g.groups) * g.per + i / g.inner;
        out[0].data[b * count + i] = (block[i] - mean) * inv * gamma.data[c] + beta.data[c];
      }
    }
  };
}

// The statistics have x's leading axes and one entry per group; each sums over the group's
// channels (kc) and the axes after the channel axis.
LowerFn groupNormLower(bool perChannel) {
  return [perChannel](const Attrs &a, const std::vector<ComputeRef> &in,
                      const std::vector<Shape> &shapes, const std::vector<int> &types) {
    ComputeRef x = in[0], gamma = in[1], beta = in[2];
    int dt = types[0], nd = static_cast<int>(x->shape.size());
    Groups g = groupsOf(a, x->shape, perChannel, "group_norm");
    Shape stat(x->shape.begin(), x->shape.begin() + g.axis);
    stat.push_back(g.groups);
    auto reduceOver =
        [&](const std::string &name,
            const std::function<Expr(const Expr &, const std::vector<Expr> &)> &term) {
          IterVar kc = reduceAxis(g.per, "kc");
          std::vector<IterVar> r{kc};
          for (int d = g.axis + 1; d < nd; ++d)
            r.push_back(reduceAxis(x->shape[d], "k" + std::to_string(d)));
          return compute(
              stat, dt,
              [&](const std::vector<Expr> &i) {
                std::vector<Expr> idx(i.begin(), i.begin() + g.axis);
                idx.push_back(i[g.axis] * g.per + kc.var);
                for (size_t k = 1; k < r.size(); ++k)
                  idx.push_back(r[k].var);
                return reduce(Combiner::Sum, term(read(x, idx), i), r);
              },
              name, "reduce", "ax");
        };
    auto [mean, inv] = statistics(stat, dt, g.per * g.inner, a.getFloat("epsilon"), reduceOver);
    ComputeRef out = compute(
        shapes[0], dt,
        [&](const std::vector<Expr> &i) {
          std::vector<Expr> s(i.begin(), i.begin() + g.axis);
          s.push_back(i[g.axis] / g.per);
          Expr c = i[g.axis];
          return (read(x, i) - read(mean, s)) * read(inv, s) * read(gamma, {c}) + read(beta, {c});
        },
        "compute", "injective", "ax");
    return std::vector<ComputeRef>{out};
  };
}

// With the statistics recomputed on a view of x as (leading axes, groups, rest), the layer-norm
// gradient per group: dx = inv (gy - mean(gy) - xhat mean(gy xhat)) for gy = g gamma; dgamma and
// dbeta sum g xhat and g over all but the channel axis. The views are reshapes whose 0s copy the
// leading axes, so no shape need be known.
GradientFn groupNormGrad(bool perChannel) {
  return [perChannel](const NodePtr &n, const std::vector<NodeEntry> &g) {
    GradBuilder b{n};
    const NodeEntry &x = n->inputs[0], &gamma = n->inputs[1];
    int64_t axis = n->parsed.getInt("axis");
    auto view = [&](int64_t groups) {
      std::vector<int64_t> s(static_cast<size_t>(axis), 0);
      s.push_back(groups);
      s.push_back(-1);
      return AttrDict{{"shape", shapeToTuple(s)}};
    };
    // instance_norm's groups are its channels: 0 copies them.
    AttrDict grouped = view(perChannel ? 0 : n->parsed.getInt("num_groups")), channels = view(0);
    AttrDict last = {{"axis", "(-1,)"}, {"keepdims", "True"}};
    auto meanOver = [&](const NodeEntry &t) { return b.op("mean", {t}, last); };
    NodeEntry xg = b.op("reshape", {x}, grouped);
    NodeEntry xc = b.op("broadcast_sub", {xg, meanOver(xg)});
    NodeEntry var =
        b.scalar("__add_scalar__", meanOver(b.mul(xc, xc)), n->parsed.getFloat("epsilon"));
    NodeEntry inv = b.scalar("__rdiv_scalar__", b.op("sqrt", {var}), 1);
    NodeEntry xhat = b.op("broadcast_mul", {xc, inv});
    NodeEntry gv = b.op("reshape", {g[0]}, channels);
    NodeEntry gamma2 = b.op("expand_dims", {gamma}, {{"axis", "1"}});
    NodeEntry gy = b.op("reshape_like", {b.op("broadcast_mul", {gv, gamma2}), xg});
    NodeEntry m1 = meanOver(gy), m2 = meanOver(b.mul(gy, xhat));
    NodeEntry inner =
        b.op("elemwise_sub", {b.op("broadcast_sub", {gy, m1}), b.op("broadcast_mul", {xhat, m2})});
    AttrDict allButChannels = {{"axis", "(" + std::to_string(axis) + ",)"}, {"exclude", "True"}};
    NodeEntry xhatC = b.op("reshape_like", {xhat, gv});
    return std::vector<NodeEntry>{
        mk("reshape_like", n->name + "_grad_0", {b.op("broadcast_mul", {inner, inv}), x}),
        mk("sum", n->name + "_grad_1", {b.mul(gv, xhatC)}, allButChannels),
        mk("sum", n->name + "_grad_2", {gv}, allButChannels)};
  };
}

} // namespace

void registerNormOps() {
  OpRegistry::get()
      .add("layer_norm")
      .describe("(x - mean) / sqrt(var + epsilon) * gamma + beta over the axes from `axis` on; "
                "outputs y, mean and inv_std_dev")
      .arguments({"data", "gamma", "beta"})
      .param("axis", ParamKind::Int, "-1", "the first normalised axis")
      .param("epsilon", ParamKind::Float, "1e-05", "added to the variance")
      .setPattern(kOpaque) // reductions feeding an elementwise pass over the same axes
      .outputs(3)
      .shape(layerNormShape)
      .symbolic(symLayerNorm)
      .kernel(layerNormKernel)
      .lowerSymbolic(layerNormLower)
      .grad(layerNormGrad)
      .layout(layoutFixed(1, true)); // the axes it normalises are the layout's, not a block's

  for (bool perChannel : {false, true}) {
    OpDef &op = OpRegistry::get().add(perChannel ? "instance_norm" : "group_norm");
    if (perChannel)
      op.describe("(x - mean) / sqrt(var + epsilon) * gamma + beta, the mean and variance of each "
                  "channel over the axes after `axis`");
    else
      op.describe("(x - mean) / sqrt(var + epsilon) * gamma + beta, the mean and variance of "
                  "each group of channels and the axes after `axis`")
          .param("num_groups", ParamKind::Int, std::nullopt, "groups the channels split into");
    op.arguments({"data", "gamma", "beta"})
        .param("axis", ParamKind::Int, "1", "the channel axis (non-negative)")
        .param("epsilon", ParamKind::Float, "1e-05", "added to the variance")
        .setPattern(kOpaque) // as layer_norm: reductions then an elementwise pass
        .shape(groupNormShape(perChannel))
        .symbolic(symSameShape)
        .kernel(groupNormKernel(perChannel))
        .lower(groupNormLower(perChannel))
        .grad(groupNormGrad(perChannel))
        .layout(layoutFixed(1, true));
  }
}

} // namespace loupe::ops
