// What an experiment is, and how it registers itself.
//
// An experiment is a class template Exp<Space, Scalar> in one file of
// miniapp/experiments/. Its constructor allocates its arrays (Mirrored, so
// the framework can copy and fill them), `run` launches the timed work on the
// case's execution-space instance without fencing, `verify` checks the host
// mirrors against an independent reference, and `work` declares the bytes
// and FLOPs of one repetition. Optionally, `show(variant)` returns values to
// print after the check, and `self_timed_ms()` the time of the part of the
// last run that the experiment timed itself (launches without their fence).
// An experiment that calls libraries says, in `library(variant)`, which one
// served the variant (default "native"). An experiment with parameters of its
// own (ExperimentSpec::parameters) takes them as a third constructor argument
// and as the last argument of footprint and work. One that runs on several
// execution-space instances times itself: `metrics()` gives its own figures
// and `timed_by()` says how it fenced; a static `not_applicable(exec,
// variant, mode, parameters)` says why a space cannot run a variant ("" if
// it can), and register_experiment's `relate` fills figures that compare a
// case's variants (overlap gained). One call of register_experiment, at static
// initialisation in that file, makes it known to `portalab run`: no list,
// enum or switch elsewhere. Nothing touches Kokkos until a case is made.
#pragma once

#include "catalog.hpp"
#include "check.hpp"
#include "copy_mode.hpp"
#include "dtype.hpp"
#include "mirrored.hpp"
#include "result.hpp"
#include "spaces.hpp"

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

namespace portalab {

// Traffic and arithmetic of one repetition; rates come from these alone.
struct Work {
  double bytes = 0.0;  // minimal bytes read and written by the kernel phase
  double flops = 0.0;
  double launches = 0.0;  // kernel launches, where their cost is what is measured
};

// One experiment at one size, element type, space and copy mode, with its
// arrays allocated and inputs filled. The runner times these calls and ends
// each timed phase with fence(), a fence on this case's instance.
class Case {
 public:
  virtual ~Case() = default;
  virtual void h2d() = 0;
  virtual void run(std::string_view variant) = 0;
  virtual void d2h() = 0;
  virtual void fence() = 0;
  virtual void poison_outputs() = 0;
  virtual Check verify(std::string_view variant) const = 0;
  // The outputs as the lab prints them, or "" when the experiment shows none.
  virtual std::string show(std::string_view variant) const = 0;
  // When the experiment timed part of its last run itself: that time, which
  // replaces the fenced time of the kernel phase.
  virtual std::optional<double> self_timed_ms() const = 0;
  // The library that served the variant's last run ("cuBLAS", "OpenBLAS",
  // "native", ...), as the experiment read it from what it called.
  virtual std::string library(std::string_view variant) const = 0;
  // True when host mirrors are the device Views (host spaces): copies are no-ops.
  virtual bool copies_alias() const = 0;
  virtual std::size_t h2d_bytes() const = 0;  // bytes h2d() moves
  virtual std::size_t d2h_bytes() const = 0;
  // Figures the experiment measured in its last run, beside the phases.
  virtual std::vector<std::pair<std::string, double>> metrics() const = 0;
  // How the last run's kernel phase was timed, when not by the runner's fence.
  virtual std::string timed_by(std::string_view variant) const = 0;
  // A hash of the outputs' host mirrors: equal outputs, equal digests.
  virtual std::uint64_t output_digest() const = 0;
};

using Metrics = std::vector<std::pair<std::string, double>>;

// An experiment as registered: its description (ExperimentSpec) and what
// register_experiment fills in from the template's instantiations.
struct ExperimentInfo : ExperimentSpec {
  // Bytes the case allocates in the space's memory (also the host mirrors').
  std::function<std::size_t(std::string_view dtype, std::size_t n, const Parameters&)> footprint;
  std::function<Work(std::string_view dtype, std::size_t n, std::string_view variant,
                     const Parameters&)>
      work;
  std::function<std::unique_ptr<Case>(std::string_view space, std::string_view dtype,
                                      std::size_t n, CopyMode mode, const Parameters&)>
      make;
  // Why the space cannot run the variant, or "" when it can. Kokkos must be
  // initialised (it may ask an instance for its concurrency).
  std::function<std::string(std::string_view space, std::string_view variant, CopyMode mode,
                            const Parameters&)>
      not_applicable;
  // Called with the rows of one case (its variants, in the deck's order) once
  // they are all measured; may add metrics that compare them.
  std::function<void(std::span<Result> rows)> relate;
};

const std::vector<ExperimentInfo>& experiments();
const ExperimentInfo* find_experiment(std::string_view name);
// The registered experiments and compiled spaces, for checking decks.
Catalog catalog();

namespace detail {

bool add_experiment(ExperimentInfo info);

template <class Exp, class Space>
class CaseImpl final : public Case {
 public:
  CaseImpl(std::size_t n, CopyMode mode, const Parameters& params)
      : m_ctx(Space(), mode), m_exp(m_ctx, n, params) {
    m_ctx.fill_inputs();
  }
  void h2d() override { m_ctx.h2d(); }
  void run(std::string_view variant) override { m_exp.run(m_ctx.exec(), variant); }
  void d2h() override { m_ctx.d2h(); }
  void fence() override { m_ctx.exec().fence("portalab::Case::fence"); }
  void poison_outputs() override { m_ctx.poison_outputs(); }
  Check verify(std::string_view variant) const override { return m_exp.verify(variant); }
  std::string show(std::string_view variant) const override {
    if constexpr (requires { m_exp.show(variant); })
      return m_exp.show(variant);
    else
      return {};
  }
  std::optional<double> self_timed_ms() const override {
    if constexpr (requires { m_exp.self_timed_ms(); })
      return m_exp.self_timed_ms();
    else
      return std::nullopt;
  }
  // Experiments that call no library run Kokkos kernels of their own.
  std::string library(std::string_view variant) const override {
    if constexpr (requires { m_exp.library(variant); })
      return std::string(m_exp.library(variant));
    else
      return "native";
  }
  bool copies_alias() const override { return CaseContext<Space>::copies_alias; }
  std::size_t h2d_bytes() const override { return m_ctx.input_bytes(); }
  std::size_t d2h_bytes() const override { return m_ctx.output_bytes(); }
  Metrics metrics() const override {
    if constexpr (requires { m_exp.metrics(); })
      return m_exp.metrics();
    else
      return {};
  }
  std::string timed_by(std::string_view variant) const override {
    if constexpr (requires { m_exp.timed_by(variant); })
      return std::string(m_exp.timed_by(variant));
    else
      return "instance fence";
  }
  std::uint64_t output_digest() const override { return m_ctx.output_digest(); }

