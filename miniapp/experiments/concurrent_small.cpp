// Many small independent kernels, each too small to fill a GPU: `kernels`
// kernels of n elements, kernel j computing y_j = 1 + x_j + … + x_j^degree on
// its own slice (kernels/polynomial.hpp; `degree` sets how long one runs),
// spread round-robin over 1, 2, 4 or 8 instances from partition_space
// (variants instances_1 … instances_8). Throughput is kernels per
// millisecond; each row also gets it relative to instances_1 (`vs_1`).
#include "experiment.hpp"
#include "instances.hpp"
#include "polynomial_check.hpp"

#include <charconv>
#include <string>

namespace portalab {
namespace {

int instance_count(std::string_view variant) {
  int k = 1;
  const auto digits = variant.substr(variant.find('_') + 1);
  std::from_chars(digits.data(), digits.data() + digits.size(), k);
  return k;
}

template <class Space, class T>
class ConcurrentSmall {
 public:
  ConcurrentSmall(CaseContext<Space>& ctx, std::size_t n, const Parameters& p)
      : m_kernels(static_cast<std::size_t>(p.at("kernels"))),
        m_degree(p.at("degree")),
        m_x(ctx, "x", In{-0.5, 0.5}, n * m_kernels),
        m_y(ctx, "y", Out{}, n * m_kernels),
        m_n(n),
        m_pool(ctx.exec()) {}

  void run(const Space&, std::string_view variant) {
    const auto k = static_cast<std::size_t>(instance_count(variant));
    m_times = run_concurrently(m_pool.get(static_cast<int>(k)), [&](std::size_t i, const Space& e) {
      for (std::size_t j = i; j < m_kernels; j += k) {
        const auto slice = std::make_pair(j * m_n, (j + 1) * m_n);
        kernels::horner(e, Kokkos::subview(m_x.device(), slice),
                        Kokkos::subview(m_y.device(), slice), m_degree);
      }
    });
  }

  std::optional<double> self_timed_ms() const { return m_times.last_ms(); }
  std::string timed_by(std::string_view variant) const {
    return instance_timing<Space>(instance_count(variant));
  }
  Metrics metrics() const {
    const double total = m_times.last_ms();
    return {{"kernels_per_ms", total > 0 ? m_kernels / total : 0.0},
            {"first_instance_done_ms", m_times.first_ms()}};
  }

  static std::string not_applicable(const Space& exec, std::string_view variant, CopyMode,
                                    const Parameters&) {
    return why_not_partitionable(exec, instance_count(variant));
  }

  Check verify(std::string_view) const {
    return check_geometric_sum(m_x.host().data(), m_y.host().data(),
                               static_cast<std::int64_t>(m_y.size()), m_degree);
  }

  static Work work(std::size_t n, std::string_view, const Parameters& p) {
    const double elements = static_cast<double>(n) * p.at("kernels");
    return {2.0 * sizeof(T) * elements,
            kernels::horner_flops_per_degree * p.at("degree") * elements,
            static_cast<double>(p.at("kernels"))};
  }
  static std::size_t footprint(std::size_t n, const Parameters& p) {
    return 2 * sizeof(T) * n * static_cast<std::size_t>(p.at("kernels"));
  }

 private:
  std::size_t m_kernels;
  std::int64_t m_degree;
  Mirrored<T*, Space> m_x, m_y;
  std::size_t m_n;
  InstancePool<Space> m_pool;
  InstanceTimes m_times;
};

// vs_1: each row's throughput over that of instances_1 in the same case.
void relate_concurrent_small(std::span<Result> rows) {
  const Result* one = passing_row(rows, "instances_1");
  if (!one) return;
  for (auto& r : rows)
    if (r.status == Status::pass && r.kernel.median > 0)
      r.set_metric("vs_1", one->kernel.median / r.kernel.median);
}

[[maybe_unused]] const bool registered = register_experiment<ConcurrentSmall, float, double>(
    {
        .name = "concurrent_small",
        .summary = "many small kernels spread over 1, 2, 4 or 8 instances: kernels per ms",
        .variants = {"instances_1", "instances_2", "instances_4", "instances_8"},
        .default_sizes = {8192},
        .default_dtypes = {"float32"},
        .bound = "compute",
        .parameters = {{"kernels", 64, 1, 1 << 20, "independent kernels per repetition"},
                       {"degree", 256, 0, 1 << 24,
                        "multiply-adds per element: how long one kernel runs"}},
        .same_outputs = true,
    },
    relate_concurrent_small);

}  // namespace
}  // namespace portalab
