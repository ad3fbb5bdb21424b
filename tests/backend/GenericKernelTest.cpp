// GenericKernelTest: functions of symbolic shapes lowered once to generic kernels — loops over
// `batch*seq` bound at run time — equal, at every size, to the kernels lowered for that size.
#include "KernelCall.h"
#include "TestUtil.h"

#include "backend/Codegen.h"
#include "backend/LowerFunction.h"
#include "core/DType.h"
#include "core/FusedModule.h"
#include "core/loop/LoopIR.h"
#include "core/loop/Visitor.h"
#include "passes/Symbols.h"

#include <cmath>
#include <map>
#include <random>

using namespace loupe;
using namespace loupe::test;

namespace {

// The fused functions of `g` (shapes and dtypes inferred) at opt level `optLevel`, by name.
std::map<std::string, std::shared_ptr<const FusedFunction>> fused(const Graph &g, int optLevel) {
  PassContext ctx;
  ctx.optLevel = optLevel;
  Graph f =
      applyPasses(g, {"InferShape", "InferType", "GraphFusePartition", "GraphFuseCompile"}, ctx);
  auto module = std::static_pointer_cast<const FusedModule>(f.attr("module")->opaque);
  std::map<std::string, std::shared_ptr<const FusedFunction>> out;
  for (const auto &[name, fn] : module->functions)
    out[name] = fn;
  return out;
}

// Deterministic inputs for a lowered function of fixed sizes.
std::vector<Tensor> inputsFor(const backend::LoweredFunction &f, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-2, 2);
  std::vector<Tensor> args;
  for (const auto &p : f.inputs) {
    Tensor t(p->shape, p->dtype);
    for (double &v : t.data)
      v = roundToDType(u(rng), p->dtype);
    args.push_back(std::move(t));
  }
  return args;
}

// The values of a generic kernel's size symbols at binding `b`: its last argument.
Tensor sizesArg(const backend::LoweredFunction &generic, const SymBindings &b) {
  Tensor t({static_cast<int64_t>(generic.sizeSymbols.size())}, kInt64);
  for (size_t k = 0; k < generic.sizeSymbols.size(); ++k)
    t.data[k] = static_cast<double>(b.at(generic.sizeSymbols[k]));
  return t;
}

struct GenericCase {
  std::string program; ///< defines y over variables with symbolic shapes
  std::vector<SymBindings> sizes;
};

// Every function of the program lowers to a generic kernel once; at each binding, the generic
// kernel on the loop interpreter and compiled equals, bit for bit, the kernel lowered for those
// sizes (the same schedule's loops, only their extents read at run time).
// Below opt_level 3 the schedules are the fixed sizes' steps; at 3 a loop along a symbolic axis
// may be scheduled otherwise (see below).
void expectGenericEqualsFixed(const GenericCase &c, int optLevel) {
  SCOPED_TRACE(c.program + " at opt_level " + std::to_string(optLevel));
  Graph g = built(c.program);
  auto symbolic = fused(g, optLevel);
  EXPECT_FALSE(symbolic.empty());
  std::vector<backend::LoweredFunction> generic;
  for (const auto &[name, f] : symbolic) {
    generic.push_back(backend::lowerFunction(*f));
    EXPECT_FALSE(generic.back().sizeSymbols.empty()) << name << " is not generic";
  }
  auto module = backend::CompiledModule::compile(generic);
  for (const SymBindings &b : c.sizes) {
    auto fixed = fused(bindSymbols(g, b), optLevel);
    EXPECT_EQ(fixed.size(), generic.size());
    for (const backend::LoweredFunction &gen : generic) {
      SCOPED_TRACE(gen.name);
      if (!fixed.count(gen.name)) {
        ADD_FAILURE() << "no function " << gen.name << " at fixed sizes";
        continue;
      }
      backend::LoweredFunction lf = backend::lowerFunction(*fixed.at(gen.name));
      EXPECT_TRUE(lf.sizeSymbols.empty());
      std::vector<Tensor> args = inputsFor(lf, 7);
      std::vector<Tensor> want = backend::evalLowered(lf, args);
      std::vector<Tensor> genericArgs = args;
      genericArgs.push_back(sizesArg(gen, b));
      std::vector<Tensor> interp = backend::evalLowered(gen, genericArgs);
      // Compiled, against the fixed kernel compiled (libm's and the vector math's last bits
      // are not the interpreter's).
      auto fixedModule = backend::CompiledModule::compile({lf});
      std::vector<Tensor> compiledFixed = callCompiled(*fixedModule, lf.name, args, lf.outputs);
      std::vector<Tensor> compiled = callCompiled(*module, gen.name, genericArgs, lf.outputs);
      EXPECT_EQ(want.size(), interp.size());
      // Where the schedules are the same steps, the loops are too, bit for bit. At opt_level 3
      // a loop along a symbolic axis is not vectorised yet, nor a reduction along one split
      // into vectors of partial sums (which sums in another order: within float32's rounding).
      bool same = gen.schedule->describe() == lf.schedule->describe();
      for (size_t k = 0; k < want.size(); ++k) {
        size_t interpBad = 0, compiledBad = 0;
        for (size_t i = 0; i < want[k].data.size(); ++i) {
          double w = want[k].data[i], c = compiledFixed[k].data[i];
          interpBad += std::fabs(interp[k].data[i] - w) > (same ? 0 : 1e-6 * (1 + std::fabs(w)));
          compiledBad +=
              std::fabs(compiled[k].data[i] - c) > (same ? 0 : 1e-6 * (1 + std::fabs(c)));
        }
        EXPECT_EQ(interpBad, 0u) << "interpreted, output " << k;
        EXPECT_EQ(compiledBad, 0u) << "compiled, output " << k;
      }
      EXPECT_TRUE(same || optLevel == 3) << gen.schedule->describe() << "\nat fixed sizes:\n"
                                         << lf.schedule->describe();
    }
  }
}

