// tvm_op: one fused kernel in a deploy graph; it runs the function `func_name` of the graph's
// module (see FusedModule and the interpreter).
#include "core/ops/OpHelpers.h"

namespace loupe::ops {

void registerTvmOp() {
  OpDef &op = OpRegistry::get()
                  .add("tvm_op")
                  .describe("a fused kernel of a compiled graph, calling func_name")
                  .param("num_outputs", ParamKind::Int, std::nullopt, "outputs of the kernel")
                  .param("num_inputs", ParamKind::Int, std::nullopt, "inputs of the kernel")
                  .param("flatten_data", ParamKind::Bool, "0", "inputs passed as 1-D")
                  .param("func_name", ParamKind::Str, std::nullopt, "the fused function")
                  .setPattern(kOpaque);
  op.variadic = true;
  op.numOutputsFn = [](const Attrs &a) { return static_cast<int>(a.getInt("num_outputs")); };
}

} // namespace loupe::ops
