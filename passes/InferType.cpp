// InferType: propagates dtype codes through every op's type rule (default: one type for all
// inputs and outputs); writes `dtype` and `dtype_num_unknown_nodes`.
//
// Same sweep scheme as InferShape. A variable reads its `dtype` attribute (key overridable by
// `dtype_attr_key`) as an integer code — `dtype=1` is float64 — only when no `dtype_inputs`
// value was given; a name such as "float32" there is an error, as in NNVM.
#include "passes/InferAttr.h"
#include "passes/Pass.h"

#include "core/DType.h"
#include "core/Error.h"

#include <charconv>

namespace loupe {

namespace {

int parseTypeCode(const Node &n, const std::string &key, const std::string &s) {
  int v = -2;
  auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size() || v < -1 || v >= kNumDTypes)
    fail("variable ", n.name, ": attribute ", key, "='", s, "' is not a type code (an integer 0-",
         kNumDTypes - 1, "; 0 is float32, 1 is float64, 12 is bfloat16)");
  return v;
}

Graph inferType(const Graph &src, const PassContext &) {
  Graph g = src;
  const IndexedGraph &idx = g.index();
  std::vector<int> types(idx.numEntries(), -1);
  if (const GraphAttr *prev = g.attr("dtype"); prev && prev->ints.size() == types.size())
    for (size_t i = 0; i < types.size(); ++i)
      types[i] = static_cast<int>(prev->ints[i]);
  std::vector<bool> givenInput(idx.numEntries(), false);
  if (const GraphAttr *in = g.attr("dtype_inputs")) {
    if (in->type != GraphAttr::Type::ListInt || in->ints.size() != idx.argNodes.size())
      fail("InferType: dtype_inputs must list one type code per input node (", idx.argNodes.size(),
           ")");
    for (size_t i = 0; i < idx.argNodes.size(); ++i)
      if (in->ints[i] != -1) {
        uint32_t e = idx.entryId(idx.argNodes[i], 0);
        types[e] = static_cast<int>(in->ints[i]);
        givenInput[e] = true;
      }
    g.attrs.erase("dtype_inputs");
  }
  std::string key = "dtype";
  if (const GraphAttr *k = g.attr("dtype_attr_key")) {
    key = k->str;
    g.attrs.erase("dtype_attr_key");
  }

  auto step = [&](uint32_t nid) {
    const auto &in = idx.nodes[nid];
    const Node &n = *in.node;
    if (n.isVariable()) {
      uint32_t e = idx.entryId(nid, 0);
      if (types[e] == -1 && !givenInput[e])
        if (const std::string *s = findAttr(n.attrs, key))
          types[e] = parseTypeCode(n, key, *s);
      return;
    }
    std::vector<int> ins, outs;
    for (const auto &e : in.inputs)
      ins.push_back(types[idx.entryId(e)]);
    for (uint32_t k = 0; k < n.numOutputs(); ++k)
      outs.push_back(types[idx.entryId(nid, k)]);
    TypeCtx ctx{n.name, n.op->name, n.parsed, ins, outs};
    if (n.op->inferType)
      n.op->inferType(ctx);
    else
      sameTypeRule(ctx);
    for (size_t i = 0; i < in.inputs.size(); ++i)
      types[idx.entryId(in.inputs[i])] = ins[i];
    for (uint32_t k = 0; k < n.numOutputs(); ++k)
      types[idx.entryId(nid, k)] = outs[k];
  };
  auto countUnknown = [&] {
    size_t u = 0;
    for (int t : types)
      u += t == -1;
    return u;
  };
  size_t unknown = inferSweeps(idx.numNodes(), step, countUnknown);

  g.attrs["dtype"] = GraphAttr::listInt(std::vector<int64_t>(types.begin(), types.end()));
  g.attrs["dtype_num_unknown_nodes"] = GraphAttr::sizeT(static_cast<int64_t>(unknown));
  return g;
}

} // namespace

void registerInferTypePass() {
  PassRegistry::get().add(
      {.name = "InferType",
       .summary = "infers the dtype code of every entry (same type unless an op says)",
       .optLevel = 0,
       .provides = {"dtype", "dtype_num_unknown_nodes"},
       .run = inferType});
}

} // namespace loupe
