// Shaping: the ONNX converters that reshape, reorder, cut, join, pad or retype a tensor
// (Reshape, Transpose, Slice, Concat, Split, Pad, Expand, Cast, Shape, …).
#include "frontend/onnx/Converters.h"
#include "frontend/onnx/Tensors.h"

#include "core/DType.h"
#include "core/Error.h"
#include "core/Memory.h"
#include "core/Shape.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

namespace loupe::frontend {

namespace {

// Trilu: the upper (or lower) triangle of the last two axes from diagonal k, the rest zero — a
// constant mask chosen by where.
std::vector<NodeEntry> trilu(Importer &im, const onnx::NodeProto &n) {
  im.only(n, {"upper"});
  Shape d = shapeNow(im, n, 0, 2);
  int64_t k = 0;
  if (im.hasInput(n, 1)) {
    std::vector<int64_t> ks = im.constInts(n, 1, "k");
    if (ks.size() != 1)
      fail(im.where(n), ": k must hold one value");
    k = ks[0];
  }
  bool upper = im.attrInt(n, "upper", 1) != 0;
  int64_t rows = d[d.size() - 2], cols = d.back();
  Tensor mask({rows, cols}, kBoolean);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      // j - i compared in double: k may be any int64 (a saturated constant).
      double diagonal = static_cast<double>(j) - static_cast<double>(i);
      mask.data[static_cast<size_t>(i * cols + j)] =
          upper ? diagonal >= static_cast<double>(k) : diagonal <= static_cast<double>(k);
    }
  NodeEntry x = im.input(n, 0);
  return {im.op(n, "where", {},
                {im.constantParam(n, "_mask", std::move(mask)), x,
                 im.op(n, "zeros_like", {}, {x}, "_zero")})};
}

// Det: the determinants of the square matrices in the last two axes, written out for 1×1, 2×2
// and 3×3 (cofactors along the first row) from one-element slices; larger ones are refused.
std::vector<NodeEntry> det(Importer &im, const onnx::NodeProto &n) {
  im.only(n, {});
  Shape s = shapeNow(im, n, 0, 2);
  size_t r = s.size();
  int64_t m = s[r - 1];
  if (s[r - 2] != m)
    fail(im.where(n), ": the matrices must be square, got ", s[r - 2], "×", m);
  if (m > 3)
    fail(im.where(n), ": Det is supported for matrices up to 3×3, got ", m, "×", m);
  NodeEntry x = im.input(n, 0);
  Shape batch(s.begin(), s.end() - 2); // () for one matrix: a scalar
  std::string axes = tupleText({static_cast<int64_t>(r - 2), static_cast<int64_t>(r - 1)});
  auto at = [&](int64_t i, int64_t j) {
    std::string cell = "_" + std::to_string(i) + std::to_string(j);
    return im.op(
        n, "reshape", {{"shape", tupleText(batch)}},
        {im.op(n, "strided_slice",
               {{"begin", tupleText({i, j})}, {"end", tupleText({i + 1, j + 1})}, {"axes", axes}},
               {x}, cell + "_slice")},
        cell);
  };
  int made = 0;
  auto op = [&](const char *name, const NodeEntry &a, const NodeEntry &b) {
    return im.op(n, name, {}, {a, b}, "_t" + std::to_string(made++));
  };
  // The 2×2 minor of rows (1, 2)… and columns c0, c1: a*d - b*c.
  auto minor = [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
    return op("broadcast_sub", op("broadcast_mul", at(r0, c0), at(r1, c1)),
              op("broadcast_mul", at(r0, c1), at(r1, c0)));
  };
  NodeEntry d = m == 1   ? at(0, 0)
                : m == 2 ? minor(0, 1, 0, 1)
                         : op("broadcast_add",
                              op("broadcast_sub", op("broadcast_mul", at(0, 0), minor(1, 2, 1, 2)),
                                 op("broadcast_mul", at(0, 1), minor(1, 2, 0, 2))),
                              op("broadcast_mul", at(0, 2), minor(1, 2, 0, 1)));
  return {im.op(n, "copy", {}, {d})};
}

// ReverseSequence: along the time axis, the first sequence_lens[b] elements of each batch
// entry b reversed and the rest kept — a gather_elements along time at the index
// t < len ? len - 1 - t : t, computed from the lengths (an input like any other).
std::vector<NodeEntry> reverseSequence(Importer &im, const onnx::NodeProto &n) {
  im.only(n, {"batch_axis", "time_axis"});
  Shape s = shapeNow(im, n, 0, 2);
  int64_t batchAxis = im.attrInt(n, "batch_axis", 1), timeAxis = im.attrInt(n, "time_axis", 0);
  if (!((batchAxis == 0 && timeAxis == 1) || (batchAxis == 1 && timeAxis == 0)))
    fail(im.where(n), ": batch_axis and time_axis must be 0 and 1 (either way round), got ",
         batchAxis, " and ", timeAxis);
  int64_t B = s[static_cast<size_t>(batchAxis)], T = s[static_cast<size_t>(timeAxis)];
  // The lengths and the times, each shaped to broadcast along its own axis of x.
  Shape lenShape(s.size(), 1), timeShape(s.size(), 1);
  lenShape[static_cast<size_t>(batchAxis)] = B;
  timeShape[static_cast<size_t>(timeAxis)] = T;
  Tensor times(timeShape, kInt64);
  for (int64_t t = 0; t < T; ++t)
    times.data[static_cast<size_t>(t)] = static_cast<double>(t);
  NodeEntry t = im.constantParam(n, "_times", std::move(times));
  NodeEntry len =
      im.op(n, "reshape", {{"shape", tupleText(lenShape)}},
            {im.op(n, "cast", {{"dtype", "int64"}}, {im.input(n, 1)}, "_lens")}, "_lens_shaped");
  NodeEntry reversed =
      im.op(n, "broadcast_sub", {},
            {im.op(n, "__add_scalar__", {{"scalar", "-1"}}, {len}, "_last"), t}, "_reversed");
  NodeEntry index = im.op(
      n, "where", {}, {im.op(n, "broadcast_less", {}, {t, len}, "_inside"), reversed, t}, "_index");
  // A length past the time axis (or negative) would read outside it: the index stays inside.
  NodeEntry inside = im.op(n, "clip", {{"a_min", "0"}, {"a_max", std::to_string(T - 1)}}, {index},
                           "_index_inside");
  NodeEntry full = im.op(n, "broadcast_to", {{"shape", tupleText(s)}}, {inside}, "_index_full");
  return {
      im.op(n, "gather_elements", {{"axis", std::to_string(timeAxis)}}, {im.input(n, 0), full})};
}

std::vector<NodeEntry> tile(Importer &im, const onnx::NodeProto &n) {
  im.only(n, {});
  return std::vector<NodeEntry>{
      im.op(n, "tile", {{"reps", tupleText(im.constInts(n, 1, "repeats"))}}, {im.input(n, 0)})};
}

std::vector<NodeEntry> castLike(Importer &im, const onnx::NodeProto &n) {
  im.only(n, {"saturate"});
  int dt = im.knownDType(n, 1);
  if (dt < 0)
    fail(im.where(n), ": the dtype of input 1 must be known (a graph input or initializer)");
  return std::vector<NodeEntry>{
      im.op(n, "cast", {{"dtype", std::string(dtypeName(dt))}}, {im.input(n, 0)})};
}

// NumPy's two-way broadcasting of x (shape `xs`) and the target `want`, over sizes or expressions
// of size symbols: x reshaped to the result's rank (leading 1s) and broadcast_to the result. A 1
// stretches and equal dimensions stay; a size against a symbol takes the size, which the run
// checks.
NodeEntry expandTo(Importer &im, const onnx::NodeProto &n, const Shape &xs, const SymDims &want) {
  NodeEntry x = im.input(n, 0);
  size_t rank = std::max(xs.size(), want.size());
  SymDims a(rank - xs.size(), SymExpr(1)), b(rank - want.size(), SymExpr(1)), out(rank);
  SymDims xd = xs.dims();
  a.insert(a.end(), xd.begin(), xd.end());
  b.insert(b.end(), want.begin(), want.end());
  for (size_t d = 0; d < rank; ++d) {
    if (a[d] == b[d] || b[d] == SymExpr(1))
      out[d] = a[d];
    else if (a[d] == SymExpr(1) || a[d].isConstant() != b[d].isConstant())
      out[d] = a[d] == SymExpr(1) || b[d].isConstant() ? b[d] : a[d];
    else
      fail(im.where(n), ": cannot broadcast ", shapeToList(xs), " with ",
           shapeToTuple(Shape::symbolic(want)));
  }
  if (a.size() != xs.size())
    x = im.op(n, "reshape", {{"shape", shapeToTuple(Shape::symbolic(a))}}, {x}, "_rank");
  return im.op(n, "broadcast_to", {{"shape", shapeToTuple(Shape::symbolic(out))}}, {x});
}

std::vector<NodeEntry> expand(Importer &im, const onnx::NodeProto &n) {
  // The target's sizes need x's shape now (sizes, or expressions of size symbols); a target
  // computed from the symbols (Shape -> Slice -> Concat) is their expressions.
  im.only(n, {});
  std::optional<Shape> xs = im.describedShape(im.input(n, 0));
  if (!xs)
    fail(im.where(n), ": the input's shape must be known");
  SymDims want;
  if (const Importer::SymValue *target = im.symbolicInput(n, 1))
    want = target->elems;
  else
    for (int64_t v : im.constInts(n, 1, "shape"))
      want.emplace_back(v);
  return std::vector<NodeEntry>{expandTo(im, n, *xs, want)};
}

std::vector<NodeEntry> slice(Importer &im, const onnx::NodeProto &n) {
  // Opset 10 moved starts, ends, axes and steps from attributes to (constant) inputs.
  im.only(n, {"starts", "ends", "axes"});
  // Ends computed from the size symbols (Hugging Face's position_ids[:, :seq]): strided_slice's
  // ends as expressions, which the symbolic shape rule takes from a begin ≥ 0, step 1.
  std::string endText;
  if (const Importer::SymValue *v = im.hasInput(n, 2) ? im.symbolicInput(n, 2) : nullptr) {
    for (const SymExpr &e : v->elems)
      endText += (endText.empty() ? "" : ", ") + e.str();
    endText = "(" + endText + (v->elems.size() == 1 ? ",)" : ")");
    std::vector<int64_t> starts = im.intsInputOrAttr(n, 1, "starts"),
                         axes = im.intsInputOrAttr(n, 3, "axes"),
                         steps = im.hasInput(n, 4) ? im.constInts(n, 4, "steps")
                                                   : std::vector<int64_t>{};
    return std::vector<NodeEntry>{im.op(n, "strided_slice",
                                        {{"begin", tupleText(starts)},
                                         {"end", endText},
                                         {"strides", tupleText(steps)},
                                         {"axes", tupleText(axes)}},
                                        {im.input(n, 0)})};
  }
  std::vector<int64_t> starts = im.intsInputOrAttr(n, 1, "starts"),
                       ends = im.intsInputOrAttr(n, 2, "ends"),
                       axes = im.intsInputOrAttr(n, 3, "axes"),
                       steps =
                           im.hasInput(n, 4) ? im.constInts(n, 4, "steps") : std::vector<int64_t>{};
  // A forward slice of no elements (an expanded LayerNorm's prefix of the shape before axis 0)
  // is an empty value: nothing is made (Importer::markEmpty).
  if (std::optional<Shape> in = im.inferredShape(im.input(n, 0))) {
    for (size_t i = 0; i < starts.size() && i < ends.size(); ++i) {
      int64_t axis = axes.empty() ? static_cast<int64_t>(i) : axes[i];
      int64_t step = steps.empty() ? 1 : steps[i];
      if (axis < 0)
        axis += static_cast<int64_t>(in->size());
      if (axis < 0 || axis >= static_cast<int64_t>(in->size()) || step <= 0)
        continue;
      int64_t dim = (*in)[static_cast<size_t>(axis)];
      auto clamp = [&](int64_t v) { return std::clamp(v < 0 ? v + dim : v, int64_t{0}, dim); };
      if (clamp(ends[i]) <= clamp(starts[i])) {
        im.markEmpty(n.output(0));
        return {};
      }
    }
  }
  return std::vector<NodeEntry>{im.op(n, "strided_slice",
                                      {{"begin", tupleText(starts)},
                                       {"end", tupleText(ends)},
                                       {"strides", tupleText(steps)},
                                       {"axes", tupleText(axes)}},
                                      {im.input(n, 0)})};
}

std::vector<NodeEntry> shape(Importer &im, const onnx::NodeProto &n) {
  im.only(n, {"start", "end"});
  AttrDict a = {{"start", std::to_string(im.attrInt(n, "start", 0))},
                {"end", std::to_string(im.attrInt(n, "end", INT32_MAX))}};
  NodeEntry e = im.op(n, "shape_of", a, {im.input(n, 0)});
  // Known now (the usual case) it becomes a param, so the chains after it fold too.
  im.bindOutput(n, 0, e);
  if (im.fold(n.output(0)))
    return std::vector<NodeEntry>{im.valueOf(n.output(0))};
  return std::vector<NodeEntry>{e};
}

std::vector<NodeEntry> concat(Importer &im, const onnx::NodeProto &n) {
  im.only(n, {"axis"});
  std::vector<NodeEntry> ins;
  for (int k = 0; k < n.input_size(); ++k)
    if (!im.isEmpty(n.input(k))) // an empty piece adds nothing
      ins.push_back(im.input(n, k));
  if (ins.empty())
    fail(im.where(n), ": every input has no elements, and so would the result");
  if (ins.size() == 1)
    return std::vector<NodeEntry>{im.op(n, "copy", {}, ins)};
  return std::vector<NodeEntry>{
      im.op(n, "concatenate", {{"axis", std::to_string(im.attrInt(n, "axis", 1))}}, ins)};
}

std::vector<NodeEntry> flatten(Importer &im, const onnx::NodeProto &n) {
  im.only(n, {"axis"});
  int64_t axis = im.attrInt(n, "axis", 1);
  if (axis == 1)
    return std::vector<NodeEntry>{im.op(n, "flatten", {}, {im.input(n, 0)})};
  // Other axes: a reshape to (prod(dims before axis), prod(dims from axis on)), which
  // needs the input's shape now.
  const Shape *x = im.knownShape(n, 0);
  if (!x)
    fail(im.where(n), ": axis ", axis, " needs the input's shape (a graph input)");
  int64_t rank = static_cast<int64_t>(x->size());
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis > rank)
    fail(im.where(n), ": axis ", im.attrInt(n, "axis", 1), " is out of range for rank ", rank);
  // Checked products: the declared shape can hold any dimensions.
  int64_t outer = numElements(Shape(x->begin(), x->begin() + axis)),
          inner = numElements(Shape(x->begin() + axis, x->end()));
  return std::vector<NodeEntry>{
      im.op(n, "reshape", {{"shape", tupleText({outer, inner})}}, {im.input(n, 0)})};
}

