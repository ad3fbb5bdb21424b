// Init ops: zeros, ones and full — tensors made from attributes alone (no inputs).
#include "core/ops/OpHelpers.h"

#include <cstdlib>
#include <sstream>

namespace loupe::ops {

namespace {

loop::ComputeRef constDataCompute(const Attrs &a, const Shape &shape, int dtype);

// The shape of size symbols (ONNX's ConstantOfShape of a computed shape): its expressions.
std::vector<SymDims> symInit(const SymShapeCtx &c) {
  SymDims d = c.attrs.shape("shape").dims();
  for (const SymExpr &e : d)
    if (e.isConstant() && e.constant() <= 0)
      c.error(cat("shape ", c.attrs.getStr("shape"), " must have positive dimensions"));
  if (c.op == "const" && !c.attrs.getStr("data").empty())
    c.error("a constant of `data` needs a shape of sizes");
  return {d};
}

OpDef &initOp(const char *name, const char *doc, std::function<double(const Attrs &)> value) {
  std::vector<std::string> dtypes;
  for (int i = 0; i < kNumDTypes; ++i)
    dtypes.emplace_back(dtypeName(i));
  return OpRegistry::get()
      .add(name)
      .describe(doc)
      .arguments({})
      .param("shape", ParamKind::SizeTuple, "()",
             "the output shape (its sizes may be expressions of size symbols)")
      .param("dtype", ParamKind::Enum, "float32", "the output dtype", dtypes)
      .setPattern(kOutEWiseFusable)
      .shape([](ShapeCtx &c) {
        Shape s = c.attrs.shape("shape");
        for (int64_t d : s)
          if (d <= 0)
            c.error(cat("shape ", shapeToTuple(s), " must have positive dimensions"));
        c.assignOut(0, s);
      })
      .symbolic(symInit)
      .type([](TypeCtx &c) { c.assignOut(0, *dtypeFromName(c.attrs.getStr("dtype"))); })
      // No inputs, so nothing to differentiate: the flow simply ends here (NNVM registered no
      // FGradient and so refused any graph that reached one).
      .grad(
          [](const NodePtr &, const std::vector<NodeEntry> &) { return std::vector<NodeEntry>{}; })
      .kernel(
          [value](const Attrs &a, const std::vector<const Tensor *> &, std::vector<Tensor> &out) {
            std::fill(out[0].data.begin(), out[0].data.end(), value(a));
          })
      // A fill of symbolic shape is the same loops over its expressions.
      .lowerSymbolic([value, name = std::string(name)](
                         const Attrs &a, const std::vector<loop::ComputeRef> &,
                         const std::vector<Shape> &shapes, const std::vector<int> &types) {
        if (name == "const" && !a.getStr("data").empty())
          return std::vector<loop::ComputeRef>{constDataCompute(a, shapes[0], types[0])};
        double v = value(a);
        return std::vector<loop::ComputeRef>{loop::compute(
            shapes[0], types[0],
            [&](const std::vector<loop::Expr> &) { return loop::constant(v, types[0]); }, "compute",
            "elemwise", "ax")};
      });
}

// const's values: `data` (a flat list such as "[1.0, 2.5]") when given, else `value` everywhere.
std::vector<double> constValues(const Attrs &a, int64_t count) {
  const std::string &data = a.getStr("data");
  if (data.empty())
    return std::vector<double>(count, a.getFloat("value"));
  std::vector<double> v;
  std::string body = data;
  for (char &c : body)
    if (c == '[' || c == ']' || c == ',')
      c = ' ';
  std::istringstream in(body);
  std::string tok;
  while (in >> tok) {
    char *end = nullptr;
    double d = std::strtod(tok.c_str(), &end);
    if (*end != '\0')
      fail("attribute 'data': '", tok, "' is not a number");
    v.push_back(d);
  }
  if (static_cast<int64_t>(v.size()) != count)
    fail("attribute 'data' has ", v.size(), " values but the shape holds ", count);
  return v;
}

// const's `data` in loops: a balanced tree of selects on the flat index, so each element costs
// log2(n) comparisons. The machine code grows with n, hence the limit.
loop::ComputeRef constDataCompute(const Attrs &a, const Shape &shape, int dtype) {
  constexpr int64_t kMaxElements = 4096;
  int64_t n = numElements(shape);
  if (n > kMaxElements)
    fail("const with ", n, " values in `data` is too large to lower to loops (at most ",
         kMaxElements, "; FoldConstant or PrecomputePrune make it an input)");
  std::vector<double> v = constValues(a, n);
  return loop::compute(
      shape, dtype,
      [&](const std::vector<loop::Expr> &i) {
        loop::Expr flat = loop::intImm(0);
        for (size_t d = 0; d < i.size(); ++d)
          flat = flat * shape[d] + i[d];
        std::function<loop::Expr(int64_t, int64_t)> pick = [&](int64_t lo, int64_t hi) {
          if (hi - lo == 1)
            return loop::constant(v[lo], dtype);
          int64_t mid = (lo + hi) / 2;
          return loop::select(loop::lt(flat, loop::intImm(mid)), pick(lo, mid), pick(mid, hi));
        };
        return pick(0, n);
      },
      "compute", "elemwise", "ax");
}

} // namespace

void registerInitOps() {
  // A constant tensor: Loupe's counterpart of Relay's constants (FoldConstant makes them too).
  initOp("const", "a constant tensor: `value` everywhere, or the values in `data`",
         [](const Attrs &a) { return a.getFloat("value"); })
      .param("value", ParamKind::Float, "0", "the value of every element")
      .param("data", ParamKind::Str, "", "all values, row-major, as a list")
      .shape([](ShapeCtx &c) {
        Shape s = c.attrs.shape("shape");
        if (!s.rankKnown())
          c.error("a constant needs a shape, such as shape=(1,) or shape=() for a scalar");
        for (int64_t d : s)
          if (d <= 0)
            c.error(cat("shape ", shapeToTuple(s), " must have positive dimensions"));
        try {
          constValues(c.attrs, numElements(s));
        } catch (const Error &e) {
          c.error(e.what());
        }
        c.assignOut(0, s);
      })
      .kernel([](const Attrs &a, const std::vector<const Tensor *> &, std::vector<Tensor> &out) {
        out[0].data = constValues(a, out[0].size());
      });

  initOp("zeros", "a tensor of zeros", [](const Attrs &) { return 0.0; });
  initOp("ones", "a tensor of ones", [](const Attrs &) { return 1.0; });
  initOp("full", "a tensor filled with fill_value", [](const Attrs &a) {
    return a.getFloat("fill_value");
  }).param("fill_value", ParamKind::Float, std::nullopt, "the value");
}

} // namespace loupe::ops
