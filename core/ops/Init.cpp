// Init ops: zeros, ones and full — tensors made from attributes alone (no inputs).
#include "core/ops/OpHelpers.h"

namespace loupe::ops {

namespace {

OpDef &initOp(const char *name, const char *doc, std::function<double(const Attrs &)> value) {
  std::vector<std::string> dtypes;
  for (int i = 0; i < kNumDTypes; ++i)
    dtypes.emplace_back(dtypeName(i));
  return OpRegistry::get()
      .add(name)
      .describe(doc)
      .arguments({})
      .param("shape", ParamKind::Tuple, "()", "the output shape")
      .param("dtype", ParamKind::Enum, "float32", "the output dtype", dtypes)
      .setPattern(kOutEWiseFusable)
      .shape([](ShapeCtx &c) {
        const auto &s = c.attrs.getTuple("shape");
        for (int64_t d : s)
          if (d <= 0)
            c.error(cat("shape ", shapeToTuple(s), " must have positive dimensions"));
        c.assignOut(0, s);
      })
      .type([](TypeCtx &c) { c.assignOut(0, *dtypeFromName(c.attrs.getStr("dtype"))); })
      .kernel(
          [value](const Attrs &a, const std::vector<const Tensor *> &, std::vector<Tensor> &out) {
            std::fill(out[0].data.begin(), out[0].data.end(), value(a));
          });
}

} // namespace

void registerInitOps() {
  initOp("zeros", "a tensor of zeros", [](const Attrs &) { return 0.0; });
  initOp("ones", "a tensor of ones", [](const Attrs &) { return 1.0; });
  initOp("full", "a tensor filled with fill_value", [](const Attrs &a) {
    return a.getFloat("fill_value");
  }).param("fill_value", ParamKind::Float, std::nullopt, "the value");
}

} // namespace loupe::ops
