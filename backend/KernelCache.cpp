// KernelCache: the on-disk kernel folder — checked entries, atomic writes, LRU trimming.
#include "backend/KernelCache.h"

#include <llvm/Support/BLAKE3.h>

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

constexpr char kMagic[8] = {'L', 'O', 'U', 'P', 'E', 'K', 'C', '1'};
constexpr size_t kHeader = sizeof kMagic + 8 + 32; // magic, payload size, BLAKE3 of the payload
constexpr const char *kSuffix = ".kernel";

std::array<uint8_t, 32> checksum(llvm::StringRef payload) {
  llvm::BLAKE3 h;
  h.update(payload);
  return h.final();
}

// The whole file in one read into a string of its size (entries hold up to a network's packed
// weights: no stream buffer growing and copying).
bool readFile(const fs::path &p, std::string &out) {
  std::ifstream in(p, std::ios::binary | std::ios::ate);
  if (!in)
    return false;
  std::streamoff size = in.tellg();
  if (size < 0)
    return false;
  out.resize(static_cast<size_t>(size));
  in.seekg(0);
  in.read(out.data(), size);
  return !in.bad() && in.gcount() == size;
}

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
  fs::path p = entryPath(key);
  std::string data;
  if (!readFile(p, data))
    return std::nullopt;
  uint64_t size = 0;
  bool ok = data.size() >= kHeader && std::memcmp(data.data(), kMagic, sizeof kMagic) == 0;
  if (ok) {
    std::memcpy(&size, data.data() + sizeof kMagic, 8);
    ok = size == data.size() - kHeader;
  }
  if (ok) {
    std::array<uint8_t, 32> sum = checksum(llvm::StringRef(data).substr(kHeader));
    ok = std::memcmp(sum.data(), data.data() + sizeof kMagic + 8, 32) == 0;
  }
  std::error_code ec;
  if (!ok) {
    fs::remove(p, ec); // damaged or truncated: compiled again and stored anew
    return std::nullopt;
  }
  fs::last_write_time(p, fs::file_time_type::clock::now(), ec); // recently used
  data.erase(0, kHeader);
  return data;
}

bool KernelCache::store(const std::string &key, const std::string &object) const {
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
    uint64_t size = object.size();
    std::array<uint8_t, 32> sum = checksum(object);
    out.write(kMagic, sizeof kMagic);
    out.write(reinterpret_cast<const char *>(&size), 8);
    out.write(reinterpret_cast<const char *>(sum.data()), 32);
    out.write(object.data(), static_cast<std::streamsize>(object.size()));
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
