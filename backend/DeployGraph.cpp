// DeployGraph: C source for running a built deploy graph whole from a shared library, as TVM's
// graph executor runs a deploy graph: set inputs by name, run, get outputs.
#include "backend/DeployGraph.h"

#include "backend/BuiltLibrary.h"
#include "backend/GraphExecutor.h"
#include "core/Buffers.h"
#include "core/DType.h"
#include "core/Error.h"
#include "core/Text.h"

#include <cstring>
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
  const loupe_network *net;
  unsigned char **storage;
  void **args;
  int *owned;
};

static loupe_graph *create(int num_threads, const loupe_network *net) {
  loupe_set_num_threads(num_threads > 0 ? num_threads : 0);
  loupe_graph *g = (loupe_graph *)calloc(1, sizeof(loupe_graph));
  if (!g)
    return NULL;
  g->net = net;
  g->storage = (unsigned char **)calloc((size_t)net->num_storage, sizeof(unsigned char *));
  g->owned = (int *)calloc((size_t)net->num_storage, sizeof(int));
  g->args = (void **)calloc((size_t)(net->num_args > 0 ? net->num_args : 1), sizeof(void *));
  if (!g->storage || !g->owned || !g->args) {
    loupe_destroy(g);
    return NULL;
  }
  for (int i = 0; i < net->num_params; ++i)
    if (net->param_in_place[i])
      g->storage[net->param_storage[i]] =
          (unsigned char *)(loupe_params_blob + net->param_offset[i]);
  for (int s = 0; s < net->num_storage; ++s) {
    if (g->storage[s])
      continue;
    /* 64-byte aligned and padded to whole vectors, zeroed, as the REPL's runtime allocates. */
    size_t bytes = ((size_t)net->storage_bytes[s] + 127) / 64 * 64;
    g->storage[s] = (unsigned char *)aligned_alloc(64, bytes);
    if (!g->storage[s]) {
      loupe_destroy(g);
      return NULL;
    }
    memset(g->storage[s], 0, bytes);
    g->owned[s] = 1;
  }
  for (int i = 0; i < net->num_params; ++i)
    if (!net->param_in_place[i])
      memcpy(g->storage[net->param_storage[i]], loupe_params_blob + net->param_offset[i],
             (size_t)net->param_bytes[i]);
  for (int a = 0; a < net->num_args; ++a)
    g->args[a] = g->storage[net->arg_storage[a]];
  return g;
}

loupe_graph *loupe_create(int num_threads) { return create(num_threads, &networks[0]); }

/* The next "name=size" of a sizes text from *p on (spaces and commas between them skipped):
 * 1 with its name's span and its size, 0 at the end, -1 when the text is not sizes. */
static int next_size(const char **p, const char **name, size_t *len, long long *size) {
  while (**p == ' ' || **p == ',')
    ++*p;
  if (!**p)
    return 0;
  *name = *p;
  while (**p && **p != '=' && **p != ',' && **p != ' ')
    ++*p;
  *len = (size_t)(*p - *name);
  if (**p != '=' || *len == 0)
    return -1;
  ++*p;
  if (**p < '0' || **p > '9')
    return -1;
  *size = 0;
  while (**p >= '0' && **p <= '9') {
    if (*size > 100000000000000LL)
      return -1;
    *size = *size * 10 + (**p - '0');
    ++*p;
  }
  return 1;
}

/* Whether every size `given` names is the one `built` gives it, and it names them all. */
static int same_sizes(const char *given, const char *built) {
  const char *g = given, *name, *b_name;
  size_t len, b_len;
  long long size, b_size;
  int count = 0, r;
  while ((r = next_size(&g, &name, &len, &size)) == 1) {
    const char *b = built;
    int found = 0;
    while (!found && next_size(&b, &b_name, &b_len, &b_size) == 1)
      found = b_len == len && memcmp(b_name, name, len) == 0 && b_size == size;
    if (!found)
      return 0;
    ++count;
  }
  if (r < 0)
    return 0;
  const char *b = built;
  while (next_size(&b, &b_name, &b_len, &b_size) == 1)
    --count;
  return count == 0;
}

int loupe_variant_index(const char *sizes) {
  for (int v = 0; sizes && v < LOUPE_NUM_VARIANTS; ++v)
    if (same_sizes(sizes, networks[v].sizes))
      return v;
  return -1;
}

