// Layout: data layouts such as "NCHW" or "NCHW16c" (a primal axis per capital letter, and
// sub-axes "16c" that split a primal axis by a factor), and converting shapes between them.
#pragma once

#include "core/Shape.h"

#include <string>
#include <vector>

namespace loupe {

/// One axis of a layout: a primal axis ('C', factor 0) or a sub-axis ('c' with its factor).
struct LayoutAxis {
  char name;
  int64_t factor;
};

/// Parses "NCHW16c"; throws Error for malformed text (a sub-axis without a factor, a repeated
/// axis, a sub-axis whose primal axis is missing).
std::vector<LayoutAxis> parseLayout(const std::string &layout);

/// The primal axes of a layout: "NCHW" for "NCHW16c" (and for "NCHW").
std::string primalLayout(const std::string &layout);

/// The shape `s` (in layout `src`) has in layout `dst`. Both layouts must have the same primal
/// axes; split axes must divide evenly. Throws Error otherwise.
Shape convertLayoutShape(const Shape &s, const std::string &src, const std::string &dst);

/// For an element at `dstIndex` of a tensor in `dst` layout, its row-major offset in the source
/// tensor of shape `srcShape` in `src` layout.
int64_t layoutSourceOffset(const std::vector<int64_t> &dstIndex, const Shape &dstShape,
                           const Shape &srcShape, const std::string &src, const std::string &dst);

} // namespace loupe
