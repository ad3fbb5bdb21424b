// DeployGraph: C source for running a built deploy graph whole from a shared library, as TVM's
// graph executor runs a deploy graph: set inputs by name, run, get outputs.
#include "backend/DeployGraph.h"

#include "backend/BuiltLibrary.h"
#include "backend/GraphExecutor.h"
#include "core/Buffers.h"
#include "core/DType.h"
#include "core/Error.h"
#include "core/Text.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <set>

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

// A shape as a C initializer: a symbolic dimension is -1 (its size comes with the sizes).
std::string shapeList(const Shape &s) {
  std::string t = "{";
  for (size_t i = 0; i < s.size(); ++i)
    t += (i ? ", " : "") +
         (s.isSymbolic() && !s.dim(i).isConstant() ? std::string("-1") : std::to_string(s[i]));
  return t + (s.empty() ? "0}" : "}");
}

// An expression of the size symbols as C over the sizes array `z` (z[k] the value of
// symbols[k]), its sums and products checked (loupe_add and loupe_mul set *bad when one
// overflows int64) and its division and remainder floored, as SymExpr computes them.
std::string cSize(const SymExpr &e, const std::vector<std::string> &symbols) {
  std::string sum;
  for (const auto &[mono, coef] : e.terms()) {
    std::string term;
    for (const auto &atom : mono) {
      std::string a;
      switch (atom->kind) {
      case SymExpr::Atom::Kind::Symbol: {
        auto at = std::find(symbols.begin(), symbols.end(), atom->name);
        if (at == symbols.end())
          fail("export: the size symbol ", atom->name, " is not one of the network's");
        a = "z[" + std::to_string(at - symbols.begin()) + "]";
        break;
      }
      case SymExpr::Atom::Kind::Div:
        a = "loupe_floordiv(" + cSize(atom->num, symbols) + ", " + std::to_string(atom->den) + ")";
        break;
      case SymExpr::Atom::Kind::Mod:
        a = "loupe_floormod(" + cSize(atom->num, symbols) + ", " + std::to_string(atom->den) + ")";
        break;
      }
      term = term.empty() ? a : "loupe_mul(" + term + ", " + a + ", bad)";
    }
    std::string c = "INT64_C(" + std::to_string(coef) + ")";
    term = term.empty() ? c : coef == 1 ? term : "loupe_mul(" + term + ", " + c + ", bad)";
    sum = sum.empty() ? term : "loupe_add(" + sum + ", " + term + ", bad)";
  }
  return sum.empty() ? "INT64_C(0)" : sum;
}

