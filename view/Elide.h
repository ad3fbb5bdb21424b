// Elide: long names shortened to fit a list, keeping both ends (where fused-function and ONNX
// names differ: "fuse__contrib_conv2d_NCHWc_broadcast_add_relu_3").
#pragma once

#include <cstddef>
#include <string>

namespace loupe::gui {

/// `text` if it has at most `maxChars` characters (UTF-8 code points), else its first and last
/// characters around "…" in `maxChars` in all, one more kept at the end than at the start when
/// the count is odd — the suffix tells numbered names apart. At least "…" is returned.
std::string elideMiddle(const std::string &text, size_t maxChars);

} // namespace loupe::gui
