// Arrays of one experiment case: a View in the execution space's memory and
// its host mirror, created and copied the way the case's CopyMode says.
#pragma once

#include "platform/arrays.hpp"
#include "ranks/comm.hpp"
#include "deck/copy_mode.hpp"
#include "support/hash.hpp"
#include "platform/spaces.hpp"

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

namespace portalab {

// Deterministic uniform numbers in [0, 1) from (seed, index): the same inputs
// in every space and every run, whichever space creates them.
KOKKOS_INLINE_FUNCTION double hash_uniform(std::uint64_t seed, std::uint64_t i) {
  std::uint64_t z = seed + (i + 1) * 0x9E3779B97F4A7C15ull;  // splitmix64
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * 0x1.0p-53;
}

// An input, filled with uniform values in [lo, hi) (integers: floor of them),
// or, made by In::arange, with lo + step·i as the labs' arange inputs are.
struct In {
  double lo = 0.0;
  double hi = 1.0;
  double step = 0.0;  // non-zero: arange
  // Whole numbers in floating-point types too: sums of them are exact, in
  // any order, while they stay below 2^24 (float32), whatever adds them.
  bool whole = false;
  static constexpr In arange(double start, double step) { return {start, start, step}; }
  static constexpr In whole_numbers(double lo, double hi) { return {lo, hi, 0.0, true}; }
};

// The value fill_input writes at index i for (seed, in), on the host: what a
// rank computes of another rank's inputs to check what it received.
template <class T>
T input_value(std::uint64_t seed, In in, std::uint64_t i) {
  if (in.step != 0.0) return static_cast<T>(in.lo + in.step * static_cast<double>(i));
  const double v = in.lo + (in.hi - in.lo) * hash_uniform(seed, i);
  return static_cast<T>(std::is_floating_point_v<T> && !in.whole ? v : std::floor(v));
}
// An output, poisoned before each variant so an unwritten element fails.
struct Out {};

// data[i] = uniform value in [in.lo, in.hi) from (seed, i), integers floored;
// or in.lo + in.step·i for an arange input.
// A named functor, not a KOKKOS_LAMBDA: fill_input is instantiated in every
// experiment's translation unit, and nvcc's extended-lambda wrapper keeps its
// copy function in a per-unit static; the linker kept one unit's parallel_for
// and another's fill_input, and the copy called a null pointer (segfault on
// an H200 at the first Cuda gemm of a deck, 3 runs of 3).
template <class T>
struct FillInput {
  T* data;
  double lo, scale, step;
  std::uint64_t seed;
  bool whole;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i) const {
    if (step != 0.0) {
      data[i] = static_cast<T>(lo + step * static_cast<double>(i));
      return;
    }
    const double v = lo + scale * hash_uniform(seed, static_cast<std::uint64_t>(i));
    data[i] = static_cast<T>(std::is_floating_point_v<T> && !whole ? v : Kokkos::floor(v));
  }
};

template <class Exec, class T>
void fill_input(const Exec& exec, T* data, std::size_t n, std::uint64_t seed, In in) {
  const Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::int64_t>> all(
      exec, 0, static_cast<std::int64_t>(n));
  Kokkos::parallel_for(in.step != 0.0 ? "portalab::fill_arange" : "portalab::fill_uniform", all,
                       FillInput<T>{data, in.lo, in.hi - in.lo, in.step, seed, in.whole});
}

// What the framework does with every array of a case, whatever its type.
class MirroredBase {
 public:
  virtual ~MirroredBase() = default;
  virtual void h2d() = 0;  // asynchronous on the case's instance
  virtual void d2h() = 0;
  virtual void fill() = 0;    // inputs: values where the CopyMode creates them
  virtual void poison() = 0;  // outputs: NaN (or lowest integer) everywhere
  virtual std::size_t bytes() const = 0;
  virtual std::uint64_t digest() const = 0;  // of the host mirror's bytes
  // True when the experiment moves the array itself (HostStaged): h2d() and
  // d2h() leave it alone and its bytes are no part of the copy phases.
  virtual bool staged() const { return false; }
};

// What the runner does with the arrays of any case, whatever its space: the
// part of a case that is the same for every experiment.
class CaseArrays {
 public:
  virtual ~CaseArrays() = default;
  virtual void h2d() = 0;    // inputs to the space, queued on the case's instance
  virtual void d2h() = 0;    // outputs to their host mirrors, queued likewise
  virtual void fence() = 0;  // on the case's instance
  virtual void poison_outputs() = 0;
  // Host spaces: the host mirror is the data itself, copies are no-ops.
  virtual bool copies_alias() const = 0;
  virtual std::size_t input_bytes() const = 0;  // bytes h2d() moves
  virtual std::size_t output_bytes() const = 0;
  // A hash of the outputs' host mirrors: equal outputs, equal digests.
  virtual std::uint64_t output_digest() const = 0;
};

