// Lab 002's dot scaled out over ranks (one GPU each): each rank's partial
// dot of its share of x and y, then an allreduce of the partials, so every
// rank holds x·y. Strong scaling (scaling = "strong"): n is the whole
// vector, split among the ranks; weak ("weak"): n per rank. The rows on k
// ranks carry the parallel efficiency against the one-rank row, and the
// summary the smallest n at which k ranks beat one.
#include "experiment/experiment.hpp"
#include "kernels/dot.hpp"
#include "experiment/matrix_check.hpp"
#include "ranks/distributed.hpp"

#include <fmt/format.h>

namespace portalab {
namespace {

// Whole numbers, zero mean: exact products, an exact reference in int64.
constexpr In dot_input = In::whole_numbers(-8.0, 8.0);
enum Scaling : std::int64_t { strong = 0, weak = 1 };

std::size_t share(std::size_t n, const Parameters& p, int rank) {
  const auto k = static_cast<std::size_t>(p.count("ranks") ? p.at("ranks") : 1);
  if (p.at("scaling") == weak) return n;
  return n / k + (static_cast<std::size_t>(rank) < n % k ? 1 : 0);
}
double global_n(std::size_t n, const Parameters& p) {
  const double k = p.count("ranks") ? static_cast<double>(p.at("ranks")) : 1.0;
  return p.at("scaling") == weak ? static_cast<double>(n) * k : static_cast<double>(n);
}

template <class Space, class T>
class DotDistributed {
 public:
  DotDistributed(CaseContext<Space>& ctx, std::size_t n, const Parameters& p)
      : m_group(ctx.group()),
        m_n(global_n(n, p)),
        m_x(ctx, fmt::format("x.rank{}", ctx.group().rank()), dot_input,
            share(n, p, ctx.group().rank())),
        m_y(ctx, fmt::format("y.rank{}", ctx.group().rank()), dot_input,
            share(n, p, ctx.group().rank())),
        m_dot(ctx, "dot", Out{}, 1),
        m_partial("partial") {}

  static auto variants() {
    return std::array{
        Variant<DotDistributed>{.name = "mpi", .run = &DotDistributed::mpi},
        Variant<DotDistributed>{.name = "nccl",
                                .run = &DotDistributed::nccl,
                                .unavailable = &nccl_path_unavailable<Space>},
    };
  }

  // The partial to the host, MPI_Allreduce of one value, the sum back.
  void mpi(RunState<Space>& s) {
    kernels::dot_reduce(s.exec(), s.paths(), m_x.device(), m_y.device(), result());
    Kokkos::deep_copy(s.exec(), m_partial, result());
    s.exec().fence("portalab::dot_distributed::partial");
    m_group.allreduce_sum(m_partial.data(), m_partial.data(), 1, datatype_of<T>());
    Kokkos::deep_copy(s.exec(), result(), m_partial);
  }
  // The partial stays on the device: NCCL sums it in place on the stream.
  void nccl(RunState<Space>& s) {
    kernels::dot_reduce(s.exec(), s.paths(), m_x.device(), m_y.device(), result());
    Nccl::of(m_group).allreduce_sum(result().data(), result().data(), 1, datatype_of<T>(),
                                    stream_of(s.exec()));
  }

  // Against the exact sum (int64) over every rank's share; the error allowed
  // is that of summing n products in T, relative to Σ|x·y|.
  Check verify() const {
    const auto n = static_cast<std::int64_t>(m_x.size());
    const T* x = m_x.host().data();
    const T* y = m_y.host().data();
    std::int64_t exact[2] = {0, 0};  // Σ x·y, Σ |x·y|
    std::int64_t sum = 0, magnitude = 0;
#if defined(_OPENMP)
#pragma omp parallel for reduction(+ : sum, magnitude)
#endif
    for (std::int64_t i = 0; i < n; ++i) {
      const auto p = static_cast<std::int64_t>(x[i]) * static_cast<std::int64_t>(y[i]);
      sum += p;
      magnitude += p < 0 ? -p : p;
    }
    exact[0] = sum;
    exact[1] = magnitude;
    m_group.allreduce_sum(exact, exact, 2, Datatype::int64);
    const double got = static_cast<double>(m_dot.host()(0));
    Check check;
    check.tolerance = summation_tolerance<T>(static_cast<std::int64_t>(m_n));
    check.rel_error = std::isfinite(got) ? std::abs(got - static_cast<double>(exact[0])) /
                                               std::max(1.0, static_cast<double>(exact[1]))
                                         : std::numeric_limits<double>::infinity();
    check.pass = check.rel_error <= check.tolerance;
    if (!check.pass)
      check.detail = fmt::format("got {:.17g}, exact {} over {} ranks (sum of |x·y| {})", got,
                                 exact[0], m_group.size(), exact[1]);
    return check;
  }

  static Work work(std::size_t n, const Parameters& p) {
    const double all = global_n(n, p);
    return {2.0 * sizeof(T) * all, 2.0 * all};
  }
  static std::size_t footprint(std::size_t n, const Parameters& p) {
    return 2 * sizeof(T) * share(n, p, 0) + 2 * sizeof(T);
  }

 private:
  auto result() const { return Kokkos::subview(m_dot.device(), 0); }

  const Comm& m_group;
  double m_n;  // elements over all ranks
  Mirrored<T*, Space> m_x, m_y, m_dot;
  Kokkos::View<T, Kokkos::HostSpace> m_partial;
};

[[maybe_unused]] const bool dot_distributed_registered =
    register_experiment<DotDistributed, float, double>({
        .name = "dot_distributed",
        .summary = "x.y over ranks: each rank's partial dot, then an allreduce (MPI or NCCL); "
                   "strong or weak scaling, efficiency against one rank",
        .default_sizes = {1000000, 100000000},
        .default_dtypes = {"float32"},
        .bound = Bound::read,  // each rank reads its two slices; the allreduce moves bytes
        .parameters = {{.name = "scaling",
                        .default_value = strong,
                        .min = 0,
                        .max = 1,
                        .meaning = "strong: n in all; weak: n per rank",
                        .choices = {"strong", "weak"}}},
        .distributed = true,
    });

}  // namespace
}  // namespace portalab
