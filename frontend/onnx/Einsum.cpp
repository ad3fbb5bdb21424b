// Einsum: the ONNX Einsum converter, an equation contracted as transposes, sums and
// batch_matmuls.
#include "frontend/onnx/Converters.h"

#include "core/Error.h"
#include "core/Shape.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <string>
#include <vector>

namespace loupe::frontend {

namespace {

// Einsum as transposes, sums and batch_matmuls (the tensordot rule): an index only one operand
// has and nothing later needs is summed there; two operands are contracted by moving their
// shared kept indices (batch), own indices (free) and shared summed indices (contracted) into
// place, a batch_matmul of (batch, free, contracted) by (batch, contracted, free), and a
// reshape back; operands are contracted left to right, and the result transposed to the output's
// order. An ellipsis stands for the same leading axes in every operand; a repeated index in one
// operand takes its diagonal first.
struct EinsumTerm {
  NodeEntry value;
  std::string labels; // one character per axis
  Shape shape;
};

std::vector<NodeEntry> einsum(Importer &im, const onnx::NodeProto &n) {
  im.only(n, {"equation"});
  std::string eq;
  for (char c : im.attrString(n, "equation", ""))
    if (c != ' ')
      eq += c;
  size_t arrow = eq.find("->");
  std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> specs = {""};
  for (char c : lhs)
    c == ',' ? specs.push_back("") : void(specs.back() += c);
  if (static_cast<int>(specs.size()) != n.input_size())
    fail(im.where(n), ": the equation '", eq, "' has ", specs.size(), " operands, the node ",
         n.input_size(), " inputs");
  // Each operand's labels, an ellipsis expanded to the upper-case letters A, B, … of the axes it
  // covers, counted from the right so that operands of different ranks line up.
  std::vector<EinsumTerm> terms;
  size_t ellipsis = 0;
  int diagonals = 0;
  auto expand = [&](std::string spec, size_t rank) {
    size_t at = spec.find("...");
    if (at == std::string::npos)
      return spec;
    size_t covered = rank + 3 - spec.size();
    std::string dims;
    for (size_t i = 0; i < covered; ++i)
      dims += static_cast<char>('A' + (ellipsis - covered) + i);
    return spec.substr(0, at) + dims + spec.substr(at + 3);
  };
  for (size_t k = 0; k < specs.size(); ++k) {
    Shape shape = shapeNow(im, n, static_cast<int>(k), 0);
    if (specs[k].find("...") != std::string::npos)
      ellipsis = std::max(ellipsis, shape.size() + 3 - specs[k].size());
    terms.push_back({im.input(n, static_cast<int>(k)), specs[k], shape});
  }
  for (EinsumTerm &t : terms) {
    for (char c : t.labels)
      if (c != '.' && !std::islower(static_cast<unsigned char>(c)))
        fail(im.where(n), ": index '", std::string(1, c), "' is not a lower-case letter");
    t.labels = expand(t.labels, t.shape.size());
    if (t.labels.size() != t.shape.size())
      fail(im.where(n), ": the equation's term '", t.labels, "' does not match rank ",
           t.shape.size());
    // A repeated index is the term's diagonal: the term times an identity over the two axes,
    // summed over the second.
    for (size_t i = 0; i < t.labels.size(); ++i)
      for (size_t j = t.labels.find(t.labels[i], i + 1); j != std::string::npos;
           j = t.labels.find(t.labels[i], i + 1)) {
        if (t.shape[i] != t.shape[j])
          fail(im.where(n), ": the repeated index '", std::string(1, t.labels[i]),
               "' spans axes of sizes ", t.shape[i], " and ", t.shape[j]);
        int dt = im.inferredDType(t.value);
        if (dt < 0)
          fail(im.where(n), ": the dtype of an operand with a repeated index must be known");
        Shape eyeShape(t.shape.size(), 1);
        eyeShape[i] = eyeShape[j] = t.shape[i];
        Tensor eye(eyeShape, dt);
        for (int64_t d = 0; d < t.shape[i]; ++d)
          eye.data[static_cast<size_t>(d * t.shape[i] + d)] = 1;
        std::string diag = "_diagonal" + std::to_string(diagonals++);
        t.value =
            im.op(n, "sum", {{"axis", tupleText({static_cast<int64_t>(j)})}},
                  {im.op(n, "broadcast_mul", {}, {t.value, im.constantParam(n, diag + "_eye", eye)},
                         diag + "_masked")},
                  diag);
        t.labels.erase(j, 1);
        t.shape.erase(t.shape.begin() + static_cast<std::ptrdiff_t>(j));
      }
  }
  // The output: as written, or every index that appears once, ellipsis axes first, in order.
  std::string out;
  if (arrow != std::string::npos) {
    out = eq.substr(arrow + 2);
    if (out.find("...") != std::string::npos)
      out = expand(out, ellipsis + out.size() - 3); // every ellipsis axis
  } else {
    for (size_t i = 0; i < ellipsis; ++i)
      out += static_cast<char>('A' + i);
    std::string once;
    for (char c = 'a'; c <= 'z'; ++c) {
      size_t count = 0;
      for (const EinsumTerm &t : terms)
        count += static_cast<size_t>(std::count(t.labels.begin(), t.labels.end(), c));
      if (count == 1)
        once += c;
    }
    out += once;
  }
  std::map<char, int64_t> size;
  for (const EinsumTerm &t : terms)
    for (size_t i = 0; i < t.labels.size(); ++i) {
      auto [it, fresh] = size.insert({t.labels[i], t.shape[i]});
      if (!fresh && it->second != t.shape[i])
        fail(im.where(n), ": index '", std::string(1, t.labels[i]), "' has sizes ", it->second,
             " and ", t.shape[i]);
    }
  for (char c : out)
    if (!size.count(c))
      fail(im.where(n), ": output index '", std::string(1, c), "' is in no operand");
  int step = 0;
  auto name = [&] { return "_" + std::to_string(step++); };
  auto tuple = [](const std::vector<int64_t> &v) { return tupleText(v); };
  auto shapeOf = [&](const std::string &labels) {
    Shape s;
    for (char c : labels)
      s.push_back(size.at(c));
    return s;
  };
  // Where each of `to`'s labels stands in `from`: the axes of a transpose from one to the other.
  auto permutation = [](const std::string &from, const std::string &to) {
    std::vector<int64_t> perm;
    for (char c : to)
      perm.push_back(static_cast<int64_t>(from.find(c)));
    return perm;
  };
  // Sums the axes of `t` whose labels nothing else needs (not in `keep`).
  auto sumUnneeded = [&](EinsumTerm t, const std::string &keep) {
    std::vector<int64_t> axes;
    std::string kept;
    for (size_t i = 0; i < t.labels.size(); ++i) {
      if (keep.find(t.labels[i]) == std::string::npos)
        axes.push_back(static_cast<int64_t>(i));
      else
        kept += t.labels[i];
    }
    if (axes.empty())
      return t;
    t.value = im.op(n, "sum", {{"axis", tuple(axes)}}, {t.value}, name());
    // A sum over every axis leaves one element, shape (1,), labelled by nothing.
    return EinsumTerm{t.value, kept, kept.empty() ? Shape{1} : shapeOf(kept)};
  };
  // `t` with its axes in the order of `labels` (a permutation of its own).
  auto arrange = [&](EinsumTerm t, const std::string &labels) {
    if (t.labels != labels)
      t.value = im.op(n, "transpose", {{"axes", tuple(permutation(t.labels, labels))}}, {t.value},
                      name());
    return EinsumTerm{t.value, labels, shapeOf(labels)};
  };
  auto reshape = [&](const NodeEntry &v, const Shape &to) {
    return im.op(n, "reshape", {{"shape", tuple(to)}}, {v}, name());
  };
  auto needed = [&](size_t from) { // labels of the output and of terms from `from` on
    std::string keep = out;
    for (size_t k = from; k < terms.size(); ++k)
      keep += terms[k].labels;
    return keep;
  };
  EinsumTerm acc = sumUnneeded(terms[0], needed(1));
  for (size_t k = 1; k < terms.size(); ++k) {
    EinsumTerm b = sumUnneeded(terms[k], needed(k + 1) + acc.labels);
    acc = sumUnneeded(acc, needed(k + 1) + b.labels);
    std::string keep = needed(k + 1), batch, freeA, freeB, contracted;
    for (char c : acc.labels)
      (b.labels.find(c) == std::string::npos ? freeA
       : keep.find(c) != std::string::npos   ? batch
                                             : contracted) += c;
    for (char c : b.labels)
      if (acc.labels.find(c) == std::string::npos)
        freeB += c;
    auto prod = [&](const std::string &labels) { return numElements(shapeOf(labels)); };
    EinsumTerm a2 = arrange(acc, batch + freeA + contracted),
               b2 = arrange(b, batch + contracted + freeB);
    NodeEntry lhs = reshape(a2.value, {prod(batch), prod(freeA), prod(contracted)}),
              rhs = reshape(b2.value, {prod(batch), prod(contracted), prod(freeB)});
    NodeEntry product = im.op(n, "batch_matmul", {}, {lhs, rhs}, name());
    std::string labels = batch + freeA + freeB;
    Shape shape = labels.empty() ? Shape{1} : shapeOf(labels);
    acc = {reshape(product, shape), labels, shape};
  }
  acc = sumUnneeded(acc, out);
  if (out.empty())
    return {im.op(n, "copy", {}, {acc.value})};
  return {im.op(n, "transpose", {{"axes", tuple(permutation(acc.labels, out))}}, {acc.value})};
}

} // namespace

ConverterList einsumConverters() {
  return {
      {"Einsum", einsum},
  };
}

} // namespace loupe::frontend