// A Reshape to sizes computed from symbols, as reshape's codes: a dimension the input has at the
// same position is 0 (copied), a constant stays, and the one left is -1 (the rest of the
// elements). Checked: the codes' symbolic shape is the target's.
NodeEntry symbolicReshape(Importer &im, const onnx::NodeProto &n,
                          const Importer::SymValue &target) {
  NodeEntry x = im.input(n, 0);
  std::optional<Shape> xs = im.inferredSymbolicShape(x);
  if (!xs)
    xs = im.inferredShape(x);
  if (!xs)
    fail(im.where(n), ": the input's shape must be known to reshape it to ", symValueText(target));
  std::vector<int64_t> codes;
  int inferred = -1;
  for (size_t j = 0; j < target.elems.size(); ++j) {
    const SymExpr &t = target.elems[j];
    if (t.isConstant() && t.constant() > 0) {
      codes.push_back(t.constant());
    } else if (t == SymExpr(0) || (j < xs->size() && xs->dim(j) == t)) {
      codes.push_back(0);
    } else if (inferred < 0 && t != SymExpr(-1)) {
      inferred = static_cast<int>(j);
      codes.push_back(-1);
    } else if (t == SymExpr(-1) && inferred < 0) {
      inferred = static_cast<int>(j);
      codes.push_back(-1);
    } else {
      codes.clear(); // two sizes the codes cannot say: the target's expressions themselves
      break;
    }
  }
  std::string shape = tupleText(codes);
  if (codes.empty())
    shape = shapeToTuple(Shape::symbolic(target.elems));
  NodeEntry r = im.op(n, "reshape", {{"shape", shape}}, {x});
  std::optional<Shape> got = im.inferredSymbolicShape(r);
  if (!got)
    got = im.inferredShape(r);
  for (size_t j = 0; got && j < target.elems.size(); ++j)
    if (target.elems[j] != SymExpr(-1) && target.elems[j] != SymExpr(0) &&
        got->dim(j) != target.elems[j])
      got.reset();
  if (!got)
    fail(im.where(n), ": reshaping ", shapeToTuple(*xs), " to ", symValueText(target), " as shape ",
         shape, " does not give that shape");
  return r;
}

