// OrderMutation: orders reads and writes of mutated variables with control dependencies
// (nnvm-spec §8), so an executor cannot reorder them.
//
// Every entry that reads a variable records the variable's version; an op that mutates an
// input (FMutateInputs: batch_norm's moving statistics) writes version v+1 of it. Per variable,
// a write of version v must run after every read of version v-1 (or, when there is none, after
// the write of v-1), and a read of version v after the write that made v. Nodes that gain a
// dependency, and everything downstream of them, are copied; if no variable is ever written the
// graph comes back unchanged.
#include "passes/Pass.h"

#include "core/Error.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

namespace loupe {

namespace {

struct Access {
  uint32_t version;
  bool write;
  uint32_t nid;
};

Graph orderMutation(const Graph &src, const PassContext &) {
  const IndexedGraph &idx = src.index();
  std::map<uint32_t, std::vector<Access>> hist; // variable id → accesses
  bool mutated = false;
  for (uint32_t nid = 0; nid < idx.numNodes(); ++nid) {
    const Node &n = *idx.nodes[nid].node;
    if (n.isVariable())
      continue;
    for (size_t i = 0; i < idx.nodes[nid].inputs.size(); ++i) {
      const auto &e = idx.nodes[nid].inputs[i];
      if (!idx.nodes[e.nodeId].node->isVariable())
        continue;
      bool write = std::find(n.op->mutateInputs.begin(), n.op->mutateInputs.end(),
                             static_cast<int>(i)) != n.op->mutateInputs.end();
      mutated |= write || e.version != 0;
      hist[e.nodeId].push_back({e.version, write, nid});
    }
  }
  if (!mutated)
    return src;
  // The dependencies each node needs, by node id.
  std::map<uint32_t, std::set<uint32_t>> deps;
  for (auto &[var, accesses] : hist)
    for (const Access &a : accesses) {
      for (const Access &b : accesses) {
        if (b.nid == a.nid)
          continue;
        bool need = a.write ? (!b.write && b.version + 1 == a.version) // reads of the old value
                            : (b.write && b.version == a.version);     // the write it reads
        if (need)
          deps[a.nid].insert(b.nid);
      }
      if (a.write && deps[a.nid].empty())
        for (const Access &b : accesses) // no reads of v-1: follow the write of v-1
          if (b.write && b.version + 1 == a.version)
            deps[a.nid].insert(b.nid);
    }
  // Rebuild in dependency order (a new control dependency may point to a later id), copying a
  // node when it gains dependencies or an input or dependency was copied.
  std::vector<NodePtr> built(idx.numNodes());
  std::vector<int> state(idx.numNodes(), 0); // 0 new, 1 in progress, 2 done
  std::function<NodePtr(uint32_t)> build = [&](uint32_t nid) -> NodePtr {
    if (state[nid] == 2)
      return built[nid];
    if (state[nid] == 1)
      fail("OrderMutation: the reads and writes of a mutated variable cannot be ordered (",
           idx.nodes[nid].node->name, " would have to run before itself)");
    state[nid] = 1;
    const auto &in = idx.nodes[nid];
    const NodePtr &orig = in.node;
    bool changed = false;
    std::vector<NodeEntry> inputs;
    for (const auto &e : in.inputs) {
      NodePtr p = build(e.nodeId);
      changed |= p != idx.nodes[e.nodeId].node;
      inputs.push_back({p, e.index, e.version});
    }
    std::vector<NodePtr> cd;
    for (uint32_t d : in.controlDeps) {
      cd.push_back(build(d));
      changed |= cd.back() != idx.nodes[d].node;
    }
    if (auto it = deps.find(nid); it != deps.end())
      for (uint32_t d : it->second) {
        NodePtr p = build(d);
        if (std::find(cd.begin(), cd.end(), p) == cd.end()) {
          cd.push_back(p);
          changed = true;
        }
      }
    built[nid] = changed ? makeOpNode(*orig->op, orig->name, orig->attrs, inputs, cd, false) : orig;
    state[nid] = 2;
    return built[nid];
  };
  std::vector<NodeEntry> heads;
  for (const auto &h : idx.heads)
    heads.push_back({build(h.nodeId), h.index, h.version});
  return Graph(heads);
}

} // namespace

void registerOrderMutationPass() {
  PassRegistry::get().add(
      {.name = "OrderMutation",
       .summary = "orders reads and writes of mutated variables with control deps",
       .optLevel = 0,
       .changesGraph = true,
       .run = orderMutation});
}

} // namespace loupe
