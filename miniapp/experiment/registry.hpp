// The experiments a run can name, as the runner knows them without making a
// case: each one's description and variants' traits (ExperimentInfo), the
// case it makes behind an interface (Case), and the registry. Kokkos-free,
// so that the files that list, estimate, plan or print experiments compile
// with the host compiler in every build (CMakeLists.txt, portalab_framework);
// experiment/experiment.hpp fills these in from an experiment's template.
#pragma once

#include "deck/catalog.hpp"
#include "deck/copy_mode.hpp"
#include "experiment/check.hpp"
#include "experiment/relate.hpp"

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace portalab {

namespace kernels {
struct HostPolicy;
}
class CaseArrays;
class Comm;
struct CallRecord;

// Traffic and arithmetic of one repetition; rates come from these alone.
struct Work {
  double bytes = 0.0;  // minimal bytes read and written by the kernel phase
  double flops = 0.0;
  double launches = 0.0;  // kernel launches, where their cost is what is measured
  // A phase of several passes over fewer arrays than its case allocates: the
  // most bytes its passes keep in use at once (touched by one pass, or kept
  // from one pass to a later one), what a cache must hold for the phase to
  // run there (limits/compare.cpp). 0: the footprint, every array at once.
  double resident_bytes = 0.0;
};

// What the runner needs to know of a variant without making a case.
struct VariantTraits {
  int instances = 1;
  bool needs_copies = false;
  // Where no library serves it (Variant::missing_library): space, type, why.
  struct Unserved {
    std::string space, dtype, why;
  };
  std::vector<Unserved> unserved;
  std::optional<Bound> bound;
};

// One experiment at one size, element type, space and copy mode, with its
// arrays allocated and inputs filled: what differs between experiments.
class Case {
 public:
  virtual ~Case() = default;
  // Queues variant v's work (not fenced; the runner fences the instance),
  // its kernels' paths chosen by `policy` (the run's, for the case's space).
  virtual void run(std::size_t v, const kernels::HostPolicy& policy, CallRecord& record) = 0;
  virtual Check verify(std::size_t v) const = 0;
  // The outputs as the lab prints them, or "" when the experiment shows none.
  virtual std::string show(std::size_t v) const = 0;
  virtual CaseArrays& arrays() = 0;
};

// An experiment as registered: its description (ExperimentSpec) and what
// register_experiment fills in from the template's instantiations.
struct ExperimentInfo : ExperimentSpec {
  std::vector<VariantTraits> traits;  // per variant, in the order of `variants`
  // Variant v's Variant::unavailable in `space` ("" when it is available).
  std::function<std::string(std::string_view space, std::size_t v)> unavailable;
  // Bytes the case allocates in the space's memory (also the host mirrors').
  std::function<std::size_t(std::string_view dtype, std::size_t n, const Parameters&)> footprint;
  std::function<Work(std::string_view dtype, std::size_t n, std::size_t variant, const Parameters&)>
      work;
  // The case, on a rank of `group` (the ranks that run it together).
  std::function<std::unique_ptr<Case>(std::string_view space, std::string_view dtype, std::size_t n,
                                      CopyMode mode, const Parameters&, const Comm& group)>
      make;
  // The figures comparing a case's variants (experiment/relate.hpp), or none.
  Relate relate;

  // The index of a variant in the table; throws for a name it does not have.
  std::size_t variant_index(std::string_view name) const;
  // The bound of variant v's rows.
  Bound bound_of(std::size_t v) const { return traits.at(v).bound.value_or(bound); }
  // Why `space` cannot run variant v for `dtype` with copies `mode`, or ""
  // when it can. Kokkos must be initialised (it may ask an instance for its
  // concurrency).
  std::string not_applicable(std::string_view space, std::string_view dtype, std::size_t v,
                             CopyMode mode) const;
};

// The experiments a run can name. The program's registry is filled at static
// initialisation; tests make registries of their own.
class Registry {
 public:
  void add(ExperimentInfo info);  // throws std::logic_error for a name taken
  const ExperimentInfo* find(std::string_view name) const;
  const std::vector<ExperimentInfo>& all() const { return m_all; }  // sorted by name
  Catalog catalog() const;  // with the compiled spaces, for checking decks

 private:
  std::vector<ExperimentInfo> m_all;
};

Registry& global_registry();
inline const std::vector<ExperimentInfo>& experiments() { return global_registry().all(); }
inline const ExperimentInfo* find_experiment(std::string_view name) {
  return global_registry().find(name);
}
inline Catalog catalog() { return global_registry().catalog(); }

}  // namespace portalab
