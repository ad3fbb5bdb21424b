// AttrOrder: the order NNVM printed a node's attributes in, derived from the hash table it kept
// them in.
#include "core/AttrOrder.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <string>

namespace loupe {

size_t libstdcxxStringHash(std::string_view s) {
  static_assert(sizeof(uint64_t) == 8);
  const uint64_t mul = (uint64_t{0xc6a4a793} << 32) + 0x5bd1e995;
  auto shiftMix = [](uint64_t v) { return v ^ (v >> 47); };
  const size_t len = s.size();
  const char *p = s.data();
  uint64_t hash = 0xc70f6907ULL ^ (len * mul);
  size_t whole = len & ~size_t{7};
  for (size_t i = 0; i < whole; i += 8) {
    uint64_t word;
    std::memcpy(&word, p + i, 8); // little-endian, as on every x86-64 NNVM ran on
    hash ^= shiftMix(word * mul) * mul;
    hash *= mul;
  }
  if (size_t rest = len & 7) {
    uint64_t tail = 0;
    for (size_t i = rest; i-- > 0;)
      tail = (tail << 8) + static_cast<unsigned char>(p[whole + i]);
    hash ^= tail;
    hash *= mul;
  }
  hash = shiftMix(hash) * mul;
  return static_cast<size_t>(shiftMix(hash));
}

namespace {

// libstdc++'s prime rehash policy of GCC 5 (max load factor 1, growth factor 2).
class PrimePolicy {
public:
  // The bucket count for at least n buckets, and the element count that triggers the next
  // growth.
  size_t nextBuckets(size_t n) {
    // Small requests come from a fast table (which rounds 2 up to 3); larger ones from the
    // library's table of primes, which holds every prime to 113 and then about one in ten.
    static const size_t fast[13] = {2, 2, 3, 5, 5, 7, 7, 11, 11, 11, 11, 13, 13};
    static const size_t primes[] = {17,  19,  23,  29,  31,  37,  41,  43,  47,  53,  59,  61,
                                    67,  71,  73,  79,  83,  89,  97,  103, 109, 113, 127, 137,
                                    139, 149, 157, 167, 179, 193, 199, 211, 227, 241, 257, 277,
                                    293, 313, 337, 359, 383, 409, 439, 467, 503, 541, 577, 619};
    size_t b;
    if (n < std::size(fast)) {
      b = fast[n];
    } else if (const size_t *at = std::lower_bound(std::begin(primes), std::end(primes), n);
               at != std::end(primes)) {
      b = *at;
    } else {
      // No node has hundreds of attributes; past the part of the table written here, the next
      // prime stands in for the table's entry.
      b = n;
      auto prime = [](size_t v) {
        for (size_t d = 2; d * d <= v; ++d)
          if (v % d == 0)
            return false;
        return true;
      };
      while (!prime(b))
        ++b;
    }
    nextResize_ = b;
    return b;
  }
  // The new bucket count if inserting `ins` elements into `elements` in `buckets` must grow
  // the table first, else 0.
  size_t needRehash(size_t buckets, size_t elements, size_t ins) {
    if (elements + ins < nextResize_)
      return 0;
    size_t minBuckets = elements + ins;
    if (minBuckets >= buckets)
      return nextBuckets(std::max(minBuckets + 1, buckets * 2));
    nextResize_ = buckets;
    return 0;
  }

private:
  size_t nextResize_ = 0;
};

// The table's nodes in a singly linked list with buckets pointing at the node before each
// bucket's first (kBefore: the list's head), as libstdc++'s _Hashtable keeps them.
class HashList {
public:
  explicit HashList(const std::vector<size_t> &hashes) : hash_(hashes), next_(hashes.size()) {}

  void setBuckets(size_t n) { buckets_.assign(n, kEmpty); }
  size_t buckets() const { return buckets_.size(); }

  void insert(int node) {
    size_t b = bucketOf(node);
    if (buckets_[b] != kEmpty) {
      int before = buckets_[b];
      next_[node] = nextOf(before);
      setNext(before, node);
      return;
    }
    next_[node] = head_;
    head_ = node;
    if (next_[node] != kNone)
      buckets_[bucketOf(next_[node])] = node;
    buckets_[b] = kBefore;
  }

  void rehash(size_t n) {
    int p = head_;
    head_ = kNone;
    setBuckets(n);
    size_t headBucket = 0;
    while (p != kNone) {
      int following = next_[p];
      size_t b = bucketOf(p);
      if (buckets_[b] == kEmpty) {
        next_[p] = head_;
        head_ = p;
        buckets_[b] = kBefore;
        if (next_[p] != kNone)
          buckets_[headBucket] = p;
        headBucket = b;
      } else {
        next_[p] = nextOf(buckets_[b]);
        setNext(buckets_[b], p);
      }
      p = following;
    }
  }

  std::vector<size_t> order() const {
    std::vector<size_t> out;
    for (int p = head_; p != kNone; p = next_[p])
      out.push_back(static_cast<size_t>(p));
    return out;
  }

private:
  static constexpr int kNone = -1, kBefore = -2, kEmpty = -3;
  size_t bucketOf(int node) const { return hash_[node] % buckets_.size(); }
  int nextOf(int before) const { return before == kBefore ? head_ : next_[before]; }
  void setNext(int before, int node) { (before == kBefore ? head_ : next_[before]) = node; }

  const std::vector<size_t> &hash_;
  std::vector<int> next_;
  std::vector<int> buckets_;
  int head_ = kNone;
};

} // namespace

std::vector<size_t> nnvmDictOrder(const std::vector<std::string_view> &keys, size_t presized) {
  std::vector<size_t> hashes;
  for (std::string_view k : keys)
    hashes.push_back(libstdcxxStringHash(k));
  PrimePolicy policy;
  HashList list(hashes);
  list.setBuckets(presized > 0 ? policy.nextBuckets(presized) : 1);
  size_t size = 0;
  for (size_t i = 0; i < keys.size(); ++i) {
    // A key inserted again finds itself and changes nothing (std::unordered_map::emplace).
    if (std::find(keys.begin(), keys.begin() + static_cast<std::ptrdiff_t>(i), keys[i]) !=
        keys.begin() + static_cast<std::ptrdiff_t>(i))
      continue;
    if (size_t grown = policy.needRehash(list.buckets(), size, 1))
      list.rehash(grown);
    list.insert(static_cast<int>(i));
    ++size;
  }
  return list.order();
}

AttrDict nnvmOrdered(const AttrDict &dict) {
  std::vector<std::string_view> keys;
  for (const auto &kv : dict)
    keys.push_back(kv.first);
  AttrDict out;
  for (size_t i : nnvmDictOrder(keys, dict.presized))
    out.push_back(dict[i]);
  return out;
}

} // namespace loupe
