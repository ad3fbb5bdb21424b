// ToMixedPrecision: the matrix products and convolutions of a float32 graph computed in
// bfloat16 (Relay's ToMixedPrecision with mixed_precision_type bfloat16, PyTorch's autocast
// lists): their operands cast to bfloat16, their sums kept in float32 and each result rounded
// once to bfloat16 and cast back (what autocast returns); every other op kept float32.
#include "passes/MixedPrecision.h"
#include "passes/Pass.h"

#include "core/DType.h"
#include "core/Error.h"
#include "core/Rewrite.h"
#include "core/ops/OpHelpers.h"

#include <map>
#include <set>
#include <utility>

namespace loupe {

namespace {

// The ops that compute in bfloat16: each output element is a sum of products, which the CPU
// forms from bfloat16 pairs into float32 sums (vdpbf16ps) at twice float32's rate. An operand
// loses its low 16 bits once; the sum of many such products keeps float32's precision.
const std::set<std::string> kInBFloat16 = {
    "conv2d", "_contrib_conv2d_NCHWc", "_contrib_depthwise_conv2d_NCHWc",
    "dense",  "_contrib_dense_pack",   "batch_matmul",
    "matmul",
};

// The ops that stay float32 however they are fed, and why (autocast's float32 list and Relay's
// "never" list); everything else stays float32 because it gains nothing (no sum of products).
struct Kept {
  std::set<std::string> ops;
  const char *why;
};
const std::vector<Kept> kKeptFloat32 = {
    {{"softmax", "log_softmax"},
     "a softmax exponentiates differences and normalises by their sum: bfloat16's 8-bit "
     "mantissa would round the largest probabilities by up to 0.4% and the sum by more"},
    {{"layer_norm", "batch_norm", "instance_norm", "group_norm", "_contrib_layer_norm", "lrn",
      "l2_normalize"},
     "a normalisation subtracts a mean and divides by a standard deviation: the variance of "
     "values rounded to 8 bits is dominated by their rounding"},
    {{"sum", "mean", "prod", "cumsum", "global_avg_pool2d", "avg_pool2d"},
     "a reduction adds many terms: in bfloat16 each addition would round, and a term smaller "
     "than 1/256 of the running sum vanishes"},
    {{"exp", "erf", "log", "tanh", "sigmoid", "__pow_scalar__", "sqrt", "rsqrt"},
     "a transcendental function amplifies its input's relative error (exp(x) by |x|), and the "
     "CPU computes it in float32 anyway"},
    {{"elemwise_add", "broadcast_add", "__add_scalar__", "elemwise_sub", "broadcast_sub"},
     "an addition on a residual stream adds a small update to a large activation: rounded to "
     "bfloat16, the update's low bits are lost at every layer"},
};

Graph toMixedPrecision(const Graph &src, const PassContext &) {
  const GraphAttr *types = src.attr("dtype");
  if (!types)
    fail("ToMixedPrecision needs the graph's dtypes; apply InferType first");
  const IndexedGraph &idx = src.index();
  // An entry InferType left unknown (a variable the graph language gave no dtype) is float32,
  // :build's default.
  auto isFloat32 = [&](uint32_t entry) {
    return types->ints[entry] == kFloat32 || types->ints[entry] == kUnknownType;
  };
  auto converts = [&](uint32_t nid) {
    const Node &n = *idx.nodes[nid].node;
    if (n.isVariable() || !kInBFloat16.count(n.op->name))
      return false;
    // Only float32 products: one already in bfloat16 (a second run, or a graph written so)
    // stays as it is, and float64 ones keep their precision.
    if (!isFloat32(idx.entryId(nid, 0)))
      return false;
    for (const auto &e : idx.nodes[nid].inputs)
      if (!isFloat32(idx.entryId(e.nodeId, e.index)))
        return false;
    return true;
  };
  bool any = false;
  for (uint32_t nid = 0; nid < idx.numNodes() && !any; ++nid)
    any = converts(nid);
  if (!any)
    return src;
  // One cast per value however many products read it (named after the value: x_bf16), and
  // none for a value that is a converted product's result cast back (its bfloat16 is read).
  std::map<std::pair<const Node *, uint32_t>, NodeEntry> narrowed;
  std::map<const Node *, NodeEntry> products; // cast-back node → the product it widens
  return rewriteGraph(src, [&](uint32_t nid, const NodePtr &node) -> std::vector<NodeEntry> {
    if (!converts(nid))
      return {};
    std::vector<NodeEntry> args;
    for (const NodeEntry &in : node->inputs) {
      if (auto p = products.find(in.node.get()); p != products.end()) {
        args.push_back(p->second);
        continue;
      }
      NodeEntry &cast = narrowed[{in.node.get(), in.index}];
      if (!cast.node) {
        std::string name = in.node->name;
        if (in.node->numOutputs() > 1)
          name += "_" + std::to_string(in.index);
        cast = ops::mk("cast", name + "_bf16", {in}, {{"dtype", "bfloat16"}});
      }
      args.push_back(cast);
    }
    NodeEntry product = ops::mk(node->op->name, node->name, args, node->attrs);
    NodeEntry back = ops::mk("cast", node->name + "_fp32", {product}, {{"dtype", "float32"}});
    products[back.node.get()] = product;
    return {back};
  });
}

} // namespace

bool bfloat16Precision(const std::string &word) {
  if (word != "fp32" && word != "bf16")
    fail("precision must be fp32 or bf16 (convolutions and matrix products in bfloat16), got '",
         word, "'");
  return word == "bf16";
}

PrecisionRule mixedPrecisionRule(const std::string &op, const std::string &castTo) {
  if (op == "cast" && castTo == "bfloat16")
    return {true, "it rounds its value to bfloat16 (to nearest even) once, for the products that "
                  "read it"};
  if (op == "cast" && castTo == "float32")
    return {false, "it widens a value to float32 (exactly, from bfloat16) for the float32 ops "
                   "after it"};
  if (kInBFloat16.count(op))
    return {true, "each output is a sum of products: bfloat16 operands (rounded once, 8-bit "
                  "mantissas) multiplied into float32 sums, at twice float32's rate where the CPU "
                  "has avx512_bf16 (vdpbf16ps)"};
  for (const Kept &k : kKeptFloat32)
    if (k.ops.count(op))
      return {false, k.why};
  return {false, "it computes no sum of products, so bfloat16 would only add conversions"};
}

void registerToMixedPrecisionPass() {
  PassRegistry::get().add(
      {.name = "ToMixedPrecision",
       .summary = "convolutions and matrix products of float32 computed in bfloat16: operands "
                  "cast to bfloat16, float32 sums, results cast back; other ops stay float32",
       .optLevel = 0,
       .needs = {"dtype"},
       .changesGraph = true,
       .run = toMixedPrecision});
}

} // namespace loupe
