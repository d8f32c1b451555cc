// Point to point between pairs of ranks (one GPU each): rank r and rank r^1
// exchange buffers of n elements, one way (even ranks send) or both ways at
// once, through host mirrors and MPI, MPI on the buffers where they are, or
// NCCL. GB/s per link, against the peer copy bandwidth calibrate measures
// between the GPUs (copy engines), one way or both.
#include "experiment/experiment.hpp"
#include "ranks/distributed.hpp"

#include <fmt/format.h>

namespace portalab {
namespace {

constexpr In message_input = In::whole_numbers(0.0, 4096.0);

template <class Space, class T>
class SendRecv {
 public:
  SendRecv(CaseContext<Space>& ctx, std::size_t n, const Parameters&)
      : m_group(ctx.group()),
        // One rank alone exchanges with itself (a copy through the same path).
        m_peer(ctx.group().size() == 1 ? 0 : ctx.group().rank() ^ 1),
        m_x(ctx, rank_input_label(ctx.group().rank()), message_input, n),
        m_y(ctx, "received", Out{}, n) {
    if (m_group.size() > 1 && m_group.size() % 2 != 0)
      throw std::invalid_argument(fmt::format(
          "sendrecv pairs rank r with r^1: {} ranks leave one without a peer; give an even "
          "number (ranks = [2, 4])",
          m_group.size()));
  }

  static auto variants() {
    return std::array{
        Variant<SendRecv>{.name = "mpi_host",
                          .run = &SendRecv::mpi_host_one_way,
                          .verify = &SendRecv::verify_one_way},
        Variant<SendRecv>{.name = "mpi_host_both",
                          .run = &SendRecv::mpi_host_both,
                          .work = &SendRecv::work_both,
                          .bound = Bound::peer_duplex},
        Variant<SendRecv>{.name = "mpi_device",
                          .run = &SendRecv::mpi_device_one_way,
                          .verify = &SendRecv::verify_one_way,
                          .unavailable = &device_buffers_unavailable<Space>},
        Variant<SendRecv>{.name = "mpi_device_both",
                          .run = &SendRecv::mpi_device_both,
                          .work = &SendRecv::work_both,
                          .bound = Bound::peer_duplex,
                          .unavailable = &device_buffers_unavailable<Space>},
        Variant<SendRecv>{.name = "nccl",
                          .run = &SendRecv::nccl_one_way,
                          .verify = &SendRecv::verify_one_way,
                          .unavailable = &nccl_path_unavailable<Space>},
        Variant<SendRecv>{.name = "nccl_both",
                          .run = &SendRecv::nccl_both,
                          .work = &SendRecv::work_both,
                          .bound = Bound::peer_duplex,
                          .unavailable = &nccl_path_unavailable<Space>},
    };
  }

  void mpi_host_one_way(RunState<Space>& s) {
    if (alone()) return mpi_host_both(s);
    if (sender()) {
      to_host(s);
      m_group.send(m_x.host().data(), m_x.size(), datatype_of<T>(), m_peer);
    } else {
      m_group.recv(m_y.host().data(), m_y.size(), datatype_of<T>(), m_peer);
      Kokkos::deep_copy(s.exec(), m_y.device(), m_y.host());
    }
  }
  void mpi_host_both(RunState<Space>& s) {
    to_host(s);
    m_group.sendrecv(m_x.host().data(), m_y.host().data(), m_x.size(), datatype_of<T>(), m_peer);
    Kokkos::deep_copy(s.exec(), m_y.device(), m_y.host());
  }
  void mpi_device_one_way(RunState<Space>& s) {
    if (alone()) return mpi_device_both(s);
    if (sender())
      m_group.send(m_x.device().data(), m_x.size(), datatype_of<T>(), m_peer);
    else
      m_group.recv(m_y.device().data(), m_y.size(), datatype_of<T>(), m_peer);
  }
  void mpi_device_both(RunState<Space>&) {
    m_group.sendrecv(m_x.device().data(), m_y.device().data(), m_x.size(), datatype_of<T>(),
                     m_peer);
  }
  void nccl_one_way(RunState<Space>& s) {
    if (alone()) return nccl_both(s);
    Nccl::of(m_group).sendrecv(sender() ? m_x.device().data() : nullptr,
                               sender() ? nullptr : m_y.device().data(), m_x.size(),
                               datatype_of<T>(), m_peer, stream_of(s.exec()));
  }
  void nccl_both(RunState<Space>& s) {
    Nccl::of(m_group).sendrecv(m_x.device().data(), m_y.device().data(), m_x.size(),
                               datatype_of<T>(), m_peer, stream_of(s.exec()));
  }

  // What this rank received must be its peer's input, bit for bit.
  Check verify() const {
    Check check;
    const T* got = m_y.host().data();
    const auto n = static_cast<std::int64_t>(m_y.size());
    const std::uint64_t seed = fnv1a64(rank_input_label(m_peer));
    std::int64_t wrong = 0;
#if defined(_OPENMP)
#pragma omp parallel for reduction(+ : wrong)
#endif
    for (std::int64_t i = 0; i < n; ++i)
      if (!(got[i] == input_value<T>(seed, message_input, i))) ++wrong;
    check.pass = wrong == 0;
    check.rel_error = static_cast<double>(wrong) /
                      static_cast<double>(std::max<std::int64_t>(n, 1));
    if (!check.pass)
      check.detail = fmt::format(
          "rank {}: {} of {} elements received from rank {} differ from "
          "what it sent",
          m_group.rank(), wrong, n, m_peer);
    return check;
  }
  // One way: the receiver as above; the sender, that nothing arrived where
  // it would receive (still the poison the runner wrote).
  Check verify_one_way() const {
    if (!sender()) return verify();
    Check check;
    const T* got = m_y.host().data();
    std::size_t written = 0;
    for (std::size_t i = 0; i < m_y.size(); ++i)
      written += !std::isnan(static_cast<double>(got[i]));
    check.pass = written == 0;
    if (!check.pass)
      check.detail = fmt::format(
          "rank {} only sends, yet {} elements of its receive buffer were "
          "written",
          m_group.rank(), written);
    return check;
  }

  static Work work(std::size_t n, const Parameters&) {
    return {sizeof(T) * static_cast<double>(n), 0.0};
  }
  static Work work_both(std::size_t n, const Parameters&) {
    return {2.0 * sizeof(T) * static_cast<double>(n), 0.0};
  }
  static std::size_t footprint(std::size_t n, const Parameters&) { return 2 * sizeof(T) * n; }

 private:
  bool sender() const { return m_peer != m_group.rank() && m_group.rank() % 2 == 0; }
  bool alone() const { return m_peer == m_group.rank(); }
  void to_host(RunState<Space>& s) {
    Kokkos::deep_copy(s.exec(), m_x.host(), m_x.device());
    s.exec().fence("portalab::sendrecv::d2h");
  }

  const Comm& m_group;
  int m_peer;
  Mirrored<T*, Space> m_x, m_y;
};

[[maybe_unused]] const bool sendrecv_registered = register_experiment<SendRecv, float, double>({
    .name = "sendrecv",
    .summary = "pairs of ranks (r, r^1) exchange buffers, one way or both at once: MPI through "
               "host mirrors, MPI on device buffers, NCCL; GB/s per link against the peer copy "
               "bandwidth",
    .default_sizes = {256, 65536, 4194304, 67108864, 268435456},
    .default_dtypes = {"float32"},
    .bound = Bound::peer,
    .distributed = true,
});

}  // namespace
}  // namespace portalab