std::vector<NodeEntry> reshape(Importer &im, const onnx::NodeProto &n) {
  im.only(n, {"shape", "allowzero"});
  if (im.attrInt(n, "allowzero", 0))
    fail(im.where(n), ": allowzero is not supported");
  if (const Importer::SymValue *target = im.symbolicInput(n, 1))
    return std::vector<NodeEntry>{symbolicReshape(im, n, *target)};
  std::vector<int64_t> s = im.intsInputOrAttr(n, 1, "shape");
  return std::vector<NodeEntry>{im.op(n, "reshape", {{"shape", tupleText(s)}}, {im.input(n, 0)})};
}

std::vector<NodeEntry> transpose(Importer &im, const onnx::NodeProto &n) {
  im.only(n, {"perm"});
  std::vector<int64_t> p = im.attrInts(n, "perm");
  AttrDict a;
  if (!p.empty())
    a.push_back({"axes", tupleText(p)});
  return std::vector<NodeEntry>{im.op(n, "transpose", a, {im.input(n, 0)})};
}

std::vector<NodeEntry> squeeze(Importer &im, const onnx::NodeProto &n) {
  im.only(n, {"axes"});
  std::vector<int64_t> axes = im.intsInputOrAttr(n, 1, "axes");
  AttrDict a;
  if (!axes.empty())
    a.push_back({"axis", tupleText(axes)});
  return std::vector<NodeEntry>{im.op(n, "squeeze", a, {im.input(n, 0)})};
}

