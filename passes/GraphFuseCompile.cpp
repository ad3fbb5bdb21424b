// GraphFuseCompile: turns each fused group into one `tvm_op` node calling a named function
// (nnvm-spec §6), plans memory for the result and decorates it as NNVM's compile step did.
//
// Per group (ascending root id): the function name is `fuse_` + the members' ops in sub-graph
// order, de-duplicated by the session's name table (an identical kernel keeps its name); the
// function body is a copy of the members over placeholders `input<k>` (named in an id-order
// scan, flattened to 1-D when the root's pattern is ElemWise); the tvm_op takes the external
// entries in the order a DFS from the root first reaches them, is named like the root and
// carries num_outputs, num_inputs, flatten_data and func_name (at opt_level 3 also
// reshape_only=1 when the function only reshapes its input). Variables are re-created with
// only their names. The new graph gets `shape`, `dtype`, `dltype` and `module` (the functions),
// then PlanMemory; variables then take storage ids after the planned ones, and the planner's
// other attributes are dropped. Lowering the functions to loops is the backend's job.
#include "passes/Fusion.h"
#include "passes/Pass.h"

#include "core/Error.h"
#include "core/FusedModule.h"

#include <algorithm>

namespace loupe {

namespace {

using Entry = IndexedGraph::Entry;

std::shared_ptr<FusedFunction> buildFunction(const Graph &g, const FusedGroup &grp,
                                             const std::string &name) {
  const IndexedGraph &idx = g.index();
  const auto &shapes = g.attr("shape")->shapes;
  const auto &dtypes = g.attr("dtype")->ints;
  auto f = std::make_shared<FusedFunction>();
  f->name = name;
  f->flattenData = grp.flattenData;
  f->root = grp.root;
  f->members = grp.members;
  auto key = [](const Entry &e) { return std::make_pair(e.nodeId, e.index); };
  std::map<std::pair<uint32_t, uint32_t>, NodeEntry> external;
  std::vector<Shape> phShapes;
  std::vector<int64_t> phTypes;
  for (size_t k = 0; k < grp.placeholders.size(); ++k) {
    const Entry &e = grp.placeholders[k];
    NodePtr v = makeVariable("input" + std::to_string(k));
    external[key(e)] = {v, 0, 0};
  }
  for (const Entry &a : grp.arguments)
    f->argNames.push_back(external.at(key(a)).node->name);
  std::map<uint32_t, NodePtr> copies;
  for (uint32_t m : grp.members) {
    const Node &n = *idx.nodes[m].node;
    std::vector<NodeEntry> inputs;
    for (const auto &e : idx.nodes[m].inputs) {
      auto c = copies.find(e.nodeId);
      inputs.push_back(c != copies.end() ? NodeEntry{c->second, e.index, 0} : external.at(key(e)));
    }
    copies[m] = makeOpNode(*n.op, n.name, n.attrs, std::move(inputs), {}, false);
  }
  Graph body(outputsOf(copies.at(grp.root)));
  // Placeholder shapes and dtypes, in the body's argument-node order.
  const IndexedGraph &bidx = body.index();
  for (uint32_t nid : bidx.argNodes) {
    const std::string &pname = bidx.nodes[nid].node->name;
    size_t k = std::stoul(pname.substr(5));
    uint32_t eid = idx.entryId(grp.placeholders[k]);
    Shape s = shapes[eid];
    if (grp.flattenData && s.isSymbolic()) {
      SymExpr count(1);
      for (const SymExpr &d : s.dims())
        count = count * d;
      s = Shape::symbolic({count});
    } else if (grp.flattenData) {
      s = {numElements(s)};
    }
    phShapes.push_back(s);
    phTypes.push_back(dtypes[eid]);
  }
  body.attrs["shape_inputs"] = GraphAttr::listShape(phShapes);
  body.attrs["dtype_inputs"] = GraphAttr::listInt(phTypes);
  f->body = applyPasses(body, {"InferShape", "InferType"});
  return f;
}

// Whether the group only reshapes its one input: every member an op whose output holds its
// input's elements in the same order (TVM's "reshape only" functions). At opt_level 3 such a
// kernel may then write into its input's own storage, and need not run at all.
bool reshapeOnly(const IndexedGraph &idx, const FusedGroup &grp) {
  if (grp.arguments.size() != 1 || idx.nodes[grp.root].node->numOutputs() != 1)
    return false;
  return std::all_of(grp.members.begin(), grp.members.end(), [&](uint32_t m) {
    const std::string &op = idx.nodes[m].node->op->name;
    return op == "flatten" || op == "reshape" || op == "squeeze" || op == "expand_dims";
  });
}

Graph fuseCompile(const Graph &src, const PassContext &ctx) {
  const IndexedGraph &idx = src.index();
  const auto &shapes = src.attr("shape")->shapes;
  const auto &dtypes = src.attr("dtype")->ints;
  // Every buffer needs a size, static or an expression of the size symbols (a dynamic
  // build's functions, lowered to generic kernels): name the first entry whose shape is still
  // unknown.
  for (uint32_t nid = 0; nid < idx.numNodes(); ++nid)
    for (uint32_t k = 0; k < idx.nodes[nid].node->numOutputs(); ++k)
      if (const Shape &s = shapes.at(idx.entryId(nid, k)); !shapeKnown(s) && !s.isSymbolic())
        fail("GraphFuseCompile: the shape of ", idx.nodes[nid].node->name,
             idx.nodes[nid].node->numOutputs() > 1 ? cat(" output ", k) : std::string(),
             " is unknown; give the inputs' shapes and apply InferShape first");
  std::string target = src.attr("target") ? src.attr("target")->str : ctx.get("target", "llvm");
  FunctionNames local;
  FunctionNames &names = ctx.functionNames ? *ctx.functionNames : local;

  std::vector<FusedGroup> groups = fusedGroups(src);
  std::map<uint32_t, NodePtr> newNode; // old root or variable id → new node
  for (uint32_t nid : idx.argNodes)
    newNode[nid] = makeVariable(idx.nodes[nid].node->name);
  auto module = std::make_shared<FusedModule>();
  module->partition = std::make_shared<const Graph>(src);
  module->partitionOptLevel = ctx.optLevel;
  module->fusionRules = ctx.get("fusion_rules", "A");
  module->noFuse = ctx.noFuse;
  const OpDef &tvmOp = *OpRegistry::get().find("tvm_op");
  const auto &groupRoot = src.attr("group_root")->ints;
  auto mapEntry = [&](const Entry &e) {
    uint32_t owner = idx.nodes[e.nodeId].node->isVariable()
                         ? e.nodeId
                         : static_cast<uint32_t>(groupRoot[e.nodeId]);
    return NodeEntry{newNode.at(owner), e.index, e.version};
  };
  for (const FusedGroup &grp : groups) {
    std::string name = names.assign(kernelKey(src, grp, target), readableName(idx, grp));
    if (!module->functions.count(name)) {
      auto f = buildFunction(src, grp, name);
      f->optLevel = ctx.optLevel;
      f->target = target;
      module->functions[name] = f;
    }
    const Node &root = *idx.nodes[grp.root].node;
    std::vector<NodeEntry> inputs;
    for (const Entry &a : grp.arguments)
      inputs.push_back(mapEntry(a));
    std::vector<NodePtr> deps;
    for (uint32_t d : idx.nodes[grp.root].controlDeps)
      deps.push_back(newNode.at(idx.nodes[d].node->isVariable() ? d : groupRoot[d]));
    // Filled as NNVM's TVMOpParam::UpdateDict filled the node's map: field by field in name
    // order (the printer shows them as that map iterated: num_outputs, num_inputs, …).
    AttrDict attrs;
    attrs.emplace_back("flatten_data", grp.flattenData ? "1" : "0");
    attrs.emplace_back("func_name", name);
    attrs.emplace_back("num_inputs", std::to_string(inputs.size()));
    attrs.emplace_back("num_outputs", std::to_string(root.numOutputs()));
    if (ctx.optLevel >= 3 && reshapeOnly(idx, grp))
      attrs.emplace_back("reshape_only", "1");
    newNode[grp.root] = makeOpNode(tvmOp, root.name, attrs, std::move(inputs), std::move(deps));
  }
  std::vector<NodeEntry> heads;
  for (const Entry &h : idx.heads)
    heads.push_back(mapEntry(h));
  Graph out(heads);

  // Per-entry shape and dtype of the new graph, from the old entries they stand for.
  const IndexedGraph &nidx = out.index();
  std::map<const Node *, uint32_t> oldId;
  for (const auto &[old, node] : newNode)
    oldId[node.get()] = old;
  std::vector<Shape> nshapes;
  std::vector<int64_t> ntypes;
  std::vector<std::string> dl;
  for (uint32_t nid = 0; nid < nidx.numNodes(); ++nid) {
    uint32_t old = oldId.at(nidx.nodes[nid].node.get());
    for (uint32_t k = 0; k < nidx.nodes[nid].node->numOutputs(); ++k) {
      uint32_t eid = idx.entryId(old, k);
      nshapes.push_back(shapes[eid]);
      ntypes.push_back(dtypes[eid]);
      dl.emplace_back(dtypeName(static_cast<int>(dtypes[eid])));
    }
  }
  out.attrs["shape"] = GraphAttr::listShape(nshapes);
  out.attrs["dtype"] = GraphAttr::listInt(ntypes);
  out.attrs["dltype"] = GraphAttr::listStr(dl);
  GraphAttr mod;
  mod.type = GraphAttr::Type::Opaque;
  mod.str = "module with " + std::to_string(module->functions.size()) + " functions";
  mod.opaque = module;
  out.attrs["module"] = mod;

  out = applyPasses(out, {"PlanMemory"}, ctx);
  if (out.attr("storage_num_not_allocated")->num != 0)
    fail("GraphFuseCompile: can only build inference graphs with all statically allocated "
         "memory (an output shape is unknown)");
  auto storage = out.attr("storage_id")->ints;
  int64_t next = storage.empty() ? 0 : *std::max_element(storage.begin(), storage.end()) + 1;
  for (uint32_t nid : nidx.argNodes)
    storage[nidx.entryId(nid, 0)] = next++;
  out.attrs["storage_id"] = GraphAttr::listInt(storage);
  for (const char *k :
       {"storage_inplace_index", "storage_allocated_bytes", "storage_num_not_allocated"})
    out.attrs.erase(k);
  return out;
}

} // namespace

void registerGraphFuseCompilePass() {
  PassRegistry::get().add(
      {.name = "GraphFuseCompile",
       .summary = "replaces each fused group by a tvm_op calling a named function",
       .optLevel = 0,
       .needs = {"shape", "dtype", "group_root", "group_master", "pattern"},
       .provides = {"storage_id", "dltype", "module"},
       .changesGraph = true,
       .run = fuseCompile});
}

} // namespace loupe
