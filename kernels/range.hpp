// The 1-D policy every element-wise kernel uses: 64-bit indices, so sizes
// beyond 2^31 elements work.
#pragma once

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace portalab::kernels {

template <class Exec>
using Range = Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::int64_t>>;

}  // namespace portalab::kernels
