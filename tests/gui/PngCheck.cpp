// loupe_png_check: checks that a loupe-gui screenshot is a real picture — its size, that it is
// not blank (enough distinct colours), how many of the fusion palette's colours it shows, and
// whether a given colour (a highlight's) covers enough pixels.
#include "view/FusionView.h"

#include <stb/stb_image.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace {

const char *kUsage = "usage: loupe_png_check FILE.png [--size WxH] [--min-colours N] "
                     "[--palette N] [--min-palette N] [--colour RRGGBB:N]\n";

} // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  int width = -1, height = -1;
  long minColours = 0, palette = -1, minPalette = -1;
  std::vector<std::pair<uint32_t, long>> colours; // at least N pixels of each RRGGBB
  for (int i = 2; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--size")
      std::sscanf(v.c_str(), "%dx%d", &width, &height);
    else if (k == "--min-colours")
      minColours = std::strtol(v.c_str(), nullptr, 10);
    else if (k == "--palette")
      palette = std::strtol(v.c_str(), nullptr, 10);
    else if (k == "--min-palette")
      minPalette = std::strtol(v.c_str(), nullptr, 10);
    else if (k == "--colour" && v.size() > 7 && v[6] == ':')
      colours.push_back({static_cast<uint32_t>(std::strtoul(v.substr(0, 6).c_str(), nullptr, 16)),
                         std::strtol(v.c_str() + 7, nullptr, 10)});
    else {
      std::fprintf(stderr, "unknown option %s\n%s", k.c_str(), kUsage);
      return 2;
    }
  }
  int w = 0, h = 0, n = 0;
  unsigned char *px = stbi_load(argv[1], &w, &h, &n, 3);
  if (!px) {
    std::fprintf(stderr, "%s: not a PNG image (%s)\n", argv[1], stbi_failure_reason());
    return 1;
  }
  std::map<uint32_t, long> counts;
  for (long i = 0; i < static_cast<long>(w) * h; ++i)
    ++counts[(uint32_t(px[3 * i]) << 16) | (uint32_t(px[3 * i + 1]) << 8) | px[3 * i + 2]];
  stbi_image_free(px);
  // A palette colour counts when it fills a real area (a node box), not a few stray pixels.
  std::set<int> seen;
  for (int k = 0; k < loupe::gui::paletteSize(); ++k) {
    uint32_t rgb = loupe::gui::groupColour(k) >> 8;
    auto it = counts.find(rgb);
    if (it != counts.end() && it->second >= 200)
      seen.insert(k);
  }
  std::printf("%s: %dx%d, %zu colours, %zu palette colours\n", argv[1], w, h, counts.size(),
              seen.size());
  bool ok = true;
  if (width > 0 && (w != width || h != height)) {
    std::printf("FAIL: size %dx%d, expected %dx%d\n", w, h, width, height);
    ok = false;
  }
  if (static_cast<long>(counts.size()) < minColours) {
    std::printf("FAIL: %zu distinct colours, expected at least %ld (blank?)\n", counts.size(),
                minColours);
    ok = false;
  }
  if (palette >= 0 && static_cast<long>(seen.size()) != palette) {
    std::printf("FAIL: %zu group colours, expected %ld\n", seen.size(), palette);
    ok = false;
  }
  if (minPalette >= 0 && static_cast<long>(seen.size()) < minPalette) {
    std::printf("FAIL: %zu group colours, expected at least %ld\n", seen.size(), minPalette);
    ok = false;
  }
  for (const auto &[rgb, least] : colours) {
    long have = counts.count(rgb) ? counts[rgb] : 0;
    if (have < least) {
      std::printf("FAIL: %ld pixels of %06x, expected at least %ld\n", have, rgb, least);
      ok = false;
    }
  }
  return ok ? 0 : 1;
}
