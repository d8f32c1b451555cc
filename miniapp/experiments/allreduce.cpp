// Allreduce among the ranks of an entry (one per GPU): every rank's buffer of
// n elements summed into every rank's result. Three paths: through host
// mirrors and MPI (mpi_host), MPI on the buffers where they are (mpi_device:
// a CUDA-aware MPI on a GPU), and NCCL on the instance's stream. Rates as
// nccl-tests defines them: algorithm bandwidth S/t and bus bandwidth
// S/t·2(k-1)/k for a message of S bytes on k ranks (the row's GB/s).
#include "experiment/experiment.hpp"
#include "ranks/distributed.hpp"

#include <fmt/format.h>

namespace portalab {
namespace {

// Each rank's input differs (its rank in the label seeds it) and holds
// whole numbers below 2^12: sums over up to 2^11 ranks are exact in any
// order, so every path's result must equal the reference bit for bit.
constexpr In allreduce_input = In::whole_numbers(0.0, 4096.0);

template <class Space, class T>
class Allreduce {
 public:
  Allreduce(CaseContext<Space>& ctx, std::size_t n, const Parameters&)
      : m_group(ctx.group()),
        m_x(ctx, rank_input_label(ctx.group().rank()), allreduce_input, n),
        m_sum(ctx, "sum", Out{}, n) {}

  static auto variants() {
    return std::array{
        Variant<Allreduce>{.name = "mpi_host", .run = &Allreduce::mpi_host},
        Variant<Allreduce>{.name = "mpi_device",
                           .run = &Allreduce::mpi_device,
                           .unavailable = &device_buffers_unavailable<Space>},
        Variant<Allreduce>{.name = "nccl",
                           .run = &Allreduce::nccl,
                           .unavailable = &nccl_path_unavailable<Space>},
    };
  }

  // Device to host, MPI among the host buffers, host to device: what an MPI
  // that cannot read GPU memory costs.
  void mpi_host(RunState<Space>& s) {
    Kokkos::deep_copy(s.exec(), m_x.host(), m_x.device());
    s.exec().fence("portalab::allreduce::d2h");
    m_group.allreduce_sum(m_x.host().data(), m_sum.host().data(), m_x.size(), datatype_of<T>());
    Kokkos::deep_copy(s.exec(), m_sum.device(), m_sum.host());
  }
  void mpi_device(RunState<Space>&) {
    m_group.allreduce_sum(m_x.device().data(), m_sum.device().data(), m_x.size(), datatype_of<T>());
  }
  void nccl(RunState<Space>& s) {
    Nccl::of(m_group).allreduce_sum(m_x.device().data(), m_sum.device().data(), m_x.size(),
                                    datatype_of<T>(), stream_of(s.exec()));
  }

  Check verify() const {
    const auto n = static_cast<std::int64_t>(m_sum.size());
    std::vector<std::uint64_t> seeds;
    for (int r = 0; r < m_group.size(); ++r) seeds.push_back(fnv1a64(rank_input_label(r)));
    const T* got = m_sum.host().data();
    std::int64_t wrong = 0, first = -1;
#if defined(_OPENMP)
#pragma omp parallel for reduction(+ : wrong)
#endif
    for (std::int64_t i = 0; i < n; ++i) {
      T expected = 0;
      for (const auto seed : seeds) expected += input_value<T>(seed, allreduce_input, i);
      if (!(got[i] == expected)) ++wrong;
    }
    if (wrong > 0)
      for (std::int64_t i = 0; i < n && first < 0; ++i) {
        T expected = 0;
        for (const auto seed : seeds) expected += input_value<T>(seed, allreduce_input, i);
        if (!(got[i] == expected)) first = i;
      }
    Check check;
    check.pass = wrong == 0;
    check.rel_error = static_cast<double>(wrong) /
                      static_cast<double>(std::max<std::int64_t>(n, 1));
    if (!check.pass)
      check.detail = fmt::format(
          "{} of {} sums differ from the exact sum over {} ranks (first at "
          "{}: got {})",
          wrong, n, m_group.size(), first, static_cast<double>(got[first]));
    return check;
  }

  // Bus bytes: what each rank's links carry in a ring, 2(k-1)/k of the
  // message. One rank alone moves nothing over a bus: out of place, its
  // allreduce is a copy, the message read and written once.
  static Work work(std::size_t n, const Parameters& p) {
    const double k = p.count("ranks") ? static_cast<double>(p.at("ranks")) : 1.0;
    const double message = sizeof(T) * static_cast<double>(n);
    if (k == 1.0) return {2.0 * message, 0.0};
    return {message * 2.0 * (k - 1.0) / k, static_cast<double>(n) * (k - 1.0)};
  }
  static std::size_t footprint(std::size_t n, const Parameters&) { return 2 * sizeof(T) * n; }

 private:
  const Comm& m_group;
  Mirrored<T*, Space> m_x, m_sum;
};

// Algorithm bandwidth beside the bus bandwidth (the row's GB/s).
void algorithm_bandwidth(std::span<CaseRow> rows) {
  for (auto& r : rows) {
    if (r.kernel_ms <= 0) continue;
    const double bytes = static_cast<double>(r.n) * dtype_bytes(r.dtype);
    r.set_metric("message_bytes", bytes);
    r.set_metric("algbw_gbps", bytes / (r.kernel_ms * 1e6));
  }
}

[[maybe_unused]] const bool allreduce_registered = register_experiment<Allreduce, float, double>(
    {
        .name = "allreduce",
        .summary = "sum of every rank's buffer on every rank (MPI through host mirrors, MPI on "
                   "device buffers, NCCL): bus bandwidth as nccl-tests defines it",
        .default_sizes = {2, 256, 32768, 4194304, 67108864, 268435456},
        .default_dtypes = {"float32"},
        .bound = Bound::collective,
        .distributed = true,
    },
    algorithm_bandwidth);

}  // namespace
}  // namespace portalab
