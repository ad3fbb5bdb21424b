// Scopes: the hierarchy written in node names — exporters' "/features/features.1/…/Conv", the
// zoo's "stage2_unit3_conv1" — and the boxes a graph folds into by it.
#pragma once

#include "core/Graph.h"
#include "core/NameScopes.h"
#include "view/GraphLayout.h"

#include <set>
#include <string>
#include <vector>

namespace loupe::gui {

using loupe::scopeOf; // core/NameScopes.h: the scope paths names hold
using loupe::scopePath;

/// How a graph is folded by scope: each scope `depth` deep (0: nothing folds) is one box, but an
/// `unfolded` scope (its path, components joined by '/') shows its ops, its own scopes folded
/// in its place.
struct ScopeFold {
  int depth = 0;
  std::set<std::string> unfolded;
};

/// The folded scope op `nid` is drawn in under `fold`, or empty when it is drawn as itself.
std::string foldedScope(const Graph &g, uint32_t nid, const ScopeFold &fold);

/// The boxes of `g` folded by `fold`, one per folded scope that holds an op: its ops (inputs
/// and params follow their readers) and its lines — the scope's path, how many ops of which
/// kinds, and the shapes that enter and leave it (the first two of each).
std::vector<CollapsedBox> scopeBoxes(const Graph &g, const ScopeFold &fold);

/// The deepest scope path among `g`'s ops (0 when names hold none).
int scopeDepth(const Graph &g);

/// The outline drawn around an unfolded scope: the bounding box of the boxes in it (its ops and
/// its folded scopes), grown so that an outer scope's outline holds its inner ones.
struct ScopeOutline {
  std::string path;
  int depth = 0; ///< components in the path
  double x0 = 0, y0 = 0, x1 = 0, y1 = 0;
};

/// Outlines of `fold`'s unfolded scopes in `layout` (a layout of `g` folded by `fold`),
/// outermost first; `margin` around the innermost.
std::vector<ScopeOutline> scopeOutlines(const Graph &g, const GraphLayout &layout,
                                        const ScopeFold &fold, double margin);

/// `fold` with what hides node `nid` unfolded: every scope of its path from `fold.depth` down.
ScopeFold revealing(const Graph &g, uint32_t nid, ScopeFold fold);

} // namespace loupe::gui
