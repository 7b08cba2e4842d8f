// The labeling page's files (labeling/web/), embedded into the binary at build time by
// embed_web.cmake: the server needs no files, no CDN and no internet. Not a file server.
#pragma once

#include <string_view>
#include <vector>

namespace labpose::labeling {

struct WebAsset {
  std::string_view path;          // "/index.html"
  std::string_view content_type;  // "text/html; charset=utf-8"
  std::string_view body;
};

/// Every embedded file of the page.
const std::vector<WebAsset>& web_assets();

}  // namespace labpose::labeling
