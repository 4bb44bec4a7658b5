// Internal: what levelhist reads from a file's name.
#pragma once
#include <algorithm>
#include <cctype>
#include <string>

namespace levelhist::detail {

// The extension of the last path component, lower-cased, dot included
// (".png"); "" when it has none. Output formats follow it.
inline std::string lower_extension(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  const std::size_t dot = path.find_last_of('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return "";
  std::string ext = path.substr(dot);
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext;
}

}  // namespace levelhist::detail