// An input or output of the network as the runner and deploy.h describe it.
struct TensorPort {
  std::string name;
  int dtype = 0;
  Shape shape;
  int64_t storage = 0;
  // Its bytes: an expression of the size symbols for a generic network's.
  SymExpr bytes() const { return elementCount(shape) * SymExpr(dtypeBytes(dtype)); }
  // Its loupe_tensor_info initializer (a symbolic dimension and its bytes -1).
  std::string info() const {
    SymExpr b = bytes();
    return "  {" + cString(name) + ", \"" + std::string(dtypeName(dtype)) + "\", " +
           std::to_string(shape.size()) + ", " + shapeList(shape) + ", " +
           (b.isConstant() ? std::to_string(b.constant()) : std::string("-1")) + "},\n";
  }
  // The statements of a generic network's bind that set it as `port` at the sizes z.
  std::string bind(const std::string &port, const std::vector<std::string> &symbols) const {
    std::string c = "  " + port + " = " + info().substr(2);
    c.replace(c.size() - 2, 2, ";\n");
    c.insert(c.find('{'), "(loupe_tensor_info)");
    for (size_t d = 0; d < shape.size(); ++d)
      if (shape.isSymbolic() && !shape.dim(d).isConstant())
        c += "  " + port + ".shape[" + std::to_string(d) + "] = " + cSize(shape.dim(d), symbols) +
             ";\n";
    return c + "  " + port + ".bytes = " + cSize(bytes(), symbols) + ";\n";
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
  const loupe_tensor_info *inputs, *outputs;
  /* A generic network's, bound to the graph's sizes: its storage's bytes, its inputs' and
   * outputs' shapes, and the sizes its kernels read. */
  int64_t *storage_bytes;
  loupe_tensor_info *ports;
  int64_t *size_args;
  size_t *capacity; /* the bytes each owned block holds (a generic graph grows them) */
};

/* The bytes a block of `bytes` is allocated with: 64-byte aligned and padded to whole vectors,
 * as the REPL's runtime allocates. */
static size_t block_bytes(int64_t bytes) { return ((size_t)(bytes > 0 ? bytes : 1) + 127) / 64 * 64; }

/* The graph of network `net` (at sizes z when it is generic). */
static loupe_graph *create(int num_threads, const loupe_network *net, const int64_t *z) {
  loupe_set_num_threads(num_threads > 0 ? num_threads : 0);
  loupe_graph *g = (loupe_graph *)calloc(1, sizeof(loupe_graph));
  if (!g)
    return NULL;
  g->net = net;
  g->inputs = net->inputs;
  g->outputs = net->outputs;
  g->storage = (unsigned char **)calloc((size_t)net->num_storage, sizeof(unsigned char *));
  g->owned = (int *)calloc((size_t)net->num_storage, sizeof(int));
  g->args = (void **)calloc((size_t)(net->num_args > 0 ? net->num_args : 1), sizeof(void *));
  g->capacity = (size_t *)calloc((size_t)net->num_storage + 1, sizeof(size_t));
  if (!g->storage || !g->owned || !g->args || !g->capacity) {
    loupe_destroy(g);
    return NULL;
  }
  const int64_t *storage_bytes = net->storage_bytes;
  if (net->bind) {
    g->storage_bytes = (int64_t *)calloc((size_t)net->num_storage, sizeof(int64_t));
    g->ports = (loupe_tensor_info *)calloc(LOUPE_NUM_INPUTS + LOUPE_NUM_OUTPUTS,
                                           sizeof(loupe_tensor_info));
    g->size_args = (int64_t *)calloc((size_t)net->num_size_args + 1, sizeof(int64_t));
    /* Sizes whose storage overflows (or passes 2^48 bytes) make no graph. */
    if (!g->storage_bytes || !g->ports || !g->size_args ||
        net->bind(z, g->storage_bytes, g->ports, g->ports + LOUPE_NUM_INPUTS) != 0) {
      loupe_destroy(g);
      return NULL;
    }
    for (int k = 0; k < net->num_size_args; ++k)
      g->size_args[k] = z[net->size_arg_symbol[k]];
    g->inputs = g->ports;
    g->outputs = g->ports + LOUPE_NUM_INPUTS;
    storage_bytes = g->storage_bytes;
  }
  for (int i = 0; i < net->num_params; ++i)
    if (net->param_in_place[i])
      g->storage[net->param_storage[i]] =
          (unsigned char *)(loupe_params_blob + net->param_offset[i]);
  for (int s = 0; s < net->num_storage; ++s) {
    if (g->storage[s])
      continue;
    size_t bytes = block_bytes(storage_bytes[s]);
    g->storage[s] = (unsigned char *)aligned_alloc(64, bytes);
    if (!g->storage[s]) {
      loupe_destroy(g);
      return NULL;
    }
    memset(g->storage[s], 0, bytes);
    g->owned[s] = 1;
    g->capacity[s] = bytes;
  }
  for (int i = 0; i < net->num_params; ++i)
    if (!net->param_in_place[i])
      memcpy(g->storage[net->param_storage[i]], loupe_params_blob + net->param_offset[i],
             (size_t)net->param_bytes[i]);
  /* An argument is a storage block, or (-1 - k) the sizes a generic kernel reads from k on. */
  for (int a = 0; a < net->num_args; ++a)
    g->args[a] = net->arg_storage[a] >= 0 ? (void *)g->storage[net->arg_storage[a]]
                                          : (void *)(g->size_args + (-1 - net->arg_storage[a]));
  return g;
}

loupe_graph *loupe_create(int num_threads) {
  return networks[0].bind ? NULL : create(num_threads, &networks[0], NULL);
}

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

/* Generic network `net`'s symbols bound by `sizes` into z: 0 when the text names each of them
 * once, at 1 or more, and nothing else; else -1. */
static int bind_sizes(const loupe_network *net, const char *sizes, int64_t *z) {
  const char *p = sizes, *name;
  size_t len;
  long long size;
  int r, bound = 0;
  for (int k = 0; k < net->num_symbols; ++k)
    z[k] = 0;
  while ((r = next_size(&p, &name, &len, &size)) == 1) {
    int k = 0;
    while (k < net->num_symbols &&
           (strlen(net->symbols[k]) != len || memcmp(net->symbols[k], name, len) != 0))
      ++k;
    if (k == net->num_symbols || z[k] != 0 || size < 1)
      return -1;
    z[k] = size;
    ++bound;
  }
  return r == 0 && bound == net->num_symbols ? 0 : -1;
}

)C";

