// DeployGraph: C source for running a built deploy graph whole from a shared library, as TVM's
// graph executor runs a deploy graph: set inputs by name, run, get outputs.
#include "backend/DeployGraph.h"

#include "backend/BuiltLibrary.h"
#include "backend/GraphExecutor.h"
#include "core/Buffers.h"
#include "core/DType.h"
#include "core/Error.h"
#include "core/Text.h"

#include <map>

namespace loupe::backend {

namespace {

// A name from the model file as a C string literal: every byte outside plain printable ASCII,
// and the quote and backslash, escaped in octal (names are untrusted text).
std::string cString(const std::string &s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\' && c != '?') {
      out += static_cast<char>(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\%03o", c);
      out += buf;
    }
  }
  return out + "\"";
}

// A name as C comment text: no "*/" can end the comment early.
std::string commentText(const std::string &s) {
  std::string out;
  for (char c : s)
    out += (c == '/' && !out.empty() && out.back() == '*') ? std::string(" /") : std::string(1, c);
  for (char &c : out)
    if (static_cast<unsigned char>(c) < 0x20)
      c = ' ';
  return out;
}

std::string shapeList(const Shape &s) {
  std::string t = "{";
  for (size_t i = 0; i < s.size(); ++i)
    t += (i ? ", " : "") + std::to_string(s[i]);
  return t + (s.empty() ? "0}" : "}");
}

// An input or output of the network as the runner and deploy.h describe it.
struct TensorPort {
  std::string name;
  int dtype = 0;
  Shape shape;
  int64_t storage = 0;
  // Its loupe_tensor_info initializer.
  std::string info() const {
    return "  {" + cString(name) + ", \"" + std::string(dtypeName(dtype)) + "\", " +
           std::to_string(shape.size()) + ", " + shapeList(shape) + ", " +
           std::to_string(numElements(shape) * dtypeBytes(dtype)) + "},\n";
  }
  // Its line in deploy.h's comment.
  std::string comment() const {
    return commentText(name) + ": " + std::string(dtypeName(dtype)) + " " + shapeToTuple(shape);
  }
};

// The entry points, the same for every network: they read the tables before them.
const char *kEntryPoints = R"C(
struct loupe_graph {
  unsigned char *storage[LOUPE_NUM_STORAGE];
  void *args[LOUPE_NUM_ARGS > 0 ? LOUPE_NUM_ARGS : 1];
  int owned[LOUPE_NUM_STORAGE];
};

loupe_graph *loupe_create(int num_threads) {
  loupe_set_num_threads(num_threads > 0 ? num_threads : 0);
  loupe_graph *g = (loupe_graph *)calloc(1, sizeof(loupe_graph));
  if (!g)
    return NULL;
  for (int i = 0; i < LOUPE_NUM_PARAMS; ++i)
    if (param_in_place[i])
      g->storage[param_storage[i]] = (unsigned char *)(loupe_params_blob + param_offset[i]);
  for (int s = 0; s < LOUPE_NUM_STORAGE; ++s) {
    if (g->storage[s])
      continue;
    /* 64-byte aligned and padded to whole vectors, zeroed, as the REPL's runtime allocates. */
    size_t bytes = ((size_t)storage_bytes[s] + 127) / 64 * 64;
    g->storage[s] = (unsigned char *)aligned_alloc(64, bytes);
    if (!g->storage[s]) {
      loupe_destroy(g);
      return NULL;
    }
    memset(g->storage[s], 0, bytes);
    g->owned[s] = 1;
  }
  for (int i = 0; i < LOUPE_NUM_PARAMS; ++i)
    if (!param_in_place[i])
      memcpy(g->storage[param_storage[i]], loupe_params_blob + param_offset[i],
             (size_t)param_bytes[i]);
  for (int a = 0; a < LOUPE_NUM_ARGS; ++a)
    g->args[a] = g->storage[arg_storage[a]];
  return g;
}

void loupe_destroy(loupe_graph *g) {
  if (!g)
    return;
  for (int s = 0; s < LOUPE_NUM_STORAGE; ++s)
    if (g->owned[s])
      free(g->storage[s]);
  free(g);
}

static int find_input(const char *name) {
  for (int i = 0; i < LOUPE_NUM_INPUTS; ++i)
    if (strcmp(loupe_inputs[i].name, name) == 0)
      return i;
  return -1;
}

int loupe_set_input(loupe_graph *g, const char *name, const void *data, size_t bytes) {
  int i = find_input(name);
  if (i < 0)
    return LOUPE_ERROR_NAME;
  if (bytes != (size_t)loupe_inputs[i].bytes)
    return LOUPE_ERROR_SIZE;
  memcpy(g->storage[input_storage[i]], data, bytes);
  return 0;
}

int loupe_run(loupe_graph *g) {
  unsigned saved = _mm_getcsr();
  /* Subnormals flushed or kept as the build ran them (FTZ and DAZ). */
  _mm_setcsr(LOUPE_FLUSH_DENORMALS ? (saved | 0x8040u) : (saved & ~0x8040u));
  for (int c = 0; c < LOUPE_NUM_CALLS; ++c)
    if (call_fn[c])
      call_fn[c](g->args + call_first_arg[c]);
  _mm_setcsr(saved);
  return 0;
}

int loupe_get_output(loupe_graph *g, int index, void *data, size_t bytes) {
  if (index < 0 || index >= LOUPE_NUM_OUTPUTS)
    return LOUPE_ERROR_NAME;
  if (bytes != (size_t)loupe_outputs[index].bytes)
    return LOUPE_ERROR_SIZE;
  memcpy(data, g->storage[output_storage[index]], bytes);
  return 0;
}

int loupe_output_index(const char *name) {
  for (int i = 0; i < LOUPE_NUM_OUTPUTS; ++i)
    if (strcmp(loupe_outputs[i].name, name) == 0)
      return i;
  return -1;
}
)C";

