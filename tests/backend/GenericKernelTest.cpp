// GenericKernelTest: functions of symbolic shapes lowered once to generic kernels — loops over
// `batch*seq` bound at run time — equal, at every size, to the kernels lowered for that size.
#include "TestUtil.h"

#include "backend/Codegen.h"
#include "backend/LowerFunction.h"
#include "core/DType.h"
#include "core/FusedModule.h"
#include "core/loop/LoopIR.h"
#include "passes/Symbols.h"

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

// Runs a compiled kernel on `args`, its outputs shaped as `shapes` says.
std::vector<Tensor> callCompiled(const backend::CompiledModule &m, const std::string &name,
                                 const std::vector<Tensor> &args,
                                 const std::vector<loop::ComputeRef> &outputs) {
  std::vector<std::vector<uint64_t>> bufs;
  auto add = [&](const std::vector<double> &v, int dtype) {
    int64_t width = dtypeBytes(dtype);
    bufs.emplace_back((v.size() * static_cast<size_t>(width) + 7) / 8 + 1);
    for (size_t i = 0; i < v.size(); ++i)
      storeElement(reinterpret_cast<char *>(bufs.back().data()) + i * static_cast<size_t>(width),
                   dtype, v[i]);
  };
  for (const Tensor &t : args)
    add(t.data, t.dtype);
  for (const auto &o : outputs)
    add(std::vector<double>(static_cast<size_t>(numElements(o->shape)), 0.0), o->dtype);
  std::vector<void *> ptrs;
  for (auto &b : bufs)
    ptrs.push_back(b.data());
  m.call(name, ptrs);
  std::vector<Tensor> out;
  for (size_t k = 0; k < outputs.size(); ++k) {
    Tensor t(outputs[k]->shape, outputs[k]->dtype);
    const char *base = reinterpret_cast<const char *>(bufs[args.size() + k].data());
    for (size_t i = 0; i < t.data.size(); ++i)
      t.data[i] = loadElement(base + i * static_cast<size_t>(dtypeBytes(t.dtype)), t.dtype);
    out.push_back(std::move(t));
  }
  return out;
}

struct GenericCase {
  std::string program; ///< defines y over variables with symbolic shapes
  std::vector<SymBindings> sizes;
};

// Every function of the program lowers to a generic kernel once; at each binding, the generic
// kernel on the loop interpreter and compiled equals, bit for bit, the kernel lowered for those
// sizes (the same schedule's loops, only their extents read at run time).
void expectGenericEqualsFixed(const GenericCase &c, int optLevel) {
  SCOPED_TRACE(c.program + " at opt_level " + std::to_string(optLevel));
  Graph g = built(c.program);
  auto symbolic = fused(g, optLevel);
  ASSERT_FALSE(symbolic.empty());
  std::vector<backend::LoweredFunction> generic;
  for (const auto &[name, f] : symbolic) {
    generic.push_back(backend::lowerFunction(*f));
    EXPECT_FALSE(generic.back().sizeSymbols.empty()) << name << " is not generic";
  }
  auto module = backend::CompiledModule::compile(generic);
  for (const SymBindings &b : c.sizes) {
    auto fixed = fused(bindSymbols(g, b), optLevel);
    ASSERT_EQ(fixed.size(), generic.size());
    for (const backend::LoweredFunction &gen : generic) {
      SCOPED_TRACE(gen.name);
      ASSERT_TRUE(fixed.count(gen.name));
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
      ASSERT_EQ(want.size(), interp.size());
      for (size_t k = 0; k < want.size(); ++k) {
        EXPECT_EQ(interp[k].data, want[k].data) << "interpreted, output " << k;
        EXPECT_EQ(compiled[k].data, compiledFixed[k].data) << "compiled, output " << k;
      }
    }
  }
}

const std::vector<SymBindings> kSizes = {
    {{"batch", 1}, {"seq", 1}}, {{"batch", 2}, {"seq", 3}}, {{"batch", 3}, {"seq", 37}}};

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
      // a symbolic innermost axis (the scores' seq × seq)
      {"x = Variable(\"x\", shape=\"(batch, 2, seq, seq)\", dtype=0)\n"
       "y = elemwise_add(x, x) * 0.5",
       kSizes},
  };
  return c;
}

TEST(GenericKernel, InjectiveFunctionsEqualFixedKernelsAtEverySize) {
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

// A rule that computes with sizes (reshape's flat index) is not lowered over symbolic shapes:
// lowering says which node and op, and nothing is made.
TEST(GenericKernel, RulesThatReadSizesAreRefused) {
  Graph g = built("x = Variable(\"x\", shape=\"(batch, seq, 8)\", dtype=0)\n"
                  "y = reshape(relu(x), shape=(0, -1))");
  auto fns = fused(g, 2);
  ASSERT_EQ(fns.size(), 1u);
  expectError([&] { backend::lowerFunction(*fns.begin()->second); },
              "lower fuse_relu_reshape: the rule of reshape0 (reshape) computes with sizes, and "
              "its input's shape is symbolic");
}

} // namespace
