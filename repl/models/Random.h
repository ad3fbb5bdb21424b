// Random: the zoo's param values, drawn fast — std::mt19937's sequence and libstdc++'s
// uniform_real_distribution<double> to the bit, with a branch-free refill the compiler
// vectorises (bert-base draws 220 million numbers; std's refill took 40% of `:model`).
#pragma once

#include <cmath>
#include <cstdint>

namespace loupe::models {

/// The 32-bit Mersenne Twister, the same numbers as std::mt19937 seeded the same.
class Mt19937 {
public:
  explicit Mt19937(uint32_t seed) {
    state_[0] = seed;
    for (uint32_t i = 1; i < kN; ++i)
      state_[i] = 1812433253u * (state_[i - 1] ^ (state_[i - 1] >> 30)) + i;
  }
  /// The next number, tempered.
  uint32_t operator()() {
    if (next_ == kN)
      refill();
    uint32_t y = state_[next_++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    return y ^ (y >> 18);
  }

private:
  static constexpr uint32_t kN = 624, kM = 397;
  static uint32_t twist(uint32_t word, uint32_t nextWord, uint32_t far) {
    uint32_t y = (word & 0x80000000u) | (nextWord & 0x7fffffffu);
    return far ^ (y >> 1) ^ ((0u - (y & 1u)) & 0x9908b0dfu); // no branch on the low bit
  }
  // Three runs without a dependence shorter than a vector: words before N - M read old words
  // M ahead, the rest read new words N - M behind.
  void refill() {
    for (uint32_t k = 0; k < kN - kM; ++k)
      state_[k] = twist(state_[k], state_[k + 1], state_[k + kM]);
    for (uint32_t k = kN - kM; k < kN - 1; ++k)
      state_[k] = twist(state_[k], state_[k + 1], state_[k - (kN - kM)]);
    state_[kN - 1] = twist(state_[kN - 1], state_[0], state_[kM - 1]);
    next_ = 0;
  }
  uint32_t state_[kN];
  uint32_t next_ = kN;
};

/// std::uniform_real_distribution<double>(a, b)(rng) as libstdc++ computes it: two numbers
/// make a canonical value in [0, 1) (generate_canonical), scaled to [a, b).
inline double uniform(Mt19937 &rng, double a, double b) {
  double sum = 0, scale = 1;
  for (int k = 0; k < 2; ++k) {
    sum += static_cast<double>(rng()) * scale;
    scale *= 4294967296.0;
  }
  double canonical = sum / scale;
  if (canonical >= 1)
    canonical = std::nextafter(1.0, 0.0);
  return canonical * (b - a) + a;
}

} // namespace loupe::models
