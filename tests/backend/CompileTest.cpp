// CompileTest: how lowered functions become machine code — functions with the same loops
// compiled once, the same result on any number of compile threads, guarded vector loops run
// as masked vectors with the scalar loop's numbers, and the on-disk kernel cache.
#include "TestUtil.h"

#include "backend/Build.h"
#include "backend/Codegen.h"
#include "backend/KernelCache.h"
#include "core/DType.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <unistd.h>

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

namespace {

namespace fs = std::filesystem;

// An empty folder of the test's own (the tests of one binary may run in parallel processes).
fs::path freshDir(const std::string &name) {
  fs::path d =
      fs::temp_directory_path() / ("loupe-cache-test-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(d);
  return d;
}

std::vector<fs::path> entries(const fs::path &dir) {
  std::vector<fs::path> v;
  for (const auto &e : fs::directory_iterator(dir))
    if (e.path().extension() == ".kernel")
      v.push_back(e.path());
  std::sort(v.begin(), v.end());
  return v;
}

} // namespace

TEST(KernelCache, StoresLoadsAndRefusesDamagedEntries) {
  fs::path dir = freshDir("entries");
  backend::KernelCache cache(dir);
  EXPECT_FALSE(cache.load("abc"));
  ASSERT_TRUE(cache.store("abc", std::string("object\0code", 11)));
  EXPECT_EQ(cache.load("abc"), std::string("object\0code", 11));
  EXPECT_EQ(cache.summary().entries, 1u);
  // A flipped byte in the payload: the checksum fails, the entry goes.
  fs::path p = dir / "abc.kernel";
  std::string bytes;
  {
    std::ifstream in(p, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  std::string flipped = bytes;
  flipped.back() ^= 1;
  std::ofstream(p, std::ios::binary) << flipped;
  EXPECT_FALSE(cache.load("abc"));
  EXPECT_FALSE(fs::exists(p));
  // Truncated (a writer that died, a full disk): refused as well.
  std::ofstream(p, std::ios::binary) << bytes.substr(0, bytes.size() - 3);
  EXPECT_FALSE(cache.load("abc"));
  std::ofstream(p, std::ios::binary) << "LOUPE";
  EXPECT_FALSE(cache.load("abc"));
  // No temporary files are left behind.
  for (const auto &e : fs::directory_iterator(dir))
    EXPECT_NE(e.path().extension(), ".tmp") << e.path();
  fs::remove_all(dir);
}

TEST(KernelCache, EntriesAreWrittenInPiecesAndReadAPieceAtATime) {
  fs::path dir = freshDir("pieces");
  backend::KernelCache cache(dir);
  std::string a = "weights ", b = "in pieces";
  ASSERT_TRUE(cache.store("p", {{a.data(), a.size()}, {b.data(), b.size()}}));
  EXPECT_EQ(cache.load("p"), a + b); // the same entry as the joined bytes make
  // Read in two pieces where the reader wants them; the size is told first.
  char first[8], second[9];
  uint64_t told = 0;
  EXPECT_TRUE(cache.load("p", [&](const backend::KernelCache::PayloadReader &read, uint64_t size) {
    told = size;
    return read(first, 8) && read(second, 9);
  }));
  EXPECT_EQ(told, 17u);
  EXPECT_EQ(std::string(first, 8) + std::string(second, 9), a + b);
  // A reader that asks past the end, leaves bytes unread or refuses what it read: no hit, and
  // the entry goes (it is not what the reader expects).
  EXPECT_FALSE(cache.load("p", [&](const backend::KernelCache::PayloadReader &read, uint64_t) {
    char more[18];
    return read(more, 18);
  }));
  EXPECT_FALSE(fs::exists(dir / "p.kernel"));
  ASSERT_TRUE(cache.store("p", {{a.data(), a.size()}, {b.data(), b.size()}}));
  EXPECT_FALSE(cache.load("p", [&](const backend::KernelCache::PayloadReader &read, uint64_t) {
    return read(first, 8);
  }));
  ASSERT_TRUE(cache.store("p", {{a.data(), a.size()}, {b.data(), b.size()}}));
  EXPECT_FALSE(
      cache.load("p", [](const backend::KernelCache::PayloadReader &, uint64_t) { return false; }));
  fs::remove_all(dir);
}

TEST(KernelCache, AFolderThatCannotBeWrittenOnlyMeansNoCaching) {
  // A folder under a regular file can never be created, whoever runs the test (root ignores
  // permission bits).
  fs::path base = freshDir("unwritable");
  fs::create_directories(base);
  std::ofstream(base / "file") << "x";
  backend::KernelCache cache(base / "file" / "kernels");
  EXPECT_FALSE(cache.store("k", "code"));
  EXPECT_FALSE(cache.load("k"));
  EXPECT_EQ(cache.summary().entries, 0u);
  backend::CompileOptions o;
  o.cache = &cache;
  std::vector<backend::LoweredFunction> fns = loweredFunctions(kTwins, kTwinFunctions);
  auto m = backend::CompiledModule::compile(fns, o);
  EXPECT_EQ(m->stats().cacheHits, 0u);
  EXPECT_EQ(m->stats().cacheStored, 0u);
  auto plain = backend::CompiledModule::compile(fns);
  for (const auto &f : fns)
    EXPECT_EQ(runBits(*m, f, 0.2), runBits(*plain, f, 0.2)) << f.name;
  fs::remove_all(base);
}

TEST(KernelCache, TrimsTheLeastRecentlyUsedEntries) {
  fs::path dir = freshDir("trim");
  std::string payload(1000, 'x');
  backend::KernelCache cache(dir, 2500); // room for two entries of 1000 bytes and a header
  auto now = fs::file_time_type::clock::now();
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(cache.store("k" + std::to_string(i), payload));
    fs::last_write_time(dir / ("k" + std::to_string(i) + ".kernel"),
                        now - std::chrono::hours(3 - i)); // k0 oldest, k2 newest
  }
  ASSERT_TRUE(cache.load("k0")); // used now: the newest
  cache.trim();
  EXPECT_EQ(entries(dir), (std::vector<fs::path>{dir / "k0.kernel", dir / "k2.kernel"}));
  cache.clear();
  EXPECT_EQ(cache.summary().entries, 0u);
  fs::remove_all(dir);
}

TEST(KernelCache, ColdWarmAndDamagedBuildsGiveTheSameKernels) {
  fs::path dir = freshDir("builds");
  backend::KernelCache cache(dir);
  backend::CompileOptions o;
  o.cache = &cache;
  std::vector<backend::LoweredFunction> fns = loweredFunctions(kTwins, kTwinFunctions);
  auto off = backend::CompiledModule::compile(fns);
  auto cold = backend::CompiledModule::compile(fns, o);
  EXPECT_EQ(cold->stats().cacheHits, 0u);
  EXPECT_EQ(cold->stats().cacheStored, 2u);
  ASSERT_EQ(entries(dir).size(), 2u);
  auto warm = backend::CompiledModule::compile(fns, o);
  EXPECT_EQ(warm->stats().cacheHits, 2u);
  EXPECT_EQ(warm->stats().cacheStored, 0u);
  // One entry damaged: that kernel is compiled again and stored anew, the other loaded.
  fs::path victim = entries(dir)[0];
  fs::resize_file(victim, fs::file_size(victim) / 2);
  auto mended = backend::CompiledModule::compile(fns, o);
  EXPECT_EQ(mended->stats().cacheHits, 1u);
  EXPECT_EQ(mended->stats().cacheStored, 1u);
  for (const auto *m : {cold.get(), warm.get(), mended.get()}) {
    EXPECT_EQ(m->llvmIR(), off->llvmIR());
    for (const auto &f : fns) {
      EXPECT_EQ(m->sharedWith(f.name), off->sharedWith(f.name));
      EXPECT_EQ(runBits(*m, f, 0.4), runBits(*off, f, 0.4)) << f.name;
    }
  }
  fs::remove_all(dir);
}

TEST(KernelCache, ZooNetworksBuildTheSameWithTheCacheOffColdAndWarm) {
  // One network of each family the zoo's ops come from, at small inputs where the network
  // allows (squeezenet's and dcgan's layers fix theirs): what :build prints (the deploy graph),
  // every function's loops, and :run's numbers must not depend on where the kernels came from.
  fs::path dir = freshDir("zoo");
  ::setenv("XDG_CACHE_HOME", dir.c_str(), 1); // the engine's cache folder
  const std::vector<std::string> models = {"mlp", "resnet-18_v2 shape=(3, 32, 32) classes=10",
                                           "mobilenet shape=(3, 32, 32) classes=10",
                                           "squeezenet1.1 classes=10", "dcgan"};
  for (const std::string &model : models) {
    SCOPED_TRACE(model);
    std::vector<std::string> seen;
    for (const char *cache : {"off", "on", "on"}) {
      Engine e;
      run(e, std::string(":set cache ") + cache + "\n:model " + model + "\n:set opt_level 3");
      std::string built = output(e, ":build");
      ASSERT_EQ(built.find("error"), std::string::npos) << built;
      seen.push_back(built + output(e, ":lower") + output(e, ":run seed=3"));
      std::string stats = output(e, ":cache");
      if (seen.size() == 3) { // warm: nothing compiled
        EXPECT_NE(stats.find(" 0 compiled"), std::string::npos) << stats;
      }
    }
    EXPECT_EQ(seen[1], seen[0]);
    EXPECT_EQ(seen[2], seen[0]);
  }
  ::unsetenv("XDG_CACHE_HOME");
  fs::remove_all(dir);
}

TEST(KernelCache, TheEngineSwitchesTheCacheAndReportsIt) {
  fs::path dir = freshDir("engine");
  ::setenv("XDG_CACHE_HOME", dir.c_str(), 1);
  ::unsetenv("LOUPE_KERNEL_CACHE_MAX_MB"); // the 1 GiB default
  std::string kernels = (dir / "loupe" / "kernels").string();
  Engine e;
  EXPECT_EQ(output(e, ":cache"),
            "kernel cache " + kernels + ": 0 entries, 0.0 MB (at most 1073.7 MB)\nno build yet\n");
  EXPECT_EQ(output(e, ":set cache sometimes"),
            "error: cache must be on, off or clear, got 'sometimes'\n");
  run(e, ":set cache off\nx = Variable(\"x\", shape=(1, 4), dtype=0)\n:graph relu(x)\n:build");
  EXPECT_EQ(output(e, ":cache"), "kernel cache off (:set cache on uses " + kernels +
                                     ")\nlast build: 1 function, 1 distinct kernel, all compiled "
                                     "(cache off)\n");
  EXPECT_FALSE(fs::exists(kernels)); // off means nothing written
  run(e, ":undo\n:set cache on\n:build");
  EXPECT_EQ(output(e, ":cache").substr(0, kernels.size() + 23),
            "kernel cache " + kernels + ": 1 entry,");
  EXPECT_NE(output(e, ":cache")
                .find("last build: 1 function, 1 distinct kernel: 0 from the cache, "
                      "1 compiled (hit rate 0%), 1 stored\n"),
            std::string::npos);
  EXPECT_EQ(output(e, ":set cache clear"), "kernel cache cleared\n");
  EXPECT_TRUE(entries(kernels).empty());
  ::unsetenv("XDG_CACHE_HOME");
  fs::remove_all(dir);
}