const char *loupe_variant_sizes(int variant) {
  return variant >= 0 && variant < LOUPE_NUM_VARIANTS ? networks[variant].sizes : NULL;
}

loupe_graph *loupe_create_sizes(int num_threads, const char *sizes) {
  int v = loupe_variant_index(sizes);
  return v < 0 ? NULL : create(num_threads, &networks[v]);
}

void loupe_destroy(loupe_graph *g) {
  if (!g)
    return;
  for (int s = 0; g->storage && s < g->net->num_storage; ++s)
    if (g->owned[s])
      free(g->storage[s]);
  free(g->storage);
  free(g->owned);
  free(g->args);
  free(g);
}

const loupe_tensor_info *loupe_input_info(const loupe_graph *g, int index) {
  return index >= 0 && index < LOUPE_NUM_INPUTS ? &g->net->inputs[index] : NULL;
}

const loupe_tensor_info *loupe_output_info(const loupe_graph *g, int index) {
  return index >= 0 && index < LOUPE_NUM_OUTPUTS ? &g->net->outputs[index] : NULL;
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
  if (bytes != (size_t)g->net->inputs[i].bytes)
    return LOUPE_ERROR_SIZE;
  memcpy(g->storage[g->net->input_storage[i]], data, bytes);
  return 0;
}

int loupe_run(loupe_graph *g) {
  const loupe_network *net = g->net;
  unsigned saved = _mm_getcsr();
  /* Subnormals flushed or kept as the build ran them (FTZ and DAZ). */
  _mm_setcsr(net->flush_denormals ? (saved | 0x8040u) : (saved & ~0x8040u));
  for (int c = 0; c < net->num_calls; ++c)
    if (net->call_fn[c])
      net->call_fn[c](g->args + net->call_first_arg[c]);
  _mm_setcsr(saved);
  return 0;
}

int loupe_get_output(loupe_graph *g, int index, void *data, size_t bytes) {
  if (index < 0 || index >= LOUPE_NUM_OUTPUTS)
    return LOUPE_ERROR_NAME;
  if (bytes != (size_t)g->net->outputs[index].bytes)
    return LOUPE_ERROR_SIZE;
  memcpy(data, g->storage[g->net->output_storage[index]], bytes);
  return 0;
}

int loupe_output_index(const char *name) {
  for (int i = 0; i < LOUPE_NUM_OUTPUTS; ++i)
    if (strcmp(loupe_outputs[i].name, name) == 0)
      return i;
  return -1;
}
)C";

// One variant's tables: what loupe_network points to.
const char *kNetworkType = R"C(
/* One built network: its storage, params, calls, inputs and outputs (a dynamic build's export
 * has one per size built). */
typedef struct {
  const char *sizes;
  int num_storage, num_args, num_calls, num_params, flush_denormals;
  const int64_t *storage_bytes;
  const int32_t *param_storage;
  const int64_t *param_offset, *param_bytes;
  const int *param_in_place;
  const int32_t *input_storage, *output_storage, *arg_storage, *call_first_arg;
  void (*const *call_fn)(void **);
  const loupe_tensor_info *inputs, *outputs;
} loupe_network;
)C";

const char *kApi = R"C(
/* The whole network (deploy_graph.c), as TVM's graph executor runs a deploy graph: make one,
 * set its inputs by name, run, read its outputs; the params are inside deploy.so. Kernels run
 * on the same thread pool as Loupe's REPL: num_threads of loupe_create, else LOUPE_NUM_THREADS,
 * else every hardware thread — the first count asked stands for the process. One graph runs
 * one call at a time; make one per thread that runs it. Sizes are in bytes, tensors row-major
 * in the dtypes below (bfloat16 as its uint16 bits). A dynamic build's export holds a variant
 * per size built (LOUPE_NUM_VARIANTS, listed below): loupe_create_sizes makes the one for
 * "batch=4, seq=64"; loupe_create makes variant 0. */
typedef struct loupe_graph loupe_graph;
typedef struct {
  const char *name;
  const char *dtype; /* "float32", "uint8", ... */
  int ndim;
  int64_t shape[8];
  int64_t bytes;
} loupe_tensor_info;
enum { LOUPE_ERROR_NAME = -1, LOUPE_ERROR_SIZE = -2 };
extern const loupe_tensor_info loupe_inputs[];  /* variant 0's data inputs, LOUPE_NUM_INPUTS */
extern const loupe_tensor_info loupe_outputs[]; /* variant 0's outputs, LOUPE_NUM_OUTPUTS */
/* NULL when memory runs out. */
loupe_graph *loupe_create(int num_threads);
/* The variant built for `sizes` ("batch=4, seq=64": every size symbol, in any order); NULL when
 * no variant was built for them (or memory runs out). */