const char *kApi = R"C(
/* The whole network (deploy_graph.c), as TVM's graph executor runs a deploy graph: make one,
 * set its inputs by name, run, read its outputs; the params are inside deploy.so. Kernels run
 * on the same thread pool as Loupe's REPL: num_threads of loupe_create, else LOUPE_NUM_THREADS,
 * else every hardware thread — the first count asked stands for the process. One graph runs
 * one call at a time; make one per thread that runs it. Sizes are in bytes, tensors row-major
 * in the dtypes below (bfloat16 as its uint16 bits). */
typedef struct loupe_graph loupe_graph;
typedef struct {
  const char *name;
  const char *dtype; /* "float32", "uint8", ... */
  int ndim;
  int64_t shape[8];
  int64_t bytes;
} loupe_tensor_info;
enum { LOUPE_ERROR_NAME = -1, LOUPE_ERROR_SIZE = -2 };
extern const loupe_tensor_info loupe_inputs[];  /* the data inputs, LOUPE_NUM_INPUTS */
extern const loupe_tensor_info loupe_outputs[]; /* the outputs, LOUPE_NUM_OUTPUTS */
/* NULL when memory runs out. */
loupe_graph *loupe_create(int num_threads);
void loupe_destroy(loupe_graph *g);
/* 0, LOUPE_ERROR_NAME (no such input) or LOUPE_ERROR_SIZE (bytes is not the input's). */
int loupe_set_input(loupe_graph *g, const char *name, const void *data, size_t bytes);
int loupe_run(loupe_graph *g);
/* Copies output `index` out: 0, LOUPE_ERROR_NAME or LOUPE_ERROR_SIZE. */
int loupe_get_output(loupe_graph *g, int index, void *data, size_t bytes);
/* An output's index by name, or -1. */
int loupe_output_index(const char *name);
int loupe_set_num_threads(int n);
)C";

} // namespace

