// Instruments: the pass instruments Loupe ships — trace, print before/after, timing, effects.
#pragma once

#include "passes/Pass.h"

#include <chrono>
#include <memory>
#include <ostream>
#include <set>
#include <string>
#include <vector>

namespace loupe {

/// Where instruments write: the front end points it at the running command's output.
using Sink = std::shared_ptr<std::ostream *>;

/// True when two graphs have the same nodes, outputs and attributes.
bool sameGraph(const Graph &a, const Graph &b);

/// Prints "Applied passes NAME" and the graph after every top-level pass, the way seed 000's
/// patched Graph.apply did (passes nested inside another pass are not printed).
class TraceInstrument : public PassInstrument {
public:
  explicit TraceInstrument(Sink sink) : sink_(std::move(sink)) {}
  std::string name() const override { return "trace"; }
  void beforePass(const Graph &, const PassInfo &p) override {
    if (p.name != "sequential") // a pipeline's passes count as applied, not the wrapper
      ++depth_;
  }
  void afterPass(const Graph &before, const Graph &after, const PassInfo &p) override;

private:
  Sink sink_;
  int depth_ = 0;
};

/// Prints the graph before or after the named passes (or all), optionally only when a pass
/// changed it.
class PrintInstrument : public PassInstrument {
public:
  enum class When { Before, After };
  /// `passes` empty means every pass.
  PrintInstrument(Sink sink, When when, std::set<std::string> passes, bool onlyChanged)
      : sink_(std::move(sink)), when_(when), passes_(std::move(passes)), onlyChanged_(onlyChanged) {
  }
  std::string name() const override;
  void beforePass(const Graph &g, const PassInfo &p) override;
  void afterPass(const Graph &before, const Graph &after, const PassInfo &p) override;

private:
  bool selected(const PassInfo &p) const { return passes_.empty() || passes_.count(p.name); }
  Sink sink_;
  When when_;
  std::set<std::string> passes_;
  bool onlyChanged_;
};

/// Prints the name of every pass as it starts, indented by nesting (seed 003's instrument).
class NamesInstrument : public PassInstrument {
public:
  explicit NamesInstrument(Sink sink) : sink_(std::move(sink)) {}
  std::string name() const override { return "names"; }
  void beforePass(const Graph &, const PassInfo &p) override {
    if (*sink_)
      **sink_ << std::string(2 * depth_, ' ') << "running " << p.name << "\n";
    ++depth_;
  }
  void afterPass(const Graph &, const Graph &, const PassInfo &) override { --depth_; }

private:
  Sink sink_;
  int depth_ = 0;
};

/// Times every pass, nested passes as children (Relay's PassTimingInstrument).
class TimingInstrument : public PassInstrument {
public:
  std::string name() const override { return "timing"; }
  void beforePass(const Graph &, const PassInfo &p) override;
  void afterPass(const Graph &, const Graph &, const PassInfo &) override;
  /// The tree, one TAB per depth: `name: <total>us [<self>us] (<% of all>%; <% of parent>%)`.
  /// Clears what was collected.
  std::string render();

private:
  struct Node {
    std::string name;
    std::chrono::steady_clock::time_point start;
    double micros = 0;
    std::vector<size_t> children;
  };
  std::vector<Node> nodes_;
  std::vector<size_t> roots_, stack_;
};

/// After every pass, how many nodes it added, removed and changed, and which graph attributes.
class EffectsInstrument : public PassInstrument {
public:
  explicit EffectsInstrument(Sink sink) : sink_(std::move(sink)) {}
  std::string name() const override { return "effects"; }
  void afterPass(const Graph &before, const Graph &after, const PassInfo &p) override;

private:
  Sink sink_;
};

/// "nodes +2 -1 ~0; attrs +shape ~dtype -pattern": what changed from `a` to `b`. Nodes are
/// matched by name; a node with the same name but another op, inputs or attributes changed.
std::string describeEffects(const Graph &a, const Graph &b);

} // namespace loupe
