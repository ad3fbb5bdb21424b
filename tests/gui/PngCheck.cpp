// loupe_png_check: checks that a loupe-gui screenshot is a real picture — its size, that it is
// not blank (enough distinct colours), how many of the fusion palette's colours it shows,
// whether a given colour (a highlight's) covers enough pixels, and that named nodes' boxes are
// where the layout put them (the screenshot's --boxes file) in the colour they must have.
#include "view/FusionView.h"

#include <stb/stb_image.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace {

const char *kUsage = "usage: loupe_png_check FILE.png [--size WxH] [--min-colours N] "
                     "[--palette N] [--min-palette N] [--colour RRGGBB:N] "
                     "[--boxes FILE.tsv --node NAME:RRGGBB|NAME:groupK …]\n";

struct Box {
  long x0 = 0, y0 = 0, x1 = 0, y1 = 0;
};

// The boxes file loupe-gui --boxes writes: per line a name, then x0 y0 x1 y1, tab-separated (the
// name is what comes before the last four tabs). A node drawn twice (two canvases) keeps the
// first.
std::map<std::string, Box> readBoxes(const std::string &path, bool &ok) {
  std::map<std::string, Box> boxes;
  std::ifstream f(path);
  ok = static_cast<bool>(f);
  std::string line;
  while (ok && std::getline(f, line)) {
    size_t t[4];
    size_t at = line.size();
    for (int k = 3; k >= 0 && ok; --k) {
      at = at == 0 ? std::string::npos : line.rfind('\t', at - 1);
      ok = at != std::string::npos;
      t[k] = at;
    }
    if (!ok)
      break;
    Box b{std::atol(line.c_str() + t[0] + 1), std::atol(line.c_str() + t[1] + 1),
          std::atol(line.c_str() + t[2] + 1), std::atol(line.c_str() + t[3] + 1)};
    boxes.emplace(line.substr(0, t[0]), b);
  }
  return boxes;
}

// The colour a --node check asks for: RRGGBB, or groupK (the fusion palette's colour K).
bool parseNodeColour(const std::string &v, uint32_t &rgb) {
  if (v.rfind("group", 0) == 0) {
    long k = std::strtol(v.c_str() + 5, nullptr, 10);
    if (k < 0 || k >= loupe::gui::paletteSize())
      return false;
    rgb = loupe::gui::groupColour(static_cast<int>(k)) >> 8;
    return true;
  }
  char *end = nullptr;
  rgb = static_cast<uint32_t>(std::strtoul(v.c_str(), &end, 16));
  return v.size() == 6 && *end == 0;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  int width = -1, height = -1;
  long minColours = 0, palette = -1, minPalette = -1;
  std::vector<std::pair<uint32_t, long>> colours; // at least N pixels of each RRGGBB
  std::string boxesFile;
  std::vector<std::pair<std::string, uint32_t>> nodes; // each node's box mostly this colour
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
    else if (k == "--boxes")
      boxesFile = v;
    else if (size_t colon = v.rfind(':');
             k == "--node" && colon != std::string::npos && colon > 0) {
      uint32_t rgb = 0;
      if (!parseNodeColour(v.substr(colon + 1), rgb)) {
        std::fprintf(stderr, "--node %s: the colour is RRGGBB or groupK\n", v.c_str());
        return 2;
      }
      nodes.push_back({v.substr(0, colon), rgb});
    } else {
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
  auto pixel = [&](long i) {
    return (uint32_t(px[3 * i]) << 16) | (uint32_t(px[3 * i + 1]) << 8) | px[3 * i + 2];
  };
  std::map<uint32_t, long> counts;
  for (long i = 0; i < static_cast<long>(w) * h; ++i)
    ++counts[pixel(i)];
  // Each named node's box, inside its outline (2 pixels in), must be at least 40% its colour
  // (the label's text covers the rest): a blank picture, another step's picture or a box drawn
  // elsewhere fails.
  std::vector<std::string> nodeFailures;
  if (!nodes.empty()) {
    bool read = false;
    std::map<std::string, Box> boxes = readBoxes(boxesFile, read);
    if (!read) {
      std::fprintf(stderr, "%s: not a boxes file (loupe-gui --boxes)\n", boxesFile.c_str());
      stbi_image_free(px);
      return 2;
    }
    for (const auto &[name, rgb] : nodes) {
      auto it = boxes.find(name);
      if (it == boxes.end()) {
        nodeFailures.push_back("node " + name + " is not drawn");
        continue;
      }
      Box b = it->second;
      long x0 = std::max(0L, b.x0 + 2), y0 = std::max(0L, b.y0 + 2);
      long x1 = std::min<long>(w, b.x1 - 2), y1 = std::min<long>(h, b.y1 - 2);
      long inside = 0, match = 0;
      for (long y = y0; y < y1; ++y)
        for (long x = x0; x < x1; ++x, ++inside)
          match += pixel(y * w + x) == rgb;
      if (inside == 0 || match * 10 < inside * 4) {
        char msg[200];
        std::snprintf(msg, sizeof msg,
                      "node %s's box (%ld,%ld)-(%ld,%ld) is %ld%% %06x, expected "
                      "at least 40%%",
                      name.c_str(), b.x0, b.y0, b.x1, b.y1, inside ? 100 * match / inside : 0, rgb);
        nodeFailures.push_back(msg);
      }
    }
  }
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
  for (const std::string &f : nodeFailures) {
    std::printf("FAIL: %s\n", f.c_str());
    ok = false;
  }
  return ok ? 0 : 1;
}
