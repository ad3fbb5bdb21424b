// File: whole-file reads and atomic whole-file writes with one-line errors that say what failed.
#pragma once

#include <string>

namespace loupe {

/// The bytes of the file at `path`. Throws Error "PATH: is a folder", "PATH: cannot open: …"
/// or "PATH: read error: …".
std::string readFile(const std::string &path);

/// Writes `bytes` to `path` atomically: into a temporary file in the same folder, flushed to
/// disk, then renamed over `path`, so that a reader sees the old file or the new one and a
/// failed write (disk full, a read-only folder, `path` a folder) leaves the old file as it was
/// and throws Error "PATH: …" saying what failed. A `path` that exists and is not a regular
/// file (a device such as /dev/null, a pipe) is written in place.
void writeFileAtomically(const std::string &path, const std::string &bytes);

} // namespace loupe
