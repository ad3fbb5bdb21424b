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

#include "core/Error.h"

#include <cstdio>
#include <map>

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

NodeEntry expandToAxis(const NodeEntry &bias, int ndim, int axis) {
  int pad = ndim - axis - 1;
  if (pad <= 0)
    return bias;
  return make("expand_dims", bias.node->name + "_expand", {bias},
              {{"axis", "1"}, {"num_newaxis", std::to_string(pad)}});
}

Graph simplifyInference(const Graph &src, const PassContext &) {
  const IndexedGraph &idx = src.index();
  const auto &shapes = src.attr("shape")->shapes;
  std::map<std::pair<uint32_t, uint32_t>, NodeEntry> mapped; // old (node, output) → new entry
  std::vector<NodePtr> newNode(idx.numNodes());
  for (uint32_t nid = 0; nid < idx.numNodes(); ++nid) {
    const auto &in = idx.nodes[nid];
    const Node &n = *in.node;
    std::vector<NodeEntry> inputs;
    bool changed = false;
    for (size_t i = 0; i < in.inputs.size(); ++i) {
      const auto &e = in.inputs[i];
      NodeEntry ne = mapped.at({e.nodeId, e.index});
      ne.version = e.version;
      changed |= ne.node != n.inputs[i].node || ne.index != n.inputs[i].index;
      inputs.push_back(ne);
    }
    if (n.isVariable()) {
      mapped[{nid, 0}] = {in.node, 0, 0};
      continue;
    }
    if (n.op->name == "batch_norm") {
      const std::string &bn = n.name;
      const Shape &dshape = shapes[idx.entryId(in.inputs[0])];
      if (dshape.empty())
        fail("SimplifyInference: ", bn, ": the data shape is unknown; apply InferShape first");
      int ndim = static_cast<int>(dshape.size());
      int axis = normalizeAxis(n.parsed.getInt("axis"), ndim, "SimplifyInference: " + bn);
      const NodeEntry &data = inputs[0], &gamma = inputs[1], &beta = inputs[2], &mean = inputs[3],
                      &var = inputs[4];
      NodeEntry eps = make("__add_scalar__", bn + "_add_eps", {var},
                           {{"scalar", cppToString(n.parsed.getFloat("epsilon"))}});
      NodeEntry sqrtv = make("sqrt", bn + "_sqrt", {eps});
      NodeEntry scale = make("__rdiv_scalar__", bn + "_div", {sqrtv}, {{"scalar", "1"}});
      NodeEntry shift = make("negative", bn + "_neg_mean", {mean});
      if (n.parsed.getBool("scale"))
        scale = make("elemwise_mul", bn + "_gamma_mul_div", {scale, gamma});
      shift = make("elemwise_mul", bn + "_neg_mean_mul_a", {shift, scale});
      if (n.parsed.getBool("center"))
        shift = make("elemwise_add", bn + "_add_beta", {shift, beta});
      scale = expandToAxis(scale, ndim, axis);
      shift = expandToAxis(shift, ndim, axis);
      NodeEntry out = make("broadcast_mul", bn + "_a_mul_data", {data, scale});
      out = make("broadcast_add", bn + "_out", {out, shift});
      NodeEntry undef = make("__undef__", "undef", {});
      mapped[{nid, 0}] = out;
      mapped[{nid, 1}] = undef;
      mapped[{nid, 2}] = undef;
      continue;
    }
    if (n.op->name == "dropout") {
      mapped[{nid, 0}] = inputs[0];
      mapped[{nid, 1}] = make("__undef__", "undef", {});
      continue;
    }
    NodePtr node = in.node;
    if (changed) {
      std::vector<NodePtr> deps;
      for (uint32_t d : in.controlDeps)
        deps.push_back(mapped.at({d, 0}).node);
      node = makeOpNode(*n.op, n.name, n.attrs, inputs, deps, false);
    }
    for (uint32_t k = 0; k < n.numOutputs(); ++k)
      mapped[{nid, k}] = {node, k, 0};
  }
  std::vector<NodeEntry> heads;
  for (const auto &h : idx.heads) {
    NodeEntry e = mapped.at({h.nodeId, h.index});
    e.version = h.version;
    heads.push_back(e);
  }
  return Graph(heads);
}

} // namespace

void registerSimplifyInferencePass() {
  PassRegistry::get().add({"SimplifyInference",
                           "rewrites batch_norm into scale-and-shift arithmetic, removes dropout",
                           0,
                           {"shape"},
                           {},
                           true,
                           simplifyInference});
}

} // namespace loupe
