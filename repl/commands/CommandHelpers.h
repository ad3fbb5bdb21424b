// CommandHelpers: the small helpers the command files share (argument splitting, usage checks,
// step descriptions, looking up a compiled graph's functions).
#pragma once

#include "backend/LowerFunction.h"
#include "core/FusedModule.h"
#include "core/Graph.h"
#include "core/Op.h"
#include "core/Text.h"
#include "passes/Provenance.h"
#include "repl/Engine.h"

#include <map>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <vector>

namespace loupe {

using Args = std::vector<std::string>;

/// Splits command arguments at white space; quotes group words.
Args splitArgs(const std::string &s);
/// Refuses a target string the backend cannot build for: `llvm` (the host CPU), optionally with
/// `-mcpu=NAME` and `-mattr=+FEATURE,-FEATURE` (a CPU LLVM does not know is refused too).
void checkTarget(const std::string &target);
/// Splits at white space outside parentheses and brackets, so `x=(1, 3, 8, 8)` stays one word.
Args splitKeepingTuples(const std::string &s);
/// Throws Error("usage: …") unless lo <= a.size() <= hi.
void needArgs(const Args &a, size_t lo, size_t hi, const std::string &usage);
/// "graph unchanged; added shape, dtype" — what a step did, for `:apply` and `:history`.
std::string describeChange(const Graph *before, const Graph &after);
/// "the graph has no attribute 'shape'; it is provided by InferShape", thrown.
[[noreturn]] void missingAttr(const Graph &g, const std::string &key);
/// The fused functions of a compiled graph in the order its tvm_op nodes call them.
std::vector<std::string> functionOrder(const Graph &g);

/// A function of the graph's module by name; the error lists the ones there are.
const FusedFunction &findFunction(const Graph &g, const std::string &name);
/// A variable's own `dtype` attribute as a type code: a code number (NNVM's) or a name; nullopt
/// when it has none or it names no dtype.
std::optional<int> declaredDType(const Node &variable);
/// "6 nodes, 3 inputs, 1 output".
std::string graphSize(const IndexedGraph &idx);
/// The integer `v` of at least `min`; anything else fails naming the option `key`.
int64_t integerAtLeast(const std::string &key, const std::string &v, int64_t min);
/// What `:help OP` and `:ops OP` print of an op: its doc, pattern, inputs, outputs, aliases
/// and attributes with their defaults.
void printOpDetails(const OpDef &op, std::ostream &out);
/// Function `name` of `g` as it was built (at the point of the tuning record its build applied,
/// if any), else lowered now at its schedule's rules; the error lists the functions there are.
backend::LoweredFunction builtOrLowered(const Graph &g, const std::string &name);

/// A history step named by its number ("0", "3"); fails naming the steps there are.
size_t stepArgument(const Engine &e, const std::string &a);

} // namespace loupe
