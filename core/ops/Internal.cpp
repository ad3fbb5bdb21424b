// Graph-internal ops that passes create: tvm_op (a fused kernel of a deploy graph, which runs
// the function `func_name` of the graph's module) and __undef__ (an output that no longer has
// a value, such as batch_norm's statistics after SimplifyInference).
#include "core/ops/OpHelpers.h"

namespace loupe::ops {

void registerInternalOps() {
  OpDef &op = OpRegistry::get()
                  .add("tvm_op")
                  .describe("a fused kernel of a compiled graph, calling func_name")
                  .param("num_outputs", ParamKind::Int, std::nullopt, "outputs of the kernel")
                  .param("num_inputs", ParamKind::Int, std::nullopt, "inputs of the kernel")
                  .param("flatten_data", ParamKind::Bool, "0", "inputs passed as 1-D")
                  .param("func_name", ParamKind::Str, std::nullopt, "the fused function")
                  .param("reshape_only", ParamKind::Bool, "0",
                         "the function only reshapes its one input (opt_level 3 sets it): "
                         "PlanMemory may give the output the input's storage, and then the "
                         "executor skips the call")
                  .setPattern(kOpaque);
  op.variadic = true;
  op.minInputs = 0; // a function of constants only (zeros, full, …) takes no arguments
  op.numOutputsFn = [](const Attrs &a) { return static_cast<int>(a.getInt("num_outputs")); };

  // No shape, type or kernel: reading it is an error the interpreter reports.
  OpRegistry::get()
      .add("__undef__")
      .describe("an undefined value left by a rewrite (never computed)")
      .arguments({})
      .setPattern(kOpaque);
}

} // namespace loupe::ops
