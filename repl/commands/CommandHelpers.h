// CommandHelpers: the small helpers the command files share (argument splitting, usage checks,
// step descriptions, name lists, looking up a compiled graph's functions).
#pragma once

#include "backend/LowerFunction.h"
#include "core/FusedModule.h"
#include "core/Graph.h"
#include "core/Op.h"
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
/// "a,b,c" -> {"a", "b", "c"} (empty pieces kept).
std::vector<std::string> splitList(const std::string &text, char sep);
/// Throws Error("usage: …") unless lo <= a.size() <= hi.
void needArgs(const Args &a, size_t lo, size_t hi, const std::string &usage);
/// "graph unchanged; added shape, dtype" — what a step did, for `:apply` and `:history`.
std::string describeChange(const Graph *before, const Graph &after);
/// Pads to `w` display columns (UTF-8 aware), at least two spaces.
std::string pad(std::string s, size_t w);
std::string joinNames(const std::vector<std::string> &v, const char *sep = ", ");
/// "the graph has no attribute 'shape'; it is provided by InferShape", thrown.
[[noreturn]] void missingAttr(const Graph &g, const std::string &key);
/// "1 node", "3 nodes".
std::string plural(size_t n, const char *word);
/// `v` with `digits` digits after the point ("%.*f").
std::string fixed(double v, int digits);
/// The fused functions of a compiled graph in the order its tvm_op nodes call them.
std::vector<std::string> functionOrder(const Graph &g);
/// The partitioned graph a built step's functions were made from (with the opt level, rules and
/// unfused ops of that partition), or null when `g` was not made by GraphFuseCompile.
const FusedModule *builtPartition(const Graph &g);
/// The names of the partition's nodes (variables left out) that deploy node `call` of a built
/// graph computes: its group's members, found by the root's name; empty when unknown.
std::vector<std::string> fusedNodeNames(const Graph &deploy, uint32_t call);
/// The tvm_op node of built graph `deploy` for the group whose root is named `root` (the kernel
/// keeps its root's name), or -1.
int kernelOfRoot(const Graph &deploy, const std::string &root);
/// The node of `partition` that node `name` of `source` (the graph a build started from) was
/// folded into by the build's passes: the first node its value reaches, consumers breadth-first,
/// that `partition` still has under its name; "" when `source` has no op node `name` or its
/// value reaches none. Provenance for nodes a rewrite replaced (a MatMul by its dense).
std::string foldedInto(const Graph &source, const Graph &partition, const std::string &name);
/// Which groups of two history steps are the same (`:compare`, the viewer's partition
/// comparison): those with the same members by name, or by provenance — when the members of
/// one are exactly the nodes of its step that the other's members stand for, each itself or the
/// node the other step's build folded it into (a MatMul into its dense). Several groups that
/// one rewrite merged are not each the same as the merged one.
struct GroupMatcher {
  /// `namesA` and `namesB`: the members of every group of history steps `a` and `b`.
  GroupMatcher(const std::vector<Step> &history, size_t a, const std::set<std::string> &namesA,
               size_t b, const std::set<std::string> &namesB);
  /// Whether a group of step a with `membersA` is one of step b with `membersB`.
  bool same(const std::set<std::string> &membersA, const std::set<std::string> &membersB) const;
  /// Names of step a that step b does not have, and the node b's build folded each into; and
  /// the other way round.
  std::map<std::string, std::string> foldedIntoB, foldedIntoA;

private:
  std::set<std::string> namesA_, namesB_;
};

/// The deploy node (a tvm_op) of built graph `deploy` that computes partition node `name`, or
/// -1: how a name from the graph the user loaded finds its kernel.
int kernelComputing(const Graph &deploy, const std::string &name);
/// Where a build computes a node of the partition it made, per call (as TVM's debug executor
/// attributes): the tvm_op call, its function, the node's name in that function's listing
/// (`:lower FUNC nodes`, `:asm`'s comments) and the rest of its own group. Groups that compile
/// to one kernel share one function, lowered from the first of them, whose nodes the listing
/// names; a later group's node is the one at the same place in it (both groups' members are in
/// sub-graph order).
struct KernelSite {
  int call = -1;
  std::string function;
  std::string listedAs;
  std::vector<std::string> fusedWith;
};
/// `name`'s kernel site in built graph `deploy`, or nullopt when no kernel computes it.
std::optional<KernelSite> kernelSite(const Graph &deploy, const std::string &name);
/// A function of the graph's module by name; the error lists the ones there are.
const FusedFunction &findFunction(const Graph &g, const std::string &name);
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

} // namespace loupe
