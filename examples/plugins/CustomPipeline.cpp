// CustomPipeline: seed 003's user-defined function pass as a Loupe plugin — every constant c
// becomes c * multiplier. Build it outside the tree with
//   g++ -std=c++20 -fPIC -shared -I<loupe source dir> CustomPipeline.cpp -o CustomPipeline.so
// and load it with `:load-pass ./CustomPipeline.so`; then `:pipeline CustomPipeline(multiplier=3)`.
#include "passes/Pass.h"

#include "core/Error.h"

#include <map>

namespace {

using namespace loupe;

Graph customPipeline(const Graph &src, const PassContext &ctx) {
  std::string multiplier = ctx.get("multiplier", "3");
  const OpDef &mul = *OpRegistry::get().find("__mul_scalar__");
  const IndexedGraph &idx = src.index();
  std::vector<NodePtr> now(idx.numNodes());
  for (uint32_t nid = 0; nid < idx.numNodes(); ++nid) {
    const auto &in = idx.nodes[nid];
    const Node &n = *in.node;
    std::vector<NodeEntry> inputs;
    bool changed = false;
    for (size_t i = 0; i < in.inputs.size(); ++i) {
      NodeEntry e{now[in.inputs[i].nodeId], in.inputs[i].index, in.inputs[i].version};
      changed |= e.node != n.inputs[i].node;
      inputs.push_back(e);
    }
    NodePtr node = changed ? makeOpNode(*n.op, n.name, n.attrs, inputs, {}, false) : in.node;
    if (!n.isVariable() && n.op->name == "const")
      node = makeOpNode(mul, n.name + "_mul", {{"scalar", multiplier}}, {{node, 0, 0}});
    now[nid] = node;
  }
  std::vector<NodeEntry> heads;
  for (const auto &h : idx.heads)
    heads.push_back({now[h.nodeId], h.index, h.version});
  // A function pass re-types its result, as Relay's do.
  return runPass(Graph(heads), requirePass("InferType"), ctx);
}

} // namespace

extern "C" void loupe_register_passes(std::vector<loupe::PassInfo> &passes) {
  passes.push_back({"CustomPipeline",
                    "multiplies every constant by `multiplier` (seed 003's example)",
                    1,
                    {},
                    {},
                    true,
                    customPipeline,
                    {},
                    {"multiplier"}});
}