const char *kVariantEntryPoints = R"C(
int loupe_variant_index(const char *sizes) {
  int64_t z[LOUPE_MAX_SYMBOLS];
  for (int v = 0; sizes && v < LOUPE_NUM_VARIANTS; ++v)
    if (!networks[v].bind && same_sizes(sizes, networks[v].sizes))
      return v;
  for (int v = 0; sizes && v < LOUPE_NUM_VARIANTS; ++v)
    if (networks[v].bind && bind_sizes(&networks[v], sizes, z) == 0)
      return v;
  return -1;
}

const char *loupe_variant_sizes(int variant) {
  return variant >= 0 && variant < LOUPE_NUM_VARIANTS ? networks[variant].sizes : NULL;
}

loupe_graph *loupe_create_sizes(int num_threads, const char *sizes) {
  int64_t z[LOUPE_MAX_SYMBOLS];
  int v = loupe_variant_index(sizes);
  if (v < 0)
    return NULL;
  if (networks[v].bind)
    bind_sizes(&networks[v], sizes, z);
  return create(num_threads, &networks[v], z);
}

int loupe_set_sizes(loupe_graph *g, const char *sizes) {
  const loupe_network *net = g->net;
  if (!net->bind)
    return sizes && same_sizes(sizes, net->sizes) ? 0 : LOUPE_ERROR_SIZES;
  int64_t z[LOUPE_MAX_SYMBOLS];
  if (!sizes || bind_sizes(net, sizes, z) != 0)
    return LOUPE_ERROR_SIZES;
  /* Everything new is made first: on any failure the graph keeps its sizes. */
  int64_t *bytes = (int64_t *)calloc((size_t)net->num_storage, sizeof(int64_t));
  loupe_tensor_info *ports =
      (loupe_tensor_info *)calloc(LOUPE_NUM_INPUTS + LOUPE_NUM_OUTPUTS, sizeof(loupe_tensor_info));
  unsigned char **grown = (unsigned char **)calloc((size_t)net->num_storage, sizeof(void *));
  int ok = bytes && ports && grown && net->bind(z, bytes, ports, ports + LOUPE_NUM_INPUTS) == 0;
  for (int s = 0; ok && s < net->num_storage; ++s)
    if (g->owned[s] && block_bytes(bytes[s]) > g->capacity[s]) {
      grown[s] = (unsigned char *)aligned_alloc(64, block_bytes(bytes[s]));
      ok = grown[s] != NULL;
    }
  if (!ok) {
    for (int s = 0; grown && s < net->num_storage; ++s)
      free(grown[s]);
    free(bytes);
    free(ports);
    free(grown);
    return LOUPE_ERROR_SIZES;
  }
  /* Blocks that hold the new sizes are kept; the others replaced by larger ones, zeroed. */
  for (int s = 0; s < net->num_storage; ++s)
    if (grown[s]) {
      free(g->storage[s]);
      g->storage[s] = grown[s];
      g->capacity[s] = block_bytes(bytes[s]);
      memset(g->storage[s], 0, g->capacity[s]);
    }
  free(grown);
  free(g->storage_bytes);
  free(g->ports);
  g->storage_bytes = bytes;
  g->ports = ports;
  g->inputs = ports;
  g->outputs = ports + LOUPE_NUM_INPUTS;
  for (int k = 0; k < net->num_size_args; ++k)
    g->size_args[k] = z[net->size_arg_symbol[k]];
  for (int a = 0; a < net->num_args; ++a)
    if (net->arg_storage[a] >= 0)
      g->args[a] = g->storage[net->arg_storage[a]];
  return 0;
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
  free(g->storage_bytes);
  free(g->ports);
  free(g->size_args);
  free(g->capacity);
  free(g);
}

