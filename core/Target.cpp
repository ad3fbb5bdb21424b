// Target: a target string's CPU sized from its vector features (LLVM's for a named CPU, the
// machine's own for the host).
#include "core/Target.h"

#include "core/Error.h"

#include <algorithm>
#include <mutex>
#include <sstream>

namespace loupe {

namespace {

struct TargetInfo {
  std::mutex mutex;
  CpuFeatureSource source;
  std::optional<HostCpu> host;
};

TargetInfo &info() {
  static TargetInfo i;
  return i;
}

bool has(const std::vector<std::string> &features, const char *f) {
  return std::find(features.begin(), features.end(), f) != features.end();
}

// The value of option `-key=` in a target string, or "".
std::string option(const std::string &target, const std::string &key) {
  std::istringstream in(target);
  std::string word;
  while (in >> word)
    if (word.rfind(key, 0) == 0)
      return word.substr(key.size());
  return "";
}

std::string kib(int64_t bytes) {
  return bytes % (1 << 20) == 0 ? std::to_string(bytes >> 20) + " MiB"
                                : std::to_string(bytes >> 10) + " KiB";
}

// The vector features that decide the sizing, as `:target` lists them.
std::string vectorFeatures(const std::vector<std::string> &features) {
  std::string out;
  for (const char *f : {"sse4.2", "avx", "avx2", "fma", "avx512f"})
    if (has(features, f))
      out += (out.empty() ? "" : " ") + std::string(f);
  return out.empty() ? "none" : out;
}

} // namespace

std::string TargetCpu::isa() const {
  return vectorBytes >= 64 ? "AVX-512" : vectorBytes >= 32 ? "AVX2" : "SSE";
}

TargetCpu cpuFromFeatures(const std::vector<std::string> &features, int64_t l2Bytes) {
  TargetCpu c;
  c.l2Bytes = l2Bytes;
  if (has(features, "avx512f")) {
    c.vectorBytes = 64;
    c.registers = 32;
    c.broadcastOperand = true;
  } else if (has(features, "avx2") && has(features, "fma")) {
    c.vectorBytes = 32;
    c.registers = 16;
  } else {
    c.vectorBytes = 16;
    c.registers = 16;
  }
  return c;
}

int64_t assumedL2(const std::vector<std::string> &features) {
  return has(features, "avx512f") ? 1 << 20 : 512 << 10;
}

void setCpuFeatureSource(CpuFeatureSource source) {
  std::lock_guard<std::mutex> lock(info().mutex);
  info().source = std::move(source);
}

void setHostCpu(HostCpu host) {
  std::lock_guard<std::mutex> lock(info().mutex);
  info().host = std::move(host);
}

std::optional<HostCpu> hostCpu() {
  std::lock_guard<std::mutex> lock(info().mutex);
  return info().host;
}

TargetCpu targetCpuOf(const std::string &target) {
  std::string cpu = option(target, "-mcpu=");
  std::vector<std::string> features;
  int64_t l2 = 0;
  std::string from;
  {
    std::lock_guard<std::mutex> lock(info().mutex);
    const TargetInfo &i = info();
    if (cpu == "native") {
      if (!i.host)
        fail("target '", target, "': this machine's CPU is not known here");
      features = i.host->features;
      l2 = i.host->l2Bytes;
      from = "this machine's " + i.host->name + " (its features and the L2 its OS reports)";
    } else {
      std::string named = cpu.empty() ? "x86-64-v3" : cpu;
      std::optional<std::vector<std::string>> f;
      if (i.source)
        f = i.source(named);
      if (!f)
        fail("target '", target, "': LLVM does not know the CPU '", named, "'");
      features = *f;
      l2 = assumedL2(features);
      from = (cpu.empty() ? "x86-64-v3 (no -mcpu)" : cpu) +
             " as LLVM defines it, with the L2 of its class";
    }
  }
  // -mattr=+f,-g adjusts the features after the CPU's.
  std::string attrs = option(target, "-mattr=");
  for (size_t at = 0; at < attrs.size();) {
    size_t end = std::min(attrs.find(',', at), attrs.size());
    std::string a = attrs.substr(at, end - at);
    at = end + 1;
    if (a.size() < 2 || (a[0] != '+' && a[0] != '-'))
      fail("target '", target, "': -mattr entry '", a, "' is not +FEATURE or -FEATURE");
    std::string f = a.substr(1);
    features.erase(std::remove(features.begin(), features.end(), f), features.end());
    if (a[0] == '+')
      features.push_back(f);
  }
  if (!attrs.empty())
    from += ", then -mattr=" + attrs;
  TargetCpu c = cpuFromFeatures(features, l2);
  c.derivation = c.isa() + ": " + std::to_string(c.vectorBytes) + "-byte vectors, " +
                 std::to_string(c.registers) + " registers, " +
                 (c.broadcastOperand ? "broadcast FMA operands" : "broadcasts in registers") +
                 ", L2 " + kib(c.l2Bytes) + "; from " + from +
                 " (vector features: " + vectorFeatures(features) + ")";
  return c;
}

namespace {

// The rows whose accumulators fit the registers beside `vectors` rhs vectors and the lhs
// broadcast (read from memory by AVX-512's FMA; a register on AVX2); 0 when none do.
int64_t rowsBeside(int64_t vectors, const TargetCpu &cpu) {
  return (cpu.registers - vectors - (cpu.broadcastOperand ? 2 : 1)) / vectors;
}

} // namespace

MatmulTile chooseMatmulTile(int64_t rows, int64_t columns, const TargetCpu &cpu, int64_t lanes) {
  // Per step of k a tile of r rows x v vectors loads v rhs vectors and broadcasts r lhs
  // elements for r·v FMAs: the fewest loads per FMA whose accumulators fit (rowsBeside).
  MatmulTile best{1, 1};
  double bestCost = 0;
  for (int64_t v = 1; v <= std::min<int64_t>(4, std::max<int64_t>(1, columns / lanes)); ++v) {
    int64_t r = std::min(rows, rowsBeside(v, cpu));
    if (r < 1)
      break;
    double cost = static_cast<double>(r + v) / static_cast<double>(r * v);
    if (v == 1 || cost <= bestCost + 1e-9) {
      best = {r, v};
      bestCost = cost;
    }
  }
  return best;
}

int64_t matmulTileRows(int64_t vectors, const TargetCpu &cpu) {
  return std::max<int64_t>(1, rowsBeside(vectors, cpu));
}

} // namespace loupe