// The execution-space instance and copy mode of one case, and its arrays.
template <class Space>
class CaseContext final : public CaseArrays {
 public:
  CaseContext(Space exec, CopyMode mode, const Comm& group = world())
      : m_exec(std::move(exec)), m_mode(mode), m_group(group) {}
  CaseContext(const CaseContext&) = delete;
  CaseContext& operator=(const CaseContext&) = delete;

  const Space& exec() const { return m_exec; }
  CopyMode mode() const { return m_mode; }
  // The ranks that run this case together (Entry::ranks), this one among them.
  const Comm& group() const { return m_group; }
  static constexpr bool aliased = is_host_space_v<Space>;

  void add_input(MirroredBase* a) { m_inputs.push_back(a); }
  void add_output(MirroredBase* a) { m_outputs.push_back(a); }
  void fill_inputs() {
    for (auto* a : m_inputs) a->fill();
  }

  void h2d() override {
    for (auto* a : m_inputs) a->h2d();
  }
  void d2h() override {
    for (auto* a : m_outputs) a->d2h();
  }
  void fence() override { m_exec.fence("portalab::CaseContext::fence"); }
  void poison_outputs() override {
    for (auto* a : m_outputs) a->poison();
  }
  bool copies_alias() const override { return aliased; }
  std::size_t input_bytes() const override { return bytes(m_inputs); }
  std::size_t output_bytes() const override { return bytes(m_outputs); }
  std::uint64_t output_digest() const override {
    std::uint64_t h = 0;
    for (const auto* a : m_outputs) h = h * 0x100000001B3ull ^ a->digest();
    return h;
  }

 private:
  static std::size_t bytes(const std::vector<MirroredBase*>& arrays) {
    std::size_t total = 0;
    for (const auto* a : arrays)
      if (!a->staged()) total += a->bytes();
    return total;
  }

  Space m_exec;
  CopyMode m_mode;
  const Comm& m_group;
  std::vector<MirroredBase*> m_inputs;
  std::vector<MirroredBase*> m_outputs;
};

// A View of DataType (double*, float**, ...) in Space's memory and its host
// mirror. Device type Kokkos::Device<Space, memory> so that Kokkos Kernels'
// vendor-library paths match it for exactly this execution space. Layout:
// the space's own by default; matrices handed to BLAS/LAPACK, which are
// column-major, say Kokkos::LayoutLeft.
template <class DataType, class Space, class Layout = typename Space::array_layout>
class Mirrored final : public MirroredBase {
 public:
  using device_view =
      Kokkos::View<DataType, Layout, Kokkos::Device<Space, typename Space::memory_space>>;
  using host_view = Kokkos::View<DataType, Layout, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>;
  using value_type = typename device_view::non_const_value_type;

  template <class... Extents>
  Mirrored(CaseContext<Space>& ctx, const std::string& label, In in, Extents... n)
      : Mirrored(ctx, label, n...) {
    m_in = in;
    ctx.add_input(this);
  }
  template <class... Extents>
  Mirrored(CaseContext<Space>& ctx, const std::string& label, Out, Extents... n)
      : Mirrored(ctx, label, n...) {
    ctx.add_output(this);
  }
  Mirrored(const Mirrored&) = delete;  // the context holds our address
  Mirrored& operator=(const Mirrored&) = delete;

  const device_view& device() const { return m_device; }
  const host_view& host() const { return m_host; }
  std::size_t size() const { return m_device.size(); }
  std::string label() const { return m_device.label(); }

  void h2d() override {
    if constexpr (!CaseContext<Space>::aliased) Kokkos::deep_copy(m_ctx.exec(), m_device, m_host);
  }
  void d2h() override {
    if constexpr (!CaseContext<Space>::aliased) Kokkos::deep_copy(m_ctx.exec(), m_host, m_device);
  }
  void fill() override {
    if (m_ctx.mode() == CopyMode::none) {
      fill_input(m_ctx.exec(), m_device.data(), size(), m_seed, m_in);
      // Verification reads the host mirror: copy there, outside any timing.
      d2h();
    } else {
      fill_input(Kokkos::DefaultHostExecutionSpace(), m_host.data(), size(), m_seed, m_in);
    }
    m_ctx.exec().fence("portalab::Mirrored::fill");
  }
  void poison() override {
    Kokkos::deep_copy(m_ctx.exec(), m_device, poison_value());
    m_ctx.exec().fence("portalab::Mirrored::poison");
    if constexpr (!CaseContext<Space>::aliased) Kokkos::deep_copy(m_host, poison_value());
  }
  std::size_t bytes() const override { return size() * sizeof(value_type); }
  std::uint64_t digest() const override {
    return fnv1a64(std::string_view(reinterpret_cast<const char*>(m_host.data()), bytes()));
  }