std::vector<NodeEntry> unsqueeze(Importer &im, const onnx::NodeProto &n) {
  im.only(n, {"axes"});
  std::vector<int64_t> axes = im.intsInputOrAttr(n, 1, "axes");
  // Axes count in the output's rank (the input's plus one per axis), negative ones from its end.
  if (std::any_of(axes.begin(), axes.end(), [](int64_t a) { return a < 0; })) {
    const Tensor *c = im.constant(n, 0);
    std::optional<Shape> in = c ? std::optional<Shape>(c->shape) : im.inferredShape(im.input(n, 0));
    if (!in)
      fail(im.where(n), ": negative axes need the input's rank (its shape known)");
    axes = distinctAxes(im, n, axes, static_cast<int64_t>(in->size() + axes.size()));
  }
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end())
    fail(im.where(n), ": axes ", tupleText(axes), " repeat an axis");
  // A scalar constant (a dimension read from a shape) becomes a tensor of ones' shape.
  if (const Tensor *c = im.constant(n, 0); c && c->shape.empty()) {
    Tensor t = *c;
    t.shape = Shape(axes.size(), 1);
    return std::vector<NodeEntry>{im.constantParam(n, "", std::move(t))};
  }
  NodeEntry x = im.input(n, 0);
  // Inserting in increasing order gives each axis its final position.
  for (size_t i = 0; i < axes.size(); ++i)
    x = im.op(n, "expand_dims", {{"axis", std::to_string(axes[i])}}, {x},
              i + 1 < axes.size() ? "_" + std::to_string(i) : "");
  return std::vector<NodeEntry>{x};
}