 private:
  // Exp built in place (its arrays register their address in m_ctx), with
  // the parameters when it takes them.
  struct Built : Exp {
    Built(CaseContext<Space>& ctx, std::size_t n, const Parameters& params)
      requires std::is_constructible_v<Exp, CaseContext<Space>&, std::size_t, const Parameters&>
        : Exp(ctx, n, params) {}
    Built(CaseContext<Space>& ctx, std::size_t n, const Parameters&)
      requires(!std::is_constructible_v<Exp, CaseContext<Space>&, std::size_t, const Parameters&>)
        : Exp(ctx, n) {}
  };

  CaseContext<Space> m_ctx;  // first: the experiment's arrays register in it
  Built m_exp;
};

}  // namespace detail

namespace detail {

// Exp's footprint and work, with the parameters where it takes them.
template <class Exp>
std::size_t footprint_of(std::size_t n, const Parameters& p) {
  if constexpr (requires { Exp::footprint(n, p); })
    return Exp::footprint(n, p);
  else
    return Exp::footprint(n);
}
template <class Exp>
Work work_of(std::size_t n, std::string_view variant, const Parameters& p) {
  if constexpr (requires { Exp::work(n, variant, p); })
    return Exp::work(n, variant, p);
  else
    return Exp::work(n, variant);
}

}  // namespace detail

// Registers Exp<Space, Scalar> for every enabled space and each Scalar.
// `relate` (optional) fills figures that compare the variants of one case.
template <template <class, class> class Exp, class... Scalars>
bool register_experiment(ExperimentSpec spec,
                         std::function<void(std::span<Result>)> relate = {}) {
  using HostSpace = Kokkos::DefaultHostExecutionSpace;
  ExperimentInfo info{std::move(spec)};
  info.dtypes = {std::string(dtype_name<Scalars>())...};
  info.footprint = [](std::string_view dtype, std::size_t n, const Parameters& p) {
    std::size_t bytes = 0;
    ((dtype == dtype_name<Scalars>()
          ? (bytes = detail::footprint_of<Exp<HostSpace, Scalars>>(n, p), 0)
          : 0),
     ...);
    return bytes;
  };
  info.work = [](std::string_view dtype, std::size_t n, std::string_view variant,
                 const Parameters& p) {
    Work w;
    ((dtype == dtype_name<Scalars>()
          ? (w = detail::work_of<Exp<HostSpace, Scalars>>(n, variant, p), 0)
          : 0),
     ...);
    return w;
  };
  info.make = [](std::string_view space, std::string_view dtype, std::size_t n, CopyMode mode,
                 const Parameters& p) {
    std::unique_ptr<Case> made;
    for_each_space([&](auto tag) {
      using Space = typename decltype(tag)::type;
      if (space != Space::name()) return;
      ((dtype == dtype_name<Scalars>()
            ? (made = std::make_unique<detail::CaseImpl<Exp<Space, Scalars>, Space>>(n, mode, p),
               0)
            : 0),
       ...);
    });
    return made;
  };
  info.not_applicable = [](std::string_view space, std::string_view variant, CopyMode mode,
                           const Parameters& p) {
    std::string why;
    for_each_space([&](auto tag) {
      using Space = typename decltype(tag)::type;
      using First = Exp<Space, std::tuple_element_t<0, std::tuple<Scalars...>>>;
      if constexpr (requires { First::not_applicable(Space(), variant, mode, p); })
        if (space == Space::name()) why = First::not_applicable(Space(), variant, mode, p);
    });
    return why;
  };
  info.relate = std::move(relate);
  return detail::add_experiment(std::move(info));
}

}  // namespace portalab