loupe_graph *loupe_create_sizes(int num_threads, const char *sizes);
/* The index of the variant built for `sizes`, or -1; a variant's sizes ("" for a build of fixed
 * sizes), or NULL past the last. */
int loupe_variant_index(const char *sizes);
const char *loupe_variant_sizes(int variant);
void loupe_destroy(loupe_graph *g);
/* A graph's input or output `index` (its variant's shapes and bytes), or NULL. */
const loupe_tensor_info *loupe_input_info(const loupe_graph *g, int index);
const loupe_tensor_info *loupe_output_info(const loupe_graph *g, int index);
/* 0, LOUPE_ERROR_NAME (no such input) or LOUPE_ERROR_SIZE (bytes is not the input's). */
int loupe_set_input(loupe_graph *g, const char *name, const void *data, size_t bytes);
int loupe_run(loupe_graph *g);
/* Copies output `index` out: 0, LOUPE_ERROR_NAME or LOUPE_ERROR_SIZE. */
int loupe_get_output(loupe_graph *g, int index, void *data, size_t bytes);
/* An output's index by name, or -1. */
int loupe_output_index(const char *name);
int loupe_set_num_threads(int n);
)C";

// A param's bytes placed in the blob once: a later variant's param of the same name and bytes
// (packed weights do not depend on the sizes) reads the same offset.
struct ParamBlob {
  std::string &bin;
  std::map<std::string, std::vector<std::pair<size_t, size_t>>> placed; // name → offset, bytes
  size_t place(const std::string &name, const char *bytes, size_t n) {
    for (auto [offset, size] : placed[name])
      if (size == n && std::memcmp(bin.data() + offset, bytes, n) == 0)
        return offset;
    bin.resize((bin.size() + 63) / 64 * 64, '\0');
    size_t offset = bin.size();
    bin.append(bytes, n);
    placed[name].push_back({offset, n});
    return offset;
  }
};

// The tables of one variant, named with `prefix` ("v1_"; variant 0's inputs and outputs are
// loupe_inputs and loupe_outputs, which deploy.h declares), and its loupe_network initializer.
struct VariantTables {
  std::string c, network, comment;
  size_t numInputs = 0, numOutputs = 0;
};