const loupe_tensor_info *loupe_input_info(const loupe_graph *g, int index) {
  return index >= 0 && index < LOUPE_NUM_INPUTS ? &g->inputs[index] : NULL;
}

const loupe_tensor_info *loupe_output_info(const loupe_graph *g, int index) {
  return index >= 0 && index < LOUPE_NUM_OUTPUTS ? &g->outputs[index] : NULL;
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
  if (bytes != (size_t)g->inputs[i].bytes)
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
  if (bytes != (size_t)g->outputs[index].bytes)
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
 * has one per size built, and a generic build's one more for any sizes). */
typedef struct loupe_network {
  const char *sizes;
  int num_storage, num_args, num_calls, num_params, flush_denormals;
  const int64_t *storage_bytes;
  const int32_t *param_storage;
  const int64_t *param_offset, *param_bytes;
  const int *param_in_place;
  const int32_t *input_storage, *output_storage, *arg_storage, *call_first_arg;
  void (*const *call_fn)(void **);
  const loupe_tensor_info *inputs, *outputs;
  /* A generic network (its kernels read the sizes they run at): its size symbols; `bind` sets
   * the storage's bytes and the inputs' and outputs' facts at sizes z (z[k] symbol k's), -1 when
   * they overflow; its kernels read the sizes of symbols size_arg_symbol. NULL `bind`: a network
   * of fixed sizes. */
  int num_symbols, num_size_args;
  const char *const *symbols;
  int (*bind)(const int64_t *z, int64_t *storage_bytes, loupe_tensor_info *inputs,
              loupe_tensor_info *outputs);
  const int32_t *size_arg_symbol;
} loupe_network;
)C";

// The arithmetic of a generic network's sizes: checked, and floored as SymExpr's.
const char *kSizeArithmetic = R"C(
static int64_t loupe_add(int64_t a, int64_t b, int *bad) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r))
    *bad = 1;
  return r;
}

static int64_t loupe_mul(int64_t a, int64_t b, int *bad) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r))
    *bad = 1;
  return r;
}

static int64_t loupe_floordiv(int64_t a, int64_t d) {
  return a / d - (a % d != 0 && a < 0);
}

static int64_t loupe_floormod(int64_t a, int64_t d) {
  return a % d + (a % d < 0 ? d : 0);
}
)C";

const char *kApi = R"C(
/* The whole network (deploy_graph.c), as TVM's graph executor runs a deploy graph: make one,
 * set its inputs by name, run, read its outputs; the params are inside deploy.so. Kernels run
 * on the same thread pool as Loupe's REPL: num_threads of loupe_create, else LOUPE_NUM_THREADS,
 * else every hardware thread — the first count asked stands for the process. One graph runs
 * one call at a time; make one per thread that runs it. Sizes are in bytes, tensors row-major
 * in the dtypes below (bfloat16 as its uint16 bits). A dynamic build's export holds a variant
 * per size built (LOUPE_NUM_VARIANTS, listed below): loupe_create_sizes makes the one for
 * "batch=4, seq=64"; loupe_create makes variant 0. A generic build's export holds one more, last,
 * for any sizes (its kernels read them when they run): loupe_create_sizes makes it for sizes no
 * variant was built for. */
