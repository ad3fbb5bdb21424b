// Broadcast ops: NumPy-broadcasting binary arithmetic and broadcast_to.
#include "core/ops/OpHelpers.h"

namespace loupe::ops {

namespace {

void broadcastBinaryShape(ShapeCtx &c) {
  if (c.in[0].empty() || c.in[1].empty())
    return;
  c.assignOut(0, broadcastShape(c, c.in[0], c.in[1]));
}

void binary(const char *name, const char *alias, const char *doc,
            std::function<double(double, double)> f) {
  OpRegistry::get()
      .add(name)
      .describe(doc)
      .arguments({"lhs", "rhs"})
      .setPattern(kBroadcast)
      .shape(broadcastBinaryShape)
      .kernel(binaryBroadcastKernel(std::move(f)))
      .alias(alias)
      .inplace = {{0, 0}, {1, 0}};
}

} // namespace

void registerBroadcastOps() {
  binary("broadcast_add", "__add_symbol__", "lhs + rhs with broadcasting",
         [](double a, double b) { return a + b; });
  binary("broadcast_sub", "__sub_symbol__", "lhs - rhs with broadcasting",
         [](double a, double b) { return a - b; });
  binary("broadcast_mul", "__mul_symbol__", "lhs * rhs with broadcasting",
         [](double a, double b) { return a * b; });
  binary("broadcast_div", "__div_symbol__", "lhs / rhs with broadcasting",
         [](double a, double b) { return a / b; });

  OpRegistry::get()
      .add("broadcast_to")
      .describe("broadcasts the input to `shape` (same rank; 1 stretches)")
      .param("shape", ParamKind::Tuple, "()", "target shape")
      .setPattern(kBroadcast)
      .shape([](ShapeCtx &c) {
        const Shape &t = c.attrs.getTuple("shape");
        if (c.in[0].empty())
          return;
        if (t.size() != c.in[0].size())
          c.error(cat("shape ", shapeToTuple(t), " must have the input's rank ", c.in[0].size()));
        for (size_t i = 0; i < t.size(); ++i)
          if (c.in[0][i] != 1 && c.in[0][i] != t[i])
            c.error(cat("cannot broadcast ", shapeToList(c.in[0]), " to ", shapeToTuple(t)));
        c.assignOut(0, t);
      })
      .kernel([](const Attrs &, const std::vector<const Tensor *> &in, std::vector<Tensor> &out) {
        int64_t k = 0;
        forEachIndex(out[0].shape, [&](const std::vector<int64_t> &idx) {
          out[0].data[k++] = in[0]->data[broadcastOffset(in[0]->shape, idx)];
        });
      });
}

} // namespace loupe::ops
