// ProfileSummary: what :profile says about a profile as a whole — whether the machine was too
// busy for its ranking to hold.
#pragma once

#include <string>
#include <vector>

namespace loupe {

/// The interquartile range of the runs' totals, as a share of their median, above which
/// :profile says the machine was busy: a quiet machine keeps its runs within a few percent.
inline constexpr double kBusySpread = 0.05;

/// The line :profile adds when the middle half of the runs' totals (sorted, fastest first)
/// spreads more than kBusySpread of their median, naming the spread and the range; empty when
/// they agree or there are fewer than 4 runs to tell.
std::string busyLine(const std::vector<double> &sortedTotals);

} // namespace loupe
