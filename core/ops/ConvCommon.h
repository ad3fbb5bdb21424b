// ConvCommon: what the convolution files (Conv.cpp, ConvNCHWc.cpp, Conv3d.cpp) share — the
// attributes every convolution declares, NNVM's one-node convolution gradients, and the 2-D
// convolution's parameters, layouts, reference kernel and bias stage.
#pragma once

#include "core/ops/OpHelpers.h"
#include "core/ops/Window.h"

#include <functional>

namespace loupe::ops {

/// Registers `name` with the attributes every convolution of the family declares (channels,
/// kernel_size, strides, padding, dilation, groups, layouts, use_bias) for the spatial axes `ax`.
OpDef &convCommon(const char *name, const char *doc, const SpatialAxes &ax = kPlanarAxes);

/// NNVM's convolution gradients: one `gradOp` node carrying the convolution's attributes, whose
/// outputs are the gradients of its inputs (data, weight and, with a bias, the bias).
GradientFn throughGradOp(const char *gradOp);

/// A 2-D convolution's attributes as numbers (kernel, strides, padding, dilation per axis).
struct ConvParams {
  int64_t channels, kh, kw, sh, sw, ph, pw, dh, dw, groups;
  bool bias;
};

/// Reads and (with `c`) checks a 2-D convolution's attributes; `blocked` ops check their layouts
/// themselves.
ConvParams convParams(const Attrs &a, ShapeCtx *c, bool blocked = false);

/// Declares `out_dtype` ("same", or int32 summing integer operands) and the type rule reading it.
OpDef &outDtypeParam(OpDef &d);

/// conv2d's reference kernel (NCHW data, OIHW weight, optional bias).
void conv2dKernel(const Attrs &a, const std::vector<const Tensor *> &in, std::vector<Tensor> &out);

/// NNVM's Conv2DCorrectLayout: data in `layout`, weight in `kernel_layout`, bias in "C" (split like
/// the output's channel axis), output in `out_layout` or else `layout`.
void convLayout(const Attrs &a, std::vector<std::string> &in, const std::vector<std::string> &,
                std::vector<std::string> &out);

/// The output layout of a convolution: `out_layout`, or the data layout when it is unset.
std::string convOutLayout(const Attrs &a);

/// The bias layout matching an output layout: "C", or "C16c" when the output splits its channels
/// by 16.
std::string biasLayout(const std::string &outLayout);

/// The bias as its own stage over a convolution's result, on the output's channel index.
loop::ComputeRef
addBias(const loop::ComputeRef &conv, const loop::ComputeRef &b,
        const std::function<std::vector<loop::Expr>(const std::vector<loop::Expr> &)> &biasIndex);

/// An operand read as the convolution's output type: with out_dtype int32, 8-bit operands are
/// widened before they multiply.
loop::Expr widened(const loop::Expr &e, int dtype);

/// Registers _contrib_conv2d_NCHWc and _contrib_depthwise_conv2d_NCHWc (ConvNCHWc.cpp).
void registerConvNCHWcOps();

} // namespace loupe::ops
