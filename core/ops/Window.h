// Window: the sliding window of the N-D (today 3-D, NCDHW) convolution and pooling ops — read
// from their attributes, the output size it gives, its taps — shared by the conv and pool families.
#pragma once

#include "core/ops/OpHelpers.h"

#include <cstdint>
#include <string>
#include <vector>

namespace loupe::ops {

/// The attribute texts of a convolution or pool over 2 (H, W) or 3 (D, H, W) spatial axes, so
/// that the conv and pool families declare their ops of every rank alike.
struct SpatialAxes {
  const char *window;       ///< kernel_size / pool_size
  const char *ones, *zeros; ///< the default strides and dilation; the default padding
  const char *strides, *dilation, *convPadding, *poolPadding;
  const char *layout, *kernelLayout;
};
extern const SpatialAxes kPlanarAxes; ///< 2-D: (kh, kw), NCHW, OIHW
extern const SpatialAxes kVolumeAxes; ///< 3-D: (kd, kh, kw), NCDHW, OIDHW

/// Spatial axes of a volume op (D, H, W).
inline constexpr size_t kAxes = 3;

/// A sliding window over the spatial axes: per axis its size, stride, dilation and padding
/// before and after.
struct Window {
  std::vector<int64_t> size, stride, dilation, before, after;
  /// The span of input the window covers along axis a.
  int64_t span(size_t a) const { return (size[a] - 1) * dilation[a] + 1; }
};

/// Reads a volume op's window from its attributes, checking them (errors through `c` while
/// inferring shapes). `sizeKey` names the window's size; `dilated` ops have `dilation`.
Window windowOf(const Attrs &a, ShapeCtx *c, const char *sizeKey, bool dilated);

/// Checks the layout (NCDHW) and, once known, that the data is 5-D; false while it is unknown.
bool ncdhwInput(ShapeCtx &c);

/// The output's D, H, W for data `d`: (in + before + after - span) / stride + 1, rounded up
/// with `ceil`. An unknown (0) input size stays unknown.
Shape windowOutput(ShapeCtx &c, const Window &w, const Shape &d, bool ceil);

/// windowOutput over symbolic sizes: each spatial size a floor division of the padded span (an
/// Error through `c` unless the data is 5-D NCDHW).
SymDims symWindowOutput(const SymShapeCtx &c, const Window &w, const SymDims &d, bool ceil);

/// One tap of a window: output position `out` and kernel tap `tap` (flat over D, H, W) read
/// input position `in`, or -1 in the padding; `counted` when it lies inside the padded input
/// (what count_include_pad counts).
struct WindowTap {
  int64_t out, tap, in;
  bool counted;
};

/// Every tap of every output position, in order of output position, then tap.
std::vector<WindowTap> windowTaps(const Window &w, const Shape &in, const Shape &out);

/// D * H * W of an NCDHW shape.
int64_t spatialSize(const Shape &s);

/// 0 <= v < n.
loop::Expr within(const loop::Expr &v, int64_t n);

/// One reduction axis per spatial axis, named prefix + z, y, x.
std::vector<loop::IterVar> spatialAxes(const Shape &extents, const std::string &prefix);

/// The variables of reduction axes.
std::vector<loop::Expr> vars(const std::vector<loop::IterVar> &r);

/// A volume op's layout rule: data (and output) in `layout`; a convolution's weight in
/// `kernel_layout`, its bias "C".
void volumeLayout(const Attrs &a, std::vector<std::string> &in, const std::vector<std::string> &,
                  std::vector<std::string> &out);

} // namespace loupe::ops