DeploySource deploySource(const Graph &g) {
  auto lib = builtLibrary(g);
  if (!lib)
    fail("the current graph was not built; run :build first");
  const IndexedGraph &idx = g.index();
  const auto &sid = g.attr("storage_id")->ints;
  const auto &shapes = g.attr("shape")->shapes;
  const auto &dtypes = g.attr("dtype")->ints;
  std::vector<StorageSlot> slots = storageSlots(g);
  std::map<int64_t, const StorageSlot *> slotOf;
  int64_t numStorage = 0;
  for (const StorageSlot &s : slots) {
    slotOf[s.id] = &s;
    numStorage = std::max(numStorage, s.id + 1);
  }
  DeploySource out;
  std::string c = "/* deploy_graph.c: made by Loupe's :export — runs the built network whole. */\n"
                  "#include \"deploy.h\"\n\n#include <stdlib.h>\n#include <string.h>\n"
                  "#include <xmmintrin.h>\n\n"
                  "extern const unsigned char loupe_params_blob[];\n\n";
  std::string storageBytes, paramStorage, paramOffset, paramBytes, inPlace;
  std::vector<int64_t> bytesOf(static_cast<size_t>(numStorage), 1);
  for (const StorageSlot &s : slots)
    bytesOf[static_cast<size_t>(s.id)] = std::max<int64_t>(s.bytes, 1);
  for (int64_t b : bytesOf)
    storageBytes += (storageBytes.empty() ? "" : ", ") + std::to_string(b);
  // Params: their bytes in one blob, 64-aligned each, in the graph's dtype (converted when held
  // in another, as the REPL's runtime binds them); read in place where the param's storage is
  // its alone, else copied in. The other variables are the network's inputs.
  std::vector<TensorPort> inputs, outputs;
  size_t numParams = 0;
  for (uint32_t nid : idx.argNodes) {
    const std::string &name = idx.nodes[nid].node->name;
    uint32_t e = idx.entryId(nid, 0);
    auto p = lib->params.find(name);
    if (p == lib->params.end()) {
      inputs.push_back({name, static_cast<int>(dtypes[e]), shapes[e], sid[e]});
      continue;
    }
    const StoredTensor &t = p->second;
    if (t.shape() != shapes[e])
      fail("export: param '", name, "' has shape ", shapeToList(t.shape()),
           " but the graph was built for ", shapeToList(shapes[e]));
    out.paramsBin.resize((out.paramsBin.size() + 63) / 64 * 64, '\0');
    size_t offset = out.paramsBin.size();
    size_t bytes = t.numBytes();
    if (t.dtype() == dtypes[e]) {
      out.paramsBin.append(static_cast<const char *>(t.bytes()), bytes);
    } else { // held in another dtype: its values in the graph's, as the REPL's runtime binds it
      int dt = static_cast<int>(dtypes[e]);
      bytes = static_cast<size_t>(numElements(shapes[e]) * dtypeBytes(dt));
      out.paramsBin.resize(offset + bytes);
      copyToBuffer(t.load(), dt, out.paramsBin.data() + offset);
    }
    bool alone = slotOf.at(sid[e])->entries.size() == 1;
    paramStorage += (numParams ? ", " : "") + std::to_string(sid[e]);
    paramOffset += (numParams ? ", " : "") + std::to_string(offset);
    paramBytes += (numParams ? ", " : "") + std::to_string(bytes);
    inPlace += (numParams ? ", " : "") + std::string(alone ? "1" : "0");
    ++numParams;
  }
  // The kernel calls in node order, each with its arguments' storage.
  std::string args, firstArg, fns;
  size_t numArgs = 0, numCalls = 0;
  for (uint32_t nid = 0; nid < idx.numNodes(); ++nid) {
    const Node &n = *idx.nodes[nid].node;
    if (n.isVariable())
      continue;
    std::string fn = n.parsed.getStr("func_name");
    if (!lib->lowered.count(fn))
      fail("export: node ", n.name, " calls ", fn, ", which the build did not make");
    firstArg += (numCalls ? ", " : "") + std::to_string(numArgs);
    std::vector<int64_t> callArgs;
    for (const auto &in : idx.nodes[nid].inputs)
      callArgs.push_back(sid[idx.entryId(in)]);
    for (uint32_t k = 0; k < n.numOutputs(); ++k)
      callArgs.push_back(sid[idx.entryId(nid, k)]);
    for (int64_t a : callArgs)
      args += (numArgs++ ? ", " : "") + std::to_string(a);
    // A reshape whose output shares its input's storage has nothing to do (as in the REPL).
    bool nothing =
        n.parsed.getBool("reshape_only") && callArgs.size() == 2 && callArgs[0] == callArgs[1];
    fns += std::string(numCalls ? ",\n" : "") + "    " + (nothing ? "0" : fn + "_packed");
    ++numCalls;
  }
  for (size_t k = 0; k < idx.heads.size(); ++k) {
    uint32_t e = idx.entryId(idx.heads[k]);
    std::string name = k < lib->outputNames.size() ? lib->outputNames[k]
                                                   : idx.nodes[idx.heads[k].nodeId].node->name;
    outputs.push_back({name, static_cast<int>(dtypes[e]), shapes[e], sid[e]});
  }
  std::string inputInfo, inputStorage, outputInfo, outputStorage;
  for (const TensorPort &t : inputs) {
    inputInfo += t.info();
    inputStorage += (inputStorage.empty() ? "" : ", ") + std::to_string(t.storage);
  }
  for (const TensorPort &t : outputs) {
    outputInfo += t.info();
    outputStorage += (outputStorage.empty() ? "" : ", ") + std::to_string(t.storage);
  }
  auto table = [](const std::string &type, const std::string &name, const std::string &values) {
    return "static const " + type + " " + name + "[] = {" + (values.empty() ? "0" : values) +
           "};\n";
  };
  c += "#define LOUPE_NUM_STORAGE " + std::to_string(numStorage) + "\n#define LOUPE_NUM_ARGS " +
       std::to_string(numArgs) + "\n#define LOUPE_NUM_CALLS " + std::to_string(numCalls) +
       "\n#define LOUPE_NUM_PARAMS " + std::to_string(numParams) +
       "\n#define LOUPE_FLUSH_DENORMALS " + (lib->flushDenormals ? "1" : "0") + "\n\n";
  c += table("int64_t", "storage_bytes", storageBytes);
  c += table("int32_t", "param_storage", paramStorage);
  c += table("int64_t", "param_offset", paramOffset);
  c += table("int64_t", "param_bytes", paramBytes);
  c += table("int", "param_in_place", inPlace);
  c += table("int32_t", "input_storage", inputStorage);
  c += table("int32_t", "output_storage", outputStorage);
  c += table("int32_t", "arg_storage", args);
  c += table("int32_t", "call_first_arg", firstArg);
  c += "static void (*const call_fn[])(void **) = {\n" + (fns.empty() ? "    0" : fns) + "};\n\n";
  c += "const loupe_tensor_info loupe_inputs[] = {\n" +
       (inputs.empty() ? std::string("  {0, 0, 0, {0}, 0},\n") : inputInfo) + "};\n";
  c += "const loupe_tensor_info loupe_outputs[] = {\n" + outputInfo + "};\n";
  c += kEntryPoints;
  out.graphC = c;
  std::string h = kApi;
  h += "#define LOUPE_NUM_INPUTS " + std::to_string(inputs.size()) +
       "\n#define LOUPE_NUM_OUTPUTS " + std::to_string(outputs.size()) + "\n/* Inputs:\n";
  for (const TensorPort &t : inputs)
    h += " *   " + t.comment() + "\n";
  h += " * Outputs:\n";
  for (size_t k = 0; k < outputs.size(); ++k)
    h += " *   " + std::to_string(k) + ": " + outputs[k].comment() + "\n";
  h += " */\n";
  out.header = h;
  out.paramsS = "/* params.S: made by Loupe's :export — the params' bytes inside deploy.so. */\n"
                "  .section .rodata\n  .balign 64\n  .globl loupe_params_blob\n"
                "  .hidden loupe_params_blob\nloupe_params_blob:\n  .incbin \"params.bin\"\n"
                "  .byte 0\n  .section .note.GNU-stack,\"\",@progbits\n";
  return out;
}

} // namespace loupe::backend
