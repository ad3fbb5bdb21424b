// Symbols: the size symbols of a symbolic graph's inputs, bound from the shapes of tensors
// given for them, and the graph with its symbols replaced by sizes (a variant to build).
#pragma once

#include "core/Graph.h"
#include "core/Shape.h"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace loupe {

/// Each input variable's declared shape (its `shape` attribute) that has size symbols.
std::map<std::string, Shape> symbolicInputs(const Graph &g);

/// The size symbols a graph's inputs declare (empty: a graph of fixed sizes).
std::set<std::string> graphSymbols(const Graph &g);

/// The symbols bound by tensors of shapes `given` for the inputs of `g` (symbolicInputs), by
/// the sizes `words` gives by name, and, for a symbol neither binds, by `keep` (the sizes of the
/// variant run before). Throws a one-line Error on a rank or constant size that
/// differs, a symbol two inputs give different sizes (naming both inputs), a size given for no
/// symbol, an expression of symbols that disagrees, or a symbol left unbound.
SymBindings bindInputs(const Graph &g, const std::map<std::string, Shape> &given,
                       const SymBindings &words = {}, const SymBindings &keep = {});

/// `b` as text: "batch=1, seq=64".
std::string bindingsText(const SymBindings &b);

/// The binding bindingsText wrote; throws a one-line Error quoting `text` when it is not one
/// (a name, '=', a positive size, parts joined by ", ").
SymBindings parseBindings(const std::string &text);

/// Whether op node `n` has an attribute of sizes (ParamKind::SizeTuple) with size symbols in it
/// (a slice to `seq`): its value depends on the sizes, so it is neither folded nor precomputed,
/// and its shape is the symbolic rule's.
bool hasSymbolicSizes(const Node &n);

/// A size a symbolic graph's rules assume of its symbols: `size` ≤ `limit` (a slice to `seq`
/// of a table of 512 rows reads `seq` ≤ 512), with the node that assumes it.
struct SizeLimit {
  SymExpr size, limit;
  std::string node;
};

/// The limits of graph `g` (its shapes inferred with symbols): what each op's symbolic rule
/// assumes (OpDef::sizeLimits; a strided_slice to an end of size symbols, within its axis).
std::vector<SizeLimit> sizeLimits(const Graph &g);

/// Throws a one-line Error naming the node and the sizes when binding `b` breaks one of the
/// limits.
void checkSizeLimits(const std::vector<SizeLimit> &limits, const SymBindings &b);

/// `g` with the symbols `b` binds replaced by their sizes: each variable's `shape` attribute and
/// each op attribute of sizes (ParamKind::SizeTuple, reshape's target); inferred attributes are
/// dropped (a build infers them again).
Graph bindSymbols(const Graph &g, const SymBindings &b);

} // namespace loupe
