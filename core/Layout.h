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

/// Maps the index of an element of a tensor in layout `dst` to its row-major offset in the same
/// tensor stored in layout `src`. The layouts are parsed once, when the map is made, so a whole
/// tensor can be converted element by element cheaply.
class LayoutSourceMap {
public:
  /// Throws Error as convertLayoutShape does when the layouts or the shape do not fit.
  LayoutSourceMap(const Shape &srcShape, const std::string &src, const std::string &dst);
  /// The source offset of the element at `dstIndex` (one index per axis of `dst`).
  int64_t offset(const std::vector<int64_t> &dstIndex) const;

private:
  struct DstAxis {
    int primal;    ///< which logical coordinate this axis adds to
    int64_t scale; ///< the sub-axis factor for a split primal axis, else 1
  };
  struct SrcAxis {
    int primal;
    int64_t div;    ///< the logical coordinate is divided by this (a split primal axis) …
    int64_t mod;    ///< … or taken modulo this (a sub-axis); 0 when not
    int64_t extent; ///< the axis' extent in the source shape
  };
  std::vector<DstAxis> dst_;
  std::vector<SrcAxis> src_;
};

} // namespace loupe
