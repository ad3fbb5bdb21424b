// Instruments: implementations of the shipped pass instruments.
#include "passes/Instruments.h"

#include "core/Printer.h"

#include <cstdio>
#include <functional>
#include <map>

namespace loupe {

bool sameGraph(const Graph &a, const Graph &b) {
  return a.sameOutputs(b) && diffAttrs(a.attrs, b.attrs).empty();
}

void TraceInstrument::afterPass(const Graph &, const Graph &after, const PassInfo &p) {
  if (p.name == "sequential" || --depth_ != 0 || !*sink_)
    return;
  // Python's print(res.ir()): the IR text plus a newline.
  **sink_ << "Applied passes " << p.name << "\n" << printGraphIR(after) << "\n";
}

std::string PrintInstrument::name() const {
  std::string s = when_ == When::Before ? "print-before" : "print-after";
  if (passes_.empty())
    s += " all";
  for (const auto &p : passes_)
    s += " " + p;
  return onlyChanged_ ? s + " (when changed)" : s;
}

void PrintInstrument::beforePass(const Graph &g, const PassInfo &p) {
  if (when_ == When::Before && selected(p) && *sink_)
    **sink_ << "Before pass " << p.name << ":\n" << printGraphIR(g) << "\n";
}

void PrintInstrument::afterPass(const Graph &before, const Graph &after, const PassInfo &p) {
  if (when_ != When::After || !selected(p) || !*sink_)
    return;
  if (onlyChanged_ && sameGraph(before, after))
    return;
  **sink_ << "After pass " << p.name << ":\n" << printGraphIR(after) << "\n";
}

void TimingInstrument::beforePass(const Graph &, const PassInfo &p) {
  size_t id = nodes_.size();
  nodes_.push_back({p.name, std::chrono::steady_clock::now(), 0, {}});
  if (stack_.empty())
    roots_.push_back(id);
  else
    nodes_[stack_.back()].children.push_back(id);
  stack_.push_back(id);
}

void TimingInstrument::afterPass(const Graph &, const Graph &, const PassInfo &) {
  if (stack_.empty())
    return;
  Node &n = nodes_[stack_.back()];
  n.micros =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - n.start).count();
  stack_.pop_back();
}

std::string TimingInstrument::render() {
  double all = 0;
  for (size_t r : roots_)
    all += nodes_[r].micros;
  std::string out;
  std::function<void(size_t, int, double)> line = [&](size_t id, int depth, double parent) {
    const Node &n = nodes_[id];
    double self = n.micros;
    for (size_t c : n.children)
      self -= nodes_[c].micros;
    char buf[160];
    std::snprintf(buf, sizeof buf, "%s: %.0fus [%.0fus] (%.2f%%; %.2f%%)\n", n.name.c_str(),
                  n.micros, self, all > 0 ? 100.0 * n.micros / all : 0.0,
                  parent > 0 ? 100.0 * n.micros / parent : 100.0);
    out += std::string(depth, '\t') + buf;
    for (size_t c : n.children)
      line(c, depth + 1, n.micros);
  };
  for (size_t r : roots_)
    line(r, 0, all);
  nodes_.clear();
  roots_.clear();
  stack_.clear();
  return out;
}

std::string describeEffects(const Graph &a, const Graph &b) {
  std::map<std::string, const Node *> before, after;
  for (const auto &n : a.index().nodes)
    before[n.node->name] = n.node.get();
  for (const auto &n : b.index().nodes)
    after[n.node->name] = n.node.get();
  auto signature = [](const Node *n) {
    std::string s = n->isVariable() ? "null" : n->op->name;
    for (const auto &e : n->inputs)
      s += "|" + e.node->name + "." + std::to_string(e.index);
    for (const auto &[k, v] : n->attrs)
      s += "|" + k + "=" + v;
    return s;
  };
  int added = 0, removed = 0, changed = 0;
  for (const auto &[name, n] : after)
    if (!before.count(name))
      ++added;
    else if (before[name] != n && signature(before[name]) != signature(n))
      ++changed;
  for (const auto &[name, n] : before)
    removed += !after.count(name);
  std::string s = "nodes +" + std::to_string(added) + " -" + std::to_string(removed) + " ~" +
                  std::to_string(changed) + "; attrs";
  std::string attrs;
  for (const auto &c : diffAttrs(a.attrs, b.attrs))
    attrs += std::string(" ") + c.kind + c.key;
  return s + (attrs.empty() ? " unchanged" : attrs);
}

void EffectsInstrument::afterPass(const Graph &before, const Graph &after, const PassInfo &p) {
  if (*sink_)
    **sink_ << p.name << ": " << describeEffects(before, after) << "\n";
}

} // namespace loupe
