// Interpreter: runs nodes in id order, each through its op's reference kernel.
#include "core/Interpreter.h"

#include "core/Error.h"

namespace loupe {

std::vector<Tensor> interpret(const Graph &g, const std::map<std::string, Tensor> &inputs) {
  const GraphAttr *shapes = g.attr("shape");
  const GraphAttr *dtypes = g.attr("dtype");
  if (!shapes || !dtypes)
    fail("the reference interpreter needs the 'shape' and 'dtype' attributes: apply InferShape "
         "and InferType first");
  const IndexedGraph &idx = g.index();
  if (shapes->shapes.size() != idx.numEntries() || dtypes->ints.size() != idx.numEntries())
    fail("the 'shape'/'dtype' attributes do not match this graph's entries");
  std::vector<Tensor> values(idx.numEntries());
  for (uint32_t nid = 0; nid < idx.numNodes(); ++nid) {
    const auto &in = idx.nodes[nid];
    const Node &n = *in.node;
    if (n.isVariable()) {
      auto it = inputs.find(n.name);
      if (it == inputs.end())
        fail("no value given for variable '", n.name, "'");
      uint32_t e = idx.entryId(nid, 0);
      if (it->second.shape != shapes->shapes[e])
        fail("variable '", n.name, "' has shape ", shapeToList(shapes->shapes[e]),
             " but the value given has shape ", shapeToList(it->second.shape));
      values[e] = it->second;
      values[e].dtype = static_cast<int>(dtypes->ints[e]);
      for (double &v : values[e].data)
        v = roundToDType(v, values[e].dtype);
      continue;
    }
    if (!n.op->compute)
      fail("operator ", n.name, " (", n.op->name, ") has no reference kernel");
    std::vector<const Tensor *> args;
    for (const auto &e : in.inputs)
      args.push_back(&values[idx.entryId(e)]);
    std::vector<Tensor> outs;
    for (uint32_t k = 0; k < n.numOutputs(); ++k) {
      uint32_t e = idx.entryId(nid, k);
      if (!shapeKnown(shapes->shapes[e]) || dtypes->ints[e] < 0)
        fail("operator ", n.name, " (", n.op->name, "): output ", k,
             " has an unknown shape or dtype");
      outs.emplace_back(shapes->shapes[e], static_cast<int>(dtypes->ints[e]));
    }
    n.op->compute(n.parsed, args, outs);
    for (uint32_t k = 0; k < n.numOutputs(); ++k) {
      for (double &v : outs[k].data)
        v = roundToDType(v, outs[k].dtype);
      values[idx.entryId(nid, k)] = std::move(outs[k]);
    }
  }
  std::vector<Tensor> result;
  for (const auto &h : idx.heads)
    result.push_back(values[idx.entryId(h)]);
  return result;
}

} // namespace loupe
