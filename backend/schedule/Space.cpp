// Space: the points of a schedule's knob space, numbered in mixed radix, and their printing.
#include "backend/schedule/Space.h"

#include "core/Error.h"

#include <algorithm>

namespace loupe::backend {

namespace {

constexpr uint64_t kSaturated = uint64_t{1} << 62;

bool withinLimits(const ConfigSpace &s, const Config &c) {
  for (const ProductLimit &l : s.limits) {
    int64_t product = 1;
    for (const std::string &k : l.knobs) {
      auto it = c.find(k);
      product *= it == c.end() ? 1 : it->second;
    }
    if (product > l.cap)
      return false;
  }
  return true;
}

std::string list(const std::vector<int64_t> &v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? " " : "") + std::to_string(v[i]);
  return s;
}

} // namespace

uint64_t ConfigSpace::size() const {
  uint64_t n = 1;
  for (const Knob &k : knobs)
    n = n > kSaturated / std::max<uint64_t>(1, k.candidates.size())
            ? kSaturated
            : n * std::max<uint64_t>(1, k.candidates.size());
  return n;
}

uint64_t ConfigSpace::validCount(uint64_t cap) const {
  uint64_t n = size();
  if (n > cap)
    return cap;
  uint64_t valid = 0;
  for (uint64_t i = 0; i < n; ++i)
    valid += withinLimits(*this, at(i));
  return valid;
}

Config ConfigSpace::defaultConfig() const {
  Config c;
  for (const Knob &k : knobs)
    c[k.name] = k.rule;
  return c;
}

Config ConfigSpace::at(uint64_t index) const {
  Config c;
  for (size_t i = knobs.size(); i-- > 0;) {
    const Knob &k = knobs[i];
    uint64_t n = std::max<uint64_t>(1, k.candidates.size());
    c[k.name] = k.candidates.empty() ? k.rule : k.candidates[index % n];
    index /= n;
  }
  return c;
}

uint64_t ConfigSpace::indexOf(const Config &c) const {
  uint64_t index = 0;
  for (const Knob &k : knobs) {
    uint64_t n = std::max<uint64_t>(1, k.candidates.size());
    auto v = c.find(k.name);
    auto at = v == c.end() ? k.candidates.end()
                           : std::find(k.candidates.begin(), k.candidates.end(), v->second);
    if (at == k.candidates.end())
      fail("knob ", k.name, " has no candidate ",
           v == c.end() ? "(missing)" : std::to_string(v->second));
    index = index * n + static_cast<uint64_t>(at - k.candidates.begin());
  }
  return index;
}

bool ConfigSpace::contains(const Config &c) const {
  for (const Knob &k : knobs) {
    auto v = c.find(k.name);
    if (v == c.end() ||
        std::find(k.candidates.begin(), k.candidates.end(), v->second) == k.candidates.end())
      return false;
  }
  return withinLimits(*this, c);
}

const Knob *ConfigSpace::find(const std::string &name) const {
  for (const Knob &k : knobs)
    if (k.name == name)
      return &k;
  return nullptr;
}

std::string ConfigSpace::print() const {
  if (knobs.empty())
    return "no knobs: this function's schedule has nothing to tune\n";
  std::string out;
  for (const Knob &k : knobs)
    out += "knob " + k.name + " in {" + list(k.candidates) + "}, rule " + std::to_string(k.rule) +
           "  (" + k.doc + ")\n";
  for (const ProductLimit &l : limits) {
    std::string names;
    for (const std::string &n : l.knobs)
      names += (names.empty() ? "" : " x ") + n;
    out += "limit " + names + " <= " + std::to_string(l.cap) + "\n";
  }
  uint64_t n = size();
  out +=
      "size " + (n >= kSaturated ? std::string("more than 2^62") : std::to_string(n)) + " points";
  if (!limits.empty())
    out += ", " + std::to_string(validCount()) + " within the limits";
  return out + "\n";
}

std::string configText(const Config &c) {
  std::string s;
  for (const auto &[k, v] : c)
    s += (s.empty() ? "" : " ") + k + "=" + std::to_string(v);
  return s;
}

} // namespace loupe::backend
