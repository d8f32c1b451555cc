// The enabled execution spaces as a GoogleTest type list, so typed tests run
// once per backend Kokkos was built with.
#pragma once

#include "platform/spaces.hpp"

#include <gtest/gtest.h>

namespace portalab::testing {

template <class Tuple>
struct ToTypes;
template <class... S>
struct ToTypes<std::tuple<S...>> {
  using type = ::testing::Types<S...>;
};
using EnabledSpaceTypes = typename ToTypes<EnabledSpaces>::type;

struct SpaceName {
  template <class T>
  static std::string GetName(int) {
    return T::name();
  }
};

}  // namespace portalab::testing
