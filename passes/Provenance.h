// Provenance: where a build put each node of the graph it started from — the partition a deploy
// graph was compiled from, the kernel (and the call of a shared kernel) that computes a node,
// the node a rewrite folded another into, and which fusion groups of two steps are the same.
// Asked by the REPL's :where and :compare, the viewer, the report and Python alike.
#pragma once

#include "core/FusedModule.h"
#include "core/Graph.h"

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace loupe {

/// The partitioned graph a built step's functions were made from (with the opt level, rules and
/// unfused ops of that partition), or null when `g` was not made by GraphFuseCompile.
const FusedModule *builtPartition(const Graph &g);
/// The names of the partition's nodes (variables left out) that deploy node `call` of a built
/// graph computes: its group's members, found by the root's name; empty when unknown.
std::vector<std::string> fusedNodeNames(const Graph &deploy, uint32_t call);
/// The master node of deploy node `call`'s group in the partition the build made — the node
/// its schedule follows (a convolution, a dense; the root when nothing leads) — and its op.
struct MasterNode {
  std::string name, op;
};
/// `call`'s master, or nullopt when the deploy graph's provenance is unknown.
std::optional<MasterNode> kernelMaster(const Graph &deploy, uint32_t call);
/// The tvm_op node of built graph `deploy` for the group whose root is named `root` (the kernel
/// keeps its root's name), or -1.
int kernelOfRoot(const Graph &deploy, const std::string &root);
/// The node of `partition` that node `name` of `source` (the graph a build started from) was
/// folded into by the build's passes: the first node its value reaches, consumers breadth-first,
/// that `partition` still has under its name; "" when `source` has no op node `name` or its
/// value reaches none. Provenance for nodes a rewrite replaced (a MatMul by its dense).
std::string foldedInto(const Graph &source, const Graph &partition, const std::string &name);
/// The op nodes of `source` on the data's path (computed from a variable not in `params`) that
/// built graph `deploy`'s passes folded into another node (a MatMul into its dense), by the
/// partition node each went into (foldedInto), in `source`'s order: a kernel is labelled with
/// them too. Nodes computed from params alone (a weight's Identity or transpose) are left out.
std::map<std::string, std::vector<std::string>>
foldedSourceNodes(const Graph &deploy, const Graph &source, const std::set<std::string> &params);
/// Which groups of two history steps are the same (`:compare`, the viewer's partition
/// comparison): those with the same members by name, or by provenance — when the members of
/// one are exactly the nodes of its step that the other's members stand for, each itself or the
/// node the other step's build folded it into (a MatMul into its dense). Several groups that
/// one rewrite merged are not each the same as the merged one.
struct GroupMatcher {
  /// `history`: the graph of every history step (a build's is its deploy graph, the step before
  /// it the graph it was built from); `namesA` and `namesB`: the members of every group of steps
  /// `a` and `b`.
  GroupMatcher(const std::vector<const Graph *> &history, size_t a,
               const std::set<std::string> &namesA, size_t b, const std::set<std::string> &namesB);
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

} // namespace loupe
