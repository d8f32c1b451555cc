// Lab 004 (seed 004): ufunc broadcasting with int64, a row vector added to
// every row of an n×n matrix and a column vector added to every column, with
// a 2-D MDRangePolicy. n is the matrix's side (4 in the lab).
#include "experiment/experiment.hpp"
#include "kernels/elementwise.hpp"

#include <type_traits>

namespace portalab {
namespace {

template <class Space, class T>
class BroadcastAdd {
 public:
  BroadcastAdd(CaseContext<Space>& ctx, std::size_t n, const Parameters&)
      : m_m(ctx, "m", In{-1000.0, 1000.0}, n, n),
        m_row(ctx, "row", In{-1000.0, 1000.0}, n),
        m_column(ctx, "column", In{-1000.0, 1000.0}, n),
        m_z(ctx, "z", Out{}, n, n) {}

  static auto variants() {
    return std::array{
        Variant<BroadcastAdd>{.name = "row",
                              .run = &BroadcastAdd::row,
                              .verify = &BroadcastAdd::verify_row},
        Variant<BroadcastAdd>{.name = "column",
                              .run = &BroadcastAdd::column,
                              .verify = &BroadcastAdd::verify_column},
    };
  }

  void row(RunState<Space>& s) {
    kernels::broadcast_add_row(s.exec(), s.paths(), m_m.device(), m_row.device(), m_z.device());
  }
  void column(RunState<Space>& s) {
    kernels::broadcast_add_column(s.exec(), s.paths(), m_m.device(), m_column.device(),
                                  m_z.device());
  }

  Check verify_row() const { return verify_broadcast(true); }
  Check verify_column() const { return verify_broadcast(false); }

  static Work work(std::size_t n, const Parameters&) {
    const double elements = double(n) * double(n);
    return {(2 * elements + double(n)) * sizeof(T), 0.0};  // integer additions are no FLOPs
  }
  static std::size_t footprint(std::size_t n, const Parameters&) {
    return (2 * n * n + 2 * n) * sizeof(T);
  }

 private:
  // Element by element, exactly: the element at offset k of z's storage is
  // (i, j) of the space's layout.
  Check verify_broadcast(bool by_row) const {
    const auto& m = m_m.host();
    const auto& row = m_row.host();
    const auto& column = m_column.host();
    const std::int64_t rows = m.extent(0), cols = m.extent(1);
    constexpr bool left = std::is_same_v<typename Space::array_layout, Kokkos::LayoutLeft>;
    return compare_elementwise(
        m_z.host().data(), rows * cols,
        [&](std::int64_t k) {
          const std::int64_t i = left ? k % rows : k / cols;
          const std::int64_t j = left ? k / rows : k % cols;
          return static_cast<double>(m(i, j) + (by_row ? row(j) : column(i)));
        },
        elementwise_tolerance<T>(1));  // integers: exact
  }

  Mirrored<T**, Space> m_m;
  Mirrored<T*, Space> m_row, m_column;
  Mirrored<T**, Space> m_z;
};

[[maybe_unused]] const bool broadcast_add_registered =
    register_experiment<BroadcastAdd, std::int64_t>({
        .name = "broadcast_add",
        .summary = "n x n int64 matrix + row vector, + column vector (lab 004's broadcasting)",
        .default_sizes = {4, 4096},
        .default_dtypes = {"int64"},
    });

}  // namespace
}  // namespace portalab
