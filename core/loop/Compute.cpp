// Compute: building tensor-expression stages and walking the compute graph.
#include "core/loop/Compute.h"
#include "core/loop/Visitor.h"

#include "core/DType.h"

#include <cmath>
#include <cstdint>
#include <functional>
#include <set>

namespace loupe::loop {

ComputeRef placeholder(const std::string &name, const Shape &shape, int dtype) {
  auto c = std::make_shared<Compute>();
  c->name = name;
  c->shape = shape;
  c->dtype = dtype;
  c->placeholder = true;
  c->tag = "placeholder";
  return c;
}

ComputeRef compute(const Shape &shape, int dtype, const IndexFn &fn, const std::string &name,
                   const std::string &tag, const std::string &prefix,
                   std::vector<std::string> axisNames) {
  auto c = std::make_shared<Compute>();
  c->name = name;
  c->shape = shape;
  c->dtype = dtype;
  c->tag = tag;
  for (size_t d = 0; d < shape.size(); ++d)
    c->axes.push_back(var(d < axisNames.size() ? axisNames[d] : prefix + std::to_string(d)));
  c->body = fn(c->axes);
  return c;
}

IterVar reduceAxis(int64_t extent, const std::string &name) { return {var(name), extent, nullptr}; }

Expr read(const ComputeRef &t, std::vector<Expr> indices) {
  ExprNode n(ExprKind::TensorRead);
  n.dtype = t->dtype;
  n.name = t->name;
  n.tensor = t;
  n.args = std::move(indices);
  return std::make_shared<const ExprNode>(std::move(n));
}

Expr tensorRead(const ComputeRef &t, std::vector<Expr> indices) {
  return read(t, std::move(indices));
}

std::vector<ComputeRef> inputsOf(const Compute &c) {
  struct Reads : IRVisitor {
    std::vector<ComputeRef> out;
    std::set<const Compute *> seen;
    void visitExpr(const Expr &e) override {
      if (e->kind == ExprKind::TensorRead && seen.insert(e->tensor.get()).second)
        out.push_back(e->tensor);
      IRVisitor::visitExpr(e);
    }
  } reads;
  if (c.body)
    reads.visitExpr(c.body);
  return reads.out;
}

std::vector<ComputeRef> topoOrder(const std::vector<ComputeRef> &outputs) {
  std::vector<ComputeRef> order;
  std::set<const Compute *> done;
  std::function<void(const ComputeRef &)> visit = [&](const ComputeRef &t) {
    if (done.count(t.get()))
      return;
    done.insert(t.get());
    for (const ComputeRef &in : inputsOf(*t))
      visit(in);
    order.push_back(t);
  };
  for (const ComputeRef &o : outputs)
    visit(o);
  return order;
}

Expr constant(double v, int dtype) {
  if (dtypeIsFloat(dtype))
    return floatImm(v, dtype);
  // Integers compute in 64 bits: a bound beyond that range (clip's default ±FLT_MAX on an int8
  // tensor) saturates, as converting it would be undefined; NaN is 0.
  int64_t i = std::isnan(v) ? 0
              : v >= 0x1p63 ? INT64_MAX
              : v < -0x1p63 ? INT64_MIN
                            : static_cast<int64_t>(v);
  return intImm(i, dtype);
}

} // namespace loupe::loop
