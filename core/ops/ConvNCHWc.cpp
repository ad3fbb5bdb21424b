// Blocked-layout convolutions: _contrib_conv2d_NCHWc and _contrib_depthwise_conv2d_NCHWc, which
// AlterOpLayout picks for x86 — shapes, reference kernel, loops and gradient.
#include "core/ops/ConvCommon.h"
#include "core/ops/OpHelpers.h"

#include "core/DType.h"
#include "core/Layout.h"

namespace loupe::ops {

namespace {

// _contrib_conv2d_NCHWc: conv2d with blocked layouts (data NCHW<i>c, weight OIHW<i>i<o>o,
// output NCHW<o>c, bias C<o>c), which AlterOpLayout picks for x86. Its shapes are conv2d's
// carried through the layouts; groups must be 1, as in NNVM.
//
// _contrib_depthwise_conv2d_NCHWc is its depthwise form (TVM's depthwise_conv2d_NCHWc): groups
// equal to the channels of data and output, weight OIHW1i<o>o (each output channel's taps).
void conv2dNCHWcShape(ShapeCtx &c) {
  ConvParams p = convParams(c.attrs, &c, true);
  const std::string &layout = c.attrs.getStr("layout"), &kernel = c.attrs.getStr("kernel_layout");
  std::string out = convOutLayout(c.attrs);
  bool depthwise = c.op == "_contrib_depthwise_conv2d_NCHWc";
  if (!depthwise && p.groups != 1)
    c.error(cat("groups must be 1, got ", p.groups));
  if (depthwise && p.groups != p.channels)
    c.error(cat("groups must equal channels (", p.channels, "), got ", p.groups));
  if (!shapeKnown(c.in[0]))
    return;
  // A shape that does not fit its layout is this node's error (said once, with its name).
  auto convert = [&](const Shape &s, const std::string &from, const std::string &to) {
    try {
      return convertLayoutShape(s, from, to);
    } catch (const Error &e) {
      c.error(e.what());
      return Shape{};
    }
  };
  Shape d = convert(c.in[0], layout, "NCHW");
  if (depthwise && d[1] != p.channels)
    c.error(cat("a depthwise convolution needs as many input channels as channels (", p.channels,
                "), got ", d[1]));
  c.assignIn(1, convert({p.channels, d[1] / p.groups, p.kh, p.kw}, "OIHW", kernel));
  if (p.bias)
    c.assignIn(2, convert({p.channels}, "C", biasLayout(out)));
  int64_t ekh = 1 + (p.kh - 1) * p.dh, ekw = 1 + (p.kw - 1) * p.dw;
  if (d[2] + 2 * p.ph < ekh || d[3] + 2 * p.pw < ekw)
    c.error(cat("kernel ", p.kh, "x", p.kw, " is larger than the padded input ", shapeToList(d)));
  Shape o = {d[0], p.channels, (d[2] + 2 * p.ph - ekh) / p.sh + 1,
             (d[3] + 2 * p.pw - ekw) / p.sw + 1};
  c.assignOut(0, convert(o, "NCHW", out));
}

// conv2dNCHWcShape's rule over symbolic dimensions: the data in NCHW (a symbolic axis carried
// through the layouts, as `batch` is), the window's output size by floor division, and the
// output in its layout.
std::vector<SymDims> symConv2dNCHWc(const SymShapeCtx &c) {
  ConvParams p = convParams(c.attrs, nullptr, true);
  Shape d;
  try {
    d = convertLayoutShape(Shape::symbolic(c.in[0]), c.attrs.getStr("layout"), "NCHW");
  } catch (const Error &e) {
    c.error(e.what());
  }
  SymDims n = d.dims();
  int64_t ekh = 1 + (p.kh - 1) * p.dh, ekw = 1 + (p.kw - 1) * p.dw;
  SymExpr oh = SymExpr::floorDiv(n[2] + SymExpr(2 * p.ph - ekh), p.sh) + SymExpr(1);
  SymExpr ow = SymExpr::floorDiv(n[3] + SymExpr(2 * p.pw - ekw), p.sw) + SymExpr(1);
  try {
    return {convertLayoutShape(Shape::symbolic({n[0], SymExpr(p.channels), oh, ow}), "NCHW",
                               convOutLayout(c.attrs))
                .dims()};
  } catch (const Error &e) {
    c.error(e.what());
  }
}

// Converts to NCHW/OIHW/C, runs conv2d's kernel, converts the result to the output layout.
void conv2dNCHWcKernel(const Attrs &a, const std::vector<const Tensor *> &in,
                       std::vector<Tensor> &out) {
  std::string outLayout = convOutLayout(a);
  Tensor x = transformLayout(*in[0], a.getStr("layout"), "NCHW");
  Tensor w = transformLayout(*in[1], a.getStr("kernel_layout"), "OIHW");
  Attrs plainAttrs = a;
  if (double v = a.getFloat("pad_value"); v != 0) {
    // Padded here with the value, the convolution itself then pads nothing.
    ConvParams p = convParams(a, nullptr, true);
    Tensor padded({x.shape[0], x.shape[1], x.shape[2] + 2 * p.ph, x.shape[3] + 2 * p.pw}, x.dtype);
    padInto(x, {{0, 0}, {0, 0}, {p.ph, p.ph}, {p.pw, p.pw}}, "constant", v, padded);
    x = std::move(padded);
    plainAttrs.set("padding", std::vector<int64_t>{0, 0}, "(0, 0)", true);
  }
  std::vector<const Tensor *> plain = {&x, &w};
  Tensor b;
  if (in.size() > 2) {
    b = transformLayout(*in[2], biasLayout(outLayout), "C");
    plain.push_back(&b);
  }
  std::vector<Tensor> y = {
      Tensor(convertLayoutShape(out[0].shape, outLayout, "NCHW"), out[0].dtype)};
  conv2dKernel(plainAttrs, plain, y);
  out[0] = transformLayout(y[0], "NCHW", outLayout);
}

// _contrib_conv2d_NCHWc with data NCHW<ib>c, weight OIHW<ib>i<ob>o, output NCHW<ob>c: the sum
// runs over the input channel blocks, the kernel taps and the lanes of a block.
std::vector<loop::ComputeRef> conv2dNCHWcLower(const Attrs &a,
                                               const std::vector<loop::ComputeRef> &in,
                                               const std::vector<Shape> &shapes,
                                               const std::vector<int> &types) {
  using namespace loop;
  ConvParams p = convParams(a, nullptr, true);
  auto block = [](const std::string &layout, char sub) {
    auto axes = parseLayout(layout);
    for (const LayoutAxis &x : axes)
      if (x.name == sub)
        return x.factor;
    return int64_t{0};
  };
  std::string out = convOutLayout(a);
  int64_t ib = block(a.getStr("layout"), 'c'), ob = block(out, 'c');
  // A depthwise convolution's weights have one input channel per output channel: OIHW1i<o>o.
  std::string want =
      "OIHW" + std::to_string(p.groups != 1 ? 1 : ib) + "i" + std::to_string(ob) + "o";
  // 8-bit operands summed in int32 take their weights in quads of input channels, OIHW<o>o4i
  // (TVM's conv2d_NCHWc_int8): each output lane's four weights are one 32-bit word, which VNNI's
  // vpdpbusd multiplies by four input channels and adds to the lane.
  bool quads = p.groups == 1 && ib % 4 == 0 && types[0] == kInt32 && in[0]->dtype != kInt32 &&
               a.getStr("kernel_layout") == "OIHW" + std::to_string(ob) + "o4i";
  // bfloat16 operands summed in float32 take theirs in pairs, OIHW<o>o2i: each output lane's two
  // weights are one 32-bit word, which vdpbf16ps multiplies by two input channels (dot2).
  bool pairs = p.groups == 1 && ib % 2 == 0 && types[0] == kFloat32 && in[0]->dtype == kBFloat16 &&
               in[1]->dtype == kBFloat16 &&
               a.getStr("kernel_layout") == "OIHW" + std::to_string(ob) + "o2i";
  if (a.getStr("layout") != "NCHW" + std::to_string(ib) + "c" ||
      out != "NCHW" + std::to_string(ob) + "c" ||
      (a.getStr("kernel_layout") != want && !quads && !pairs) || !ib || !ob)
    fail("_contrib_conv2d_NCHWc lowers layouts NCHW<i>c, OIHW<i>i<o>o (8-bit: OIHW<o>o4i, "
         "bfloat16: OIHW<o>o2i), NCHW<o>c only, got ",
         a.getStr("layout"), ", ", a.getStr("kernel_layout"), ", ", out);
  ComputeRef x = in[0], w = in[1];
  int t = types[0];
  ComputeRef data = p.ph || p.pw ? padCompute(x, {0, 0, p.ph, p.pw, 0}, {0, 0, p.ph, p.pw, 0},
                                              a.getFloat("pad_value"))
                                 : x;
  if (p.groups != 1) { // depthwise: each output lane reads its own input lane
    if (ib != ob || p.groups != p.channels)
      fail("_contrib_depthwise_conv2d_NCHWc lowers data and output in the same NCHW<o>c and "
           "weights in OIHW1i<o>o only, got ",
           a.getStr("layout"), ", ", a.getStr("kernel_layout"), ", ", out);
    IterVar ry = reduceAxis(p.kh, "kh"), rx = reduceAxis(p.kw, "kw");
    ComputeRef conv = compute(
        shapes[0], types[0],
        [&](const std::vector<Expr> &i) {
          return reduce(Combiner::Sum,
                        widened(read(data, {i[0], i[1], i[2] * p.sh + ry.var * p.dh,
                                            i[3] * p.sw + rx.var * p.dw, i[4]}),
                                t) *
                            widened(read(w, {i[1], intImm(0), ry.var, rx.var, intImm(0), i[4]}), t),
                        {ry, rx});
        },
        "depthwise_conv2d_NCHWc", "depthwise_conv2d_NCHWc", "",
        {"n", "oc_chunk", "oh", "ow", "oc_block"});
    if (!p.bias)
      return {conv};
    return {addBias(conv, in[2], [](const std::vector<Expr> &i) {
      return std::vector<Expr>{i[1], i[4]};
    })};
  }
  // A strided 1x1 convolution reads every s-th pixel: gathering those once into a dense tensor
  // (as oneDNN's reduce-to-unit-stride does) halves the input the reduction streams through for
  // every channel chunk and makes its reads contiguous (1024x14x14 to 2048 at stride 2: the
  // strided reads touched a cache line per broadcast).
  const Shape &os = shapes[0];
  // A shape of `from`'s leading axis (the batch, which a generic kernel's loops take as a
  // symbol) and these constant dimensions.
  auto batchOf = [](const Shape &from, const std::vector<int64_t> &rest) {
    SymDims dims = {from.dim(0)};
    for (int64_t r : rest)
      dims.push_back(SymExpr(r));
    return Shape::symbolic(dims);
  };
  if (p.kh == 1 && p.kw == 1 && (p.sh > 1 || p.sw > 1) && !p.ph && !p.pw) {
    ComputeRef strided = x;
    data = compute(
        batchOf(x->shape, {x->shape[1], os[2], os[3], ib}), x->dtype,
        [&](const std::vector<Expr> &i) {
          return read(strided, {i[0], i[1], i[2] * p.sh, i[3] * p.sw, i[4]});
        },
        "data_unit_stride", "compact");
    p.sh = p.sw = 1;
  }
  // The input channels as topi's conv2d_NCHWc splits them: ic_chunk blocks of ic_block lanes
  // (8-bit: ic_quad steps of four lanes; bfloat16: ic_pair steps of two).
  int64_t step = quads ? 4 : pairs ? 2 : 1;
  IterVar icc = reduceAxis(x->shape[1], "ic_chunk"),
          icb = quads   ? reduceAxis(ib / 4, "ic_quad")
                : pairs ? reduceAxis(ib / 2, "ic_pair")
                        : reduceAxis(ib, "ic_block"),
          ry = reduceAxis(p.kh, "kh"), rx = reduceAxis(p.kw, "kw");
  // One step of the sum: an input channel (the data read at `lane` of its block) times the
  // weight of output lane `o`; with quads, dot4 of four input channels and their four weights;
  // with pairs, dot2 of two.
  auto term = [&](const std::function<Expr(Expr)> &dataAt, const Expr &oc, const Expr &ky,
                  const Expr &kx, const Expr &o) {
    if (step == 1)
      return widened(dataAt(icb.var), t) * widened(read(w, {oc, icc.var, ky, kx, icb.var, o}), t);
    std::vector<Expr> args;
    for (int64_t j = 0; j < step; ++j)
      args.push_back(dataAt(icb.var * step + j));
    for (int64_t j = 0; j < step; ++j)
      args.push_back(read(w, {oc, icc.var * (ib / step) + icb.var, ky, kx, o, intImm(j)}));
    return call(quads ? "dot4" : "dot2", std::move(args), t);
  };
  ComputeRef conv;
  if (p.kh == 1 && p.kw == 1 && p.sh == 1 && p.sw == 1 && !p.ph && !p.pw && os[3] < 16) {
    // A unit-stride 1x1 convolution is a product over the pixels: summed over them as one axis,
    // a register tile may span output rows, and the rows are read back from it. Only for narrow
    // rows, whose widths have no divisor that fills the registers (7, 13, 14: 0.70-0.88x oneDNN
    // in rows, 0.90-1.01x over pixels on AVX2); wide images keep their rows (56x56 over pixels
    // measured 0.79x against 1.09x), whose tiles keep a row's weights in L1 across the row.
    int64_t width = os[3], pixels = os[2] * os[3];
    ComputeRef rows = data;
    ComputeRef flat = compute(
        batchOf(x->shape, {x->shape[1], pixels, ib}), x->dtype,
        [&](const std::vector<Expr> &i) {
          return read(rows, {i[0], i[1], i[2] / width, i[2] % width, i[3]});
        },
        "data_pixels");
    ComputeRef product =
        compute(batchOf(os, {os[1], pixels, os[4]}), types[0],
                [&](const std::vector<Expr> &i) {
                  Expr src = term(
                      [&](Expr lane) {
                        return read(flat, {i[0], icc.var, i[2], lane});
                      },
                      i[1], ry.var, rx.var, i[3]);
                  return reduce(Combiner::Sum, src, {icc, ry, rx, icb});
                },
                "conv2d_NCHWc", "conv2d_NCHWc", "", {"n", "oc_chunk", "pixel", "oc_block"});
    conv = compute(os, types[0],
                   [&](const std::vector<Expr> &i) {
                     return read(product, {i[0], i[1], i[2] * width + i[3], i[4]});
                   },
                   "conv2d_NCHWc_rows", "injective", "", {"n", "oc_chunk", "oh", "ow", "oc_block"});
  } else {
    conv = compute(os, types[0],
                   [&](const std::vector<Expr> &i) {
                     Expr src = term(
                         [&](Expr lane) {
                           return read(data, {i[0], icc.var, i[2] * p.sh + ry.var * p.dh,
                                              i[3] * p.sw + rx.var * p.dw, lane});
                         },
                         i[1], ry.var, rx.var, i[4]);
                     return reduce(Combiner::Sum, src, {icc, ry, rx, icb});
                   },
                   "conv2d_NCHWc", "conv2d_NCHWc", "", {"n", "oc_chunk", "oh", "ow", "oc_block"});
  }
  if (!p.bias)
    return {conv};
  return {addBias(conv, in[2], [](const std::vector<Expr> &i) {
    return std::vector<Expr>{i[1], i[4]};
  })};
}

} // namespace

void registerConvNCHWcOps() {
  for (const char *name : {"_contrib_conv2d_NCHWc", "_contrib_depthwise_conv2d_NCHWc"}) {
    OpDef &blocked =
        convCommon(name, std::string(name) == "_contrib_conv2d_NCHWc"
                             ? "2-D convolution in blocked layouts (NCHW8c, …)"
                             : "depthwise 2-D convolution in blocked layouts (NCHW16c, …)");
    blocked.param("out_layout", ParamKind::Str, "__undef__", "output layout");
    outDtypeParam(blocked);
    // What the padding reads: a quantized convolution pads with its input's zero point, which
    // AlterOpLayout takes from the `pad` before it.
    blocked.param("pad_value", ParamKind::Float, "0", "the value the padding reads");
    blocked.argsFn = dataWeightBias;
    blocked.shape(conv2dNCHWcShape)
        .symbolic(symConv2dNCHWc)
        .kernel(conv2dNCHWcKernel)
        .layout(convLayout);
    blocked.lowerSymbolicBatch(conv2dNCHWcLower);
    blocked.grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
      // conv2d's gradient between layout transforms: everything to NCHW / OIHW, _conv2d_grad,
      // and each input gradient back to its input's layout.
      const Attrs &a = n->parsed;
      std::string data = a.getStr("layout"), kernel = a.getStr("kernel_layout"),
                  out = convOutLayout(a);
      auto to = [&](const NodeEntry &e, const std::string &from, const std::string &dst,
                    const std::string &name) {
        return from == dst ? e
                           : mk("__layout_transform__", name, {e},
                                {{"src_layout", from}, {"dst_layout", dst}});
      };
      AttrDict plain;
      for (const auto &[k, v] : n->attrs)
        if (k != "layout" && k != "kernel_layout" && k != "out_layout")
          plain.emplace_back(k, v);
      NodeEntry cg = mk("_conv2d_grad", n->name + "_grad",
                        {to(g[0], out, "NCHW", n->name + "_grad_sub0"),
                         to(n->inputs[0], data, "NCHW", n->name + "_grad_sub1"),
                         to(n->inputs[1], kernel, "OIHW", n->name + "_grad_sub2")},
                        plain);
      std::vector<NodeEntry> res = {
          to(outOf(cg.node, 0), "NCHW", data, n->name + "_grad_data"),
          to(outOf(cg.node, 1), "OIHW", kernel, n->name + "_grad_weight")};
      if (n->inputs.size() > 2)
        res.push_back(to(outOf(cg.node, 2), "C", biasLayout(out), n->name + "_grad_bias"));
      return res;
    });
  }
}

} // namespace loupe::ops