const std::vector<SymBindings> kSizes = {
    {{"batch", 1}, {"seq", 1}}, {{"batch", 2}, {"seq", 3}}, {{"batch", 3}, {"seq", 37}}};

// Sizes of a symbolic batch alone (the convolutions' and pools' rules take only that).
const std::vector<SymBindings> kBatches = {{{"batch", 1}}, {{"batch", 2}}, {{"batch", 5}}};

const std::vector<GenericCase> &cases() {
  static const std::vector<GenericCase> c = {
      // elementwise and unary math over (batch, seq, 8)
      {"x = Variable(\"x\", shape=\"(batch, seq, 8)\", dtype=0)\n"
       "y = sigmoid(exp(x) * 2 + tanh(x))",
       kSizes},
      // a bias broadcast along the last axis and a per-row scale (batch, seq, 1)
      {"x = Variable(\"x\", shape=\"(batch, seq, 40)\", dtype=0)\n"
       "b = Variable(\"b\", shape=(40,), dtype=0)\n"
       "s = Variable(\"s\", shape=\"(batch, seq, 1)\", dtype=0)\n"
       "y = relu(broadcast_mul(broadcast_add(x, b), s))",
       kSizes},
      // the head split's transpose: a symbolic axis moved inward
      {"x = Variable(\"x\", shape=\"(batch, seq, 4, 8)\", dtype=0)\n"
       "y = transpose(x, axes=(0, 2, 1, 3))",
       kSizes},
      // the head split and merge of attention: reshapes over symbolic sizes
      {"x = Variable(\"x\", shape=\"(batch, seq, 32)\", dtype=0)\n"
       "y = transpose(reshape(x, shape=(0, 0, 4, 8)), axes=(0, 2, 1, 3))",
       kSizes},
      {"x = Variable(\"x\", shape=\"(batch, 4, seq, 8)\", dtype=0)\n"
       "y = reshape(transpose(x, axes=(0, 2, 1, 3)), shape=(0, 0, 32))",
       kSizes},
      {"x = Variable(\"x\", shape=\"(batch, seq, 3, 5)\", dtype=0)\n"
       "y = expand_dims(flatten(x), axis=1)",
       kSizes},
      // slices: a constant axis (a fused projection's third), a symbolic one from 1 and from
      // its end (at seq ≥ 3: seq = 1 would empty them)
      {"x = Variable(\"x\", shape=\"(batch, seq, 96)\", dtype=0)\n"
       "y = strided_slice(x, begin=(0, 1, 32), end=(4294967296, 4294967296, 64))",
       {{{"batch", 2}, {"seq", 3}}, {{"batch", 1}, {"seq", 37}}}},
      {"x = Variable(\"x\", shape=\"(batch, seq, 8)\", dtype=0)\n"
       "y = strided_slice(x, begin=(0, -2), end=(4294967296, 4294967296))",
       {{{"batch", 2}, {"seq", 3}}, {{"batch", 1}, {"seq", 37}}}},
      // a fixed table sliced to `seq` rows from its second, added to each batch
      {"x = Variable(\"x\", shape=\"(batch, seq, 8)\", dtype=0)\n"
       "p = Variable(\"p\", shape=(1, 50, 8), dtype=0)\n"
       "y = x + strided_slice(p, begin=(1,), end=\"(seq+1,)\", axes=(1,))",
       // (at batch 1 the add of equal shapes is elementwise, scheduled flat: not batch 1)
       {{{"batch", 2}, {"seq", 3}}, {{"batch", 3}, {"seq", 37}}}},
      // a symbolic innermost axis (the scores' seq × seq)
      {"x = Variable(\"x\", shape=\"(batch, 2, seq, seq)\", dtype=0)\n"
       "y = elemwise_add(x, x) * 0.5",
       kSizes},
      // reductions: over a constant axis, over a symbolic one, and a mean of symbolic count
      {"x = Variable(\"x\", shape=\"(batch, seq, 24)\", dtype=0)\n"
       "y = sum(x, axis=2)",
       kSizes},
      {"x = Variable(\"x\", shape=\"(batch, seq, 6)\", dtype=0)\n"
       "y = max(x, axis=1, keepdims=True)",
       kSizes},
      {"x = Variable(\"x\", shape=\"(batch, seq, 6)\", dtype=0)\n"
       "y = mean(x, axis=(0, 1))",
       kSizes},
      // layer norm over the constant width of (batch, seq, 20)
      {"x = Variable(\"x\", shape=\"(batch, seq, 20)\", dtype=0)\n"
       "g = Variable(\"g\", shape=(20,), dtype=0)\n"
       "b = Variable(\"b\", shape=(20,), dtype=0)\n"
       "y = layer_norm(x, g, b, axis=-1, epsilon=1e-5)",
       kSizes},
      // attention: the scores' softmax over seq, and both products
      {"x = Variable(\"x\", shape=\"(batch, 4, seq, seq)\", dtype=0)\n"
       "y = softmax(x, axis=-1)",
       kSizes},
      {"q = Variable(\"q\", shape=\"(batch, 4, seq, 8)\", dtype=0)\n"
       "k = Variable(\"k\", shape=\"(batch, 4, 8, seq)\", dtype=0)\n"
       "y = batch_matmul(q, k)",
       kSizes},
      {"p = Variable(\"p\", shape=\"(batch, 4, seq, seq)\", dtype=0)\n"
       "v = Variable(\"v\", shape=\"(batch, 4, seq, 8)\", dtype=0)\n"
       "y = batch_matmul(p, v)",
       kSizes},
      {"q = Variable(\"q\", shape=\"(batch, 4, seq, 8)\", dtype=0)\n"
       "k = Variable(\"k\", shape=\"(batch, 4, seq, 8)\", dtype=0)\n"
       "y = batch_matmul(q, k, transpose_b=True)",
       kSizes},
      // a dense over the rows of (batch, seq, 32), with its bias and GELU's erf after it
      {"x = Variable(\"x\", shape=\"(batch, seq, 32)\", dtype=0)\n"
       "w = Variable(\"w\", shape=(48, 32), dtype=0)\n"
       "b = Variable(\"b\", shape=(48,), dtype=0)\n"
       "y = erf(dense(x, w, b, units=48))",
       kSizes},
      // the packed GEMM opt_level 3's AlterOpLayout makes of a dense over rows: its rows padded
      // to a multiple of the row tile, an expression of the symbols
      {"x = Variable(\"x\", shape=\"(batch, seq, 32)\", dtype=0)\n"
       "w = Variable(\"w\", shape=(3, 32, 16), dtype=0)\n"
       "b = Variable(\"b\", shape=(48,), dtype=0)\n"
       "y = _contrib_dense_pack(x, w, b, units=48, weight_layout=\"NC16n\")",
       kSizes},
      // an embedding lookup of token ids, a mask applied with where, a cast, and the joins and
      // cuts along an axis of a size (rules that read that axis only)
      {"i = Variable(\"i\", shape=\"(batch, seq)\", dtype=4)\n"
       "w = Variable(\"w\", shape=(10, 16), dtype=0)\n"
       "m = Variable(\"m\", shape=\"(batch, 1, seq)\", dtype=11)\n"
       "e = take(w, i, axis=0)\n"
       "y = where(broadcast_to(m, shape=\"(batch, 16, seq)\"), transpose(e, axes=(0, 2, 1)), "
       "cast(m, dtype=\"float32\") * 2)",
       kSizes},
      {"x = Variable(\"x\", shape=\"(batch, seq, 8)\", dtype=0)\n"
       "z = Variable(\"z\", shape=\"(batch, seq, 4)\", dtype=0)\n"
       "c = concatenate(x, z, axis=2)\n"
       "s = split(c, indices_or_sections=(3, 7), axis=2)\n"
       "y = s[0] * 2 + sum(s[2], axis=2, keepdims=True)",
       kSizes},
      // a symbolic batch through rules that read the other axes' sizes: a convolution (at
      // opt_level 3 AlterOpLayout's NCHW8c one between layout transforms, its register-tiled
      // schedule), a padded pool, a global pool, a constant pad, a residual add
      {"x = Variable(\"x\", shape=\"(batch, 8, 9, 10)\", dtype=0)\n"
       "w = Variable(\"w\", shape=(16, 8, 3, 3), dtype=0)\n"
       "c = relu(conv2d(x, w, channels=16, kernel_size=(3,3), padding=(1,1), use_bias=False))\n"
       "p = max_pool2d(c, pool_size=(3,3), strides=(2,2), padding=(1,1))\n"
       "y = global_avg_pool2d(p)",
       kBatches},
      {"x = Variable(\"x\", shape=\"(batch, 16, 8, 8)\", dtype=0)\n"
       "w = Variable(\"w\", shape=(16, 16, 1, 1), dtype=0)\n"
       "v = Variable(\"v\", shape=(16, 16, 1, 1), dtype=0)\n"
       "c = conv2d(x, w, channels=16, kernel_size=(1,1), strides=(2,2), use_bias=False)\n"
       "d = conv2d(x, v, channels=16, kernel_size=(1,1), use_bias=False)\n"
       "y = relu(avg_pool2d(d, pool_size=(2,2), strides=(2,2)) + c)",
       kBatches},
      // opt_level 3's blocked convolution as AlterOpLayout writes it, between its layout
      // transforms, with a pool in the blocked layout after it
      {"x = Variable(\"x\", shape=\"(batch, 8, 9, 10)\", dtype=0)\n"
       "w = Variable(\"w\", shape=(2, 1, 3, 3, 8, 8), dtype=0)\n"
       "b = Variable(\"b\", shape=(2, 8), dtype=0)\n"
       "t = __layout_transform__(x, src_layout=\"NCHW\", dst_layout=\"NCHW8c\")\n"
       "c = _contrib_conv2d_NCHWc(t, w, b, channels=16, kernel_size=(3,3), padding=(1,1), "
       "layout=\"NCHW8c\", kernel_layout=\"OIHW8i8o\", out_layout=\"NCHW8c\")\n"
       "p = max_pool2d(relu(c), pool_size=(2,2), strides=(2,2), layout=\"NCHW8c\")\n"
       "y = __layout_transform__(p, src_layout=\"NCHW8c\", dst_layout=\"NCHW\")",
       kBatches},
      {"x = Variable(\"x\", shape=\"(batch, 3, 5)\", dtype=0)\n"
       "y = pad(exp(x), pad_width=((0, 0), (1, 2), (2, 0)), pad_value=0.5)",
       kBatches},
  };
  return c;
}

