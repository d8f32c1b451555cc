// What an experiment is, and how it registers itself.
//
// An experiment is a class template Exp<Space, Scalar> in one file of
// miniapp/experiments/ (docs/adding-an-experiment.md):
//
//   Exp(CaseContext<Space>&, std::size_t n, const Parameters&)  arrays, untimed
//   static auto variants()     its table: name -> member function, properties
//   void fused(RunState<Space>&)   one per variant: queue the timed work
//   Check verify() const            against an independent host reference
//   static Work work(n, params)     bytes, FLOPs (launches) of one repetition
//   static std::size_t footprint(n, params)   bytes it allocates
//
// and one register_experiment<Exp, double, float>({...}) call. The runner
// fences, times, copies, checks and writes; the variant table says what a
// variant needs (instances, copies), so nothing parses variant names. The
// library that served a call is read from the profiling regions the library
// calls push (Kokkos Kernels' TPL regions and portalab's own vendor calls),
// never said by the experiment. Nothing touches Kokkos until a case is made.
#pragma once

#include "experiment/dtype.hpp"
#include "experiment/registry.hpp"
#include "experiment/mirrored.hpp"
#include "experiment/run_state.hpp"
#include "platform/spaces.hpp"
#include "libraries/library_threads.hpp"

#include <array>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

namespace portalab {

template <class Exp>
struct experiment_types;
template <template <class, class> class E, class S, class T>
struct experiment_types<E<S, T>> {
  using space = S;
  using scalar = T;
};

// One row of an experiment's table of variants.
template <class Exp>
struct Variant {
  using Space = typename experiment_types<Exp>::space;
  std::string_view name;
  void (Exp::*run)(RunState<Space>&) = nullptr;
  // Instances from partition_space it runs on at once (RunState::on_instances);
  // a space that cannot give that many says the variant is not applicable.
  int instances = 1;
  // It times copies of its own: with copies = "none" there is nothing to time.
  bool needs_copies = false;
  Check (Exp::*verify)() const = nullptr;                    // its own check; else Exp::verify()
  std::string (Exp::*show)() const = nullptr;                // values to print after the check
  Work (*work)(std::size_t n, const Parameters&) = nullptr;  // its own; else Exp::work
  // The library it must have, as a fact of the build: why none serves Space
  // for this type, "" when one does (libraries::why_no_vendor<Space, T>). Where
  // it says why, the variant is not applicable, with that reason.
  std::string (*missing_library)() = nullptr;
  // The limit its rate is held to, when not the experiment's (both ways of
  // a link against the duplex limit, say).
  std::optional<Bound> bound;
  // Why this build or this process cannot run it here ("built without
  // NCCL", "MPI is not CUDA-aware"), or "": asked before a case is made.
  std::string (*unavailable)() = nullptr;
};

namespace detail {

template <class Exp, class Space>
class CaseImpl final : public Case {
 public:
  CaseImpl(std::size_t n, CopyMode mode, const Parameters& params, const Comm& group)
      : m_ctx(Space(), mode, group), m_exp(m_ctx, n, params), m_pool(m_ctx.exec()) {
    m_ctx.fill_inputs();
  }
  void run(std::size_t v, const kernels::HostPolicy& policy, CallRecord& record) override {
    const auto& variant = table()[v];
    RunState<Space> state(m_ctx.exec(), m_pool, variant.instances, policy, record);
    // Host BLAS/LAPACK calls, Kokkos Kernels' included, on the space's threads.
    const libraries::LibraryThreads<Space> threads(m_ctx.exec());
    (m_exp.*variant.run)(state);
    record.path = state.paths().names();
  }
  Check verify(std::size_t v) const override {
    if (const auto own = table()[v].verify) return (m_exp.*own)();
    if constexpr (requires { m_exp.verify(); })
      return m_exp.verify();
    else
      throw std::logic_error("variant without a check");  // refused at registration
  }
  std::string show(std::size_t v) const override {
    const auto own = table()[v].show;
    return own ? (m_exp.*own)() : std::string();
  }
  CaseArrays& arrays() override { return m_ctx; }

  static const auto& table() {
    static const auto variants = Exp::variants();
    return variants;
  }

