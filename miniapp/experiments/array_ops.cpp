// Lab 003 (seed 003): the tour of array operations — arithmetic with a
// scalar and between arrays, zeros/ones/identity/arange, cos/sin/sqrt — at
// the lab's small sizes in every space, each value checked against the host.
// Vectors have n elements, matrices n×n (the lab: 5, 3×3 and 10). `portalab
// run inputs/cupy-continued.toml` prints them as the lab does.
#include "experiment/experiment.hpp"
#include "kernels/array_ops.hpp"

#include <fmt/format.h>

#include <cmath>
#include <initializer_list>
#include <utility>

namespace portalab {
namespace {

// The first failing check, else the one with the largest error.
Check worst_of(std::initializer_list<std::pair<const char*, Check>> checks) {
  Check out;
  out.pass = true;
  for (const auto& [name, c] : checks) {
    if (out.pass && (!c.pass || c.rel_error >= out.rel_error)) {
      out = c;
      if (!c.pass) out.detail = std::string(name) + ": " + c.detail;
    }
  }
  return out;
}

// At most this many elements per line and lines per matrix, as NumPy abridges.
constexpr std::size_t shown = 10;

template <class V>
std::string vector_text(const V& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.extent(0) && i < shown; ++i)
    s += fmt::format("{}{:.8g}", i ? " " : "", static_cast<double>(v(i)));
  return s + (v.extent(0) > shown ? " ...]" : "]");
}

template <class M>
std::string matrix_text(const M& m) {
  std::string s = "[";
  for (std::size_t i = 0; i < m.extent(0) && i < shown; ++i) {
    s += i ? "\n [" : "[";
    for (std::size_t j = 0; j < m.extent(1) && j < shown; ++j)
      s += fmt::format("{}{:.8g}", j ? " " : "", static_cast<double>(m(i, j)));
    s += m.extent(1) > shown ? " ...]" : "]";
  }
  return s + (m.extent(0) > shown ? "\n ...]" : "]");
}

template <class Space, class T>
class ArrayOps {
 public:
  static constexpr double scalar = 10.0;  // the lab's x+10 and 10*x

  ArrayOps(CaseContext<Space>& ctx, std::size_t n, const Parameters&)
      : m_x(ctx, "x", In::arange(1.0, 2.0), n),  // [1 3 5 7 9] at the lab's n = 5
        m_y(ctx, "y", In::arange(2.0, 2.0), n),  // [2 4 6 8 10]
        m_plus(ctx, "x+10", Out{}, n),
        m_times(ctx, "10*x", Out{}, n),
        m_sum(ctx, "x+y", Out{}, n),
        m_difference(ctx, "x-y", Out{}, n),
        m_product(ctx, "x*y", Out{}, n),
        m_quotient(ctx, "x/y", Out{}, n),
        m_zeros(ctx, "zeros", Out{}, n, n),
        m_ones(ctx, "ones", Out{}, n, n),
        m_identity(ctx, "identity", Out{}, n, n),
        m_arange(ctx, "arange", Out{}, n),
        m_v(ctx, "v", Out{}, n),
        m_cos(ctx, "cos(v)", Out{}, n),
        m_sin(ctx, "sin(v)", Out{}, n),
        m_sqrt(ctx, "sqrt(v)", Out{}, n) {}

  static auto variants() {
    using V = Variant<ArrayOps>;
    return std::array{
        V{.name = "arithmetic",
          .run = &ArrayOps::arithmetic,
          .verify = &ArrayOps::verify_arithmetic,
          .show = &ArrayOps::show_arithmetic,
          .work = &ArrayOps::work_arithmetic},
        V{.name = "creation",
          .run = &ArrayOps::creation,
          .verify = &ArrayOps::verify_creation,
          .show = &ArrayOps::show_creation,
          .work = &ArrayOps::work_creation},
        V{.name = "math",
          .run = &ArrayOps::math,
          .verify = &ArrayOps::verify_math,
          .show = &ArrayOps::show_math,
          .work = &ArrayOps::work_math},
    };
  }

  void arithmetic(RunState<Space>& s) {
    kernels::array_arithmetic(s.exec(), s.paths(), T(scalar), m_x.device(), m_y.device(),
                              m_plus.device(), m_times.device(), m_sum.device(),
                              m_difference.device(), m_product.device(), m_quotient.device());
  }
  void creation(RunState<Space>& s) {
    kernels::array_creation(s.exec(), m_zeros.device(), m_ones.device(), m_identity.device(),
                            m_arange.device());
  }
  void math(RunState<Space>& s) {
    kernels::array_math(s.exec(), s.paths(), m_v.device(), m_cos.device(), m_sin.device(),
                        m_sqrt.device());
  }

