// AttrOrderTest: NNVM's attribute print order, derived from the hash map it kept attributes in,
// against every attribute print of the seeds and against libstdc++'s own container.
#include "core/AttrOrder.h"

#include <gtest/gtest.h>

#include <functional>
#include <random>
#include <string>
#include <unordered_map>

namespace loupe {
namespace {

std::vector<std::string> ordered(const std::vector<std::string_view> &keys, size_t presized = 0) {
  std::vector<std::string> out;
  for (size_t i : nnvmDictOrder(keys, presized))
    out.emplace_back(keys[i]);
  return out;
}

using Keys = std::vector<std::string>;

// Every attribute line the seeds print, from the order NNVM's code inserted the keys: Python's
// keyword arguments as written in the cells (seeds 000 and 001), TVMOpParam::UpdateDict (its
// fields in name order), and the gradients' MakeNode lists as NNVM's sources wrote them.
TEST(AttrOrder, EveryAttributePrintOfTheSeeds) {
  // seed 000 In[2], seed 001: sym.conv2d(..., channels=3, kernel_size=(5,5))
  EXPECT_EQ(ordered({"channels", "kernel_size"}), (Keys{"kernel_size", "channels"}));
  // sym.conv2d(..., channels=3, kernel_size=(5,5), padding=[2,2]); seed 001's
  // conv2d(channels=13, kernel_size=(3,3), padding=[1,1]) and its _conv2d_grad copy
  EXPECT_EQ(ordered({"channels", "kernel_size", "padding"}),
            (Keys{"channels", "padding", "kernel_size"}));
  // GraphFuseCompile's tvm_op
  EXPECT_EQ(ordered({"flatten_data", "func_name", "num_inputs", "num_outputs"}),
            (Keys{"num_outputs", "num_inputs", "flatten_data", "func_name"}));
  // softmax's gradient: sum(..., {{"axis", …}, {"keepdims", "true"}})
  EXPECT_EQ(ordered({"axis", "keepdims"}, 2), (Keys{"keepdims", "axis"}));
  // sum's gradient: expand_like(..., {{"axis", …}, {"exclude", …}})
  EXPECT_EQ(ordered({"axis", "exclude"}, 2), (Keys{"exclude", "axis"}));
  // dense(units=10), sum(keepdims=True), greater(exclude='true'): one key
  EXPECT_EQ(ordered({"units"}), (Keys{"units"}));
}

// A dict made from a list of two entries (MakeNode) iterates as one filled key by key; from three
// its buckets are sized for all three before any goes in, and the order can differ.
TEST(AttrOrder, APresizedDictOfTwoIsFilledLikeAnyOther) {
  EXPECT_EQ(ordered({"axis", "keepdims"}, 2), ordered({"axis", "keepdims"}));
  EXPECT_EQ(ordered({"keepdims", "axis"}, 2), ordered({"keepdims", "axis"}));
  // Hand-worked from the hashes: filled key by key the map grows from 3 to 7 buckets before
  // padding goes in (channels and kernel_size share no bucket of 7; padding joins kernel_size's);
  // sized for three it has 5 buckets from the start and no rehash.
  EXPECT_EQ(libstdcxxStringHash("channels") % 7 != libstdcxxStringHash("kernel_size") % 7, true);
  EXPECT_EQ(libstdcxxStringHash("padding") % 7, libstdcxxStringHash("kernel_size") % 7);
  EXPECT_EQ(ordered({"channels", "kernel_size", "padding"}, 3),
            (Keys{"padding", "kernel_size", "channels"}));
}

// A key written twice keeps its first place; AttrDict's own order is the written one and
// nnvmOrdered reorders a copy.
TEST(AttrOrder, ARepeatedKeyAndTheDictItself) {
  EXPECT_EQ(ordered({"channels", "kernel_size", "channels"}), (Keys{"kernel_size", "channels"}));
  AttrDict written;
  written.emplace_back("channels", "3");
  written.emplace_back("kernel_size", "(5, 5)");
  AttrDict printed = nnvmOrdered(written);
  ASSERT_EQ(printed.size(), 2u);
  EXPECT_EQ(printed[0], (std::pair<std::string, std::string>{"kernel_size", "(5, 5)"}));
  EXPECT_EQ(printed[1], (std::pair<std::string, std::string>{"channels", "3"}));
  EXPECT_EQ(written[0].first, "channels");
  AttrDict listed{{"axis", "1"}, {"keepdims", "true"}, {"exclude", "0"}};
  EXPECT_EQ(listed.presized, 3u);
  EXPECT_EQ(AttrDict(written).presized, 0u);
}

#ifdef __GLIBCXX__
// The hash is libstdc++'s own std::hash<std::string> (where Loupe is built with libstdc++).
TEST(AttrOrder, TheHashIsLibstdcxxs) {
  std::string s;
  for (int n = 0; n < 40; ++n) {
    EXPECT_EQ(libstdcxxStringHash(s), std::hash<std::string>{}(s)) << s;
    s += static_cast<char>('a' + (n * 7) % 26);
  }
}

// The simulated table against libstdc++'s real one: a std::unordered_map grown through the same
// bucket counts (today's library picks other counts by itself, but inserts and rehashes as GCC
// 5's did) iterates in the order nnvmDictOrder gives, for 3000 random dicts of up to 60 keys.
TEST(AttrOrder, TheSimulatedTableIteratesAsLibstdcxxsOwn) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 3000; ++trial) {
    std::vector<std::string> keys(1 + rng() % 60);
    for (std::string &k : keys)
      for (size_t n = 1 + rng() % 14; n-- > 0;)
        k += static_cast<char>('a' + rng() % 26);
    std::unordered_map<std::string, int> real;
    real.rehash(1);
    // GCC 5's growth: at the first insertion 3 buckets, then the table prime after twice the
    // count whenever the elements reach it.
    size_t buckets = 1, nextResize = 0;
    for (const std::string &k : keys) {
      if (real.count(k))
        continue;
      if (real.size() + 1 >= nextResize && real.size() + 1 >= buckets) {
        std::__detail::_Prime_rehash_policy policy;
        size_t want = std::max(real.size() + 2, buckets * 2);
        buckets = want <= 3 ? 3 : want <= 7 ? 7 : policy._M_next_bkt(want);
        nextResize = buckets;
        real.rehash(buckets);
        ASSERT_EQ(real.bucket_count(), buckets);
      }
      real.emplace(k, 0);
    }
    std::vector<std::string> fromReal;
    for (const auto &kv : real)
      fromReal.push_back(kv.first);
    std::vector<std::string_view> views(keys.begin(), keys.end());
    ASSERT_EQ(ordered(views), fromReal) << "trial " << trial;
  }
}
#endif

} // namespace
} // namespace loupe