typedef struct loupe_graph loupe_graph;
typedef struct {
  const char *name;
  const char *dtype; /* "float32", "uint8", ... */
  int ndim;
  int64_t shape[8]; /* -1 for a size symbol's dimension in loupe_inputs and loupe_outputs */
  int64_t bytes;    /* -1 there when a size symbol's dimension makes it */
} loupe_tensor_info;
enum { LOUPE_ERROR_NAME = -1, LOUPE_ERROR_SIZE = -2, LOUPE_ERROR_SIZES = -3 };
extern const loupe_tensor_info loupe_inputs[];  /* variant 0's data inputs, LOUPE_NUM_INPUTS */
extern const loupe_tensor_info loupe_outputs[]; /* variant 0's outputs, LOUPE_NUM_OUTPUTS */
/* NULL when memory runs out, or variant 0 is generic (it needs sizes). */
loupe_graph *loupe_create(int num_threads);
/* The variant built for `sizes` ("batch=4, seq=64": every size symbol, in any order), else the
 * generic one at those sizes (each 1 or more); NULL when no variant takes them (or memory runs
 * out, or the storage of those sizes passes 2^48 bytes, or a size passes what the network allows:
 * a slice to `seq` of a table of 512 rows, seq <= 512). */
loupe_graph *loupe_create_sizes(int num_threads, const char *sizes);
/* The index of the variant loupe_create_sizes makes for `sizes`, or -1; a variant's sizes (""
 * for a build of fixed sizes; "batch=?, seq=?" for the generic one), or NULL past the last. */
int loupe_variant_index(const char *sizes);
const char *loupe_variant_sizes(int variant);
/* A graph of the generic variant moved to other sizes, as loupe_create_sizes takes them: its
 * storage blocks kept where they hold the new sizes, the others replaced by larger ones (set the
 * inputs again before the next run). 0, or LOUPE_ERROR_SIZES (sizes it does not take, or memory
 * runs out: the graph keeps its sizes). A graph of a variant built for sizes takes only those. */
int loupe_set_sizes(loupe_graph *g, const char *sizes);
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

// The size symbols of a generic network (those its shapes and its kernels read, sorted); none
// for a network of fixed sizes.
std::vector<std::string> networkSymbols(const Graph &g, const BuiltLibrary &lib) {
  std::set<std::string> symbols;
  for (const Shape &s : g.attr("shape")->shapes)
    for (const std::string &sym : s.symbols())
      symbols.insert(sym);
  for (const auto &[name, f] : lib.lowered)
    symbols.insert(f.sizeSymbols.begin(), f.sizeSymbols.end());
  return {symbols.begin(), symbols.end()};
}

// The tables of one variant, named with `prefix` ("v1_"; variant 0's inputs and outputs are
// loupe_inputs and loupe_outputs, which deploy.h declares), and its loupe_network initializer.
struct VariantTables {
  std::string c, network, comment;
  size_t numInputs = 0, numOutputs = 0, numSymbols = 0;
};