  Check verify_arithmetic() const {
    const T* x = m_x.host().data();
    const T* y = m_y.host().data();
    return worst_of({
        {"x+10", check(
                     m_plus, [&](std::int64_t i) { return x[i] + scalar; }, 1)},
        {"10*x", check(
                     m_times, [&](std::int64_t i) { return scalar * x[i]; }, 1)},
        {"x+y", check(
                    m_sum, [&](std::int64_t i) { return double(x[i]) + y[i]; }, 1)},
        {"x-y", check(
                    m_difference, [&](std::int64_t i) { return double(x[i]) - y[i]; }, 1)},
        {"x*y", check(
                    m_product, [&](std::int64_t i) { return double(x[i]) * y[i]; }, 1)},
        {"x/y", check(
                    m_quotient, [&](std::int64_t i) { return double(x[i]) / y[i]; }, 1)},
    });
  }
  // A matrix's storage in the space's layout is symmetric for these three.
  Check verify_creation() const {
    const std::int64_t n = m_arange.size();
    return worst_of({
        {"zeros", check(
                      m_zeros, [](std::int64_t) { return 0.0; }, 0)},
        {"ones", check(
                     m_ones, [](std::int64_t) { return 1.0; }, 0)},
        {"identity",
         check(
             m_identity, [&](std::int64_t k) { return k / n == k % n ? 1.0 : 0.0; }, 0)},
        {"arange", check(
                       m_arange, [](std::int64_t i) { return double(i); }, 1)},
    });
  }
  // Device sin and cos may be 2 ulp off.
  Check verify_math() const {
    return worst_of({
        {"v", check(
                  m_v, [](std::int64_t i) { return double(i); }, 1)},
        {"cos(v)", check(
                       m_cos, [](std::int64_t i) { return std::cos(double(i)); }, 4)},
        {"sin(v)", check(
                       m_sin, [](std::int64_t i) { return std::sin(double(i)); }, 4)},
        {"sqrt(v)", check(
                        m_sqrt, [](std::int64_t i) { return std::sqrt(double(i)); }, 1)},
    });
  }

  // Each variant's inputs and outputs, as the lab prints them.
  std::string show_arithmetic() const {
    return vectors({&m_x, &m_y, &m_plus, &m_times, &m_sum, &m_difference, &m_product, &m_quotient});
  }
  std::string show_creation() const {
    std::string s;
    for (const auto* a : {&m_zeros, &m_ones, &m_identity})
      s += fmt::format("{}:\n{}\n", a->label(), matrix_text(a->host()));
    return s + vectors({&m_arange});
  }
  std::string show_math() const { return vectors({&m_v, &m_cos, &m_sin, &m_sqrt}); }

  static Work work_arithmetic(std::size_t n, const Parameters&) {
    return {16 * double(n) * sizeof(T), 6.0 * n};  // 2 scalar ops of 2 arrays, 4 of 3
  }
  static Work work_creation(std::size_t n, const Parameters&) {
    return {(3 * double(n) * double(n) + double(n)) * sizeof(T), 2.0 * n};  // writes only
  }
  static Work work_math(std::size_t n, const Parameters&) {
    return {7 * double(n) * sizeof(T), 5.0 * n};  // arange, then 3 × (read, write)
  }
  static std::size_t footprint(std::size_t n, const Parameters&) {
    return (16 * n + 3 * n * n) * sizeof(T);
  }

 private:
  // got[i] against f(i), with `ops` rounded operations in T.
  template <class A, class F>
  static Check check(const A& got, F f, int ops) {
    return compare_elementwise(got.host().data(), static_cast<std::int64_t>(got.size()), f,
                               elementwise_tolerance<T>(ops), std::numeric_limits<T>::min());
  }
  static std::string vectors(std::initializer_list<const Mirrored<T*, Space>*> arrays) {
    std::string s;
    for (const auto* a : arrays) s += fmt::format("{}: {}\n", a->label(), vector_text(a->host()));
    return s;
  }

  Mirrored<T*, Space> m_x, m_y, m_plus, m_times, m_sum, m_difference, m_product, m_quotient;
  Mirrored<T**, Space> m_zeros, m_ones, m_identity;
  Mirrored<T*, Space> m_arange, m_v, m_cos, m_sin, m_sqrt;
};

[[maybe_unused]] const bool array_ops_registered = register_experiment<ArrayOps, double, float>({
    .name = "array_ops",
    .summary = "lab 003's tour: arithmetic, zeros/ones/identity/arange, cos/sin/sqrt, printed",
    .default_sizes = {5},
    .default_dtypes = {"float64"},
});

}  // namespace
}  // namespace portalab