VariantTables variantTables(const Graph &g, size_t variant, ParamBlob &blob) {
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
    size_t bytes = t.numBytes(), offset = 0;
    if (t.dtype() == dtypes[e]) {
      offset = blob.place(name, static_cast<const char *>(t.bytes()), bytes);
    } else { // held in another dtype: its values in the graph's, as the REPL's runtime binds it
      int dt = static_cast<int>(dtypes[e]);
      bytes = static_cast<size_t>(numElements(shapes[e]) * dtypeBytes(dt));
      std::string converted(bytes, '\0');
      copyToBuffer(t.load(), dt, converted.data());
      offset = blob.place(name, converted.data(), bytes);
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
  const std::string prefix = "v" + std::to_string(variant) + "_";
  auto table = [&](const std::string &type, const std::string &name, const std::string &values) {
    return "static const " + type + " " + prefix + name + "[] = {" +
           (values.empty() ? "0" : values) + "};\n";
  };
  VariantTables v;
  const GraphAttr *sizes = g.attr("variant");
  std::string sizesText = sizes ? sizes->str : "";
  v.c = "/* variant " + std::to_string(variant) +
        (sizesText.empty() ? "" : ": " + commentText(sizesText)) + " */\n";
  v.c += table("int64_t", "storage_bytes", storageBytes);
  v.c += table("int32_t", "param_storage", paramStorage);
  v.c += table("int64_t", "param_offset", paramOffset);
  v.c += table("int64_t", "param_bytes", paramBytes);
  v.c += table("int", "param_in_place", inPlace);
  v.c += table("int32_t", "input_storage", inputStorage);
  v.c += table("int32_t", "output_storage", outputStorage);
  v.c += table("int32_t", "arg_storage", args);
  v.c += table("int32_t", "call_first_arg", firstArg);
  v.c += "static void (*const " + prefix + "call_fn[])(void **) = {\n" +
         (fns.empty() ? "    0" : fns) + "};\n";
  // Variant 0's ports are the ones deploy.h names; the others are this file's own.
  std::string in = variant == 0 ? "loupe_inputs" : prefix + "inputs",
              out = variant == 0 ? "loupe_outputs" : prefix + "outputs";
  v.c += std::string(variant == 0 ? "" : "static ") + "const loupe_tensor_info " + in + "[] = {\n" +
         (inputs.empty() ? std::string("  {0, 0, 0, {0}, 0},\n") : inputInfo) + "};\n";
  v.c += std::string(variant == 0 ? "" : "static ") + "const loupe_tensor_info " + out +
         "[] = {\n" + outputInfo + "};\n\n";
  v.network = "  {" + cString(sizesText) + ", " + std::to_string(numStorage) + ", " +
              std::to_string(numArgs) + ", " + std::to_string(numCalls) + ", " +
              std::to_string(numParams) + ", " + (lib->flushDenormals ? "1" : "0") + ", " + prefix +
              "storage_bytes, " + prefix + "param_storage, " + prefix + "param_offset, " + prefix +
              "param_bytes, " + prefix + "param_in_place, " + prefix + "input_storage, " + prefix +
              "output_storage, " + prefix + "arg_storage, " + prefix + "call_first_arg, " + prefix +
              "call_fn, " + in + ", " + out + "},\n";
  v.comment = " * Inputs:\n";
  for (const TensorPort &t : inputs)
    v.comment += " *   " + t.comment() + "\n";
  v.comment += " * Outputs:\n";
  for (size_t k = 0; k < outputs.size(); ++k)
    v.comment += " *   " + std::to_string(k) + ": " + outputs[k].comment() + "\n";
  if (!sizesText.empty())
    v.comment = " * Variant " + std::to_string(variant) + ", built for " + commentText(sizesText) +
                (variant == 0 ? " (loupe_create's)" : "") + ":\n" + v.comment;
  v.numInputs = inputs.size();
  v.numOutputs = outputs.size();
  return v;
}

} // namespace

DeploySource deploySource(const std::vector<Graph> &variants) {
  if (variants.empty())
    fail("export: no built network to export");
  DeploySource out;
  ParamBlob blob{out.paramsBin, {}};
  std::vector<VariantTables> tables;
  for (size_t v = 0; v < variants.size(); ++v) {
    tables.push_back(variantTables(variants[v], v, blob));
    if (tables[v].numInputs != tables[0].numInputs || tables[v].numOutputs != tables[0].numOutputs)
      fail("export: variant ", v, " has other inputs or outputs than variant 0");
  }
  std::string c = "/* deploy_graph.c: made by Loupe's :export — runs the built network whole. */\n"
                  "#include \"deploy.h\"\n\n#include <stdlib.h>\n#include <string.h>\n"
                  "#include <xmmintrin.h>\n\n"
                  "extern const unsigned char loupe_params_blob[];\n";
  c += kNetworkType;
  c += "\n";
  std::string networks;
  for (const VariantTables &t : tables) {
    c += t.c;
    networks += t.network;
  }
  c += "static const loupe_network networks[] = {\n" + networks + "};\n";
  c += kEntryPoints;
  out.graphC = c;
  std::string h = kApi;
  h += "#define LOUPE_NUM_INPUTS " + std::to_string(tables[0].numInputs) +
       "\n#define LOUPE_NUM_OUTPUTS " + std::to_string(tables[0].numOutputs) +
       "\n#define LOUPE_NUM_VARIANTS " + std::to_string(tables.size()) + "\n/*";
  for (const VariantTables &t : tables)
    h += (h.ends_with("/*") ? t.comment.substr(2) : t.comment);
  h += " */\n";
  out.header = h;
  out.paramsS = "/* params.S: made by Loupe's :export — the params' bytes inside deploy.so. */\n"
                "  .section .rodata\n  .balign 64\n  .globl loupe_params_blob\n"
                "  .hidden loupe_params_blob\nloupe_params_blob:\n  .incbin \"params.bin\"\n"
                "  .byte 0\n  .section .note.GNU-stack,\"\",@progbits\n";
  return out;
}

} // namespace loupe::backend
