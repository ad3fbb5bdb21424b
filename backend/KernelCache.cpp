// KernelCache: the on-disk kernel folder — checked entries, atomic writes, LRU trimming.
#include "backend/KernelCache.h"

#include "backend/Checksum.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <unistd.h>
#include <vector>

namespace loupe::backend {

namespace fs = std::filesystem;

namespace {

// An entry: this magic, the payload's size (8 bytes), the payload's BLAKE3 (32), the payload.
constexpr char kMagic[8] = {'L', 'O', 'U', 'P', 'E', 'K', 'C', '1'};
constexpr const char *kSuffix = ".kernel";

bool isEntry(const fs::directory_entry &e) {
  std::error_code ec;
  return e.is_regular_file(ec) && e.path().extension() == kSuffix;
}

} // namespace

uint64_t KernelCache::defaultMaxBytes() {
  if (const char *mb = std::getenv("LOUPE_KERNEL_CACHE_MAX_MB")) {
    char *end = nullptr;
    unsigned long long v = std::strtoull(mb, &end, 10);
    if (end != mb && *end == '\0')
      return static_cast<uint64_t>(v) << 20;
  }
  return uint64_t(1) << 30;
}

fs::path KernelCache::defaultDir() {
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return fs::path(xdg) / "loupe" / "kernels";
  const char *home = std::getenv("HOME");
  return fs::path(home && *home ? home : "/tmp") / ".cache" / "loupe" / "kernels";
}

KernelCache::KernelCache(fs::path dir, uint64_t maxBytes)
    : dir_(std::move(dir)), maxBytes_(maxBytes) {}

fs::path KernelCache::entryPath(const std::string &key) const { return dir_ / (key + kSuffix); }

std::optional<std::string> KernelCache::load(const std::string &key) const {
  std::string data;
  if (!load(key, [&](const PayloadReader &read, uint64_t size) {
        if (size > data.max_size())
          return false;
        data.resize(static_cast<size_t>(size));
        return read(data.data(), data.size());
      }))
    return std::nullopt;
  return data;
}

bool KernelCache::load(
    const std::string &key,
    const std::function<bool(const PayloadReader &, uint64_t size)> &read) const {
  fs::path p = entryPath(key);
  std::ifstream in(p, std::ios::binary);
  if (!in)
    return false;
  char magic[sizeof kMagic];
  uint64_t size = 0;
  std::array<uint8_t, 32> sum;
  bool ok = in.read(magic, sizeof magic) && std::memcmp(magic, kMagic, sizeof kMagic) == 0 &&
            in.read(reinterpret_cast<char *>(&size), 8) &&
            in.read(reinterpret_cast<char *>(sum.data()), 32);
  Checksum h;
  uint64_t taken = 0;
  if (ok) {
    PayloadReader reader = [&](void *dst, size_t n) {
      if (n > size - taken || !in.read(static_cast<char *>(dst), static_cast<std::streamsize>(n)))
        return false;
      h.update(dst, n);
      taken += n;
      return true;
    };
    ok = read(reader, size) && taken == size && in.peek() == std::ifstream::traits_type::eof() &&
         h.final() == sum;
  }
  std::error_code ec;
  if (!ok) {
    fs::remove(p, ec); // damaged, truncated or not what the reader expects: made anew
    return false;
  }
  fs::last_write_time(p, fs::file_time_type::clock::now(), ec); // recently used
  return true;
}

bool KernelCache::store(const std::string &key, const std::string &object) const {
  return store(key, std::vector<Piece>{{object.data(), object.size()}});
}

bool KernelCache::store(const std::string &key, const std::vector<Piece> &pieces) const {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec)
    return false;
  static std::atomic<uint64_t> counter{0};
  fs::path tmp = dir_ / ("." + key + "." + std::to_string(::getpid()) + "." +
                         std::to_string(counter++) + ".tmp");
  {
    std::ofstream out(tmp, std::ios::binary);
    if (!out)
      return false;
    uint64_t size = 0;
    Checksum h;
    for (const auto &[data, n] : pieces) {
      h.update(data, n);
      size += n;
    }
    std::array<uint8_t, 32> sum = h.final();
    out.write(kMagic, sizeof kMagic);
    out.write(reinterpret_cast<const char *>(&size), 8);
    out.write(reinterpret_cast<const char *>(sum.data()), 32);
    for (const auto &[data, n] : pieces)
      out.write(static_cast<const char *>(data), static_cast<std::streamsize>(n));
    out.flush();
    if (!out) {
      out.close();
      fs::remove(tmp, ec);
      return false;
    }
  }
  fs::rename(tmp, entryPath(key), ec); // atomic: readers see the old entry or the new one
  if (ec) {
    fs::remove(tmp, ec);
    return false;
  }
  return true;
}

KernelCache::Summary KernelCache::summary() const {
  Summary s;
  std::error_code ec;
  for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec))
    if (isEntry(*it)) {
      ++s.entries;
      s.bytes += it->file_size(ec);
    }
  return s;
}

void KernelCache::trim() const {
  struct Entry {
    fs::path path;
    uint64_t bytes;
    fs::file_time_type used;
  };
  std::vector<Entry> entries;
  uint64_t total = 0;
  std::error_code ec;
  auto now = fs::file_time_type::clock::now();
  for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code e2;
    if (isEntry(*it)) {
      Entry en{it->path(), it->file_size(e2), it->last_write_time(e2)};
      total += en.bytes;
      entries.push_back(std::move(en));
    } else if (it->path().extension() == ".tmp" &&
               now - it->last_write_time(e2) > std::chrono::hours(1)) {
      fs::remove(it->path(), e2); // left by a process that died while writing
    }
  }
  if (total <= maxBytes_)
    return;
  std::sort(entries.begin(), entries.end(),
            [](const Entry &a, const Entry &b) { return a.used < b.used; });
  for (const Entry &en : entries) {
    if (total <= maxBytes_)
      break;
    std::error_code e2;
    if (fs::remove(en.path, e2))
      total -= en.bytes;
  }
}

void KernelCache::clear() const {
  std::error_code ec;
  std::vector<fs::path> doomed;
  for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec))
    if (isEntry(*it))
      doomed.push_back(it->path());
  for (const fs::path &p : doomed)
    fs::remove(p, ec);
}

} // namespace loupe::backend