 private:
  CaseContext<Space> m_ctx;  // first: the experiment's arrays register in it
  Exp m_exp;
  InstancePool<Space> m_pool;
};

// Variant v's missing library in each space and type where it has one.
template <template <class, class> class Exp, class... Scalars>
std::vector<VariantTraits::Unserved> unserved(std::size_t v) {
  std::vector<VariantTraits::Unserved> out;
  for_each_space([&](auto tag) {
    using Space = typename decltype(tag)::type;
    (
        [&] {
          const auto missing = CaseImpl<Exp<Space, Scalars>, Space>::table()[v].missing_library;
          if (std::string why = missing ? missing() : std::string(); !why.empty())
            out.push_back({Space::name(), std::string(dtype_name<Scalars>()), std::move(why)});
        }(),
        ...);
  });
  return out;
}

template <class Exp>
Work work_of(std::size_t n, std::size_t v, const Parameters& p) {
  const auto& variant = CaseImpl<Exp, typename experiment_types<Exp>::space>::table()[v];
  if (variant.work) return variant.work(n, p);
  if constexpr (requires { Exp::work(n, p); })
    return Exp::work(n, p);
  else
    throw std::logic_error("variant without work");  // refused at registration
}

}  // namespace detail

// Registers Exp<Space, Scalar> for every enabled space and each Scalar.
template <template <class, class> class Exp, class... Scalars>
bool register_experiment(Registry& registry, ExperimentSpec spec, Relate relate = {}) {
  using Host =
      Exp<Kokkos::DefaultHostExecutionSpace, std::tuple_element_t<0, std::tuple<Scalars...>>>;
  ExperimentInfo info{std::move(spec)};
  info.dtypes = {std::string(dtype_name<Scalars>())...};
  info.variants.clear();
  for (const auto& v : detail::CaseImpl<Host, Kokkos::DefaultHostExecutionSpace>::table()) {
    // What a table must hold, checked once at start-up rather than at a call.
    if (!v.run) throw std::logic_error(info.name + "/" + std::string(v.name) + ": no function");
    if (!v.verify && !requires(const Host& e) { e.verify(); })
      throw std::logic_error(info.name + "/" + std::string(v.name) + ": no check");
    if (!v.work && !requires(std::size_t n, const Parameters& p) { Host::work(n, p); })
      throw std::logic_error(info.name + "/" + std::string(v.name) + ": no work");
    info.variants.emplace_back(v.name);
    info.traits.push_back({v.instances, v.needs_copies,
                           detail::unserved<Exp, Scalars...>(info.traits.size()), v.bound});
  }
  info.unavailable = [](std::string_view space, std::size_t v) {
    std::string why;
    for_each_space([&](auto tag) {
      using Space = typename decltype(tag)::type;
      using E = Exp<Space, std::tuple_element_t<0, std::tuple<Scalars...>>>;
      if (space != Space::name()) return;
      if (const auto f = detail::CaseImpl<E, Space>::table()[v].unavailable) why = f();
    });
    return why;
  };
  info.footprint = [](std::string_view dtype, std::size_t n, const Parameters& p) {
    std::size_t bytes = 0;
    ((dtype == dtype_name<Scalars>()
          ? (bytes = Exp<Kokkos::DefaultHostExecutionSpace, Scalars>::footprint(n, p), 0)
          : 0),
     ...);
    return bytes;
  };
  info.work = [](std::string_view dtype, std::size_t n, std::size_t v, const Parameters& p) {
    Work w;
    ((dtype == dtype_name<Scalars>()
          ? (w = detail::work_of<Exp<Kokkos::DefaultHostExecutionSpace, Scalars>>(n, v, p), 0)
          : 0),
     ...);
    return w;
  };
  info.make = [](std::string_view space, std::string_view dtype, std::size_t n, CopyMode mode,
                 const Parameters& p, const Comm& group) {
    std::unique_ptr<Case> made;
    for_each_space([&](auto tag) {
      using Space = typename decltype(tag)::type;
      if (space != Space::name()) return;
      ((dtype == dtype_name<Scalars>()
            ? (made = std::make_unique<detail::CaseImpl<Exp<Space, Scalars>, Space>>(n, mode, p,
                                                                                     group),
               0)
            : 0),
       ...);
    });
    return made;
  };
  info.relate = std::move(relate);
  registry.add(std::move(info));
  return true;
}

// Into the program's registry, at static initialisation.
template <template <class, class> class Exp, class... Scalars>
bool register_experiment(ExperimentSpec spec, Relate relate = {}) {
  return register_experiment<Exp, Scalars...>(global_registry(), std::move(spec),
                                              std::move(relate));
}

}  // namespace portalab
