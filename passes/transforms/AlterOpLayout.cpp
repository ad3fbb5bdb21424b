// AlterOpLayout: lets the target replace ops by layout-specific versions (nnvm-spec §8); on x86
// an NCHW conv2d with groups=1 becomes `_contrib_conv2d_NCHWc` in NCHW<ic>c / OIHW<ic>i<oc>o /
// NCHW<oc>c layouts, which CorrectLayout then feeds through `__layout_transform__` nodes.
//
// The block sizes follow TVM's x86 fallback schedule (topi conv2d_avx_common): oc_bn is the
// largest divisor of the output channels not above the SIMD width in float32 lanes (16 with
// an AVX-512 CPU such as `-mcpu=skylake-avx512` in the target, else 8), ic_bn the largest divisor
// of the input channels not above oc_bn. Unlike TVM, channel counts whose blocks would fill the
// vector registers badly are padded with zeros to a multiple of the SIMD width first (1000 ->
// 1008 in float32, 13 -> 16 in float64), with `pad` and `split` nodes that keep the graph's
// values exact. A stride-1 convolution whose output width fills the vectors better than its
// channels stays in NCHW (its columns go in the lanes). Other targets and other convolutions
// are left alone. A dense over rows whose weight is a bound param becomes `_contrib_dense_pack`
// (alterDense).
//
// The replacement keeps the conv2d's name (NNVM's Python rule made a fresh
// `_contrib_conv2d_nchwc<N>` name; keeping it lets `:diff` and the viewer follow the node). When
// the graph had `layout`, nodes the pass did not touch keep their layouts (for their outputs and
// the entries they read) and new ones are `__undef__` for the next CorrectLayout to work out.
#include "passes/Pass.h"

#include "core/Attrs.h"
#include "core/DType.h"
#include "core/Error.h"
#include "core/Rewrite.h"
#include "core/Target.h"

#include <map>

