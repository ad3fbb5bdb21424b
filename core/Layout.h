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
/// axes; split axes must divide evenly. A symbolic shape converts as its dimensions'
/// expressions (a symbolic axis split only where its expression divides: `batch` passes through
/// NCHW to NCHW8c). Throws Error otherwise.
Shape convertLayoutShape(const Shape &s, const std::string &src, const std::string &dst);

/// Maps the index of an element of a tensor in layout `dst` to its row-major offset in the same
/// tensor stored in layout `src`. The layouts are parsed once, when the map is made, and the
/// offset is a sum of per-axis tables, so a whole tensor converts at memory speed.
class LayoutSourceMap {
public:
  /// Throws Error as convertLayoutShape does when the layouts or the shape do not fit.
  LayoutSourceMap(const Shape &srcShape, const std::string &src, const std::string &dst);
  /// The tensor's shape in `dst`.
  const Shape &dstShape() const { return dstShape_; }
  /// The source offset of the element at `dstIndex` (one index per axis of `dst`).
  int64_t offset(const std::vector<int64_t> &dstIndex) const;
  /// Calls f(source offset) for every element of the `dst` tensor in row-major order.
  template <typename F> void forEachSource(F &&f) const;

private:
  struct DstAxis {
    int primal;    ///< which logical coordinate (a letter's slot) this axis adds to
    int64_t scale; ///< the sub-axis factor for a split primal axis, else 1
  };
  std::vector<DstAxis> dst_;
  Shape dstShape_;
  std::vector<int> primals_; ///< the slots in use
  /// Per primal slot: the source offset contributed by each value of its logical coordinate.
  std::vector<int64_t> tables_[26];
};

template <typename F> void LayoutSourceMap::forEachSource(F &&f) const {
  for (int64_t d : dstShape_)
    if (d == 0)
      return;
  // An odometer over every axis but the last; the last runs as a tight loop.
  size_t nd = dst_.size();
  const DstAxis &inner = dst_.back();
  const std::vector<int64_t> &innerTable = tables_[inner.primal];
  std::vector<int64_t> idx(nd, 0);
  int64_t coord[26] = {};
  while (true) {
    int64_t base = 0;
    for (int p : primals_)
      if (p != inner.primal)
        base += tables_[p][coord[p]];
    int64_t rest = coord[inner.primal];
    for (int64_t i = 0; i < dstShape_[nd - 1]; ++i)
      f(base + innerTable[rest + i * inner.scale]);
    int d = static_cast<int>(nd) - 2;
    for (; d >= 0; --d) {
      coord[dst_[d].primal] += dst_[d].scale;
      if (++idx[d] < dstShape_[d])
        break;
      coord[dst_[d].primal] -= dst_[d].scale * dstShape_[d];
      idx[d] = 0;
    }
    if (d < 0)
      return;
  }
}

} // namespace loupe