std::vector<NodeEntry> split(Importer &im, const onnx::NodeProto &n) {
  im.only(n, {"axis", "split", "num_outputs"});
  std::vector<int64_t> sizes = im.intsInputOrAttr(n, 1, "split");
  std::string sections;
  if (const auto *a = im.attr(n, "num_outputs"); a && sizes.empty()) {
    // Opset 18: num_outputs parts of ceil(d / num_outputs), the last one smaller.
    int64_t parts = a->i();
    Shape d = shapeNow(im, n, 0, 1);
    int64_t len = d[static_cast<size_t>(
        axisOf(im, n, im.attrInt(n, "axis", 0), static_cast<int64_t>(d.size())))];
    if (parts <= 0 || parts > len || parts != n.output_size())
      fail(im.where(n), ": num_outputs ", parts, " must be the number of outputs (",
           n.output_size(), ") and at most the axis's length ", len);
    int64_t each = (len + parts - 1) / parts;
    if ((parts - 1) * each >= len)
      fail(im.where(n), ": ", len, " cannot split into ", parts, " parts of ", each,
           " and a smaller last one");
    sizes.assign(static_cast<size_t>(parts - 1), each);
    sizes.push_back(len - (parts - 1) * each);
  }
  if (sizes.empty()) {
    sections = std::to_string(n.output_size());
  } else {
    std::vector<int64_t> at;
    int64_t sum = 0;
    for (size_t i = 0; i + 1 < sizes.size(); ++i)
      at.push_back(sum += sizes[i]);
    sections = tupleText(at);
  }
  return im.opOutputs(
      n, "split",
      {{"indices_or_sections", sections}, {"axis", std::to_string(im.attrInt(n, "axis", 0))}},
      {im.input(n, 0)});
}

