// Screenshot: glReadPixels into memory, flipped rows, stb_image_write (Debian's libstb).
#include "gui/app/Screenshot.h"

#include <GL/gl.h>
#include <stb/stb_image_write.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace loupe::gui {

std::string writeScreenshot(const std::string &path, int width, int height) {
  if (width <= 0 || height <= 0)
    return "the window has no pixels to save";
  std::vector<uint8_t> pixels(static_cast<size_t>(width) * static_cast<size_t>(height) * 4);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadBuffer(GL_BACK);
  glReadPixels(0, 0, width, height, GL_RGBA, GL_UNSIGNED_BYTE, pixels.data());
  const size_t row = static_cast<size_t>(width) * 4;
  std::vector<uint8_t> flipped(pixels.size());
  for (int y = 0; y < height; ++y)
    std::copy_n(pixels.data() + static_cast<size_t>(height - 1 - y) * row, row,
                flipped.data() + static_cast<size_t>(y) * row);
  if (!stbi_write_png(path.c_str(), width, height, 4, flipped.data(), static_cast<int>(row)))
    return "cannot write " + path;
  return "";
}

} // namespace loupe::gui