TEST(GenericKernel, FunctionsEqualFixedKernelsAtEverySize) {
  // (Which functions opt_level 3 schedules otherwise depends on the host's vector width: a row
  // tile is as tall as the registers allow, or as the rows when fewer.)
  for (int opt : {0, 2, 3})
    for (const GenericCase &c : cases())
      expectGenericEqualsFixed(c, opt);
}

// A generic kernel's loops read the size symbols, bound from its last argument; printed, its
// extents are the symbols' expressions.
TEST(GenericKernel, LoopsPrintTheSymbols) {
  Graph g = built("x = Variable(\"x\", shape=\"(batch, seq, 8)\", dtype=0)\ny = relu(x)");
  auto fns = fused(g, 2);
  ASSERT_EQ(fns.size(), 1u);
  backend::LoweredFunction lf = backend::lowerFunction(*fns.begin()->second);
  EXPECT_EQ(lf.sizeSymbols, (std::vector<std::string>{"batch", "seq"}));
  ASSERT_EQ(lf.inputs.size(), 2u);
  EXPECT_EQ(lf.inputs.back()->name, backend::kSizesBuffer);
  std::string text = backend::printLowered(lf);
  // Below opt_level 3 an elementwise function runs over its elements flattened.
  EXPECT_NE(text.find("parallel (i0, 0, ((batch*seq)*8)) {"), std::string::npos) << text;
  EXPECT_NE(text.find("let batch = loupe_sizes[0]"), std::string::npos) << text;
}

