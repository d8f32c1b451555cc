// Names of the element types an experiment can run in, as the decks spell them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace portalab {

template <class T>
constexpr std::string_view dtype_name();
template <>
constexpr std::string_view dtype_name<float>() {
  return "float32";
}
template <>
constexpr std::string_view dtype_name<double>() {
  return "float64";
}
template <>
constexpr std::string_view dtype_name<std::int32_t>() {
  return "int32";
}
template <>
constexpr std::string_view dtype_name<std::int64_t>() {
  return "int64";
}

// Bytes of one element of a type named as above.
constexpr std::size_t dtype_bytes(std::string_view name) {
  return name == "float64" || name == "int64" ? 8 : 4;
}

}  // namespace portalab
