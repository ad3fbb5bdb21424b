// KernelCache: compiled kernels (object code) kept on disk between processes, keyed by a hash
// of each kernel's generated IR and everything else that decides its machine code.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace loupe::backend {

/// A folder of kernels: one file per key holding a header (magic, size, checksum) and the
/// object code. Entries are written to a temporary file in the same folder and renamed into
/// place, so several processes can share the folder; a damaged or truncated entry is removed
/// and reported as absent, so the kernel is compiled again. Reading and writing never throw:
/// a cache that cannot be used only makes builds slower.
class KernelCache {
public:
  /// 1 GiB unless LOUPE_KERNEL_CACHE_MAX_MB says otherwise.
  static uint64_t defaultMaxBytes();
  /// `$XDG_CACHE_HOME/loupe/kernels`, else `~/.cache/loupe/kernels`.
  static std::filesystem::path defaultDir();

  explicit KernelCache(std::filesystem::path dir = defaultDir(),
                       uint64_t maxBytes = defaultMaxBytes());

  /// The object code stored under `key`, or nothing when it is absent, unreadable or damaged
  /// (a damaged entry is removed). A hit marks the entry as recently used.
  std::optional<std::string> load(const std::string &key) const;
  /// Stores `object` under `key` atomically. False when the folder cannot be written.
  bool store(const std::string &key, const std::string &object) const;

  /// A stretch of bytes where they are.
  using Piece = std::pair<const void *, size_t>;
  /// store() of the pieces' bytes one after another, without joining them first (an entry may
  /// hold a network's weights).
  bool store(const std::string &key, const std::vector<Piece> &pieces) const;
  /// Fills `n` bytes at `dst` with the next bytes of an entry; false past its end or on a read
  /// error.
  using PayloadReader = std::function<bool(void *dst, size_t n)>;
  /// load() a piece at a time: `read` pulls the entry's bytes (`size` of them) through the
  /// reader it is given, where it wants them, and says whether it made sense of them. True only
  /// when it did, took every byte and the checksum matches; otherwise the caller drops what it
  /// read (a damaged entry is removed). A hit marks the entry as recently used.
  bool load(const std::string &key,
            const std::function<bool(const PayloadReader &, uint64_t size)> &read) const;
  /// Removes the least recently used entries until the folder holds at most the cap.
  void trim() const;
  /// Removes every entry.
  void clear() const;

  /// The entries and their total size.
  struct Summary {
    size_t entries = 0;
    uint64_t bytes = 0;
  };
  Summary summary() const;

  const std::filesystem::path &dir() const { return dir_; }
  uint64_t maxBytes() const { return maxBytes_; }

private:
  std::filesystem::path entryPath(const std::string &key) const;
  std::filesystem::path dir_;
  uint64_t maxBytes_;
};

} // namespace loupe::backend
