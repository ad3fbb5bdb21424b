// NameScopes: the hierarchy written in node names — exporters' "/features/features.1/…/Conv",
// the zoo's "stage2_unit3_conv1" — as scope paths (the viewer folds by them, :profile by=layer
// totals by them).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace loupe {

/// The scopes node `name` is in, outermost first. A name with '/' (ONNX exporters, TensorFlow):
/// its components but the last, empty ones skipped. Otherwise its leading '_'-separated
/// components that end in a digit, the last component never one: the zoo's stage2_unit3_conv1
/// is in stage2 and unit3, broadcast_add0 and conv0 in none.
std::vector<std::string> scopeOf(const std::string &name);

/// The scope path `k` levels deep of the scopes `s`: its first k joined by '/'.
std::string scopePath(const std::vector<std::string> &s, size_t k);

} // namespace loupe
