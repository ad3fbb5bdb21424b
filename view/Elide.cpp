// Elide: long names shortened in the middle to fit a list.
#include "view/Elide.h"

#include <vector>

namespace loupe::gui {

std::string elideMiddle(const std::string &text, size_t maxChars) {
  // Code point starts, so that a multi-byte character is never cut.
  std::vector<size_t> starts;
  for (size_t i = 0; i < text.size(); ++i)
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80)
      starts.push_back(i);
  size_t n = starts.size();
  if (n <= maxChars)
    return text;
  if (maxChars <= 1)
    return "…";
  size_t keep = maxChars - 1, head = keep / 2, tail = keep - head;
  return text.substr(0, starts[head]) + "…" + text.substr(starts[n - tail]);
}

} // namespace loupe::gui
