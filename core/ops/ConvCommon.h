// ConvCommon: what the convolution files (Conv.cpp, Conv3d.cpp) share — the attributes every
// convolution declares and NNVM's one-node convolution gradients.
#pragma once

#include "core/ops/OpHelpers.h"
#include "core/ops/Window.h"

namespace loupe::ops {

/// Registers `name` with the attributes every convolution of the family declares (channels,
/// kernel_size, strides, padding, dilation, groups, layouts, use_bias) for the spatial axes `ax`.
OpDef &convCommon(const char *name, const char *doc, const SpatialAxes &ax = kPlanarAxes);

/// NNVM's convolution gradients: one `gradOp` node carrying the convolution's attributes, whose
/// outputs are the gradients of its inputs (data, weight and, with a bias, the bias).
GradientFn throughGradOp(const char *gradOp);

} // namespace loupe::ops
