// MatMulToDense: a matmul by a constant matrix (ONNX MatMul and Gemm; the weight perhaps through
// a transpose or reshape) becomes `dense`, and a bias added to a dense's output becomes its bias
// input, so that the fast dense schedule runs it with the bias in its epilogue and the weight is
// laid out once, at build time (PrecomputePrune folds the transposed weight).
#include "passes/Pass.h"
#include "passes/PatternUtil.h"

#include "core/Attrs.h"
#include "core/Rewrite.h"
#include "core/Shape.h"
#include "core/ops/OpHelpers.h"

namespace loupe {

namespace {

using Entry = IndexedGraph::Entry;

// A product data · weightᵀ that dense computes: a dense without a bias, or a matmul of data
// (rank 2 or more, not transposed) by a constant matrix.
struct DenseProduct {
  Entry data{}, weight{};
  bool transposed = false; ///< the weight is (k, units): dense needs its transpose
  int64_t units = 0;
};

std::optional<DenseProduct> denseProduct(const PatternView &v, const Entry &e) {
  const Shape *out = v.shape(e);
  if (!out)
    return std::nullopt;
  if (v.is(e, {"dense"}) && !v.node(e).parsed.getBool("use_bias"))
    return DenseProduct{.data = v.input(e, 0), .weight = v.input(e, 1), .units = out->back()};
  if (!v.is(e, {"matmul"}) || v.node(e).parsed.getBool("transpose_a"))
    return std::nullopt;
  Entry a = v.input(e, 0), b = v.input(e, 1);
  const Shape *as = v.shape(a), *bs = v.shape(b);
  if (!as || !bs || as->size() < 2 || bs->size() != 2 || !v.constant(b))
    return std::nullopt;
  return DenseProduct{.data = a,
                      .weight = b,
                      .transposed = !v.node(e).parsed.getBool("transpose_b"),
                      .units = out->back()};
}

// The bias `e` adds to a product with no other reader: its other operand, one value per unit
// ((units,), or with leading ones), when the sum keeps the product's shape.
std::optional<std::pair<DenseProduct, Entry>> biasAdd(const PatternView &v, const Entry &e) {
  if (!v.is(e, {"broadcast_add", "elemwise_add"}))
    return std::nullopt;
  for (int side : {0, 1}) {
    Entry p = v.input(e, side), b = v.input(e, 1 - side);
    std::optional<Entry> reader = v.onlyReader(p);
    std::optional<DenseProduct> prod = denseProduct(v, p);
    const Shape *bs = v.shape(b), *ps = v.shape(p), *es = v.shape(e);
    if (!prod || !reader || reader->nodeId != e.nodeId || !bs || !ps || !es || *ps != *es)
      continue;
    if (numElements(*bs) == prod->units && bs->back() == prod->units)
      return std::make_pair(*prod, b);
  }
  return std::nullopt;
}

Graph matMulToDense(const Graph &src, const PassContext &ctx) {
  PatternView v(src, ctx.params);
  return rewritePatterns(
      src,
      [&](uint32_t nid, const NodePtr &node, const RewrittenEntry &now) -> std::vector<NodeEntry> {
        Entry top{nid, 0, 0};
        auto at = [&](const Entry &e) { return now(e.nodeId, e.index); };
        std::optional<Entry> bias;
        std::optional<DenseProduct> p;
        if (auto added = biasAdd(v, top)) {
          p = added->first;
          bias = added->second;
        } else if ((p = denseProduct(v, top))) {
          if (v.is(top, {"dense"}))
            return {}; // a dense without a bias add after it is dense already
          if (auto r = v.onlyReader(top); r && biasAdd(v, *r))
            return {}; // its bias add makes the dense
        } else {
          return {};
        }
        NodeEntry weight = at(p->weight);
        if (p->transposed)
          weight = ops::mk("transpose", node->name + "_weight", {weight});
        std::vector<NodeEntry> inputs{at(p->data), weight};
        if (bias) {
          NodeEntry b = at(*bias);
          if (v.shape(*bias)->size() != 1)
            b = ops::mk("reshape", node->name + "_bias", {b},
                        {{"shape", "(" + std::to_string(p->units) + ",)"}});
          inputs.push_back(b);
        }
        return {
            ops::mk("dense", node->name, inputs,
                    {{"units", std::to_string(p->units)}, {"use_bias", bias ? "True" : "False"}})};
      });
}

} // namespace

void registerMatMulToDensePass() {
  PassRegistry::get().add(
      {.name = "MatMulToDense",
       .summary = "a matmul by a constant matrix, and a bias added after it, become one dense",
       .optLevel = 3,
       .needs = {"shape"},
       .changesGraph = true,
       .run = matMulToDense});
}

} // namespace loupe