 private:
  template <class... Extents>
  Mirrored(CaseContext<Space>& ctx, const std::string& label, Extents... n)
      : m_ctx(ctx),
        m_device(allocate_view<device_view>(label, static_cast<std::size_t>(n)...)),
        m_seed(fnv1a64(label)) {
    using pinned = typename PinnedHostSpace<Space>::type;
    if constexpr (CaseContext<Space>::aliased) {
      m_host = host_view(m_device.data(), m_device.layout());
    } else if constexpr (!std::is_void_v<pinned>) {
      if (ctx.mode() == CopyMode::pinned) {
        m_pinned = pinned_view(Kokkos::view_alloc(Kokkos::WithoutInitializing, label + "_pinned"),
                               m_device.layout());
        m_host = host_view(m_pinned.data(), m_device.layout());
        return;
      }
    }
    if constexpr (!CaseContext<Space>::aliased) {
      m_pageable = allocate_view<pageable_view>(label + "_host", m_device.layout());
      m_host = host_view(m_pageable.data(), m_device.layout());
    }
  }

  static value_type poison_value() {
    if constexpr (std::is_floating_point_v<value_type>)
      return std::numeric_limits<value_type>::quiet_NaN();
    else
      return std::numeric_limits<value_type>::lowest();
  }

  using pageable_view = Kokkos::View<DataType, Layout, Kokkos::HostSpace>;
  using pinned_view =
      std::conditional_t<std::is_void_v<typename PinnedHostSpace<Space>::type>, pageable_view,
                         Kokkos::View<DataType, Layout, typename PinnedHostSpace<Space>::type>>;

  CaseContext<Space>& m_ctx;
  device_view m_device;
  pageable_view m_pageable;  // owns the mirror in pageable mode
  pinned_view m_pinned;      // owns the mirror in pinned mode
  host_view m_host;
  In m_in;
  std::uint64_t m_seed;
};

// A host array the experiment copies to and from the space itself, a piece at
// a time (copy_overlap): pinned or pageable as the case's CopyMode says. The
// framework fills, poisons and hashes it; h2d() and d2h() leave it alone.
template <class T, class Space>
class HostStaged final : public MirroredBase {
 public:
  using host_view = Kokkos::View<T*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>;

  HostStaged(CaseContext<Space>& ctx, const std::string& label, In in, std::size_t n)
      : HostStaged(ctx, label, n) {
    m_in = in;
    ctx.add_input(this);
  }
  HostStaged(CaseContext<Space>& ctx, const std::string& label, Out, std::size_t n)
      : HostStaged(ctx, label, n) {
    ctx.add_output(this);
  }
  HostStaged(const HostStaged&) = delete;
  HostStaged& operator=(const HostStaged&) = delete;

  const host_view& host() const { return m_host; }
  std::size_t size() const { return m_host.size(); }

  void h2d() override {}
  void d2h() override {}
  void fill() override {
    fill_input(Kokkos::DefaultHostExecutionSpace(), m_host.data(), size(), m_seed, m_in);
    Kokkos::DefaultHostExecutionSpace().fence("portalab::HostStaged::fill");
  }
  void poison() override { Kokkos::deep_copy(m_host, std::numeric_limits<T>::quiet_NaN()); }
  std::size_t bytes() const override { return size() * sizeof(T); }
  std::uint64_t digest() const override {
    return fnv1a64(std::string_view(reinterpret_cast<const char*>(m_host.data()), bytes()));
  }
  bool staged() const override { return true; }

 private:
  using pinned = typename PinnedHostSpace<Space>::type;
  using pinned_view =
      Kokkos::View<T*, std::conditional_t<std::is_void_v<pinned>, Kokkos::HostSpace, pinned>>;

  HostStaged(CaseContext<Space>& ctx, const std::string& label, std::size_t n)
      : m_seed(fnv1a64(label)) {
    if (ctx.mode() == CopyMode::pinned && !std::is_void_v<pinned>) {
      m_pinned = pinned_view(Kokkos::view_alloc(Kokkos::WithoutInitializing, label + "_pinned"), n);
      m_host = host_view(m_pinned.data(), n);
    } else {
      m_pageable = allocate_view<Kokkos::View<T*, Kokkos::HostSpace>>(label + "_host", n);
      m_host = host_view(m_pageable.data(), n);
    }
  }

  Kokkos::View<T*, Kokkos::HostSpace> m_pageable;
  pinned_view m_pinned;
  host_view m_host;
  In m_in;
  std::uint64_t m_seed;
};

}  // namespace portalab