// A rule that computes with sizes is not lowered over symbolic shapes it cannot take (a
// pool's window over a symbolic height; a mirrored pad's reflections): lowering says which node
// and op, and nothing is made.
TEST(GenericKernel, RulesThatReadSizesAreRefused) {
  Graph g = built("x = Variable(\"x\", shape=\"(batch, 3, seq, 8)\", dtype=0)\n"
                  "y = max_pool2d(x, pool_size=(2,2))");
  auto fns = fused(g, 2);
  ASSERT_EQ(fns.size(), 1u);
  expectError([&] { backend::lowerFunction(*fns.begin()->second); },
              "lower fuse_max_pool2d: the rule of max_pool2d0 (max_pool2d) computes with "
              "sizes, and its input's shape is symbolic beyond its leading axis");
  Graph mirrored = built("x = Variable(\"x\", shape=\"(batch, 8)\", dtype=0)\n"
                         "y = pad(x, pad_width=((0, 0), (2, 2)), pad_mode=\"reflect\")");
  auto pads = fused(mirrored, 2);
  ASSERT_EQ(pads.size(), 1u);
  expectError([&] { backend::lowerFunction(*pads.begin()->second); },
              "pad: reflect padding is not lowered over a symbolic shape");
}

} // namespace

namespace {

// Counts a statement's loops of each kind.
std::map<loop::ForKind, int> loopKinds(const loop::Stmt &s) {
  struct Counter : loop::IRVisitor {
    std::map<loop::ForKind, int> kinds;
    void visitStmt(const loop::Stmt &t) override {
      if (t->kind == loop::StmtKind::For)
        ++kinds[t->forKind];
      IRVisitor::visitStmt(t);
    }
  } c;
  c.visitStmt(s);
  return c.kinds;
}

// The parallel loop of a statement (the first one met), or null.
loop::Stmt parallelLoop(const loop::Stmt &s) {
  if (s->kind == loop::StmtKind::For && s->forKind == loop::ForKind::Parallel)
    return s;
  for (const loop::Stmt &b : s->body)
    if (b)
      if (loop::Stmt p = parallelLoop(b))
        return p;
  return nullptr;
}

} // namespace

