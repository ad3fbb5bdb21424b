// ProfileSummary: whether a profile's runs agree enough for its ranking to hold.
#include "repl/ProfileSummary.h"

#include <cstdio>

namespace loupe {

std::string busyLine(const std::vector<double> &sortedTotals) {
  size_t n = sortedTotals.size();
  if (n < 4)
    return "";
  double q1 = sortedTotals[n / 4], median = sortedTotals[n / 2], q3 = sortedTotals[3 * n / 4];
  double spread = median > 0 ? (q3 - q1) / median : 0;
  if (spread <= kBusySpread)
    return "";
  char buf[200];
  std::snprintf(buf, sizeof buf,
                "the machine was busy: the middle half of the runs' totals spread %.0f%% of their "
                "median (%.4f-%.4f ms, all %.4f-%.4f); read the medians, or run more",
                100 * spread, q1, q3, sortedTotals.front(), sortedTotals.back());
  return buf;
}

} // namespace loupe
