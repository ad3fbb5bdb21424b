// AlterOpLayout: lets the target replace ops by layout-specific versions (nnvm-spec §8); on x86
// an NCHW conv2d with groups=1 becomes `_contrib_conv2d_NCHWc` in NCHW<ic>c / OIHW<ic>i<oc>o /
// NCHW<oc>c layouts, which CorrectLayout then feeds through `__layout_transform__` nodes.
//
// The block sizes follow TVM's x86 fallback schedule (topi conv2d_avx_common): oc_bn is the
// largest divisor of the output channels not above the SIMD width in float32 lanes (16 with
// an AVX-512 CPU such as `-mcpu=skylake-avx512` in the target, else 8), ic_bn the largest divisor
// of the input channels not above oc_bn. Other targets and other convolutions are left alone.
//
// The replacement keeps the conv2d's name (NNVM's Python rule made a fresh
// `_contrib_conv2d_nchwc<N>` name; keeping it lets `:diff` and the viewer follow the node). When
// the graph had `layout`, nodes the pass did not touch keep their layouts (for their outputs and
// the entries they read) and new ones are `__undef__` for the next CorrectLayout to work out.
#include "passes/Pass.h"

#include "core/DType.h"
#include "core/Error.h"
#include "core/Rewrite.h"

#include <map>

namespace loupe {

namespace {

// Sets `key` to `value`, in place if written before, else at the end.
void setAttr(AttrDict &attrs, const std::string &key, const std::string &value) {
  for (auto &[k, v] : attrs)
    if (k == key) {
      v = value;
      return;
    }
  attrs.emplace_back(key, value);
}

// Whether the target names a CPU with 512-bit vectors (TVM knew skylake-avx512; the later ones
// with AVX-512F are here too, so that a host-tuned build uses their full width).
bool avx512Target(const std::string &target) {
  static const char *const cpus[] = {
      "skylake-avx512", "cascadelake", "cooperlake",     "cannonlake",    "icelake-client",
      "icelake-server", "tigerlake",   "sapphirerapids", "emeraldrapids", "graniterapids",
      "znver4",         "znver5",      "x86-64-v4"};
  size_t at = target.find("-mcpu=");
  if (at == std::string::npos)
    return false;
  std::string cpu = target.substr(at + 6, target.find(' ', at) - (at + 6));
  for (const char *c : cpus)
    if (cpu == c)
      return true;
  return false;
}

// TVM's x86 conv2d_alter_layout with the fallback configuration, or null to keep the node.
NodePtr alterConv2d(const NodePtr &n, const Shape &data, int dtype, const std::string &target) {
  const Attrs &a = n->parsed;
  if (a.getStr("layout") != "NCHW" || a.getStr("kernel_layout") != "OIHW" ||
      a.getInt("groups") != 1 || data.size() != 4 || (dtype != kFloat32 && dtype != kFloat64))
    return nullptr;
  int64_t simd = avx512Target(target) ? 16 : 8;
  int64_t ocBn = largestDivisorUpTo(a.getInt("channels"), simd);
  int64_t icBn = largestDivisorUpTo(data[1], ocBn);
  AttrDict attrs = n->attrs;
  setAttr(attrs, "layout", "NCHW" + std::to_string(icBn) + "c");
  setAttr(attrs, "out_layout", "NCHW" + std::to_string(ocBn) + "c");
  setAttr(attrs, "kernel_layout", "OIHW" + std::to_string(icBn) + "i" + std::to_string(ocBn) + "o");
  return makeOpNode(*OpRegistry::get().find("_contrib_conv2d_NCHWc"), n->name, std::move(attrs),
                    n->inputs, n->controlDeps);
}

Graph alterOpLayout(const Graph &src, const PassContext &ctx) {
  std::string target = ctx.get("target", "llvm");
  bool cpu = target.rfind("llvm", 0) == 0;
  const IndexedGraph &idx = src.index();
  const auto &shapes = src.attr("shape")->shapes;
  const auto &dtypes = src.attr("dtype")->ints;
  std::map<const Node *, uint32_t> kept; // node of the result -> id in src
  Graph out = rewriteGraph(src, [&](uint32_t nid, const NodePtr &n) -> std::vector<NodeEntry> {
    if (cpu && !n->isVariable() && n->op->name == "conv2d") {
      uint32_t in = idx.entryId(idx.nodes[nid].inputs[0]);
      if (NodePtr altered = alterConv2d(n, shapes[in], static_cast<int>(dtypes[in]), target))
        return {{altered, 0, 0}};
    }
    kept[n.get()] = nid;
    return {};
  });
  if (const GraphAttr *layout = src.attr("layout")) {
    const IndexedGraph &ridx = out.index();
    std::vector<std::string> layouts(ridx.numEntries(), "__undef__");
    for (uint32_t nid = 0; nid < ridx.numNodes(); ++nid) {
      auto it = kept.find(ridx.nodes[nid].node.get());
      if (it == kept.end())
        continue;
      // As NNVM: a kept node's inputs are recorded with the layouts it read before, even when a
      // replaced producer now makes another one, so that the next CorrectLayout sees what the
      // node was written for as its last layout and converts back where the op needs it.
      const auto &inputs = ridx.nodes[nid].inputs;
      for (size_t i = 0; i < inputs.size(); ++i)
        layouts[ridx.entryId(inputs[i])] =
            layout->strs[idx.entryId(idx.nodes[it->second].inputs[i])];
      for (uint32_t k = 0; k < ridx.nodes[nid].node->numOutputs(); ++k)
        layouts[ridx.entryId(nid, k)] = layout->strs[idx.entryId(it->second, k)];
    }
    out.attrs["layout"] = GraphAttr::listLayout(layouts);
  }
  return out;
}

} // namespace

void registerAlterOpLayoutPass() {
  PassRegistry::get().add({"AlterOpLayout",
                           "replaces NCHW conv2d by _contrib_conv2d_NCHWc in blocked layouts (x86)",
                           3,
                           {"shape", "dtype"},
                           {},
                           true,
                           alterOpLayout});
}

} // namespace loupe
