// Symbols: the size symbols of a symbolic graph's inputs, bound from the shapes of tensors
// given for them, and the graph with its symbols replaced by sizes (a variant to build).
#pragma once

#include "core/Graph.h"
#include "core/Shape.h"

#include <map>
#include <set>
#include <string>

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

/// `g` with the symbols `b` binds replaced by their sizes: each variable's `shape` attribute and
/// each op attribute of sizes (ParamKind::SizeTuple, reshape's target); inferred attributes are
/// dropped (a build infers them again).
Graph bindSymbols(const Graph &g, const SymBindings &b);

} // namespace loupe
