// Npz: NumPy's .npz archives read with libzip, each entry parsed as a .npy array.
#include "core/Npz.h"

#include "core/Error.h"
#include "core/Npy.h"

#include <zip.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <unistd.h>

namespace loupe {

namespace {

struct CloseArchive {
  void operator()(zip_t *z) const { zip_discard(z); } // read only: nothing to write back
};
struct CloseEntry {
  void operator()(zip_file_t *f) const { zip_fclose(f); }
};

} // namespace

std::vector<std::pair<std::string, Tensor>> readNpz(const std::string &path) {
  int code = 0;
  std::unique_ptr<zip_t, CloseArchive> archive(zip_open(path.c_str(), ZIP_RDONLY, &code));
  if (!archive) {
    zip_error_t error;
    zip_error_init_with_code(&error, code);
    std::string why = zip_error_strerror(&error);
    zip_error_fini(&error);
    fail(path, ": not a .npz file (", why, ")");
  }
  std::vector<std::pair<std::string, Tensor>> arrays;
  zip_int64_t entries = zip_get_num_entries(archive.get(), 0);
  for (zip_int64_t i = 0; i < entries; ++i) {
    zip_stat_t st;
    if (zip_stat_index(archive.get(), static_cast<zip_uint64_t>(i), 0, &st) != 0 ||
        !(st.valid & ZIP_STAT_NAME) || !(st.valid & ZIP_STAT_SIZE))
      fail(path, ": entry ", i, " cannot be read (", zip_strerror(archive.get()), ")");
    std::string name = st.name;
    if (!name.ends_with(".npy"))
      fail(path, ": entry '", name, "' is not a .npy array (a .npz holds NAME.npy entries)");
    // A .npy's size is its header plus its data: a bound on what one entry may claim is what a
    // tensor may hold, which parseNpy checks against the header's shape.
    std::string bytes(static_cast<size_t>(st.size), '\0');
    std::unique_ptr<zip_file_t, CloseEntry> f(
        zip_fopen_index(archive.get(), static_cast<zip_uint64_t>(i), 0));
    if (!f)
      fail(path, ": entry '", name, "' cannot be opened (", zip_strerror(archive.get()), ")");
    zip_int64_t got = bytes.empty() ? 0 : zip_fread(f.get(), bytes.data(), bytes.size());
    if (got != static_cast<zip_int64_t>(bytes.size()))
      fail(path, ": entry '", name, "' is truncated or corrupt (", zip_file_strerror(f.get()), ")");
    name.resize(name.size() - 4);
    arrays.emplace_back(name, parseNpy(bytes, path + ":" + name));
  }
  return arrays;
}

void writeNpz(const std::string &path, const std::vector<std::pair<std::string, Tensor>> &arrays) {
  // Written beside the target and renamed over it: a failure leaves no half archive.
  std::string tmp = path + ".tmp" + std::to_string(::getpid());
  int code = 0;
  zip_t *z = zip_open(tmp.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &code);
  if (!z)
    fail("cannot write ", path);
  std::vector<std::string> bytes; // alive until zip_close reads them
  bytes.reserve(arrays.size());
  for (const auto &[name, t] : arrays) {
    bytes.push_back(npyBytes(t));
    zip_source_t *src = zip_source_buffer(z, bytes.back().data(), bytes.back().size(), 0);
    std::string entry = npyFileStem(name) + ".npy";
    zip_int64_t at = src ? zip_file_add(z, entry.c_str(), src, ZIP_FL_ENC_UTF_8) : -1;
    if (at < 0) {
      if (src)
        zip_source_free(src);
      std::string why = zip_strerror(z);
      zip_discard(z);
      std::remove(tmp.c_str());
      fail("cannot write ", path, ": ", why);
    }
    zip_set_file_compression(z, static_cast<zip_uint64_t>(at), ZIP_CM_STORE, 0);
  }
  if (zip_close(z) != 0) {
    std::string why = zip_strerror(z);
    zip_discard(z);
    std::remove(tmp.c_str());
    fail("cannot write ", path, ": ", why);
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::remove(tmp.c_str());
    fail("cannot write ", path, ": ", ec.message());
  }
}

} // namespace loupe
