// InferShape: propagates shapes through every op's shape rule (nnvm-spec §8), forward and
// backward until nothing changes; writes `shape` and `shape_num_unknown_nodes`.
//
// Algorithm (NNVM's InferAttr): start from a previous `shape` attribute if it fits, then
// `shape_inputs` (one shape per argument node, consumed). Sweeps alternate forward (ids
// ascending) and backward (descending); a variable whose shape is still unknown reads its
// `shape` attribute (key overridable by `shape_attr_key`, consumed); an op node hands its known
// input and output shapes to its rule, which may fill in both (a conv2d's weight from its data
// and attributes). A shape with a 0 dim, or no dims unless it is the scalar `()`, is unknown.
// A node with a symbolic input (`(batch, seq, 768)`) takes its outputs from the op's symbolic
// rule; an op without one is an error naming it. A symbolic entry counts as known.
// Sweeps stop when every entry is known or a sweep made no progress; the count of still-unknown
// entries is recorded.
#include "passes/InferAttr.h"
#include "passes/Pass.h"
#include "passes/Symbols.h"

#include "core/Error.h"
#include "core/Memory.h"

#include <algorithm>

namespace loupe {

namespace {

Graph inferShape(const Graph &src, const PassContext &) {
  Graph g = src;
  const IndexedGraph &idx = g.index();
  std::vector<Shape> shapes(idx.numEntries());
  if (const GraphAttr *prev = g.attr("shape"); prev && prev->shapes.size() == shapes.size())
    shapes = prev->shapes;
  if (const GraphAttr *in = g.attr("shape_inputs")) {
    if (in->type != GraphAttr::Type::ListShape || in->shapes.size() != idx.argNodes.size())
      fail("InferShape: shape_inputs must list one shape per input node (", idx.argNodes.size(),
           ")");
    for (size_t i = 0; i < idx.argNodes.size(); ++i)
      if (in->shapes[i].rankKnown())
        shapes[idx.entryId(idx.argNodes[i], 0)] = in->shapes[i];
    g.attrs.erase("shape_inputs");
  }
  std::string key = "shape";
  if (const GraphAttr *k = g.attr("shape_attr_key")) {
    key = k->str;
    g.attrs.erase("shape_attr_key");
  }

  auto step = [&](uint32_t nid) {
    const auto &in = idx.nodes[nid];
    const Node &n = *in.node;
    if (n.isVariable()) {
      uint32_t e = idx.entryId(nid, 0);
      if (!shapeKnown(shapes[e]))
        if (const std::string *s = findAttr(n.attrs, key)) {
          Shape parsed;
          try {
            parsed = parseShape(*s);
          } catch (const Error &err) {
            fail("variable ", n.name, ": attribute ", key, ": ", err.what());
          }
          if (shapeKnown(shapes[e]) && shapes[e] != parsed)
            fail("variable ", n.name, ": attribute ", key, "=", *s, " conflicts with shape ",
                 shapeToList(shapes[e]));
          shapes[e] = parsed;
        }
      return;
    }
    std::vector<Shape> ins, outs;
    for (const auto &e : in.inputs)
      ins.push_back(shapes[idx.entryId(e)]);
    for (uint32_t k = 0; k < n.numOutputs(); ++k)
      outs.push_back(shapes[idx.entryId(nid, k)]);
    auto args = n.op->argNames(n.parsed);
    if (!n.op->scalars)
      for (size_t i = 0; i < ins.size(); ++i)
        if (ins[i].isScalar())
          fail("operator ", n.name, " (", n.op->name, "): input '",
               i < args.size() ? args[i] : "input " + std::to_string(i),
               "' is a scalar (shape ()); ", n.op->name, " takes tensors of rank 1 or more");
    ShapeCtx ctx{n.name, n.op->name, n.parsed, ins, outs, args};
    // Symbolic inputs, or an attribute of sizes with symbols in it (a slice of a fixed table to
    // `seq` rows, a broadcast to `(batch, 3, 8)`): the symbolic rule gives the outputs.
    bool symbolic =
        std::any_of(ins.begin(), ins.end(), [](const Shape &s) { return s.isSymbolic(); }) ||
        hasSymbolicSizes(n);
    if (!symbolic) {
      if (n.op->inferShape)
        n.op->inferShape(ctx);
    } else {
      // A symbolic input's sizes are unknown to the concrete rule: it runs for what it infers
      // backwards (a weight's shape from the data's channels), its complaints about the unknown
      // sizes set aside; the symbolic rule gives the outputs and checks what it can.
      if (!n.op->symShape) {
        auto in =
            std::find_if(ins.begin(), ins.end(), [](const Shape &s) { return s.isSymbolic(); });
        fail("operator ", n.name, " (", n.op->name, ") has no rule for symbolic shapes (",
             in == ins.end() ? std::string("its attributes") : "input " + shapeToTuple(*in),
             "); give the sizes (:load FILE SYMBOL=N, or a concrete shape)");
      }
      // On copies: a rule writing through a symbolic shape drops its expressions (Shape's
      // mutable access), so only what it inferred of non-symbolic inputs is kept.
      std::vector<Shape> cin = ins, cout = outs;
      ShapeCtx concrete{n.name, n.op->name, n.parsed, cin, cout, args};
      try {
        if (n.op->inferShape)
          n.op->inferShape(concrete);
      } catch (const Error &) {
      }
      // Its outputs are not taken: a rule that counts an unknown size as 0 (concatenate's sum
      // along the axis) would give a wrong constant.
      for (size_t i = 0; i < ins.size(); ++i)
        if (!ins[i].isSymbolic())
          ins[i] = cin[i];
      if (std::all_of(ins.begin(), ins.end(), [](const Shape &s) { return s.rankKnown(); })) {
        std::vector<SymDims> dims;
        for (const Shape &s : ins)
          dims.push_back(s.dims());
        SymShapeCtx sctx{n.name, n.op->name, n.parsed, dims, n.numOutputs()};
        std::vector<SymDims> res = n.op->symShape(sctx);
        for (size_t k = 0; k < res.size() && k < outs.size(); ++k)
          ctx.assignOut(k, Shape::symbolic(res[k]));
      }
    }
    for (size_t i = 0; i < in.inputs.size(); ++i)
      shapes[idx.entryId(in.inputs[i])] = ins[i];
    for (uint32_t k = 0; k < n.numOutputs(); ++k)
      shapes[idx.entryId(nid, k)] = outs[k];
  };
  auto countUnknown = [&] {
    size_t u = 0;
    for (const auto &s : shapes)
      u += !shapeKnown(s) && !s.isSymbolic();
    return u;
  };

  size_t unknown = inferSweeps(idx.numNodes(), step, countUnknown);

  // Every shape must describe a tensor that can exist: no negative dimension, an element count
  // that fits (later passes and allocations compute sizes from it).
  for (uint32_t nid = 0; nid < idx.numNodes(); ++nid) {
    const Node &n = *idx.nodes[nid].node;
    for (uint32_t k = 0; k < n.numOutputs(); ++k) {
      const Shape &sh = shapes[idx.entryId(nid, k)];
      if (!sh.rankKnown())
        continue;
      try {
        checkedNumElements(sh);
      } catch (const Error &e) {
        if (n.isVariable())
          fail("variable ", n.name, ": ", e.what());
        fail("operator ", n.name, " (", n.op->name, "): output ", k, ": ", e.what());
      }
    }
  }

  g.attrs["shape"] = GraphAttr::listShape(std::move(shapes));
  g.attrs["shape_num_unknown_nodes"] = GraphAttr::sizeT(static_cast<int64_t>(unknown));
  return g;
}

} // namespace

void registerInferShapePass() {
  PassRegistry::get().add(
      {.name = "InferShape",
       .summary = "infers the shape of every entry from inputs, attributes and op rules",
       .optLevel = 0,
       .provides = {"shape", "shape_num_unknown_nodes"},
       .run = inferShape});
}

} // namespace loupe
