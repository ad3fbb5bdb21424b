// Space: a schedule's tuning knobs (AutoTVM's define_knob / define_split) — each with its
// candidate values and the value the schedule's rule picks — and the points of that space.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace loupe::backend {

/// A point of a space: a value per knob name. Knobs it does not name take the rule's value.
using Config = std::map<std::string, int64_t>;

/// One knob of a schedule.
struct Knob {
  std::string name;
  std::vector<int64_t> candidates; ///< in increasing order, the rule's value among them
  int64_t rule = 0;                ///< what the schedule picks untuned: the default point's value
  std::string doc;                 ///< what it decides
};

/// "product of `knobs` at most `cap`": a point whose knobs multiply to more (a register tile
/// with more accumulators than registers) is not in the space.
struct ProductLimit {
  std::vector<std::string> knobs;
  int64_t cap = 0;
};

/// The knobs a schedule declared, in declaration order, and the limits on their combinations.
/// Its points are numbered in mixed radix (the first knob varies slowest).
struct ConfigSpace {
  std::vector<Knob> knobs;
  std::vector<ProductLimit> limits;

  /// The number of points, limits ignored (saturating at 2^62).
  uint64_t size() const;
  /// The number of points within the limits (counted; capped at `cap`).
  uint64_t validCount(uint64_t cap = uint64_t{1} << 20) const;
  /// Every knob at the rule's value.
  Config defaultConfig() const;
  /// The point numbered `index` (< size()).
  Config at(uint64_t index) const;
  /// The number of a point (each knob's value must be a candidate).
  uint64_t indexOf(const Config &c) const;
  /// Whether `c` names every knob with one of its candidates and keeps within the limits.
  bool contains(const Config &c) const;
  /// The knob called `name`, or null.
  const Knob *find(const std::string &name) const;
  /// What `:space FUNC` prints: a line per knob (name, candidates, rule, doc), the limits and
  /// the size.
  std::string print() const;
};

/// "reg_n=6 oc_tiles=2" — a config in knob-name order.
std::string configText(const Config &c);

} // namespace loupe::backend
