// Npy: reading NumPy .npy files (float32/float64/int32/int64, C order) as tensors — run inputs.
#pragma once

#include "core/Tensor.h"

#include <string>

namespace loupe {

/// Reads a .npy file. Throws Error naming the file for anything unreadable or unsupported
/// (bad magic, Fortran order, an unsupported dtype, a truncated body).
Tensor readNpy(const std::string &path);

} // namespace loupe
