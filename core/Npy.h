// Npy: NumPy .npy files (float32/float64/int32/int64, C order) as tensors — run inputs, params.
#pragma once

#include "core/Tensor.h"

#include <string>

namespace loupe {

/// Reads a .npy file. Throws Error naming the file for anything unreadable or unsupported
/// (bad magic, Fortran order, an unsupported dtype, a truncated body).
Tensor readNpy(const std::string &path);

/// A .npy file's bytes as a tensor; errors name `source` (readNpy's parser, for input that is
/// not in a file).
Tensor parseNpy(const std::string &bytes, const std::string &source);

/// Writes `t` as a version 1.0 .npy file in its own dtype, but bfloat16 (which NumPy lacks) as
/// float32, exactly. Throws Error when the file cannot be written or the dtype has no .npy spelling
/// here.
void writeNpy(const std::string &path, const Tensor &t);

/// `t` as a .npy file's bytes (what writeNpy writes).
std::string npyBytes(const Tensor &t);

/// The file name (without `.npy`) for a tensor named `name` from a graph or model, which is
/// untrusted text: every character but letters, digits, '.', '_' and '-' becomes '_', and a
/// name of dots only ("..") is prefixed with '_', so the file stays in its folder.
std::string npyFileStem(const std::string &name);

} // namespace loupe
