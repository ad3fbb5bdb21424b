// CompileTest: how lowered functions become machine code — functions with the same loops
// compiled once, the same result on any number of compile threads, and guarded vector loops
// run as masked vectors with the scalar loop's numbers.
#include "TestUtil.h"

#include "backend/Build.h"
#include "backend/Codegen.h"
#include "core/DType.h"

#include <cmath>
#include <cstring>

using namespace loupe;
using namespace loupe::test;

namespace {

// copy and block_grad lower to the same loops: fuse_copy_sum and fuse_block_grad_sum are two
// functions (GraphFuseCompile names them by their ops) with one kernel. fuse_elemwise_add differs.
const char *kTwins = "x = Variable(\"x\", shape=(1, 3, 9, 9), dtype=0)\n"
                     "v = Variable(\"v\", shape=(1, 3, 9, 9), dtype=0)\n"
                     "y = elemwise_add(sum(copy(x), axis=1), sum(block_grad(v), axis=1))";
const std::vector<std::string> kTwinFunctions = {"fuse_copy_sum", "fuse_block_grad_sum",
                                                 "fuse_elemwise_add"};

// A convolution of width 7 with its relu (the seed schedule splits the width by 16).
const char *kConv = "x = Variable(\"x\", shape=(1, 3, 9, 9), dtype=0)\n"
                    "w = Variable(\"w\", shape=(4, 3, 3, 3), dtype=0)\n"
                    "y = relu(conv2d(x, w, channels=4, kernel_size=(3,3), use_bias=False))";

// The named fused functions of `program`'s graph `y`, lowered (opt level 2).
std::vector<backend::LoweredFunction> loweredFunctions(const std::string &program,
                                                       const std::vector<std::string> &names) {
  Engine e;
  run(e, program + "\n:graph y\n:apply InferShape InferType GraphFusePartition GraphFuseCompile");
  const Graph &g = e.current()->graph;
  auto module = std::static_pointer_cast<const FusedModule>(g.attr("module")->opaque);
  std::vector<backend::LoweredFunction> fns;
  for (const std::string &name : names)
    fns.push_back(backend::lowerFunction(*module->functions.at(name)));
  return fns;
}

// Runs a float32 function on inputs filled with sin(i * k) and returns its output's bits.
std::vector<uint32_t> runBits(const backend::CompiledModule &m, const backend::LoweredFunction &f,
                              double k) {
  std::vector<std::vector<float>> bufs;
  for (const auto &p : f.inputs) {
    std::vector<float> v(numElements(p->shape));
    for (size_t i = 0; i < v.size(); ++i)
      v[i] = static_cast<float>(std::sin(static_cast<double>(i) * k));
    bufs.push_back(v);
  }
  bufs.emplace_back(numElements(f.outputs[0]->shape), 0.0f);
  std::vector<void *> ptrs;
  for (auto &b : bufs)
    ptrs.push_back(b.data());
  m.call(f.name, ptrs);
  std::vector<uint32_t> bits(bufs.back().size());
  std::memcpy(bits.data(), bufs.back().data(), bits.size() * sizeof(float));
  return bits;
}

} // namespace

TEST(Compile, FunctionsWithTheSameLoopsShareOneKernel) {
  std::vector<backend::LoweredFunction> fns = loweredFunctions(kTwins, kTwinFunctions);
  auto m = backend::CompiledModule::compile(fns);
  EXPECT_EQ(m->stats().functions, 3u);
  EXPECT_EQ(m->stats().distinct, 2u);
  EXPECT_EQ(m->stats().done, 2u);
  EXPECT_EQ(m->sharedWith("fuse_block_grad_sum"), "fuse_copy_sum");
  EXPECT_EQ(m->sharedWith("fuse_copy_sum"), "");
  EXPECT_EQ(m->sharedWith("fuse_elemwise_add"), "");
  // Both names run, and the shared code computes what the first function's own would.
  EXPECT_EQ(runBits(*m, fns[1], 0.3), runBits(*m, fns[0], 0.3));
  // The IR and assembly of the shared function say whose code it runs.
  std::string note = "fuse_block_grad_sum runs the machine code of fuse_copy_sum";
  EXPECT_EQ(m->llvmIR("fuse_block_grad_sum").rfind("; " + note, 0), 0u);
  EXPECT_EQ(m->assembly("fuse_block_grad_sum").rfind("# " + note, 0), 0u);
  EXPECT_NE(m->llvmIR("fuse_block_grad_sum").find("define void @fuse_block_grad_sum("),
            std::string::npos);
  EXPECT_EQ(m->llvmIR("fuse_copy_sum").find("runs the machine code"), std::string::npos);
}

TEST(Compile, TheThreadCountDoesNotChangeTheResult) {
  std::vector<backend::LoweredFunction> fns = loweredFunctions(kTwins, kTwinFunctions);
  backend::CompileOptions one, two;
  one.threads = 1;
  two.threads = 2;
  size_t calls = 0;
  two.progress = [&](const backend::CompileStats &s) {
    ++calls;
    EXPECT_EQ(s.done, calls); // one call per distinct kernel, counting up
    EXPECT_EQ(s.distinct, 2u);
  };
  auto a = backend::CompiledModule::compile(fns, one),
       b = backend::CompiledModule::compile(fns, two);
  EXPECT_EQ(calls, 2u);
  EXPECT_EQ(a->llvmIR(), b->llvmIR());
  for (const auto &f : fns) {
    EXPECT_EQ(a->sharedWith(f.name), b->sharedWith(f.name));
    EXPECT_EQ(runBits(*a, f, 0.7), runBits(*b, f, 0.7)) << f.name;
  }
}

TEST(Compile, GuardedVectorLoopsGiveTheScalarLoopsNumbers) {
  // Width 7 split by 16: the seed schedule's `likely` guard around each vector step (printed as
  // a `for (xx.inner.s …)` loop), compiled as masked vectors. Without FMA contraction (opt 2)
  // every lane does the loop interpreter's float operations in its order: equal to the bit.
  std::vector<backend::LoweredFunction> fns = loweredFunctions(kConv, {"fuse_conv2d_relu"});
  EXPECT_NE(backend::printLowered(fns[0]).find("for (xx.inner.s, 0, 16)"), std::string::npos);
  auto m = backend::CompiledModule::compile(fns);
  std::vector<Tensor> args;
  for (const auto &p : fns[0].inputs) {
    Tensor t(p->shape, kFloat32);
    for (size_t i = 0; i < t.data.size(); ++i)
      t.data[i] = roundToDType(std::sin(static_cast<double>(i) * 0.3), kFloat32);
    args.push_back(t);
  }
  Tensor want = backend::evalLowered(fns[0], args).at(0);
  std::vector<uint32_t> got = runBits(*m, fns[0], 0.3);
  ASSERT_EQ(got.size(), want.data.size());
  for (size_t i = 0; i < got.size(); ++i) {
    float w = static_cast<float>(want.data[i]);
    uint32_t wb;
    std::memcpy(&wb, &w, sizeof wb);
    ASSERT_EQ(got[i], wb) << "element " << i;
  }
  // The vector steps are masked loads and stores, not a loop LLVM unrolls 16 times.
  std::string ir = m->llvmIR("fuse_conv2d_relu");
  EXPECT_NE(ir.find("llvm.masked.store"), std::string::npos);
}
