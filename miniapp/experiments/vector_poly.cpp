// Lab 6 (seed 000): z = a·x² + b·y + c on 5,000,000 float64, a compiled loop
// against NumPy's operation-by-operation evaluation, with and without copies.
//
// The model experiment (docs/adding-an-experiment.md): arrays made untimed in
// the constructor, a table of variants, one member function per variant that
// queues the timed work on the state's instance (the runner fences and times
// it), a check against an independent host reference, the declared work.
#include "experiment/experiment.hpp"
#include "kernels/vector_poly.hpp"

namespace portalab {
namespace {

template <class Space, class T>
class VectorPoly {
 public:
  static constexpr double a = 3.5, b = 2.8, c = 10.0;  // the lab's coefficients

  VectorPoly(CaseContext<Space>& ctx, std::size_t n, const Parameters&)
      : m_x(ctx, "x", In{0.0, 1.0}, n),
        m_y(ctx, "y", In{0.0, 1.0}, n),
        m_z(ctx, "z", Out{}, n),
        m_t1(allocate_view<Temporary>("t1", n)),
        m_t2(allocate_view<Temporary>("t2", n)) {}

  static auto variants() {
    return std::array{
        Variant<VectorPoly>{.name = "fused", .run = &VectorPoly::fused},
        Variant<VectorPoly>{.name = "unfused",
                            .run = &VectorPoly::unfused,
                            .work = &VectorPoly::work_unfused},
    };
  }

  // One kernel: reads x and y, writes z.
  void fused(RunState<Space>& s) {
    kernels::vector_poly_fused(s.exec(), s.paths(), T(a), T(b), T(c), m_x.device(), m_y.device(),
                               m_z.device());
  }
  // NumPy's way: a temporary per operation.
  void unfused(RunState<Space>& s) {
    kernels::vector_poly_unfused(s.exec(), s.paths(), T(a), T(b), T(c), m_x.device(), m_y.device(),
                                 m_t1, m_t2, m_z.device());
  }

  Check verify() const {
    const T* x = m_x.host().data();
    const T* y = m_y.host().data();
    return compare_elementwise(
        m_z.host().data(), static_cast<std::int64_t>(m_z.size()),
        [&](std::int64_t i) {
          const double xi = x[i], yi = y[i];
          return a * xi * xi + b * yi + c;
        },
        elementwise_tolerance<T>(6));  // 5 operations and b's rounding to T
  }

  static Work work(std::size_t n, const Parameters&) { return {3.0 * sizeof(T) * n, 5.0 * n}; }
  // Five passes over two arrays each; t1 kept from the second pass to the
  // fourth across the third's y and t2: three arrays in use at once.
  static Work work_unfused(std::size_t n, const Parameters&) {
    return {.bytes = 11.0 * sizeof(T) * n, .flops = 5.0 * n, .resident_bytes = 3.0 * sizeof(T) * n};
  }
  static std::size_t footprint(std::size_t n, const Parameters&) { return 5 * sizeof(T) * n; }

 private:
  using Temporary = typename Mirrored<T*, Space>::device_view;  // no host mirror
  Mirrored<T*, Space> m_x, m_y, m_z;
  Temporary m_t1, m_t2;
};

[[maybe_unused]] const bool vector_poly_registered = register_experiment<VectorPoly, double, float>(
    {
        .name = "vector_poly",
        .summary = "z = a*x^2 + b*y + c (lab 6): fused kernel vs NumPy-style temporaries",
        .default_sizes = {1'000'000},
        .default_dtypes = {"float64"},
    });

}  // namespace
}  // namespace portalab