// At opt_level 3 a generic kernel's tile loop runs in two versions: where the whole tile is in
// bounds (its largest row and column below the symbolic sizes) without the tests, its column
// vectors vectorised; the last tiles with them, a vector at a time (element by element only in
// the vector that crosses the end).
TEST(GenericKernel, TilesWhollyInBoundsRunWithoutTheirTests) {
  Graph g = built("q = Variable(\"q\", shape=\"(batch, 4, seq, 16)\", dtype=0)\n"
                  "k = Variable(\"k\", shape=\"(batch, 4, 16, seq)\", dtype=0)\n"
                  "y = batch_matmul(q, k)");
  auto fns = fused(g, 3);
  ASSERT_EQ(fns.size(), 1u);
  backend::LoweredFunction lf = backend::lowerFunction(*fns.begin()->second);
  loop::Stmt par = parallelLoop(lf.body);
  ASSERT_TRUE(par);
  const loop::Stmt &version = par->body[0];
  ASSERT_EQ(version->kind, loop::StmtKind::IfThenElse);
  ASSERT_EQ(version->body.size(), 2u);
  std::string test = loop::printExpr(version->a);
  EXPECT_NE(test.find("< seq"), std::string::npos) << test;
  std::map<loop::ForKind, int> whole = loopKinds(version->body[0]),
                               last = loopKinds(version->body[1]);
  EXPECT_EQ(whole[loop::ForKind::Scalarized], 0);
  EXPECT_GT(whole[loop::ForKind::Vectorized], 0);
  EXPECT_GT(last[loop::ForKind::Scalarized], 0);
  // In the last tiles each vector of columns is tested once: wholly in bounds, vectorised
  // without its lanes' tests (so a tile wider than `seq` runs its one vector whole).
  EXPECT_EQ(last[loop::ForKind::Vectorized], last[loop::ForKind::Scalarized]);
  // A kernel of fixed sizes has no such tests and one version.
  auto fixed = fused(bindSymbols(g, {{"batch", 2}, {"seq", 32}}), 3);
  backend::LoweredFunction f = backend::lowerFunction(*fixed.begin()->second);
  loop::Stmt fp = parallelLoop(f.body);
  ASSERT_TRUE(fp);
  EXPECT_NE(fp->body[0]->kind, loop::StmtKind::IfThenElse);
}

