// Fusion: group extraction from the partition attributes, naming and kernel keys.
#include "passes/Fusion.h"

#include "core/Error.h"

#include <set>

namespace loupe {

std::vector<FusedGroup> fusedGroups(const Graph &g) {
  const GraphAttr *root = g.attr("group_root"), *master = g.attr("group_master"),
                  *pattern = g.attr("pattern");
  if (!root || !master || !pattern)
    fail("the graph is not partitioned: apply GraphFusePartition first");
  const IndexedGraph &idx = g.index();
  if (root->ints.size() != idx.numNodes())
    fail("group_root does not match this graph's nodes");
  std::map<uint32_t, FusedGroup> byRoot;
  for (uint32_t nid = 0; nid < idx.numNodes(); ++nid) {
    if (idx.nodes[nid].node->isVariable())
      continue;
    uint32_t r = static_cast<uint32_t>(root->ints[nid]);
    FusedGroup &grp = byRoot[r];
    grp.root = r;
    grp.pattern = static_cast<int>(pattern->ints[r]);
    grp.master = static_cast<int>(master->ints[r]);
  }
  std::vector<FusedGroup> out;
  for (auto &[r, grp] : byRoot) {
    // A copy of the binding: lambdas capture structured bindings only from C++20 compilers
    // newer than the Clang the fuzz build uses.
    const int64_t groupRoot = static_cast<int64_t>(r);
    auto inGroup = [&](uint32_t nid) {
      return !idx.nodes[nid].node->isVariable() && root->ints[nid] == groupRoot;
    };
    // Post-order DFS from the root inside the group gives the sub-graph order and the
    // function-argument order (first reach of each external entry).
    std::set<uint32_t> seen;
    std::set<std::tuple<uint32_t, uint32_t, uint32_t>> seenArgs;
    std::vector<std::pair<uint32_t, size_t>> stack{{r, 0}};
    seen.insert(r);
    while (!stack.empty()) {
      auto &[nid, next] = stack.back();
      const auto &inputs = idx.nodes[nid].inputs;
      if (next < inputs.size()) {
        const auto &e = inputs[next++];
        if (inGroup(e.nodeId)) {
          if (seen.insert(e.nodeId).second)
            stack.push_back({e.nodeId, 0});
        } else if (seenArgs.insert({e.nodeId, e.index, e.version}).second) {
          grp.arguments.push_back(e);
        }
        continue;
      }
      grp.members.push_back(nid);
      stack.pop_back();
    }
    std::set<std::tuple<uint32_t, uint32_t, uint32_t>> seenPh;
    std::vector<uint32_t> ascending(grp.members.begin(), grp.members.end());
    std::sort(ascending.begin(), ascending.end());
    for (uint32_t m : ascending)
      for (const auto &e : idx.nodes[m].inputs)
        if (!inGroup(e.nodeId) && seenPh.insert({e.nodeId, e.index, e.version}).second)
          grp.placeholders.push_back(e);
    grp.flattenData = grp.pattern == kElemWise;
    out.push_back(std::move(grp));
  }
  return out;
}

std::string readableName(const IndexedGraph &idx, const FusedGroup &grp) {
  std::string name = "fuse";
  for (uint32_t m : grp.members)
    name += "_" + idx.nodes[m].node->op->name;
  return name;
}

std::string kernelKey(const Graph &g, const FusedGroup &grp, const std::string &target) {
  const IndexedGraph &idx = g.index();
  const GraphAttr *shapes = g.attr("shape");
  const GraphAttr *dtypes = g.attr("dtype");
  std::map<uint32_t, size_t> pos; // member id → position in sub-graph order
  for (size_t i = 0; i < grp.members.size(); ++i)
    pos[grp.members[i]] = i;
  auto argIndex = [&](const IndexedGraph::Entry &e) {
    for (size_t i = 0; i < grp.arguments.size(); ++i)
      if (grp.arguments[i].nodeId == e.nodeId && grp.arguments[i].index == e.index)
        return i;
    return static_cast<size_t>(-1);
  };
  std::string key = target + "|";
  for (const auto &a : grp.arguments) {
    uint32_t eid = idx.entryId(a);
    key += (shapes ? shapeToCompact(shapes->shapes[eid]) : "?") + ":" +
           (dtypes ? std::to_string(dtypes->ints[eid]) : "?") + ",";
  }
  for (uint32_t m : grp.members) {
    const Node &n = *idx.nodes[m].node;
    key += "|" + n.op->name + "(";
    for (const auto &e : idx.nodes[m].inputs) {
      auto it = pos.find(e.nodeId);
      key += it != pos.end() ? "n" + std::to_string(it->second) + "." + std::to_string(e.index)
                             : "a" + std::to_string(argIndex(e));
      key += ",";
    }
    for (const auto &p : n.op->params)
      key += p.name + "=" + n.parsed.raw(p.name) + ";";
    key += ")";
  }
  return key;
}

std::string FunctionNames::fresh(const std::string &readable, std::map<std::string, int> &counters,
                                 const std::map<std::string, bool> &taken) const {
  if (!taken.count(readable))
    return readable;
  std::string name;
  do {
    name = readable + "_" + std::to_string(++counters[readable]);
  } while (taken.count(name));
  return name;
}

std::string FunctionNames::assign(const std::string &key, const std::string &readable) {
  if (auto it = byKey_.find(key); it != byKey_.end())
    return it->second;
  std::string name = fresh(readable, counters_, taken_);
  taken_[name] = true;
  byKey_[key] = name;
  return name;
}

} // namespace loupe
