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
// served the variant (default "native"). One call of register_experiment, at static
// initialisation in that file, makes it known to `portalab run`: no list,
// enum or switch elsewhere. Nothing touches Kokkos until a case is made.
#pragma once

#include "catalog.hpp"
#include "check.hpp"
#include "copy_mode.hpp"
#include "dtype.hpp"
#include "mirrored.hpp"
#include "spaces.hpp"

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
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
};

// An experiment as registered: its description (ExperimentSpec) and what
// register_experiment fills in from the template's instantiations.
struct ExperimentInfo : ExperimentSpec {
  // Bytes the case allocates in the space's memory (also the host mirrors').
  std::function<std::size_t(std::string_view dtype, std::size_t n)> footprint;
  std::function<Work(std::string_view dtype, std::size_t n, std::string_view variant)> work;
  std::function<std::unique_ptr<Case>(std::string_view space, std::string_view dtype,
                                      std::size_t n, CopyMode mode)>
      make;
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
  CaseImpl(std::size_t n, CopyMode mode) : m_ctx(Space(), mode), m_exp(m_ctx, n) {
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

 private:
  CaseContext<Space> m_ctx;  // first: the experiment's arrays register in it
  Exp m_exp;
};

}  // namespace detail

// Registers Exp<Space, Scalar> for every enabled space and each Scalar.
template <template <class, class> class Exp, class... Scalars>
bool register_experiment(ExperimentSpec spec) {
  using HostSpace = Kokkos::DefaultHostExecutionSpace;
  ExperimentInfo info{std::move(spec)};
  info.dtypes = {std::string(dtype_name<Scalars>())...};
  info.footprint = [](std::string_view dtype, std::size_t n) {
    std::size_t bytes = 0;
    ((dtype == dtype_name<Scalars>() ? (bytes = Exp<HostSpace, Scalars>::footprint(n), 0) : 0),
     ...);
    return bytes;
  };
  info.work = [](std::string_view dtype, std::size_t n, std::string_view variant) {
    Work w;
    ((dtype == dtype_name<Scalars>() ? (w = Exp<HostSpace, Scalars>::work(n, variant), 0) : 0),
     ...);
    return w;
  };
  info.make = [](std::string_view space, std::string_view dtype, std::size_t n,
                 CopyMode mode) {
    std::unique_ptr<Case> made;
    for_each_space([&](auto tag) {
      using Space = typename decltype(tag)::type;
      if (space != Space::name()) return;
      ((dtype == dtype_name<Scalars>()
            ? (made = std::make_unique<detail::CaseImpl<Exp<Space, Scalars>, Space>>(n, mode), 0)
            : 0),
       ...);
    });
    return made;
  };
  return detail::add_experiment(std::move(info));
}

}  // namespace portalab
