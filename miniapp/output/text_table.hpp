// Columns of text padded to their widest cell, two spaces between, the
// last one left ragged: the console's tables of `db` and `health`.
#pragma once

#include <string>
#include <vector>

namespace portalab {

std::string text_table(const std::vector<std::vector<std::string>>& lines);

}  // namespace portalab
