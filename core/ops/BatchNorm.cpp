// BatchNorm: batch_norm in its inference form (the moving statistics as the mean and variance)
// and its gradient _batch_norm_grad — shape rule, reference kernels, lowering.
#include "core/ops/OpHelpers.h"

#include <cmath>
#include <functional>
#include <string>
#include <vector>

namespace loupe::ops {

namespace {

void batchNormShape(ShapeCtx &c) {
  if (!c.in[0].rankKnown())
    return;
  int axis = normalizeAxis(c.attrs.getInt("axis"), static_cast<int>(c.in[0].size()),
                           cat("operator ", c.node, " (", c.op, ")"));
  Shape ch{c.in[0][axis]};
  for (size_t i = 1; i < 5; ++i)
    c.assignIn(i, ch);
  c.assignOut(0, c.in[0]);
  c.assignOut(1, ch);
  c.assignOut(2, ch);
}

std::vector<SymDims> symBatchNorm(const SymShapeCtx &c) {
  int axis = normalizeAxis(c.attrs.getInt("axis"), static_cast<int>(c.in[0].size()),
                           cat("operator ", c.node, " (", c.op, ")"));
  SymDims ch{c.in[0][axis]};
  return {c.in[0], ch, ch};
}

void batchNormKernel(const Attrs &a, const std::vector<const Tensor *> &in,
                     std::vector<Tensor> &out) {
  const Tensor &x = *in[0];
  int axis = normalizeAxis(a.getInt("axis"), static_cast<int>(x.shape.size()), "batch_norm");
  double eps = a.getFloat("epsilon");
  bool center = a.getBool("center"), scale = a.getBool("scale");
  int64_t inner = 1, C = x.shape[axis];
  for (size_t d = axis + 1; d < x.shape.size(); ++d)
    inner *= x.shape[d];
  for (int64_t i = 0; i < x.size(); ++i) {
    int64_t ch = (i / inner) % C;
    double v = (x.data[i] - in[3]->data[ch]) / std::sqrt(in[4]->data[ch] + eps);
    if (scale)
      v *= in[1]->data[ch];
    if (center)
      v += in[2]->data[ch];
    out[0].data[i] = v;
  }
  // Inference mode: the mean and variance outputs are the moving statistics.
  out[1].data = in[3]->data;
  out[2].data = in[4]->data;
}

// _batch_norm_grad(g, g_mean, g_var, data, gamma, beta, mean, var): the inference form's
// gradients. With s = 1/sqrt(var + eps) and gm = gamma (or 1): dx = g gm s; dgamma = Σ g (x-μ) s;
// dbeta = Σ g; dμ = -Σ g gm s + g_mean; dvar = -½ Σ g (x-μ) gm s³ + g_var (the mean and
// variance outputs are the moving statistics themselves).
void batchNormGradKernel(const Attrs &a, const std::vector<const Tensor *> &in,
                         std::vector<Tensor> &out) {
  const Tensor &g = *in[0], &x = *in[3], &gamma = *in[4], &mean = *in[6], &var = *in[7];
  int axis = normalizeAxis(a.getInt("axis"), static_cast<int>(x.shape.size()), "batch_norm");
  double eps = a.getFloat("epsilon");
  bool center = a.getBool("center"), scale = a.getBool("scale");
  int64_t inner = innerSize(x.shape, axis), C = x.shape[axis];
  for (int64_t i = 0; i < x.size(); ++i) {
    int64_t ch = (i / inner) % C;
    double s = 1 / std::sqrt(var.data[ch] + eps), gm = scale ? gamma.data[ch] : 1.0;
    double xm = x.data[i] - mean.data[ch], gi = g.data[i];
    out[0].data[i] = gi * gm * s;
    if (scale)
      out[1].data[ch] += gi * xm * s;
    if (center)
      out[2].data[ch] += gi;
    out[3].data[ch] -= gi * gm * s;
    out[4].data[ch] -= 0.5 * gi * xm * gm * s * s * s;
  }
  for (int64_t ch = 0; ch < C; ++ch) {
    out[3].data[ch] += in[1]->data[ch];
    out[4].data[ch] += in[2]->data[ch];
  }
}

} // namespace

void registerBatchNormOps() {
  OpDef &bn = OpRegistry::get()
                  .add("batch_norm")
                  .describe("batch normalisation (inference form)")
                  .arguments({"data", "gamma", "beta", "moving_mean", "moving_var"})
                  .param("axis", ParamKind::Int, "1", "the channel axis")
                  .param("epsilon", ParamKind::Float, "1e-05", "added to the variance")
                  .param("center", ParamKind::Bool, "True", "add beta")
                  .param("scale", ParamKind::Bool, "True", "multiply by gamma")
                  .setPattern(kOpaque)
                  .outputs(3)
                  .visibleOutputs(1)
                  .shape(batchNormShape)
                  .symbolic(symBatchNorm)
                  .kernel(batchNormKernel);
  bn.mutateInputs = {3, 4};
  bn.lower([](const Attrs &a, const std::vector<loop::ComputeRef> &in,
              const std::vector<Shape> &shapes, const std::vector<int> &types) {
    using namespace loop;
    ComputeRef x = in[0], gamma = in[1], beta = in[2], mean = in[3], var = in[4];
    int axis = normalizeAxis(a.getInt("axis"), static_cast<int>(x->shape.size()), "batch_norm");
    int dt = types[0];
    double eps = a.getFloat("epsilon");
    bool center = a.getBool("center"), scale = a.getBool("scale");
    ComputeRef out = compute(shapes[0], dt, [&](const std::vector<Expr> &i) {
      Expr c = i[axis];
      Expr v =
          (read(x, i) - read(mean, {c})) / call("sqrt", {read(var, {c}) + constant(eps, dt)}, dt);
      if (scale)
        v = v * read(gamma, {c});
      if (center)
        v = v + read(beta, {c});
      return v;
    });
    auto copyOf = [&](const ComputeRef &t, size_t k) {
      return compute(shapes[k], types[k], [&](const std::vector<Expr> &i) { return read(t, i); });
    };
    return std::vector<ComputeRef>{out, copyOf(mean, 1), copyOf(var, 2)};
  });
  bn.grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
    std::vector<NodeEntry> in = g;
    in.insert(in.end(), n->inputs.begin(), n->inputs.end());
    NodeEntry bg = mk("_batch_norm_grad", n->name + "_grad", in, n->attrs);
    return outputsOf(bg.node);
  });
  OpRegistry::get()
      .add("_batch_norm_grad")
      .describe("gradients of batch_norm (inference form) for its five inputs")
      .arguments({"ograd", "mean_ograd", "var_ograd", "data", "gamma", "beta", "moving_mean",
                  "moving_var"})
      .param("axis", ParamKind::Int, "1", "the channel axis")
      .param("epsilon", ParamKind::Float, "1e-05", "added to the variance")
      .param("center", ParamKind::Bool, "True", "add beta")
      .param("scale", ParamKind::Bool, "True", "multiply by gamma")
      .setPattern(kOpaque)
      .outputs(5)
      .symbolic(symLikeInputs({3, 4, 5, 6, 7}))
      .shape([](ShapeCtx &c) {
        for (size_t k = 0; k < 5; ++k)
          if (c.in[3 + k].rankKnown())
            c.assignOut(k, c.in[3 + k]);
      })
      .kernel(batchNormGradKernel)
      .lower([](const Attrs &a, const std::vector<loop::ComputeRef> &in,
                const std::vector<Shape> &shapes, const std::vector<int> &types) {
        // The kernel's sums, one channel stage each (a zero stage for a disabled gamma/beta).
        using namespace loop;
        ComputeRef g = in[0], x = in[3], gamma = in[4], mean = in[6], var = in[7];
        int axis = normalizeAxis(a.getInt("axis"), static_cast<int>(x->shape.size()), "batch_norm");
        int dt = types[0];
        double eps = a.getFloat("epsilon");
        bool center = a.getBool("center"), scale = a.getBool("scale");
        auto inv = [&](const Expr &c) {
          return constant(1, dt) / call("sqrt", {read(var, {c}) + constant(eps, dt)}, dt);
        };
        auto gm = [&](const Expr &c) { return scale ? read(gamma, {c}) : constant(1, dt); };
        auto xm = [&](const std::vector<Expr> &i) { return read(x, i) - read(mean, {i[axis]}); };
        ComputeRef dx = compute(shapes[0], dt, [&](const std::vector<Expr> &i) {
          return read(g, i) * gm(i[axis]) * inv(i[axis]);
        });
        auto zeros = [&](size_t k) {
          return compute(shapes[k], types[k],
                         [&](const std::vector<Expr> &) { return constant(0, types[k]); });
        };
        ComputeRef dgamma = scale ? channelSum(x->shape, axis, dt,
                                               [&](const std::vector<Expr> &i) {
                                                 return read(g, i) * xm(i) * inv(i[axis]);
                                               })
                                  : zeros(1);
        ComputeRef dbeta = center
                               ? channelSum(x->shape, axis, dt,
                                            [&](const std::vector<Expr> &i) { return read(g, i); })
                               : zeros(2);
        ComputeRef sumG =
            channelSum(x->shape, axis, dt, [&](const std::vector<Expr> &i) { return read(g, i); });
        ComputeRef sumGX = channelSum(
            x->shape, axis, dt, [&](const std::vector<Expr> &i) { return read(g, i) * xm(i); });
        ComputeRef dmean = compute(shapes[3], dt, [&](const std::vector<Expr> &c) {
          return read(in[1], c) - read(sumG, c) * gm(c[0]) * inv(c[0]);
        });
        ComputeRef dvar = compute(shapes[4], dt, [&](const std::vector<Expr> &c) {
          Expr s = inv(c[0]);
          return read(in[2], c) - constant(0.5, dt) * read(sumGX, c) * gm(c[0]) * s * s * s;
        });
        return std::vector<ComputeRef>{dx, dgamma, dbeta, dmean, dvar};
      });
  bn.layout([](const Attrs &a, std::vector<std::string> &in, const std::vector<std::string> &last,
               std::vector<std::string> &out) {
    std::vector<std::string> first{in[0]}, firstLast{last[0]}, o{out[0]};
    layoutFixed(1, true)(a, first, firstLast, o);
    in[0] = first[0];
    out[0] = o[0];
  });
}

} // namespace loupe::ops
