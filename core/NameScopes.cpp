// NameScopes: node names split into scope paths.
#include "core/NameScopes.h"

#include "core/Text.h"

#include <cctype>

namespace loupe {

std::vector<std::string> scopeOf(const std::string &name) {
  std::vector<std::string> scopes;
  if (name.find('/') != std::string::npos) {
    std::vector<std::string> parts = splitList(name, '/');
    for (size_t i = 0; i + 1 < parts.size(); ++i)
      if (!parts[i].empty())
        scopes.push_back(parts[i]);
    return scopes;
  }
  std::vector<std::string> parts = splitList(name, '_');
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    const std::string &p = parts[i];
    if (p.empty() || !std::isdigit(static_cast<unsigned char>(p.back())))
      break;
    scopes.push_back(p);
  }
  return scopes;
}

std::string scopePath(const std::vector<std::string> &s, size_t k) {
  std::string path;
  for (size_t i = 0; i < k && i < s.size(); ++i)
    path += (i ? "/" : "") + s[i];
  return path;
}

} // namespace loupe
