// Many small independent kernels, each too small to fill a GPU: `kernels`
// kernels of n elements, kernel j computing y_j = 1 + x_j + … + x_j^degree on
// its own slice (kernels/polynomial.hpp; `degree` sets how long one runs),
// spread round-robin over 1, 2, 4 or 8 instances from partition_space
// (variants instances_1 … instances_8). Throughput is kernels per
// millisecond; each row also gets it relative to instances_1 (`vs_1`), and
// a row on k > 1 instances `perfect_overlap_ms` = instances_1's time / k (its
// k instances wholly at once) and `of_perfect` = perfect_overlap_ms / its time
// (1 = a perfect overlap).
#include "experiment/experiment.hpp"
#include "platform/instances.hpp"
#include "experiment/polynomial_check.hpp"

#include <string>
#include <string_view>

namespace portalab {
namespace {

template <class Space, class T>
class ConcurrentSmall {
 public:
  ConcurrentSmall(CaseContext<Space>& ctx, std::size_t n, const Parameters& p)
      : m_kernels(static_cast<std::size_t>(p.at("kernels"))),
        m_degree(p.at("degree")),
        m_x(ctx, "x", In{-0.5, 0.5}, n * m_kernels),
        m_y(ctx, "y", Out{}, n * m_kernels),
        m_n(n) {}

  static auto variants() {
    using V = Variant<ConcurrentSmall>;
    const auto run = &ConcurrentSmall::round_robin;
    return std::array{V{.name = "instances_1", .run = run, .instances = 1},
                      V{.name = "instances_2", .run = run, .instances = 2},
                      V{.name = "instances_4", .run = run, .instances = 4},
                      V{.name = "instances_8", .run = run, .instances = 8}};
  }

  // Kernel j on instance j mod k, for the variant's k instances.
  void round_robin(RunState<Space>& s) {
    const auto k = static_cast<std::size_t>(s.instances());
    const InstanceTimes& t = s.on_instances([&](std::size_t i, const Space& e) {
      for (std::size_t j = i; j < m_kernels; j += k) {
        const auto slice = std::make_pair(j * m_n, (j + 1) * m_n);
        kernels::horner(e, Kokkos::subview(m_x.device(), slice),
                        Kokkos::subview(m_y.device(), slice), m_degree);
      }
    });
    s.metric("kernels_per_ms", t.last_ms() > 0 ? m_kernels / t.last_ms() : 0.0);
    s.metric("first_instance_done_ms", t.first_ms());
  }

  Check verify() const {
    return check_geometric_sum(m_x.host().data(), m_y.host().data(),
                               static_cast<std::int64_t>(m_y.size()), m_degree);
  }

  static Work work(std::size_t n, const Parameters& p) {
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
};

// The instances a variant runs on, as variants() declares them (the same in
// every space and type).
int instances_of(std::string_view variant) {
  for (const auto& v : ConcurrentSmall<Kokkos::DefaultHostExecutionSpace, float>::variants())
    if (v.name == variant) return v.instances;
  return 1;
}

// vs_1: each row's throughput over that of instances_1 in the same case;
// perfect_overlap_ms and of_perfect: each row on k > 1 instances against
// instances_1's time shared perfectly among them.
void relate_concurrent_small(std::span<CaseRow> rows) {
  const CaseRow* one = passing_row(rows, "instances_1");
  if (!one) return;
  for (auto& r : rows) {
    if (!r.passed || r.kernel_ms <= 0) continue;
    r.set_metric("vs_1", one->kernel_ms / r.kernel_ms);
    const int k = instances_of(r.variant);
    if (k < 2) continue;
    const double perfect_ms = one->kernel_ms / k;
    r.set_metric("perfect_overlap_ms", perfect_ms);
    r.set_metric("of_perfect", perfect_ms / r.kernel_ms);
  }
}

[[maybe_unused]] const bool concurrent_small_registered =
    register_experiment<ConcurrentSmall, float, double>(
        {
            .name = "concurrent_small",
            .summary = "many small kernels spread over 1, 2, 4 or 8 instances: kernels per ms",
            .default_sizes = {8192},
            .default_dtypes = {"float32"},
            .bound = Bound::compute,
            .parameters = {{"kernels", 64, 1, 1 << 20, "independent kernels per repetition"},
                           {"degree", 256, 0, 1 << 24,
                            "multiply-adds per element: how long one kernel runs"}},
            .same_outputs = true,
        },
        relate_concurrent_small);

}  // namespace
}  // namespace portalab