VariantTables variantTables(const Graph &g, size_t variant, ParamBlob &blob) {
  auto lib = builtLibrary(g);
  if (!lib)
    fail("the current graph was not built; run :build first");
  const IndexedGraph &idx = g.index();
  const auto &sid = g.attr("storage_id")->ints;
  const auto &shapes = g.attr("shape")->shapes;
  const auto &dtypes = g.attr("dtype")->ints;
  const std::vector<std::string> symbols = networkSymbols(g, *lib);
  const bool generic = !symbols.empty();
  std::vector<StorageSlot> slots = storageSlots(g);
  std::map<int64_t, const StorageSlot *> slotOf;
  int64_t numStorage = 0;
  for (const StorageSlot &s : slots) {
    slotOf[s.id] = &s;
    numStorage = std::max(numStorage, s.id + 1);
  }
  // A storage block's bytes: a constant, or (generic) an expression bind evaluates.
  std::string storageBytes, bindStorage;
  std::vector<SymExpr> bytesOf(static_cast<size_t>(numStorage), SymExpr(1));
  for (const StorageSlot &s : slots)
    bytesOf[static_cast<size_t>(s.id)] = s.size;
  for (size_t k = 0; k < bytesOf.size(); ++k) {
    const SymExpr &b = bytesOf[k];
    storageBytes +=
        (k ? ", " : "") + std::to_string(b.isConstant() ? std::max<int64_t>(b.constant(), 1) : 0);
    if (!b.isConstant())
      bindStorage += "  storage_bytes[" + std::to_string(k) + "] = " + cSize(b, symbols) + ";\n";
  }
  // Params: their bytes in one blob, 64-aligned each, in the graph's dtype (converted when held
  // in another, as the REPL's runtime binds them); read in place where the param's storage is
  // its alone, else copied in. The other variables are the network's inputs.
  std::vector<TensorPort> inputs, outputs;
  size_t numParams = 0;
  std::string paramStorage, paramOffset, paramBytes, inPlace;
  for (uint32_t nid : idx.argNodes) {
    const std::string &name = idx.nodes[nid].node->name;
    uint32_t e = idx.entryId(nid, 0);
    auto p = lib->params.find(name);
    if (p == lib->params.end()) {
      inputs.push_back({name, static_cast<int>(dtypes[e]), shapes[e], sid[e]});
      continue;
    }
    const StoredTensor &t = p->second;
    if (t.shape() != shapes[e] || shapes[e].isSymbolic())
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
  // The kernel calls in node order, each with its arguments' storage; a generic kernel's
  // sizes (the symbols it reads, in its order) after its inputs, as the REPL's runtime passes
  // them, as -1 - k: the sizes from size_args[k] on.
  std::string args, firstArg, fns, sizeArgSymbol;
  size_t numArgs = 0, numCalls = 0, numSizeArgs = 0;
  for (uint32_t nid = 0; nid < idx.numNodes(); ++nid) {
    const Node &n = *idx.nodes[nid].node;
    if (n.isVariable())
      continue;
    std::string fn = n.parsed.getStr("func_name");
    auto lowered = lib->lowered.find(fn);
    if (lowered == lib->lowered.end())
      fail("export: node ", n.name, " calls ", fn, ", which the build did not make");
    firstArg += (numCalls ? ", " : "") + std::to_string(numArgs);
    std::vector<int64_t> callArgs;
    for (const auto &in : idx.nodes[nid].inputs)
      callArgs.push_back(sid[idx.entryId(in)]);
    if (const auto &read = lowered->second.sizeSymbols; !read.empty()) {
      callArgs.push_back(-1 - static_cast<int64_t>(numSizeArgs));
      for (const std::string &sym : read) {
        auto at = std::find(symbols.begin(), symbols.end(), sym);
        sizeArgSymbol += (numSizeArgs++ ? ", " : "") + std::to_string(at - symbols.begin());
      }
    }
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
  // A generic network's sizes text names its symbols ("batch=?, seq=?").
  std::string sizesText;
  if (generic) {
    for (const std::string &sym : symbols)
      sizesText += (sizesText.empty() ? "" : ", ") + sym + "=?";
  } else if (const GraphAttr *sizes = g.attr("variant")) {
    sizesText = sizes->str;
  }
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
         "[] = {\n" + outputInfo + "};\n";
  std::string genericFields = "0, 0, 0, 0, 0";
  if (generic) {
    std::string names;
    for (const std::string &sym : symbols)
      names += (names.empty() ? "" : ", ") + cString(sym);
    v.c += "static const char *const " + prefix + "symbols[] = {" + names + "};\n";
    v.c += table("int32_t", "size_arg_symbol", sizeArgSymbol);
    // Storage, inputs and outputs at the sizes z; the bytes of any one passing 2^48 refused.
    v.c += "static int " + prefix +
           "bind(const int64_t *z, int64_t *storage_bytes, loupe_tensor_info *inputs,\n"
           "    loupe_tensor_info *outputs) {\n  int flag = 0, *bad = &flag;\n";
    v.c += "  memcpy(storage_bytes, " + prefix + "storage_bytes, sizeof " + prefix +
           "storage_bytes);\n" + bindStorage;
    for (size_t k = 0; k < inputs.size(); ++k)
      v.c += inputs[k].bind("inputs[" + std::to_string(k) + "]", symbols);
    for (size_t k = 0; k < outputs.size(); ++k)
      v.c += outputs[k].bind("outputs[" + std::to_string(k) + "]", symbols);
    // What the kernels assume of the sizes (a slice to `seq` within its table): else no graph.
    if (const GraphAttr *limits = g.attr("size_limits"))
      for (const std::string &l : limits->strs) {
        size_t at = l.find(" <= ");
        if (at == std::string::npos)
          fail("export: size limit '", l, "' is not SIZE <= LIMIT");
        v.c += "  if (" + cSize(SymExpr::parse(l.substr(0, at)), symbols) + " > " +
               cSize(SymExpr::parse(l.substr(at + 4)), symbols) + ")\n    flag = 1;\n";
      }
    v.c += "  for (int s = 0; s < " + std::to_string(numStorage) +
           "; ++s)\n    if (storage_bytes[s] < 0 || storage_bytes[s] > (INT64_C(1) << 48))\n"
           "      flag = 1;\n  return flag ? -1 : 0;\n}\n";
    genericFields = std::to_string(symbols.size()) + ", " + std::to_string(numSizeArgs) + ", " +
                    prefix + "symbols, " + prefix + "bind, " + prefix + "size_arg_symbol";
  }
  v.c += "\n";
  v.network = "  {" + cString(sizesText) + ", " + std::to_string(numStorage) + ", " +
              std::to_string(numArgs) + ", " + std::to_string(numCalls) + ", " +
              std::to_string(numParams) + ", " + (lib->flushDenormals ? "1" : "0") + ", " + prefix +
              "storage_bytes, " + prefix + "param_storage, " + prefix + "param_offset, " + prefix +
              "param_bytes, " + prefix + "param_in_place, " + prefix + "input_storage, " + prefix +
              "output_storage, " + prefix + "arg_storage, " + prefix + "call_first_arg, " + prefix +
              "call_fn, " + in + ", " + out + ", " + genericFields + "},\n";
  v.comment = " * Inputs:\n";
  for (const TensorPort &t : inputs)
    v.comment += " *   " + t.comment() + "\n";
  v.comment += " * Outputs:\n";
  for (size_t k = 0; k < outputs.size(); ++k)
    v.comment += " *   " + std::to_string(k) + ": " + outputs[k].comment() + "\n";
  if (generic)
    v.comment = " * Variant " + std::to_string(variant) + ", generic: any " +
                commentText(joinNames(symbols)) + " (loupe_create_sizes binds them):\n" + v.comment;
  else if (!sizesText.empty())
    v.comment = " * Variant " + std::to_string(variant) + ", built for " + commentText(sizesText) +
                (variant == 0 ? " (loupe_create's)" : "") + ":\n" + v.comment;
  v.numInputs = inputs.size();
  v.numOutputs = outputs.size();
  v.numSymbols = symbols.size();
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
                  "#include \"deploy.h\"\n\n#include <stdint.h>\n#include <stdlib.h>\n"
                  "#include <string.h>\n#include <xmmintrin.h>\n\n"
                  "extern const unsigned char loupe_params_blob[];\n";
  c += kNetworkType;
  size_t maxSymbols = 0;
  for (const VariantTables &t : tables)
    maxSymbols = std::max(maxSymbols, t.numSymbols);
  if (maxSymbols > 0)
    c += kSizeArithmetic;
  maxSymbols = std::max<size_t>(maxSymbols, 1);
  c += "#define LOUPE_MAX_SYMBOLS " + std::to_string(maxSymbols) + "\n\n";
  std::string networks;
  for (const VariantTables &t : tables) {
    c += t.c;
    networks += t.network;
  }
  c += "static const loupe_network networks[] = {\n" + networks + "};\n";
  c += kEntryPoints;
  c += kVariantEntryPoints;
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
