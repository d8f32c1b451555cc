#include "spaces.hpp"

#include <algorithm>
#include <cctype>

namespace portalab {

std::vector<std::string> enabled_space_names() {
  std::vector<std::string> names;
  for_each_space([&](auto tag) { names.emplace_back(decltype(tag)::type::name()); });
  return names;
}

std::string canonical_space_name(std::string_view name) {
  auto lower = [](std::string_view s) {
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
  };
  for (const auto& n : enabled_space_names())
    if (lower(n) == lower(name)) return n;
  return {};
}

bool is_host_space(std::string_view name) {
  bool host = false;
  for_each_space([&](auto tag) {
    using Space = typename decltype(tag)::type;
    if (name == Space::name()) host = is_host_space_v<Space>;
  });
  return host;
}

}  // namespace portalab
