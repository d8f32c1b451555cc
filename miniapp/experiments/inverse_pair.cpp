// Two independent inversions (the end of lab 002: two 6000² float32 inverses
// on one stream, then on two streams with events), through the vendor LU:
//   sequential  both on one instance, one after the other
//   concurrent  one on each of two instances from partition_space, each
//               library call on its own instance's stream and cuSOLVER handle
// Both are timed by the fence on each instance they ran on. The concurrent
// row gets `overlap` = 1 − t_concurrent / t_sequential: the share of the
// sequential time that running the two at once saved.
#include "experiment.hpp"
#include "instances.hpp"
#include "kernels/factorization.hpp"
#include "kernels/lapack.hpp"
#include "library_probe.hpp"
#include "matrix_check.hpp"

#include <array>

namespace portalab {
namespace {

template <class Space, class T>
class InversePair {
 public:
  using Device = Kokkos::Device<Space, typename Space::memory_space>;

  InversePair(CaseContext<Space>& ctx, std::size_t n)
      : m_a{{{ctx, "A1", In{-1.0, 1.0}, n, n}, {ctx, "A2", In{-1.0, 1.0}, n, n}}},
        m_x{{{ctx, "A1inv", Out{}, n, n}, {ctx, "A2inv", Out{}, n, n}}},
        m_solve{{Solve(n), Solve(n)}},
        m_pool(ctx.exec()) {}

  void run(const Space&, std::string_view variant) {
    const bool concurrent = variant == "concurrent";
    m_times = run_concurrently(m_pool.get(concurrent ? 2 : 1), [&](std::size_t i, const Space& e) {
      if (concurrent) {
        invert(e, i);
      } else {
        invert(e, 0);
        invert(e, 1);
      }
    });
  }

  std::optional<double> self_timed_ms() const { return m_times.last_ms(); }
  Metrics metrics() const { return m_times.metrics(); }
  std::string timed_by(std::string_view variant) const {
    return instance_timing<Space>(variant == "concurrent" ? 2 : 1);
  }
  std::string library(std::string_view) const {
    return vendor_library(kernels::DenseVendorFor<Space, T>::lapack);
  }

  static std::string not_applicable(const Space& exec, std::string_view variant, CopyMode,
                                    const Parameters&) {
    if (auto why = kernels::why_no_vendor<Space, T>(); !why.empty()) return why;
    return variant == "concurrent" ? why_not_partitionable(exec, 2) : std::string();
  }

  Check verify(std::string_view) const {
    Check worst;
    for (std::size_t i = 0; i < 2; ++i) {
      const auto summary =
          Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), m_solve[i].summary);
      Check c = inverse_check(m_a[i].host().data(), m_x[i].host().data(),
                              static_cast<std::int64_t>(m_x[i].host().extent(0)), summary(2));
      if (!c.detail.empty()) c.detail = fmt::format("inverse {}: {}", i + 1, c.detail);
      if (i == 0 || !c.pass || (worst.pass && c.rel_error > worst.rel_error)) worst = c;
    }
    return worst;
  }

  static Work work(std::size_t n, std::string_view) {
    const double m = static_cast<double>(n);
    // Per inverse: getrf 2n³/3 and n triangular solve pairs 2n³.
    return {2 * 4.0 * sizeof(T) * m * m, 2 * 8.0 / 3.0 * m * m * m};
  }
  static std::size_t footprint(std::size_t n) {
    return 2 * (3 * sizeof(T) * n * n + sizeof(int) * n + 3 * sizeof(double));
  }

 private:
  // One inversion's own factors, pivots and library workspace: shared by
  // nothing, so two can run at once.
  struct Solve {
    explicit Solve(std::size_t n)
        : lu(Kokkos::view_alloc(Kokkos::WithoutInitializing, "LU"), n, n),
          ipiv(Kokkos::view_alloc(Kokkos::WithoutInitializing, "ipiv"), n),
          summary("lu_summary", 3) {}
    Kokkos::View<T**, Kokkos::LayoutLeft, Device> lu;
    Kokkos::View<int*, Kokkos::LayoutLeft, Device> ipiv;
    Kokkos::View<double*, Device> summary;  // sign, log|det|, zero pivots
    kernels::LapackWorkspace<Space, T> workspace;
  };

  // X_i = A_i⁻¹ on instance e: LU of a copy of A_i, then LU·X = I.
  void invert(const Space& e, std::size_t i) {
    Solve& s = m_solve[i];
    const auto& X = m_x[i].device();
    Kokkos::deep_copy(e, s.lu, m_a[i].device());
    kernels::set_identity(e, X);
    kernels::getrf(e, s.lu, s.ipiv, s.workspace);
    kernels::getrs(e, s.lu, s.ipiv, X, s.workspace);
    kernels::lu_summary(e, s.lu, s.ipiv, s.summary);
  }

  std::array<Mirrored<T**, Space, Kokkos::LayoutLeft>, 2> m_a, m_x;
  std::array<Solve, 2> m_solve;
  InstancePool<Space> m_pool;
  InstanceTimes m_times;
};

// overlap on the concurrent row, from the sequential row of the same case.
void relate_inverse_pair(std::span<Result> rows) {
  const Result* sequential = passing_row(rows, "sequential");
  if (!sequential) return;
  for (auto& r : rows)
    if (r.variant == "concurrent" && r.status == Status::pass && r.kernel.median > 0)
      r.set_metric("overlap", 1.0 - r.kernel.median / sequential->kernel.median);
}

[[maybe_unused]] const bool registered = register_experiment<InversePair, float, double>(
    {
        .name = "inverse_pair",
        .summary = "two inverses on one instance, then concurrently on two (lab 002's streams)",
        .variants = {"sequential", "concurrent"},
        .default_sizes = {6000},
        .default_dtypes = {"float32"},
        .bound = "compute",
        .same_outputs = true,
    },
    relate_inverse_pair);

}  // namespace
}  // namespace portalab
