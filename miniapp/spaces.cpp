#include "spaces.hpp"


namespace portalab {

std::vector<std::string> enabled_space_names() {
  std::vector<std::string> names;
  for_each_space([&](auto tag) { names.emplace_back(decltype(tag)::type::name()); });
  return names;
}

bool is_host_space(std::string_view name) {
  bool host = false;
  for_each_space([&](auto tag) {
    using Space = typename decltype(tag)::type;
    if (name == Space::name()) host = is_host_space_v<Space>;
  });
  return host;
}

int space_concurrency(std::string_view name) {
  int threads = 0;
  for_each_space([&](auto tag) {
    using Space = typename decltype(tag)::type;
    if (name == Space::name()) threads = Space().concurrency();
  });
  return threads;
}

}  // namespace portalab
