// CorrectLayout: works out the data layout of every entry from each op's layout rule and
// inserts `__layout_transform__` nodes where a producer's layout differs from what its consumer
// needs (nnvm-spec §8); returns a new graph whose only attribute is `layout`.
//
// Variables take their entry of `layout_inputs` (consumed), else "__undef__". In id order, an op
// is shown the layouts its inputs arrive in and, when the graph already has `layout`, the ones
// the last run chose; its rule (FCorrectLayout in its registration; ops without one keep their
// inputs and leave outputs unknown) says what it needs and what it produces. A defined layout
// that differs from the need gets a transform named `<producer>_<needed layout>`; an unknown one
// is filled in with the need, so a variable read by a conv2d becomes NCHW.
#include "passes/Pass.h"

#include "core/Error.h"

#include <map>

namespace loupe {

namespace {

const std::string kUndef = "__undef__";

Graph correctLayout(const Graph &src, const PassContext &) {
  const IndexedGraph &idx = src.index();
  const GraphAttr *inputs = src.attr("layout_inputs");
  if (inputs && inputs->strs.size() != idx.argNodes.size())
    fail("CorrectLayout: layout_inputs must list one layout per input node (", idx.argNodes.size(),
         ")");
  const GraphAttr *previous = src.attr("layout");
  if (previous && previous->strs.size() != idx.numEntries())
    previous = nullptr;
  const OpDef &transform = *OpRegistry::get().find("__layout_transform__");
  std::map<std::pair<const Node *, uint32_t>, std::string> layoutOf;
  auto get = [&](const NodeEntry &e) {
    auto it = layoutOf.find({e.node.get(), e.index});
    return it == layoutOf.end() ? kUndef : it->second;
  };
  std::vector<NodePtr> now(idx.numNodes());
  size_t arg = 0;
  for (uint32_t nid = 0; nid < idx.numNodes(); ++nid) {
    const auto &in = idx.nodes[nid];
    const NodePtr &orig = in.node;
    if (orig->isVariable()) {
      now[nid] = orig;
      layoutOf[{orig.get(), 0}] = inputs ? inputs->strs[arg] : kUndef;
      ++arg;
      continue;
    }
    std::vector<NodeEntry> entries;
    for (const auto &e : in.inputs)
      entries.push_back({now[e.nodeId], e.index, e.version});
    std::vector<std::string> request, produced, last(entries.size(), kUndef),
        out(orig->numOutputs(), kUndef);
    for (const auto &e : entries)
      request.push_back(get(e));
    produced = request;
    if (previous) {
      for (size_t i = 0; i < in.inputs.size(); ++i)
        last[i] = previous->strs[idx.entryId(in.inputs[i])];
      for (uint32_t k = 0; k < orig->numOutputs(); ++k)
        out[k] = previous->strs[idx.entryId(nid, k)];
    }
    if (orig->op->correctLayout) {
      try {
        orig->op->correctLayout(orig->parsed, request, last, out);
      } catch (const Error &e) {
        fail("CorrectLayout: operator ", orig->name, " (", orig->op->name, "): ", e.what());
      }
    }
    bool changed = false;
    for (size_t i = 0; i < entries.size(); ++i) {
      changed |= entries[i].node != orig->inputs[i].node;
      const std::string &have = produced[i], &need = request[i];
      if (have != kUndef && need != kUndef && have != need) {
        NodePtr t = makeOpNode(transform, idx.nodes[in.inputs[i].nodeId].node->name + "_" + need,
                               {{"src_layout", have}, {"dst_layout", need}}, {entries[i]});
        entries[i] = {t, 0, 0};
        layoutOf[{t.get(), 0}] = need;
        changed = true;
      } else if (have == kUndef && need != kUndef) {
        layoutOf[{entries[i].node.get(), entries[i].index}] = need; // fill in backwards
      }
    }
    std::vector<NodePtr> deps;
    for (uint32_t d : in.controlDeps)
      deps.push_back(now[d]);
    NodePtr node =
        changed ? makeOpNode(*orig->op, orig->name, orig->attrs, entries, deps, false) : orig;
    for (uint32_t k = 0; k < node->numOutputs(); ++k)
      layoutOf[{node.get(), k}] = out[k].empty() ? kUndef : out[k];
    now[nid] = node;
  }
  std::vector<NodeEntry> heads;
  for (const auto &h : idx.heads)
    heads.push_back({now[h.nodeId], h.index, h.version});
  Graph result(heads);
  std::vector<std::string> layouts;
  for (const auto &n : result.index().nodes)
    for (uint32_t k = 0; k < n.node->numOutputs(); ++k)
      layouts.push_back(get({n.node, k, 0}));
  result.attrs["layout"] = GraphAttr::listLayout(layouts);
  return result;
}

} // namespace

void registerCorrectLayoutPass() {
  PassRegistry::get().add({"CorrectLayout",
                           "infers data layouts and inserts __layout_transform__ where they differ",
                           0,
                           {},
                           {"layout"},
                           true,
                           correctLayout});
}

} // namespace loupe
