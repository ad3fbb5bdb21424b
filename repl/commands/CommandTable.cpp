// CommandTable: every `:command` of the workbench in one flat list — name, usage, summary and
// handler — in the order :help lists them.
#include "repl/commands/Commands.h"

#include <cstring>

namespace loupe {

std::vector<Engine::Command> Commands::table() {
  return {
      {"help", "[CMD]", "lists the commands, or describes one", help},
      {"graph", "EXPR", "makes a symbol the current graph (nnvm.graph.create)", graph},
      {"grad", "OUT wrt IN …", "the gradient graph of OUT with respect to the inputs IN", grad},
      {"ir", "[KEY …]", "prints the graph as PrintGraphIR does, optionally with attributes joined",
       ir},
      {"relay", "",
       "prints the graph as a Relay module (seed 003's print(mod)); FuseOps groups as fn literals",
       relay},
      {"nodes", "[N]", "the node table (graph.index.nodes), or node N", nodes},
      {"attr", "KEY [N]", "a graph attribute as graph.json_attr(KEY) prints it, or its entry N",
       attr},
      {"setattr", "KEY VALUE [TYPE]",
       "sets a graph attribute as graph._set_json_attr does (TYPE: str, int, size_t, list_int, "
       "list_str, list_shape, list_layout, dict_str_int; default str)",
       setAttr},
      {"open", "KEY [NAME]",
       "opens a graph held in an attribute as a new step: precompute_graph, or function NAME of "
       "module",
       open},
      {"lower", "[FUNC] [nodes]",
       "the lowered loops of a fused function of the module (all of them without FUNC); with "
       "nodes, numbered, each store marked with the graph nodes it computes",
       lower},
      {"schedule", "FUNC", "the schedule steps the default x86 schedule applied to a function",
       schedule},
      {"space", "FUNC",
       "a function's tuning knobs at opt_level 3: each one's candidates and the rule's choice, "
       "and the size of the space",
       space},
      {"apply", "P1 [P2 …]", "applies passes in order; the result is a new history step", apply},
      {"set", "[KEY VALUE]",
       "sets an option: opt_level N, fuse_opt_level N (FuseOps; -1 follows opt_level), "
       "fusion_rules A|B|C, nofuse OP[,OP]|none, target llvm [-mcpu=NAME] [-mattr=+F,-G], "
       "memory_limit SIZE|none (what allocations are checked against instead of the machine's "
       "memory), precision fp32|bf16 (what :build computes convolutions and matrix products in), "
       "tuning on|off|FILE (the records :build applies and :tune adds to), timings "
       "shown|hidden (:profile's measured figures and :where's host instruction counts as "
       "dashes, for sessions), disabled_pass P[,P]|none (passes :build leaves out), denormals "
       "auto|keep|flush (the next :build's kernels flush subnormals to zero, or keep IEEE "
       "arithmetic; auto flushes at opt_level 3)",
       set},
      {"groups", "", "the fusion groups: roots, masters, one line per node, then each group",
       groups},
      {"why", "A B", "explains from the fusion rules why nodes A and B did or did not fuse", why},
      {"precision", "NODE",
       "why ToMixedPrecision (:build precision=bf16) computes a node in bfloat16 or keeps it "
       "float32",
       precision},
      {"compare", "A B",
       "two history steps' fusion side by side (each partitioned or built): the groups only one "
       "has, the nodes that changed group, the functions of each and, where both were profiled, "
       "their times",
       compare},
      {"layerwise", "A B|DIR [NAME=random|zeros|ones|NUMBER|FILE.npy …] [seed=N] [top=K] [sqnr=DB]",
       "runs two history steps' graphs on the same inputs (the bound params, the others random "
       "or given) and compares every value both compute under one node name: SQNR in dB, the "
       "largest absolute and relative errors, worst first (a quantize's steps in real units); "
       "sqnr= names the first value under it in graph order. Against DIR, step A is compared "
       "with the tensors another runtime wrote there (NAME.npy, its inputs among them); the "
       "viewer colours the compared step's nodes by SQNR",
       layerwise},
      {"quantize",
       "[calibrate=random|FILE.npy] [NAME=FILE.npy …] [samples=N] [per_channel=on|off] "
       "[skip=NODE,…|first_last] [seed=N]",
       "a new step with every conv2d and dense whose weight is a bound param between "
       "quantize/dequantize pairs: int8 weights (symmetric, per output channel unless "
       "per_channel=off), uint8 data and outputs calibrated (min/max) on N runs of the reference "
       "interpreter; :apply FakeQuantizationToInteger then makes it integer, :layerwise shows "
       "what each layer lost",
       quantize},
      {"trace", "on|off", "prints every pass applied and the graph after it", trace},
      {"instrument", "[KIND …]",
       "adds pass instruments: print-before P|all, print-after P|all, print-changed P|all, "
       "names, timing, effects; `off` removes all; no argument lists them",
       instrument},
      {"timing", "", "prints the timing instrument's tree of pass times (µs) and clears it",
       timing},
      {"pipeline", "P1,P2(opt=v),… [opt_level=N] [disabled=A,B] [required=C]",
       "runs passes as a Sequential under a pass context, with Relay's rules", pipeline},
      {"explain", "PASS", "would PASS run in a pipeline now, and why; what it needs and provides",
       explain},
      {"diff", "[A] [B]", "what changed between two history steps (default: the last step)", diff},
      {"load-pass", "FILE.so",
       "loads user-written passes from a shared library (a bare name is searched in "
       "$LOUPE_PLUGIN_PATH, then in the build's plugins/ folder)",
       loadPass},
      {"passes", "", "lists the registered passes", passes},
      {"ops", "[NAME|TEXT]", "lists the ops (with a filter), or describes one op", ops},
      {"load", "FILE [DIM=N …]",
       "loads an NNVM graph JSON file, or an ONNX model (.onnx, its initializers "
       "as params; DIM=N sizes its inputs' symbolic dimensions), as a new step",
       load},
      {"dot", "FILE [placed]",
       "writes the current graph as Graphviz DOT (fusion groups as clusters); placed: with the "
       "viewer's positions, for neato -n2",
       dot},
      {"save", "FILE", "saves the current graph as NNVM graph JSON", save},
      {"history", "[times]", "lists the history steps; * marks the current one", history},
      {"undo", "", "goes back one history step", undo},
      {"redo", "", "goes forward one history step", redo},
      {"record", "FILE", "writes the session so far to FILE and keeps recording until :stop",
       record},
      {"stop", "", "stops recording", stop},
      {"quit", "", "ends the REPL or the script (as Ctrl-D does at the prompt)", quit},
      {"vars", "", "lists the symbols defined so far (or what a loaded graph defined)", vars},
      {"inputs", "", "the current graph's data inputs and bound params: name, shape, dtype, layout",
       inputs},
      {"outputs", "", "the current graph's outputs: name, shape, dtype, layout", outputs},
      {"target", "", "what LLVM detects about this machine (triple, CPU, SIMD features)", target},
      {"build", std::string(kBuildUsage).substr(std::strlen(":build ")),
       "nnvm.compiler.build: the passes of the opt level (from 2, PrecomputePrune folds what "
       "depends "
       "on params only), then every fused function lowered and compiled; prints the deploy graph, "
       "which becomes a new step",
       build},
      {"run",
       "[NAME=random|zeros|ones|NUMBER|FILE.npy|FILE.npz[:KEY]|FILE.pb|FILE.bin …] [seed=N] "
       "[save=DIR|FILE.npz] [compare=FILE.npy|FILE.npz|DIR] [rtol=X] [atol=X] [top=K] "
       "[check=on|off]",
       "runs the built graph; per output its shape, dtype, values, sum and the error against the "
       "reference interpreter (check=off skips it), against expected outputs (compare=: by "
       "name, else by position; allclose's share within atol + rtol·|expected|, NumPy's "
       "defaults, and the worst elements), its K largest values (top=); save= writes each "
       "output as DIR/NAME.npy or into one .npz; inputs from .npy, .npz (the array named as the "
       "input), ONNX .pb or raw .bin files",
       run},
      {"bisect", "[NAME=random|zeros|ones|NUMBER|FILE.npy …] [seed=N] [tol=X] [mode=local|forward]",
       "names the kernel a difference from the reference interpreter comes from: each kernel runs "
       "on the reference's inputs (mode=forward: the built graph in turn) and the first whose "
       "output differs by more than tol (default 1e-4) of its largest magnitude is named, with "
       "its inputs and whether float rounding explains it; when none does alone but the outputs "
       "drift, the largest difference of its own upstream",
       bisect},
      {"buffers", "", "the storage of the built graph: each slot's size, entries and lifetime",
       buffers},
      {"profile", "[N] [sort=time|order] [top=K]",
       "runs the built graph N times (default 10) on random inputs and the bound params: each "
       "kernel's median time, share, GFLOP/s, % of its dtype's peak and the layers it fused, "
       "longest first (Ctrl-C keeps the finished runs)",
       profile},
      {"tune", "[FUNC|all|check] [trials=N] [time=SECONDS] [workers=N] [check=RUNS]",
       "searches the built graph's kernels' knob spaces on this machine (measured, every "
       "measurement logged; Ctrl-C keeps what was found), then runs the network at its rules "
       "and at the points found, in turns (check=RUNS runs each, default 10, 0 skips; "
       ":tune check alone): :build applies the best that is no slower in the network",
       tune},
      {"export", "DIR",
       "writes the built graph for deployment: deploy.json, deploy.so (loadable from C), "
       "deploy.h and params/NAME.npy",
       exportBuild},
      {"model", "[NAME [batch=N] [shape=(C, H, W)] [classes=N] [dtype=TYPE] [seed=N]]",
       "a network of the built-in zoo as a new graph, with params :build binds; no NAME lists "
       "them",
       model},
      {"llvm", "[FUNC]",
       "the optimised LLVM IR of a built function, commented with the loop line and nodes each "
       "run of instructions is for (the whole module without FUNC)",
       llvm},
      {"asm", "[FUNC]",
       "the host assembly of a built function, commented with the loop line and nodes each run "
       "of instructions is for (the whole module without FUNC)",
       assembly},
      {"where", "NODE",
       "where a build computes a node of the graph it partitioned: its kernel, its loop lines, "
       "its instructions and its share of the kernel's arithmetic and measured time",
       where},
      {"cache", "",
       "the kernel cache: its folder, entries and size, and what the last :build found in it "
       "(:set cache on|off|clear)",
       cache},
  };
}

} // namespace loupe
