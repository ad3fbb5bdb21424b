// SizeRanges: a dynamic build's points across the sizes tuned — each size's winner measured again
// at the other sizes, in turns with theirs (DietCode: one point serves a range of sizes), and the
// range of sizes each point then serves.
#pragma once

#include "backend/tune/ApplyBest.h"
#include "backend/tune/Tuner.h"

#include <filesystem>
#include <string>
#include <vector>

namespace loupe::backend {

/// One size's tasks, as `:tune … sizes` tuned them (extractTasks of its variant).
struct SizeTasks {
  SymBindings sizes;
  std::vector<Task> tasks;
};

/// Measures, at each size of `sizes`, the points that won at the family's other sizes (read from
/// `log`) and fit this size's space, each in turns with the point that wins here (twice each):
/// confirmation records, appended to `logFile`, so that a point that is faster here wins here.
/// Returns the number of measurements.
int crossMeasure(const std::vector<SizeTasks> &sizes, const TuningLog &log,
                 const std::filesystem::path &logFile, const std::string &target,
                 const MeasureFn &measure);

/// The sizes of one symbol a tuned size serves: [from, to) as nearestSize chooses among the
/// winners (`to` 0: no end).
struct SizeSpan {
  const SizeWinner *winner = nullptr;
  int64_t from = 1;
  int64_t to = 0;
};

/// The symbol the sizes of `winners` differ in, when it is exactly one; else "".
std::string varyingSymbol(const std::vector<SizeWinner> &winners);

/// For winners that differ in one symbol (varyingSymbol), the span each serves, in order of
/// size; consecutive spans whose winners build the same point (or both their rule) are one.
std::vector<SizeSpan> sizeSpans(const std::vector<SizeWinner> &winners);

/// The letters a table gives the distinct winning points, in order of first appearance: A … Z,
/// then A1 … Z1, …; a size whose winner is its own rule is "rule".
class PointLetters {
public:
  /// The label of `w`'s winner, lettering its point if it is new.
  std::string of(const SizeWinner &w);
  /// The points lettered so far, the first "A".
  const std::vector<Config> &points() const { return points_; }
  /// The letter of the point numbered `i`.
  static std::string letter(size_t i);

private:
  std::vector<Config> points_;
};

/// One function's row of sizesTable: its name (as the table shows it) and its sizes' winners.
struct SizeRow {
  std::string function;
  std::vector<SizeWinner> winners;
};

/// What `:tune … sizes` prints after its cross-measurement: a column per size any row was tuned
/// at ("-" where a row was not), each size's winner by letter ("rule": that size's own rule),
/// the span of sizes each point serves (when the sizes differ in one symbol), then the points'
/// knobs by letter.
std::string sizesTable(const std::vector<SizeRow> &rows);

} // namespace loupe::backend
