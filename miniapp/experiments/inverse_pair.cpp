// Two independent inversions (the end of lab 002: two 6000² float32 inverses
// on one stream, then on two streams with events), through the vendor LU:
//   sequential  both on one instance, one after the other
//   concurrent  one on each of two instances from partition_space, each
//               library call on its own instance's stream and cuSOLVER handle
// Both are timed by the fence on each instance they ran on. The concurrent
// row gets `overlap` = 1 − t_concurrent / t_sequential: the share of the
// sequential time that running the two at once saved; `perfect_overlap_ms` =
// t_sequential / 2, the time of two inversions wholly at once; and
// `of_perfect` = perfect_overlap_ms / t_concurrent (1 = a perfect overlap).
#include "experiment/experiment.hpp"
#include "platform/instances.hpp"
#include "kernels/factorization.hpp"
#include "libraries/lapack.hpp"
#include "experiment/matrix_check.hpp"

#include <array>

namespace portalab {
namespace {

template <class Space, class T>
class InversePair {
 public:
  InversePair(CaseContext<Space>& ctx, std::size_t n, const Parameters&)
      : m_a{{{ctx, "A1", In{-1.0, 1.0}, n, n}, {ctx, "A2", In{-1.0, 1.0}, n, n}}},
        m_x{{{ctx, "A1inv", Out{}, n, n}, {ctx, "A2inv", Out{}, n, n}}},
        m_solve{{libraries::LuInverse<Space, T>(n), libraries::LuInverse<Space, T>(n)}} {}

  static auto variants() {
    return std::array{
        Variant<InversePair>{.name = "sequential",
                             .run = &InversePair::sequential,
                             .missing_library = &libraries::why_no_vendor<Space, T>},
        Variant<InversePair>{.name = "concurrent",
                             .run = &InversePair::concurrent,
                             .instances = 2,
                             .missing_library = &libraries::why_no_vendor<Space, T>},
    };
  }

  // Both on one instance, one after the other.
  void sequential(RunState<Space>& s) {
    s.on_instances([&](std::size_t, const Space& e) {
      for (std::size_t i = 0; i < 2; ++i) m_solve[i].invert(e, m_a[i].device(), m_x[i].device());
    });
  }
  // Inverse i on instance i.
  void concurrent(RunState<Space>& s) {
    s.on_instances([&](std::size_t i, const Space& e) {
      m_solve[i].invert(e, m_a[i].device(), m_x[i].device());
    });
  }

  Check verify() const {
    Check worst;
    for (std::size_t i = 0; i < 2; ++i) {
      const auto summary = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(),
                                                               m_solve[i].summary);
      Check c = inverse_check(m_a[i].host().data(), m_x[i].host().data(),
                              static_cast<std::int64_t>(m_x[i].host().extent(0)), summary(2));
      if (!c.detail.empty()) c.detail = fmt::format("inverse {}: {}", i + 1, c.detail);
      if (i == 0 || !c.pass || (worst.pass && c.rel_error > worst.rel_error)) worst = c;
    }
    return worst;
  }

  static Work work(std::size_t n, const Parameters&) {
    const double m = static_cast<double>(n);
    // Per inverse: getrf 2n³/3 and n triangular solve pairs 2n³.
    return {2 * 4.0 * sizeof(T) * m * m, 2 * 8.0 / 3.0 * m * m * m};
  }
  static std::size_t footprint(std::size_t n, const Parameters&) {
    return 2 * (3 * sizeof(T) * n * n + sizeof(int) * n + 3 * sizeof(double));
  }

 private:
  std::array<Mirrored<T**, Space, Kokkos::LayoutLeft>, 2> m_a, m_x;
  std::array<libraries::LuInverse<Space, T>, 2> m_solve;
};

// overlap, perfect_overlap_ms and of_perfect on the concurrent row, from the
// sequential row of the same case.
void relate_inverse_pair(std::span<CaseRow> rows) {
  const CaseRow* sequential = passing_row(rows, "sequential");
  if (!sequential) return;
  const double perfect_ms = sequential->kernel_ms / 2;  // the two inversions wholly at once
  for (auto& r : rows) {
    if (&r == sequential || !r.passed || r.kernel_ms <= 0) continue;
    r.set_metric("overlap", 1.0 - r.kernel_ms / sequential->kernel_ms);
    r.set_metric("perfect_overlap_ms", perfect_ms);
    r.set_metric("of_perfect", perfect_ms / r.kernel_ms);
  }
}

[[maybe_unused]] const bool inverse_pair_registered =
    register_experiment<InversePair, float, double>(
        {
            .name = "inverse_pair",
            .summary = "two inverses on one instance, then concurrently on two (lab 002's streams)",
            .default_sizes = {1000},
            .default_dtypes = {"float32"},
            .bound = Bound::compute,
            .same_outputs = true,
        },
        relate_inverse_pair);

}  // namespace
}  // namespace portalab