std::vector<NodeEntry> pad(Importer &im, const onnx::NodeProto &n) {
  im.only(n, {"mode", "pads", "value"});
  std::string mode = im.attrString(n, "mode", "constant");
  if (mode != "constant" && mode != "edge" && mode != "reflect")
    fail(im.where(n), ": mode ", mode, " is not supported (constant, edge and reflect are)");
  std::vector<int64_t> p = im.intsInputOrAttr(n, 1, "pads");
  if (im.hasInput(n, 3)) {
    // Opset 18: the pads are for these axes only (begins, then ends); the others get 0.
    std::vector<int64_t> axes = im.constInts(n, 3, "axes");
    Shape d = shapeNow(im, n, 0, 1);
    auto rank = static_cast<int64_t>(d.size());
    if (p.size() != 2 * axes.size())
      fail(im.where(n), ": pads has ", p.size(), " values for ", axes.size(),
           " axes (it needs two per axis)");
    std::vector<int64_t> full(2 * d.size(), 0), at = distinctAxes(im, n, axes, rank);
    for (size_t i = 0; i < at.size(); ++i) {
      full[static_cast<size_t>(at[i])] = p[i];
      full[static_cast<size_t>(at[i] + rank)] = p[i + at.size()];
    }
    p = full;
  }
  double value = im.attrFloat(n, "value", 0);
  if (const Tensor *t = im.constant(n, 2))
    value = t->data.at(0);
  size_t nd = p.size() / 2;
  std::string width = "(";
  for (size_t d = 0; d < nd; ++d)
    width += (d ? ", (" : "(") + std::to_string(p[d]) + ", " + std::to_string(p[d + nd]) + ")";
  width += nd == 1 ? ",)" : ")";
  AttrDict a = {{"pad_width", width}, {"pad_value", floatText(value)}};
  if (mode != "constant")
    a.push_back({"pad_mode", mode});
  return std::vector<NodeEntry>{im.op(n, "pad", a, {im.input(n, 0)})};
}

std::vector<NodeEntry> size(Importer &im, const onnx::NodeProto &n) {
  // The element count, a scalar known once the input's shape is.
  im.only(n, {});
  Tensor count(Shape{}, kInt64);
  count.data = {static_cast<double>(checkedNumElements(shapeNow(im, n, 0, 1)))};
  return im.constantOutput(n, std::move(count));
}

std::vector<NodeEntry> cast(Importer &im, const onnx::NodeProto &n) {
  im.only(n, {"to", "saturate"}); // saturate (opset 19) is for float8 targets only
  int dt = dtypeOf(static_cast<int32_t>(im.attrInt(n, "to", 1)), im.where(n));
  // A constant scalar (an epsilon cast to the input's type) stays one, converted now.
  if (const Tensor *t = im.constant(n, 0); t && t->shape.empty()) {
    Tensor cast(Shape{}, dt);
    cast.data = {roundToDType(t->data.at(0), dt)};
    return im.constantOutput(n, std::move(cast));
  }
  return std::vector<NodeEntry>{
      im.op(n, "cast", {{"dtype", std::string(dtypeName(dt))}}, {im.input(n, 0)})};
}

} // namespace

ConverterList shapingConverters() {
  return {
      {"Identity", unary("copy")},
      {"Trilu", trilu},
      {"Det", det},
      {"ReverseSequence", reverseSequence},
      {"Tile", tile},
      {"CastLike", castLike},
      {"Expand", expand},
      {"Slice", slice},
      {"Shape", shape},
      {"Concat", concat},
      {"Flatten", flatten},
      {"Reshape", reshape},
      {"Transpose", transpose},
      {"Squeeze", squeeze},
      {"Unsqueeze", unsqueeze},
      {"Split", split},
      {"Pad", pad},
      {"Size", size},
      {"Cast", cast},
  };
}

} // namespace loupe::frontend
