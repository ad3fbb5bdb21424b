// SimplifyInference: rewrites batch_norm into scale-and-shift arithmetic and removes dropout,
// as NNVM did for inference (nnvm-spec §8); returns a new graph without attributes.
//
// batch_norm(d, gamma, beta, mean, var) becomes
//   out = broadcast_add(broadcast_mul(d, expand(scale)), expand(shift))
// with scale = 1 / sqrt(var + eps) (times gamma if `scale`) and shift = -mean * scale (plus
// beta if `center`), under NNVM's node names (<bn>_add_eps, <bn>_sqrt, <bn>_div,
// <bn>_gamma_mul_div, <bn>_neg_mean, <bn>_neg_mean_mul_a, <bn>_add_beta, <x>_expand,
// <bn>_a_mul_data, <bn>_out). The expand is expand_dims(axis=1, num_newaxis=ndim-axis-1)
// when that is positive. The other batch_norm outputs, and dropout's mask, become an
// `__undef__` node named "undef". Untouched nodes are shared; their consumers are copied
// only when an input changed.
#include "passes/Pass.h"
#include "passes/PatternUtil.h"

#include "core/Error.h"
#include "core/Rewrite.h"

#include <cstdio>

namespace loupe {

namespace {

NodeEntry make(const char *op, const std::string &name, std::vector<NodeEntry> inputs,
               AttrDict attrs = {}) {
  return {
      makeOpNode(*OpRegistry::get().find(op), name, std::move(attrs), std::move(inputs), {}, false),
      0, 0};
}

// C++ std::to_string of a double: fixed notation with six decimals ("0.000010").
std::string cppToString(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%f", v);
  return buf;
}

Graph simplifyInference(const Graph &src, const PassContext &) {
  const IndexedGraph &idx = src.index();
  const auto &shapes = src.attr("shape")->shapes;
  return rewriteGraph(src, [&](uint32_t nid, const NodePtr &node) -> std::vector<NodeEntry> {
    if (node->isVariable())
      return {};
    const std::vector<NodeEntry> &inputs = node->inputs;
    if (node->op->name == "dropout")
      return {inputs[0], make("__undef__", "undef", {})};
    if (node->op->name != "batch_norm")
      return {};
    const std::string &bn = node->name;
    const Shape &dshape = shapes[idx.entryId(idx.nodes[nid].inputs[0])];
    if (!dshape.rankKnown())
      fail("SimplifyInference: ", bn, ": the data shape is unknown; apply InferShape first");
    int ndim = static_cast<int>(dshape.size());
    int axis = normalizeAxis(node->parsed.getInt("axis"), ndim, "SimplifyInference: " + bn);
    const NodeEntry &data = inputs[0], &gamma = inputs[1], &beta = inputs[2], &mean = inputs[3],
                    &var = inputs[4];
    NodeEntry eps = make("__add_scalar__", bn + "_add_eps", {var},
                         {{"scalar", cppToString(node->parsed.getFloat("epsilon"))}});
    NodeEntry sqrtv = make("sqrt", bn + "_sqrt", {eps});
    NodeEntry scale = make("__rdiv_scalar__", bn + "_div", {sqrtv}, {{"scalar", "1"}});
    NodeEntry shift = make("negative", bn + "_neg_mean", {mean});
    if (node->parsed.getBool("scale"))
      scale = make("elemwise_mul", bn + "_gamma_mul_div", {scale, gamma});
    shift = make("elemwise_mul", bn + "_neg_mean_mul_a", {shift, scale});
    if (node->parsed.getBool("center"))
      shift = make("elemwise_add", bn + "_add_beta", {shift, beta});
    scale = expandBiasToMatchAxis(scale, ndim, 1, axis);
    shift = expandBiasToMatchAxis(shift, ndim, 1, axis);
    NodeEntry out = make("broadcast_mul", bn + "_a_mul_data", {data, scale});
    out = make("broadcast_add", bn + "_out", {out, shift});
    NodeEntry undef = make("__undef__", "undef", {});
    return {out, undef, undef};
  });
}

} // namespace

void registerSimplifyInferencePass() {
  PassRegistry::get().add(
      {.name = "SimplifyInference",
       .summary = "rewrites batch_norm into scale-and-shift arithmetic, removes dropout",
       .optLevel = 0,
       .needs = {"shape"},
       .changesGraph = true,
       .run = simplifyInference});
}

} // namespace loupe
