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
#include "core/Rewrite.h"

#include <map>
#include <tuple>

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
  // One transform per entry and layout, shared by every consumer that needs it (a weight read by
  // two convolutions is converted once, and PrecomputePrune gets one entry to cut).
  std::map<std::tuple<const Node *, uint32_t, std::string>, NodePtr> made;
  size_t arg = 0;
  Graph result =
      rewriteGraph(src, [&](uint32_t nid, const NodePtr &node) -> std::vector<NodeEntry> {
        if (node->isVariable()) {
          layoutOf[{node.get(), 0}] = inputs ? inputs->strs[arg] : kUndef;
          ++arg;
          return {};
        }
        const auto &in = idx.nodes[nid];
        std::vector<NodeEntry> entries = node->inputs;
        std::vector<std::string> request, last(entries.size(), kUndef),
            out(node->numOutputs(), kUndef);
        for (const auto &e : entries)
          request.push_back(get(e));
        std::vector<std::string> produced = request;
        if (previous) {
          for (size_t i = 0; i < in.inputs.size(); ++i)
            last[i] = previous->strs[idx.entryId(in.inputs[i])];
          for (uint32_t k = 0; k < node->numOutputs(); ++k)
            out[k] = previous->strs[idx.entryId(nid, k)];
        }
        if (node->op->correctLayout) {
          try {
            node->op->correctLayout(node->parsed, request, last, out);
          } catch (const Error &e) {
            fail("CorrectLayout: operator ", node->name, " (", node->op->name, "): ", e.what());
          }
        }
        bool transformed = false;
        for (size_t i = 0; i < entries.size(); ++i) {
          const std::string &have = produced[i], &need = request[i];
          if (have != kUndef && need != kUndef && have != need) {
            NodePtr &t = made[{entries[i].node.get(), entries[i].index, need}];
            if (!t)
              t = makeOpNode(transform, idx.nodes[in.inputs[i].nodeId].node->name + "_" + need,
                             {{"src_layout", have}, {"dst_layout", need}}, {entries[i]});
            entries[i] = {t, 0, 0};
            layoutOf[{t.get(), 0}] = need;
            transformed = true;
          } else if (have == kUndef && need != kUndef) {
            layoutOf[{entries[i].node.get(), entries[i].index}] = need; // fill in backwards
          }
        }
        NodePtr placed = transformed ? makeOpNode(*node->op, node->name, node->attrs, entries,
                                                  node->controlDeps, false)
                                     : node;
        std::vector<NodeEntry> outs;
        for (uint32_t k = 0; k < placed->numOutputs(); ++k) {
          layoutOf[{placed.get(), k}] = out[k].empty() ? kUndef : out[k];
          outs.push_back({placed, k, 0});
        }
        return outs;
      });
  std::vector<std::string> layouts;
  for (const auto &n : result.index().nodes)
    for (uint32_t k = 0; k < n.node->numOutputs(); ++k)
      layouts.push_back(get({n.node, k, 0}));
  result.attrs["layout"] = GraphAttr::listLayout(layouts);
  return result;
}

} // namespace

void registerCorrectLayoutPass() {
  PassRegistry::get().add(
      {.name = "CorrectLayout",
       .summary = "infers data layouts and inserts __layout_transform__ where they differ",
       .optLevel = 0,
       .provides = {"layout"},
       .changesGraph = true,
       .run = correctLayout});
}

} // namespace loupe
