// SymbolicSizes: the importer's evaluation of shape computations over size symbols (Shape of a
// symbolic input, Gather, Unsqueeze, Concat, arithmetic), which fold() cannot run.
#include "frontend/onnx/Converters.h"
#include "frontend/onnx/Importer.h"

#include "core/Error.h"
#include "core/Text.h"

#include <algorithm>

namespace loupe::frontend {

namespace {

using SymValue = Importer::SymValue;

// The ONNX ops a size computation is made of, evaluated here.
const std::set<std::string> &sizeOps() {
  static const std::set<std::string> ops = {"Shape", "Gather",   "Unsqueeze", "Squeeze", "Concat",
                                            "Cast",  "Identity", "Add",       "Sub",     "Mul",
                                            "Div",   "Slice",    "Reshape"};
  return ops;
}

// One element of `v` for position i of a result of n elements (a scalar or one element
// broadcasts, as NumPy's does for these 0-d and 1-d values).
const SymExpr &elementAt(const SymValue &v, size_t i) {
  return v.elems.size() == 1 ? v.elems[0] : v.elems[i];
}

} // namespace

std::string symValueText(const SymValue &v) {
  std::vector<std::string> parts;
  for (const SymExpr &e : v.elems)
    parts.push_back(e.str());
  return v.scalar && parts.size() == 1 ? parts[0] : "[" + joinNames(parts) + "]";
}

const SymValue *Importer::symbolicInput(const onnx::NodeProto &n, int k) const {
  if (!hasInput(n, k))
    return nullptr;
  auto it = symValues_.find(n.input(k));
  return it == symValues_.end() ? nullptr : &it->second;
}

void Importer::notConstant(const onnx::NodeProto &n, int k, const std::string &what) const {
  // A size from the symbols (Slice's end at `seq`, Range's limit) needs an op with a symbolic
  // attribute the converter does not make yet: the sizes bound at :load fold it to a constant.
  if (const SymValue *v = symbolicInput(n, k)) {
    std::set<std::string> symbols;
    for (const SymExpr &e : v->elems)
      for (const std::string &s : e.symbols())
        symbols.insert(s);
    std::string give;
    for (const std::string &s : symbols)
      give += " " + s + "=N";
    fail(where(n), ": ", what, " is computed from the size symbols (", symValueText(*v),
         "), which this converter does not take yet: give their sizes (:load FILE", give, ")");
  }
  fail(where(n), ": ", what, " must be a constant (an initializer or Constant)");
}

bool Importer::foldSymbolic(const onnx::NodeProto &n) {
  if (!sizeOps().count(n.op_type()) || n.output_size() != 1)
    return false;
  // Input k as a size value: a symbolic one, or a small integer constant.
  auto valueOf = [&](int k) -> std::optional<SymValue> {
    if (const SymValue *v = symbolicInput(n, k))
      return *v;
    if (!hasInput(n, k) || (!values_.count(n.input(k)) && !scalars_.count(n.input(k)) &&
                            !out_.params.count(n.input(k))))
      return std::nullopt;
    const Tensor *t = constant(n, k);
    if (!t || dtypeIsFloat(t->dtype) || t->shape.size() > 1 || t->size() > 64)
      return std::nullopt;
    SymValue v;
    v.scalar = t->shape.empty();
    for (double d : t->data)
      v.elems.push_back(static_cast<int64_t>(d));
    return v;
  };
  SymValue out;
  const std::string &op = n.op_type();
  if (op == "Shape") {
    if (!hasInput(n, 0) || !values_.count(n.input(0)))
      return false;
    std::optional<Shape> s = inferredSymbolicShape(values_.at(n.input(0)));
    if (!s)
      return false;
    int64_t rank = static_cast<int64_t>(s->size());
    auto clampAxis = [rank](int64_t a) {
      return std::clamp(a < 0 ? a + rank : a, int64_t{0}, rank);
    };
    int64_t start = clampAxis(attrInt(n, "start", 0)), end = clampAxis(attrInt(n, "end", rank));
    for (int64_t d = start; d < end; ++d)
      out.elems.push_back(s->dim(static_cast<size_t>(d)));
  } else {
    // Every other op reads at least one symbolic value; constants alone are fold()'s.
    bool symbolic = false;
    for (int k = 0; k < n.input_size(); ++k)
      symbolic = symbolic || symbolicInput(n, k);
    if (!symbolic)
      return false;
    // A data tensor reshaped to sizes, or sliced by them, is the converter's, not a size.
    std::optional<SymValue> a = valueOf(0);
    if (!a)
      return false;
    if (op == "Cast" || op == "Identity") {
      out = *a;
    } else if (op == "Gather") {
      std::optional<SymValue> idx = valueOf(1);
      if (a->scalar || attrInt(n, "axis", 0) != 0 || !idx)
        fail(where(n), ": gathers from a size list by a constant index only");
      out.scalar = idx->scalar;
      int64_t len = static_cast<int64_t>(a->elems.size());
      for (const SymExpr &i : idx->elems) {
        if (!i.isConstant() || i.constant() < -len || i.constant() >= len)
          fail(where(n), ": index ", i.str(), " is out of range for ", symValueText(*a));
        out.elems.push_back(a->elems[(i.constant() + len) % len]);
      }
    } else if (op == "Unsqueeze" || op == "Squeeze" || op == "Reshape") {
      // Rank 0 and 1 only: the elements stay in order.
      std::vector<int64_t> target;
      if (op == "Reshape")
        target = constInts(n, 1, "shape");
      out.elems = a->elems;
      out.scalar = op == "Squeeze" || (op == "Reshape" && target.empty());
      if (out.scalar && out.elems.size() != 1)
        fail(where(n), ": makes a scalar of ", symValueText(*a));
    } else if (op == "Concat") {
      for (int k = 0; k < n.input_size(); ++k) {
        std::optional<SymValue> v = valueOf(k);
        if (!v)
          fail(where(n), ": input ", k, " is no size value");
        out.elems.insert(out.elems.end(), v->elems.begin(), v->elems.end());
      }
    } else if (op == "Slice") {
      std::vector<int64_t> starts = constInts(n, 1, "starts"), ends = constInts(n, 2, "ends");
      std::vector<int64_t> steps =
          hasInput(n, 4) ? constInts(n, 4, "steps") : std::vector<int64_t>{1};
      if (starts.size() != 1 || ends.size() != 1 || steps != std::vector<int64_t>{1})
        fail(where(n), ": slices a size list on one axis with step 1 only");
      int64_t len = static_cast<int64_t>(a->elems.size());
      auto at = [len](int64_t v) { return std::clamp(v < 0 ? v + len : v, int64_t{0}, len); };
      for (int64_t i = at(starts[0]); i < at(ends[0]); ++i)
        out.elems.push_back(a->elems[i]);
    } else {
      std::optional<SymValue> b = valueOf(1);
      if (!b)
        return false;
      size_t len = std::max(a->elems.size(), b->elems.size());
      if ((a->elems.size() != len && a->elems.size() != 1) ||
          (b->elems.size() != len && b->elems.size() != 1))
        fail(where(n), ": ", symValueText(*a), " and ", symValueText(*b), " differ in length");
      out.scalar = a->scalar && b->scalar;
      for (size_t i = 0; i < len; ++i) {
        const SymExpr &x = elementAt(*a, i), &y = elementAt(*b, i);
        if (op == "Add")
          out.elems.push_back(x + y);
        else if (op == "Sub")
          out.elems.push_back(x - y);
        else if (op == "Mul")
          out.elems.push_back(x * y);
        else if (!y.isConstant() || y.constant() <= 0)
          fail(where(n), ": divides a size by ", y.str(), " (sizes divide by positive constants)");
        else
          out.elems.push_back(SymExpr::floorDiv(x, y.constant()));
      }
    }
  }
  // Constants are params (the converters read them as fold() made them); sizes of symbols are
  // kept for the converters that take them.
  if (std::all_of(out.elems.begin(), out.elems.end(),
                  [](const SymExpr &e) { return e.isConstant(); })) {
    Tensor t(out.scalar ? Shape{} : Shape{static_cast<int64_t>(out.elems.size())}, kInt64);
    for (size_t i = 0; i < out.elems.size(); ++i)
      t.data[i] = static_cast<double>(out.elems[i].constant());
    addParam(n.output(0), std::move(t));
    return true;
  }
  symValues_[n.output(0)] = std::move(out);
  return true;
}

} // namespace loupe::frontend