namespace loupe {

namespace {

// The share of a vector register's lanes a block of `bn` channels uses, or 0 when its vector
// spans more than one register without filling them (13 doubles: LLVM splits such a vector into
// 8 + 4 + 1 lanes and shuffles between them).
double registerFill(int64_t bn, int64_t bytes, int64_t regBytes) {
  int64_t b = bn * bytes;
  if (b > regBytes && b % regBytes != 0)
    return 0;
  return static_cast<double>(b) / static_cast<double>((b + regBytes - 1) / regBytes * regBytes);
}

// The channel count a blocked convolution computes: `c` itself, or `c` rounded up to a multiple
// of `simd` when the padded blocks fill the registers better than the largest divisor of `c`
// does (1000 float32 channels: 63 blocks of 16 instead of 100 blocks of 10; 13 float64
// channels: one block of 16 instead of a 13-lane vector).
int64_t paddedChannels(int64_t c, int64_t simd, int64_t bytes, int64_t regBytes) {
  int64_t padded = (c + simd - 1) / simd * simd;
  if (padded == c)
    return c;
  double plain = registerFill(largestDivisorUpTo(c, simd), bytes, regBytes);
  double pad =
      static_cast<double>(c) / static_cast<double>(padded) * registerFill(simd, bytes, regBytes);
  return pad > plain + 0.01 ? padded : c;
}

// Whether an ungrouped convolution runs faster left in NCHW, its output columns in the vector
// lanes (opt_level 3's conv2dNCHW tile: a block of output channels x two rows x one vector of
// columns), than blocked by channels: when the output width fills the vectors better than the
// channels do, at stride 1 along W (so that the columns a vector reads are consecutive), with a
// block of at least 8 output channels that divides them. The tutorial's 13 channels on 100
// columns: 13 of 16 lanes blocked, 100 of 112 in NCHW (float64: 100 of 104), and no layout
// transforms or channel padding around it.
bool widthFillsBetter(const Attrs &a, const Shape &data, int dtype, int64_t regBytes) {
  int64_t lanes = regBytes / dtypeBytes(dtype), channels = a.getInt("channels");
  const auto &k = a.getTuple("kernel_size"), &pad = a.getTuple("padding"),
             &stride = a.getTuple("strides"), &dil = a.getTuple("dilation");
  // Channels with a divisor from 8 to 13 (the tile of AVX-512's registers: 13 x 2 rows).
  if (k.size() != 2 || pad.size() != 2 || stride.size() != 2 || dil.size() != 2 || stride[1] != 1 ||
      largestDivisorUpTo(channels, 13) < 8)
    return false;
  int64_t width = data[3] + 2 * pad[1] - dil[1] * (k[1] - 1);
  auto fill = [&](int64_t n) {
    return static_cast<double>(n) / static_cast<double>((n + lanes - 1) / lanes * lanes);
  };
  return width >= lanes && fill(width) > fill(channels) + 0.02;
}

// TVM's x86 conv2d_alter_layout with the fallback configuration, or no entries to keep the node.
// Channel counts the blocks would fill badly are padded with zeros: the data and weights by
// `pad` nodes (those of params PrecomputePrune folds at build time), and the output cut back to
// the original channels by a `split`, so the graph still computes exactly what it did;
// SinkLayoutTransform then keeps the padded channels through the ops that follow.
// An 8-bit convolution summed in int32 (QnnCanonicalize's uint8 × int8): TVM's
// conv2d_NCHWc_int8 layouts — output channels blocked by the int32 lanes, weights OIHW<o>o4i so
// that each lane's four input channels are one 32-bit word (VNNI's vpdpbusd), input channels
// blocked as the output's (a multiple of 4; zeros pad 3 channels to 4). A `pad` before it that
// fills the rows and columns with one value (the data's zero point) becomes its padding and
// pad_value, so the padded input is never written out. A depthwise one takes TVM's
// depthwise_conv2d_NCHWc in the same blocks.
std::vector<NodeEntry> alterEightBitConv(const NodePtr &n, const Shape &data,
                                         const std::string &target) {
  const Attrs &a = n->parsed;
  TargetCpu cpu = targetCpuOf(target);
  // Blocks of the vector's int32 lanes, or of 8 (half an AVX-512 vector) for fewer channels.
  int64_t lanes = cpu.lanes(4), channels = a.getInt("channels"), groups = a.getInt("groups");
  if (channels % lanes != 0)
    lanes = 8;
  if (channels % lanes != 0)
    return {};
  // A depthwise one (each output channel reads its own input channel) is TVM's
  // depthwise_conv2d_NCHWc in the same blocks, each lane's uint8 and int8 widened and multiplied
  // (no four-channel dot to make); other grouped ones stay in NCHW.
  bool depthwise = groups != 1;
  if (depthwise && (groups != channels || data[1] != channels))
    return {};
  int64_t inC = depthwise || data[1] % 4 == 0 ? data[1] : (data[1] + 3) / 4 * 4;
  int64_t icBn = depthwise ? lanes : 4 * largestDivisorUpTo(inC / 4, lanes / 4);
  AttrDict attrs = n->attrs;
  std::vector<NodeEntry> inputs = n->inputs;
  const Node &p = *inputs[0].node;
  const auto &padding = a.getTuple("padding");
  if (!p.isVariable() && p.op->name == "pad" && p.parsed.getStr("pad_mode") == "constant" &&
      padding.size() == 2 && !padding[0] && !padding[1]) {
    const auto &w = p.parsed.getPairs("pad_width");
    if (w.size() == 4 && w[0] == std::vector<int64_t>{0, 0} && w[1] == std::vector<int64_t>{0, 0} &&
        w[2][0] == w[2][1] && w[3][0] == w[3][1]) {
      setAttr(attrs, "padding",
              "(" + std::to_string(w[2][0]) + ", " + std::to_string(w[3][0]) + ")");
      setAttr(attrs, "pad_value", pyFloatRepr(p.parsed.getFloat("pad_value")));
      inputs[0] = p.inputs[0];
    }
  }
  const OpDef &pad = *OpRegistry::get().find("pad");
  bool absorbed = inputs[0].node.get() != n->inputs[0].node.get();
  if (inC != data[1] || absorbed) {
    // The data blocked here: CorrectLayout would take an undefined layout (a new pad's output,
    // or a graph input the absorbed pad read) for the blocked one the convolution asks for,
    // without a transform.
    NodeEntry d = inputs[0];
    if (inC != data[1])
      d = {makeOpNode(pad, n->name + "_data_pad",
                      {{"pad_width", padAfterWidth({0, inC - data[1], 0, 0})}}, {d}),
           0, 0};
    inputs[0] = {
        makeOpNode(*OpRegistry::get().find("__layout_transform__"),
                   n->name + "_data_NCHW" + std::to_string(icBn) + "c",
                   {{"src_layout", "NCHW"}, {"dst_layout", "NCHW" + std::to_string(icBn) + "c"}},
                   {d}),
        0, 0};
  }
  if (inC != data[1]) {
    inputs[1] = {makeOpNode(pad, n->name + "_weight_pad",
                            {{"pad_width", padAfterWidth({0, inC - data[1], 0, 0})}}, {inputs[1]}),
                 0, 0};
  }
  setAttr(attrs, "layout", "NCHW" + std::to_string(icBn) + "c");
  setAttr(attrs, "out_layout", "NCHW" + std::to_string(lanes) + "c");
  setAttr(attrs, "kernel_layout",
          depthwise ? "OIHW1i" + std::to_string(lanes) + "o"
                    : "OIHW" + std::to_string(lanes) + "o4i");
  const char *op = depthwise ? "_contrib_depthwise_conv2d_NCHWc" : "_contrib_conv2d_NCHWc";
  return {{makeOpNode(*OpRegistry::get().find(op), n->name, std::move(attrs), std::move(inputs),
                      n->controlDeps),
           0, 0}};
}

// A float32 convolution that ToMixedPrecision will compute in bfloat16 (`bf16Pairs`: :build
// precision=bf16 at opt_level 3, on a CPU with avx512_bf16) takes its weights in pairs of input
// channels, OIHW<o>o2i, when its input block is even: each output lane's two weights one 32-bit
// word, which vdpbf16ps multiplies by two input channels (dot2) — the layout PrecomputePrune
// packs once, as the int8 convolutions' quads.
std::vector<NodeEntry> alterConv2d(const NodePtr &n, const std::vector<Shape> &inShapes, int dtype,
                                   const std::string &target, bool bf16Pairs) {
  const Attrs &a = n->parsed;
  const Shape &data = inShapes[0];
  if (a.getStr("layout") != "NCHW" || a.getStr("kernel_layout") != "OIHW" || data.size() != 4 ||
      inShapes[1].size() != 4)
    return {};
  if ((dtype == kUint8 || dtype == kInt8) && a.getStr("out_dtype") == "int32")
    return alterEightBitConv(n, data, target);
  if (dtype != kFloat32 && dtype != kFloat64 && dtype != kInt32)
    return {};
  TargetCpu cpu = targetCpuOf(target);
  int64_t regBytes = cpu.vectorBytes, simd = cpu.lanes(4), bytes = dtypeBytes(dtype);
  int64_t channels = a.getInt("channels"), groups = a.getInt("groups");
  if (groups != 1) {
    // A depthwise convolution (TVM's depthwise_conv2d_NCHWc) in the blocks of the convolutions
    // around it, so that a MobileNet needs no layout transform between them; other grouped
    // convolutions stay in NCHW.
    if (groups != channels || data[1] != channels || channels % simd != 0)
      return {};
    std::string blocked = "NCHW" + std::to_string(simd) + "c";
    AttrDict attrs = n->attrs;
    setAttr(attrs, "layout", blocked);
    setAttr(attrs, "out_layout", blocked);
    setAttr(attrs, "kernel_layout", "OIHW1i" + std::to_string(simd) + "o");
    return {{makeOpNode(*OpRegistry::get().find("_contrib_depthwise_conv2d_NCHWc"), n->name,
                        std::move(attrs), n->inputs, n->controlDeps),
             0, 0}};
  }
  if (widthFillsBetter(a, data, dtype, regBytes))
    return {};
  int64_t outC = paddedChannels(channels, simd, bytes, regBytes);
  int64_t ocBn = largestDivisorUpTo(outC, simd);
  // Input channels are read one at a time (broadcast), so their block needs no vector fill; they
  // are padded by the same rule as output channels so that a padded convolution feeding this
  // one hands over its blocked output as it is.
  int64_t inC = data[1] % ocBn == 0 ? data[1] : paddedChannels(data[1], simd, bytes, regBytes);
  // bfloat16 pairs need an even input block: an odd channel count (an image's 3) gets a zero
  // channel, as the 8-bit quads pad 3 to 4.
  bool pairs = bf16Pairs && dtype == kFloat32;
  if (pairs && inC % 2 != 0)
    ++inC;
  int64_t icBn = largestDivisorUpTo(inC, ocBn);
  if (pairs && icBn % 2 != 0) // an even divisor of the (even) channels
    icBn = 2 * largestDivisorUpTo(inC / 2, ocBn / 2);
  AttrDict attrs = n->attrs;
  setAttr(attrs, "layout", "NCHW" + std::to_string(icBn) + "c");
  setAttr(attrs, "out_layout", "NCHW" + std::to_string(ocBn) + "c");
  setAttr(attrs, "kernel_layout",
          pairs ? "OIHW" + std::to_string(ocBn) + "o2i"
                : "OIHW" + std::to_string(icBn) + "i" + std::to_string(ocBn) + "o");
  setAttr(attrs, "channels", std::to_string(outC));
  std::vector<NodeEntry> inputs = n->inputs;
  const OpDef &pad = *OpRegistry::get().find("pad");
  auto padded = [&](size_t i, const std::string &what, const std::string &width) {
    inputs[i] = {
        makeOpNode(pad, n->name + "_" + what + "_pad", {{"pad_width", width}}, {inputs[i]}), 0, 0};
  };
  if (inC != data[1])
    padded(0, "data", padAfterWidth({0, inC - data[1], 0, 0}));
  if (outC != channels || inC != data[1])
    padded(1, "weight", padAfterWidth({outC - channels, inC - data[1], 0, 0}));
  if (outC != channels && inputs.size() > 2)
    padded(2, "bias", padAfterWidth({outC - channels}));
  NodePtr conv = makeOpNode(*OpRegistry::get().find("_contrib_conv2d_NCHWc"), n->name,
                            std::move(attrs), std::move(inputs), n->controlDeps);
  if (outC == channels)
    return {{conv, 0, 0}};
  NodePtr cut =
      makeOpNode(*OpRegistry::get().find("split"), n->name + "_channels",
                 {{"indices_or_sections", "(" + std::to_string(channels) + ",)"}, {"axis", "1"}},
                 {{conv, 0, 0}});
  return {{cut, 0, 0}};
}

// Rows from which a dense is computed as a packed GEMM: below them the tile of rows is short
// and the inner-product schedule, which streams the weight in its own layout, is as fast.
constexpr int64_t kPackRows = 16;

// The packed weights made so far, by weight node and layout: denses that read one weight (the
// layers of a PyTorch export, which share equal weights through Identity) read one packed copy.
using PackedWeights = std::map<std::pair<const Node *, std::string>, NodePtr>;

// TVM's x86 dense_alter_layout: a dense over rows (a transformer's tokens) whose weight is a
// bound param becomes `_contrib_dense_pack` with the weight packed NC<n>n by a
// `__layout_transform__` PrecomputePrune folds at build time. n is the register tile's columns
// (chooseMatmulTile), fewer vectors where the units are not a multiple of it; units that are
// not a multiple of a vector stay dense.
// With `bf16Pairs` (as alterConv2d's) a float32 one packs its weight in pairs of steps of k,
// NC<n>n2c ((units / n, k / 2, n, 2)), when k is even: vdpbf16ps's operands.
std::vector<NodeEntry> alterDense(const NodePtr &n, const Shape &data, int dtype,
                                  const std::string &target, const PassContext &ctx,
                                  PackedWeights &packedWeights, bool bf16Pairs) {
  const NodeEntry &weight = n->inputs[1];
  if (!data.rankKnown() || data.size() < 2 || (dtype != kFloat32 && dtype != kFloat64) ||
      !weight.node->isVariable() || !ctx.params || !ctx.params->count(weight.node->name))
    return {};
  // Symbolic rows (a generic build's batch*seq) are taken to be many.
  bool symbolicRows = false;
  for (size_t d = 0; d + 1 < data.size(); ++d)
    symbolicRows = symbolicRows || !data.dim(d).isConstant();
  if (!data.dim(data.size() - 1).isConstant())
    return {};
  int64_t units = n->parsed.getInt("units"),
          rows = symbolicRows ? int64_t{1} << 20 : numElements(data) / data.back();
  TargetCpu cpu = targetCpuOf(target);
  int64_t lanes = cpu.lanes(dtypeBytes(dtype));
  if (rows < kPackRows)
    return {};
  int64_t vectors = chooseMatmulTile(rows, units, cpu, lanes).vectors;
  while (vectors > 0 && units % (vectors * lanes) != 0)
    --vectors;
  if (vectors == 0)
    return {};
  std::string layout = "NC" + std::to_string(vectors * lanes) + "n" +
                       (bf16Pairs && dtype == kFloat32 && data.back() % 2 == 0 ? "2c" : "");
  NodePtr &packed = packedWeights[{weight.node.get(), layout}];
  if (!packed)
    packed = makeOpNode(*OpRegistry::get().find("__layout_transform__"), n->name + "_weight_pack",
                        {{"src_layout", "NC"}, {"dst_layout", layout}}, {weight});
  AttrDict attrs;
  for (const char *key : {"units", "use_bias"})
    for (const auto &[k, v] : n->attrs)
      if (k == key)
        attrs.emplace_back(k, v);
  attrs.emplace_back("weight_layout", layout);
  std::vector<NodeEntry> inputs = n->inputs;
  inputs[1] = {packed, 0, 0};
  return {{makeOpNode(*OpRegistry::get().find("_contrib_dense_pack"), n->name, std::move(attrs),
                      std::move(inputs), n->controlDeps),
           0, 0}};
}

Graph alterOpLayout(const Graph &src, const PassContext &ctx) {
  std::string target = ctx.get("target", "llvm");
  bool cpu = target.rfind("llvm", 0) == 0;
  bool bf16Pairs = ctx.get("precision", "fp32") == "bf16";
  const IndexedGraph &idx = src.index();
  const auto &shapes = src.attr("shape")->shapes;
  const auto &dtypes = src.attr("dtype")->ints;
  std::map<const Node *, uint32_t> kept; // node of the result -> id in src
  std::map<const Node *, uint32_t> cuts; // a channel cut of the result -> the conv2d it stands for
  PackedWeights packedWeights;
  Graph out = rewriteGraph(src, [&](uint32_t nid, const NodePtr &n) -> std::vector<NodeEntry> {
    if (cpu && !n->isVariable() && n->op->name == "conv2d") {
      std::vector<Shape> inShapes;
      for (const auto &e : idx.nodes[nid].inputs)
        inShapes.push_back(shapes[idx.entryId(e)]);
      uint32_t in = idx.entryId(idx.nodes[nid].inputs[0]);
      std::vector<NodeEntry> altered =
          alterConv2d(n, inShapes, static_cast<int>(dtypes[in]), target, bf16Pairs);
      if (!altered.empty() && altered[0].node->op->name == "split")
        cuts[altered[0].node.get()] = nid;
      if (!altered.empty())
        return altered;
    }
    if (cpu && !n->isVariable() && n->op->name == "dense") {
      uint32_t in = idx.entryId(idx.nodes[nid].inputs[0]);
      std::vector<NodeEntry> altered = alterDense(n, shapes[in], static_cast<int>(dtypes[in]),
                                                  target, ctx, packedWeights, bf16Pairs);
      if (!altered.empty())
        return altered;
    }
    kept[n.get()] = nid;
    return {};
  });
  if (const GraphAttr *layout = src.attr("layout")) {
    const IndexedGraph &ridx = out.index();
    std::vector<std::string> layouts(ridx.numEntries(), "__undef__");
    for (uint32_t nid = 0; nid < ridx.numNodes(); ++nid) {
      auto it = kept.find(ridx.nodes[nid].node.get());
      if (it == kept.end()) {
        // A channel cut presents the replaced convolution's output in its layout.
        if (auto cut = cuts.find(ridx.nodes[nid].node.get()); cut != cuts.end())
          layouts[ridx.entryId(nid, 0)] = layout->strs[idx.entryId(cut->second, 0)];
        continue;
      }
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
    // A channel pad keeps its input's layout (pad names no layout of its own, so CorrectLayout
    // would leave its output unknown, fill it with the blocked convolution's need and put no
    // transform after it). Its input's layout is only complete once every kept node has recorded
    // what it read: a cut that only later nodes read is one (mnasnet's and MobileNetV3's
    // residual blocks, where a padded convolution reads the cut before the residual add does).
    for (uint32_t nid = 0; nid < ridx.numNodes(); ++nid) {
      const Node &made = *ridx.nodes[nid].node;
      if (!kept.count(&made) && !made.isVariable() && made.op->name == "pad")
        layouts[ridx.entryId(nid, 0)] = layouts[ridx.entryId(ridx.nodes[nid].inputs[0])];
    }
    out.attrs["layout"] = GraphAttr::listLayout(layouts);
  }
  return out;
}

} // namespace

void registerAlterOpLayoutPass() {
  PassRegistry::get().add(
      {.name = "AlterOpLayout",
       .summary = "replaces NCHW conv2d by _contrib_conv2d_NCHWc in blocked layouts and dense "
                  "over rows by _contrib_dense_pack (x86)",
       .optLevel = 3,
       .needs = {"shape", "dtype"},
       .changesGraph = true,
       .run = alterOpLayout});
}

} // namespace loupe
