// Npz: NumPy's .npz archives (numpy.savez, savez_compressed) — a zip of NAME.npy arrays, read
// with libzip; run inputs by name and expected outputs by name or position.
#pragma once

#include "core/Tensor.h"

#include <string>
#include <utility>
#include <vector>

namespace loupe {

/// The arrays of a .npz file in the archive's order (numpy.savez's keyword order), each named
/// without its ".npy". Throws Error naming the file for anything unreadable: not a zip, an entry
/// that is not a .npy array, a truncated or corrupt entry.
std::vector<std::pair<std::string, Tensor>> readNpz(const std::string &path);

/// A .npz file's bytes as its arrays (readNpz's parser, for input that is not in a file);
/// errors name `source`.
std::vector<std::pair<std::string, Tensor>> parseNpz(const std::string &bytes,
                                                     const std::string &source);

/// Writes the arrays as a .npz file (entries stored uncompressed, as numpy.savez does), each
/// entry named npyFileStem(name).npy so that untrusted names stay plain file names; the file
/// appears whole or not at all. Throws Error when it cannot be written.
void writeNpz(const std::string &path, const std::vector<std::pair<std::string, Tensor>> &arrays);

} // namespace loupe