namespace {

// The serial loops of a statement, outermost first.
std::vector<loop::Stmt> serialLoops(const loop::Stmt &s) {
  std::vector<loop::Stmt> out;
  struct Finder : loop::IRVisitor {
    std::vector<loop::Stmt> *out;
    void visitStmt(const loop::Stmt &t) override {
      if (t->kind == loop::StmtKind::For && t->forKind == loop::ForKind::Serial)
        out->push_back(t);
      IRVisitor::visitStmt(t);
    }
  } f;
  f.out = &out;
  f.visitStmt(s);
  return out;
}

} // namespace

// A reduction along a symbolic axis in vectors (softmax's over `seq`) tests each lane of its
// last vector against `seq`, as an elementwise loop over it does: each such loop runs in two,
// the whole vectors without the tests, then the rest with them; the results are the fixed
// kernel's within float32's rounding at sizes around the vectors (seq 63, 64 and 130).
TEST(GenericKernel, ReductionsAlongASymbolicAxisSplitBeforeTheirTail) {
  Graph g = built("x = Variable(\"x\", shape=\"(batch, 2, seq, seq)\", dtype=0)\n"
                  "y = softmax(x, axis=-1)");
  auto fns = fused(g, 3);
  ASSERT_EQ(fns.size(), 1u);
  backend::LoweredFunction lf = backend::lowerFunction(*fns.begin()->second);
  std::vector<loop::Stmt> loops = serialLoops(lf.body);
  int split = 0;
  for (size_t i = 0; i + 1 < loops.size(); ++i) {
    const loop::Stmt &whole = loops[i], &tail = loops[i + 1];
    if (whole->var != tail->var || loop::printExpr(whole->b).find("seq") == std::string::npos)
      continue;
    ++split;
    EXPECT_EQ(loop::printStmt(whole).find("tvm_if_then_else"), std::string::npos)
        << loop::printStmt(whole);
    EXPECT_NE(loop::printStmt(tail).find(") < seq)"), std::string::npos) << loop::printStmt(tail);
    EXPECT_EQ(loop::printExpr(tail->a), loop::printExpr(whole->b));
  }
  // The max's, the sum's and the normalisation's (its last vector masked), in each of the two
  // versions of the row loop (GuardVersions).
  EXPECT_EQ(split, 6) << backend::printLowered(lf);
  expectGenericEqualsFixed(
      {"x = Variable(\"x\", shape=\"(batch, 2, seq, seq)\", dtype=0)\n"
       "y = softmax(x, axis=-1)",
       {{{"batch", 1}, {"seq", 63}}, {{"batch", 2}, {"seq", 64}}, {{"batch", 1}, {"seq", 130}}}},
      3);
}
