// PrecomputeCacheTest: PrecomputePrune's evaluated params kept in the kernel cache — the blob
// format for every dtype, damaged blobs, what the key depends on, and lookup before evaluation.
#include "TestUtil.h"

#include "backend/PrecomputeCache.h"
#include "core/DType.h"

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <random>

namespace loupe::test {
namespace {

namespace fs = std::filesystem;

std::vector<StoredTensor> stored(const std::vector<Tensor> &ts) { return {ts.begin(), ts.end()}; }

TEST(PrecomputeCache, TensorsRoundTripExactlyInEveryWidth) {
  std::vector<Tensor> ts = tensorsOfEveryWidth();
  std::string blob = backend::encodeTensors(stored(ts));
  std::optional<std::vector<StoredTensor>> back = backend::decodeTensors(blob, ts.size());
  ASSERT_TRUE(back);
  ASSERT_EQ(back->size(), ts.size());
  for (size_t i = 0; i < ts.size(); ++i) {
    Tensor t = (*back)[i].load();
    EXPECT_EQ(t.shape, ts[i].shape) << i;
    EXPECT_EQ(t.dtype, ts[i].dtype) << i;
    EXPECT_EQ(t.data, ts[i].data) << i;
  }
  // 4 magic + 4 count; float32 [2,2]: 4 dtype + 4 rank + 16 dims + 16 data.
  // Then float64 [3], float16 [2], bfloat16 [3], int64 [2], int8 [3], uint8 [2], bool [1],
  // int32 scalar, float32 [0, 4].
  EXPECT_EQ(blob.size(), 8 + (8 + 16 + 16) + (8 + 8 + 24) + (8 + 8 + 4) + (8 + 8 + 6) +
                             (8 + 8 + 16) + (8 + 8 + 3) + (8 + 8 + 2) + (8 + 8 + 1) + (8 + 0 + 4) +
                             (8 + 16 + 0));
}

TEST(PrecomputeCache, ADamagedBlobIsRefusedNotMisread) {
  std::string blob = backend::encodeTensors(stored({tensor({2}, {1, 2})}));
  EXPECT_TRUE(backend::decodeTensors(blob, 1));
  EXPECT_FALSE(backend::decodeTensors(blob, 2));                    // not the count asked for
  EXPECT_FALSE(backend::decodeTensors(blob.substr(0, 20), 1));      // cut short
  EXPECT_FALSE(backend::decodeTensors(blob + "x", 1));              // trailing bytes
  EXPECT_FALSE(backend::decodeTensors("LPC0" + blob.substr(4), 1)); // another format
  EXPECT_FALSE(backend::decodeTensors("", 1));
  // A shape that claims more than the blob holds is refused before anything is allocated for
  // it (2^40 float32 elements).
  std::string huge = blob;
  int64_t big = int64_t(1) << 40;
  std::memcpy(huge.data() + 16, &big, 8); // the first dimension
  EXPECT_FALSE(backend::decodeTensors(huge, 1));
  std::string badType = blob;
  badType[8] = 99; // the dtype code
  EXPECT_FALSE(backend::decodeTensors(badType, 1));
}

// A small network's precompute graph: a weight scaled and a batch-norm-like scale's square root.
struct Pre {
  Graph graph;
  std::map<std::string, Tensor> params;
};

Pre precomputeGraph(double weightScale = 2) {
  Engine e;
  run(e, "x = Variable(\"x\")\nw = Variable(\"w\")\ns = Variable(\"s\")\n"
         "y = conv2d(x, w * " +
             std::to_string(weightScale) +
             ", channels=3, kernel_size=(1,1), use_bias=False) * sqrt(s)\n:graph y");
  Graph g = e.current()->graph;
  std::mt19937 rng(9);
  std::uniform_real_distribution<double> u(0.1, 1);
  Pre p;
  for (auto [name, shape] :
       std::vector<std::pair<std::string, Shape>>{{"w", {3, 3, 1, 1}}, {"s", {3, 1, 1}}}) {
    Tensor t(shape, kFloat32);
    for (double &v : t.data)
      v = static_cast<float>(u(rng));
    p.params[name] = t;
  }
  g.attrs["param_name_list"] = GraphAttr::listStr({"w", "s"});
  Graph pruned = applyPasses(g, {"PrecomputePrune"});
  p.graph = withInputs(
      *std::static_pointer_cast<const Graph>(pruned.attr("precompute_graph")->opaque), p.params);
  return p;
}

TEST(PrecomputeCache, TheKeyFollowsTheGraphAndEveryValue) {
  Pre a = precomputeGraph(), b = precomputeGraph();
  std::string key = backend::precomputeKey(a.graph, storeAll(a.params));
  EXPECT_EQ(key.size(), 32u);
  EXPECT_EQ(key,
            backend::precomputeKey(b.graph, storeAll(b.params))); // the same inputs, the same key
  // The next float32 (the params are float32: a double between two floats is the same param).
  b.params["w"].data[5] = std::nextafter(static_cast<float>(b.params["w"].data[5]), 2.0f);
  EXPECT_NE(key, backend::precomputeKey(b.graph, storeAll(b.params))); // one value's last bit
  Pre c = precomputeGraph(3);
  EXPECT_NE(key, backend::precomputeKey(c.graph, storeAll(a.params))); // another computation
  Pre d = precomputeGraph();
  d.params["s"].dtype = kFloat64;
  EXPECT_NE(key, backend::precomputeKey(d.graph, storeAll(d.params))); // another dtype
}

TEST(PrecomputeCache, EvaluationLooksUpTheCacheFirstAndStoresWhatItComputes) {
  fs::path dir = fs::temp_directory_path() / ("loupe-precompute-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  backend::KernelCache cache(dir);
  Pre p = precomputeGraph();
  std::vector<Tensor> want = interpret(p.graph, p.params);
  ASSERT_EQ(want.size(), 2u);
  // Output k of an evaluation, by the precompute graph's output names.
  const std::vector<std::string> &names = p.graph.attr("output_names")->strs;
  auto output = [&](const backend::KernelCache *c, size_t k) {
    return backend::evaluatePrecompute(p.graph, storeAll(p.params), c).at(names.at(k)).load();
  };
  // Cold: computed, then stored under the key.
  EXPECT_EQ(output(&cache, 0).data, want[0].data);
  std::string key = "precompute-" + backend::precomputeKey(p.graph, storeAll(p.params));
  std::optional<std::string> entry = cache.load(key);
  ASSERT_TRUE(entry);
  EXPECT_EQ(*entry, backend::encodeTensors(stored(want)));
  // Warm: what the entry holds is what comes back (an entry made to differ shows it was read).
  std::vector<Tensor> marked = want;
  marked[1].data[0] = 12345;
  cache.store(key, backend::encodeTensors(stored(marked)));
  EXPECT_EQ(output(&cache, 1).data[0], 12345);
  // An entry that is not a blob of two tensors is recomputed and replaced.
  cache.store(key, backend::encodeTensors(stored({want[0]})));
  EXPECT_EQ(output(&cache, 1).data, want[1].data);
  EXPECT_EQ(*cache.load(key), backend::encodeTensors(stored(want)));
  // Without a cache: computed.
  EXPECT_EQ(output(nullptr, 1).data, want[1].data);
  fs::remove_all(dir);
}

} // namespace
} // namespace loupe::test
