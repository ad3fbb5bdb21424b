// SizeRanges: each tuned size's winner measured at the other sizes, and the sizes each serves.
#include "backend/tune/SizeRanges.h"

#include "backend/Runtime.h"
#include "core/Text.h"
#include "passes/Symbols.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

namespace loupe::backend {

int crossMeasure(const std::vector<SizeTasks> &sizes, const TuningLog &log,
                 const std::filesystem::path &logFile, const std::string &target,
                 const MeasureFn &measure) {
  const int threads = numThreads();
  const std::string file = logFile.string();
  // Each family's winners, as the log stands before any is measured elsewhere.
  std::map<std::string, std::vector<SizeWinner>> winners;
  for (const SizeTasks &s : sizes)
    for (const Task &t : s.tasks)
      if (!t.family.empty() && !winners.count(t.family))
        winners[t.family] = sizeWinners(log, file, t.family, target, threads);
  int measured = 0;
  for (const SizeTasks &s : sizes)
    for (const Task &t : s.tasks) {
      if (t.family.empty())
        continue;
      const std::vector<SizeWinner> &ws = winners[t.family];
      auto own =
          std::find_if(ws.begin(), ws.end(), [&](const SizeWinner &w) { return w.task == t.key; });
      if (own == ws.end())
        continue; // this size's task was not measured (the search was stopped)
      const Config here = own->choice.point ? *own->choice.point : t.rule;
      std::vector<Config> others;
      for (const SizeWinner &w : ws)
        if (w.choice.point && *w.choice.point != here && *w.choice.point != t.rule &&
            t.space.contains(*w.choice.point) &&
            std::find(others.begin(), others.end(), *w.choice.point) == others.end())
          others.push_back(*w.choice.point);
      int trial =
          static_cast<int>(std::count_if(log.records.begin(), log.records.end(),
                                         [&](const TuningRecord &r) { return r.task == t.key; }));
      const TuningRecord *rule = log.fastest(t.key, target, t.rule, false, threads);
      for (const Config &p : others) {
        // Twice each, in turns, as the tuner confirms a best: the machine's drift falls on both.
        std::vector<Config> turns = {here, p, here, p};
        std::vector<Measurement> ms = measure(t, turns);
        std::vector<TuningRecord> records;
        for (size_t i = 0; i < turns.size(); ++i) {
          records.push_back(measurementRecord(t, turns[i], ms.at(i), target, ++trial));
          records.back().confirm = true;
          records.back().ruleMs = rule ? rule->ms : 0;
        }
        if (!logFile.empty())
          TuningLog::append(logFile, records);
        measured += static_cast<int>(turns.size());
      }
    }
  return measured;
}

std::string varyingSymbol(const std::vector<SizeWinner> &winners) {
  if (winners.size() < 2)
    return "";
  std::string varying;
  for (const auto &[symbol, size] : winners.front().sizes)
    for (const SizeWinner &w : winners) {
      auto it = w.sizes.find(symbol);
      if (w.sizes.size() != winners.front().sizes.size() || it == w.sizes.end())
        return "";
      if (it->second != size) {
        if (!varying.empty() && varying != symbol)
          return "";
        varying = symbol;
      }
    }
  return varying;
}

std::vector<SizeSpan> sizeSpans(const std::vector<SizeWinner> &winners) {
  const std::string symbol = varyingSymbol(winners);
  if (symbol.empty())
    return {};
  std::vector<const SizeWinner *> order;
  for (const SizeWinner &w : winners)
    order.push_back(&w);
  std::stable_sort(order.begin(), order.end(), [&](const SizeWinner *a, const SizeWinner *b) {
    return a->sizes.at(symbol) < b->sizes.at(symbol);
  });
  std::vector<SizeSpan> spans;
  for (size_t k = 0; k < order.size(); ++k) {
    SizeSpan span{order[k], spans.empty() ? 1 : spans.back().to, 0};
    if (k + 1 < order.size()) {
      // The first size nearer the next winner, found by nearestSize itself (so the spans say
      // exactly what a build picks): it is nearer from some size on, by the ratio rule.
      std::vector<SizeWinner> pair = {*order[k], *order[k + 1]};
      int64_t lo = order[k]->sizes.at(symbol) + 1, hi = order[k + 1]->sizes.at(symbol);
      while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        SymBindings probe = order[k]->sizes;
        probe[symbol] = mid;
        if (nearestSize(pair, probe)->sizes == order[k + 1]->sizes)
          hi = mid;
        else
          lo = mid + 1;
      }
      span.to = lo;
    }
    // A span whose winner builds what the one before builds (the same point, or each its rule)
    // extends it.
    if (!spans.empty() && spans.back().winner->choice.point == span.winner->choice.point)
      spans.back().to = span.to;
    else
      spans.push_back(span);
  }
  return spans;
}

std::string PointLetters::letter(size_t i) {
  return std::string(1, static_cast<char>('A' + i % 26)) + (i >= 26 ? std::to_string(i / 26) : "");
}

std::string PointLetters::of(const SizeWinner &w) {
  if (!w.choice.point)
    return "rule";
  auto it = std::find(points_.begin(), points_.end(), *w.choice.point);
  if (it == points_.end())
    it = points_.insert(points_.end(), *w.choice.point);
  return letter(static_cast<size_t>(it - points_.begin()));
}

std::string sizesTable(const std::vector<SizeRow> &rows) {
  std::ostringstream text;
  PointLetters letters; // the points by letter, in order of appearance
  // A column per size any row was tuned at (an earlier :tune … sizes, or one stopped early,
  // leaves some functions with sizes the others lack: "-" there).
  std::set<SymBindings> columns;
  size_t width = 0;
  for (const auto &[name, ws] : rows)
    for (const SizeWinner &w : ws) {
      columns.insert(w.sizes);
      width = std::max(width, bindingsText(w.sizes).size() + 2);
    }
  text << pad("function", 44);
  for (const SymBindings &c : columns)
    text << pad(bindingsText(c), width);
  text << "sizes each point serves\n";
  for (const auto &[name, ws] : rows) {
    text << pad(name, 44);
    for (const SymBindings &c : columns) {
      auto w =
          std::find_if(ws.begin(), ws.end(), [&](const SizeWinner &x) { return x.sizes == c; });
      text << pad(w == ws.end() ? "-" : letters.of(*w), width);
    }
    std::string symbol = varyingSymbol(ws);
    std::vector<std::string> spans;
    for (const SizeSpan &sp : sizeSpans(ws)) {
      std::string where = sp.from > 1 && sp.to > 0 ? std::to_string(sp.from) + " ≤ " + symbol +
                                                         " < " + std::to_string(sp.to)
                          : sp.from > 1 ? symbol + " ≥ " + std::to_string(sp.from)
                          : sp.to > 0   ? symbol + " < " + std::to_string(sp.to)
                                        : "every " + symbol;
      spans.push_back(letters.of(*sp.winner) + " for " + where);
    }
    text << (spans.empty() ? "the nearest size's" : joinNames(spans, "; ")) << "\n";
  }
  for (size_t i = 0; i < letters.points().size(); ++i)
    text << "  " << PointLetters::letter(i) << ": " << configText(letters.points()[i]) << "\n";
  return text.str();
}

} // namespace loupe::backend
