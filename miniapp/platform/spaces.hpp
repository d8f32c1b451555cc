// The execution spaces compiled into Kokkos, as a type list, and what the
// framework needs to know about each: its name, whether its memory is the
// host's, and which host memory can be pinned for fast copies to it.
#pragma once

#include "platform/space_names.hpp"

#include <Kokkos_Core.hpp>

#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <type_traits>
#include <vector>

namespace portalab {

template <class T>
struct TypeTag {
  using type = T;
};

namespace detail {
template <class... Lists>
using concat = decltype(std::tuple_cat(std::declval<Lists>()...));
}

// Every execution space this Kokkos was built with, host spaces first so that
// the first one is the natural baseline. Adding a backend to Kokkos adds it
// here with no other change.
using EnabledSpaces = detail::concat<
#if defined(KOKKOS_ENABLE_SERIAL)
    std::tuple<Kokkos::Serial>,
#endif
#if defined(KOKKOS_ENABLE_OPENMP)
    std::tuple<Kokkos::OpenMP>,
#endif
#if defined(KOKKOS_ENABLE_THREADS)
    std::tuple<Kokkos::Threads>,
#endif
#if defined(KOKKOS_ENABLE_CUDA)
    std::tuple<Kokkos::Cuda>,
#endif
#if defined(KOKKOS_ENABLE_HIP)
    std::tuple<Kokkos::HIP>,
#endif
#if defined(KOKKOS_ENABLE_SYCL)
    std::tuple<Kokkos::SYCL>,
#endif
    std::tuple<>>;

// Calls f(TypeTag<Space>{}) for each enabled execution space, in order.
template <class F>
void for_each_space(F&& f) {
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (f(TypeTag<std::tuple_element_t<I, EnabledSpaces>>{}), ...);
  }
  (std::make_index_sequence<std::tuple_size_v<EnabledSpaces>>{});
}

// True when the space's memory is host memory: a host mirror then aliases the
// device View and host<->device copies are not real copies.
template <class Space>
constexpr bool is_host_space_v =
    Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename Space::memory_space>::accessible;

// Page-locked host memory of the backend, or void when it has none.
template <class Space>
struct PinnedHostSpace {
  using type = void;
};
#if defined(KOKKOS_ENABLE_CUDA)
template <>
struct PinnedHostSpace<Kokkos::Cuda> {
  using type = Kokkos::CudaHostPinnedSpace;
};
#endif
#if defined(KOKKOS_ENABLE_HIP)
template <>
struct PinnedHostSpace<Kokkos::HIP> {
  using type = Kokkos::HIPHostPinnedSpace;
};
#endif
#if defined(KOKKOS_ENABLE_SYCL)
template <>
struct PinnedHostSpace<Kokkos::SYCL> {
  using type = Kokkos::SYCLHostUSMSpace;
};
#endif

}  // namespace portalab
