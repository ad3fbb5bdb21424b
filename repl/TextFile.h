// TextFile: reading files that must be text (scripts, sessions, graph JSON).
#pragma once

#include <string>

namespace loupe {

/// Reads a whole file. Throws Error("PATH: cannot open …") if unreadable and
/// Error("PATH: not a text file (NUL byte at offset N)") for binary data.
std::string readTextFile(const std::string &path);

/// Writes a whole file; throws Error("PATH: cannot write …") on failure.
void writeTextFile(const std::string &path, const std::string &text);

} // namespace loupe
