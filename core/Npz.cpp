// Npz: NumPy's .npz archives read with libzip, each entry parsed as a .npy array.
#include "core/Npz.h"

#include "core/Error.h"
#include "core/File.h"
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
  return parseNpz(readFile(path), path);
}

std::vector<std::pair<std::string, Tensor>> parseNpz(const std::string &bytes,
                                                     const std::string &path) {
  // The archive is read from memory: libzip parses the bytes the caller holds (no second open
  // of a file that may have changed, and the fuzzer's input as it is).
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t *src = zip_source_buffer_create(bytes.data(), bytes.size(), 0, &error);
  zip_t *opened = src ? zip_open_from_source(src, ZIP_RDONLY, &error) : nullptr;
  if (!opened) {
    std::string why = zip_error_strerror(&error);
    zip_error_fini(&error);
    if (src)
      zip_source_free(src);
    fail(path, ": not a .npz file (", why, ")");
  }
  zip_error_fini(&error);
  std::unique_ptr<zip_t, CloseArchive> archive(opened); // owns the source now
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
    // An entry's size is what its header in the archive claims: no more than the archive's
    // own bytes can hold at the best compression deflate reaches (1032:1), so that a forged
    // size cannot ask for memory the archive could never fill.
    if (st.size > static_cast<zip_uint64_t>(bytes.size()) * 1032 + 1024)
      fail(path, ": entry '", name, "' claims ", st.size, " bytes, more than the archive holds");
    std::string entry(static_cast<size_t>(st.size), '\0');
    std::unique_ptr<zip_file_t, CloseEntry> f(
        zip_fopen_index(archive.get(), static_cast<zip_uint64_t>(i), 0));
    if (!f)
      fail(path, ": entry '", name, "' cannot be opened (", zip_strerror(archive.get()), ")");
    zip_int64_t got = entry.empty() ? 0 : zip_fread(f.get(), entry.data(), entry.size());
    if (got != static_cast<zip_int64_t>(entry.size()))
      fail(path, ": entry '", name, "' is truncated or corrupt (", zip_file_strerror(f.get()), ")");
    name.resize(name.size() - 4);
    arrays.emplace_back(name, parseNpy(entry, path + ":" + name));
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
