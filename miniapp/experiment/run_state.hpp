// What a variant is handed when it runs: the case's execution-space instance,
// the instances it declared it runs on, the run's choice of the kernels'
// paths (passed to the kernels that have one), and a record of what it timed
// itself.
// The variant declares (run on my instances, time this dispatch, fence this
// phase, report this figure); the runner measures, fences and aggregates.
#pragma once

#include "experiment/metrics.hpp"
#include "kernels/paths.hpp"
#include "platform/instances.hpp"

#include <chrono>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace portalab {

// What one call of a variant measured beside the runner's fenced time.
struct CallRecord {
  // Replaces the fenced time of the kernel phase: the variant timed the part
  // that matters itself (launches without their fence, per-instance fences).
  std::optional<double> kernel_ms;
  std::string timed_by;  // how the kernel phase was timed; "" for the runner's fence
  // The paths its kernels took (kernels::Paths::names): the row's `path`;
  // "" where no kernel with a choice ran.
  std::string path;
  Metrics metrics;  // in the order first reported

  // Adds value to the metric `name` (0 before its first report).
  void add(std::string_view name, double value) {
    set_metric(metrics, name, portalab::metric(metrics, name) + value);
  }
  double metric(std::string_view name) const { return portalab::metric(metrics, name); }
};

template <class Space>
class RunState {
 public:
  RunState(const Space& exec, InstancePool<Space>& pool, int instances,
           const kernels::HostPolicy& policy, CallRecord& record)
      : m_exec(exec), m_pool(pool), m_instances(instances), m_paths(policy), m_record(record) {}
  RunState(const RunState&) = delete;
  RunState& operator=(const RunState&) = delete;

  // The case's instance: queue work on it; the runner fences it.
  const Space& exec() const { return m_exec; }
  // The instances the variant declared (Variant::instances).
  int instances() const { return m_instances; }
  // The run's policy for the kernels that have a choice (calibrated), and
  // the record of the paths they took: pass it to every such kernel.
  kernels::Paths& paths() { return m_paths; }

  // work(i, instance_i) on each of the variant's instances at once (from
  // partition_space, made at the first call and kept), each timed by the fence
  // on that instance; the kernel phase is the last to finish.
  template <class Work>
  const InstanceTimes& on_instances(Work&& work) {
    m_times = run_concurrently(m_pool.get(m_instances), std::forward<Work>(work));
    m_record.kernel_ms = m_times.last_ms();
    if (m_record.timed_by.empty()) m_record.timed_by = instance_timing<Space>(m_instances);
    if (m_instances > 1)
      for (const auto& [name, ms] : m_times.metrics()) metric(name, ms);
    return m_times;
  }

  // Times f on the host clock with no fence: what queuing the work costs
  // (launch dispatch). Replaces the kernel phase's fenced time.
  template <class F>
  void time_dispatch(F&& f) {
    const auto start = std::chrono::steady_clock::now();
    f();
    m_record.kernel_ms = ms_since(start);
    m_record.timed_by = "host clock around the launches, before any fence";
  }

  // Runs f on `instance` and fences it; the time is added to the metric
  // `<name>_ms`. For variants that time their phases one by one.
  template <class F>
  void fenced_phase(const Space& instance, std::string_view name, F&& f) {
    const auto start = std::chrono::steady_clock::now();
    f();
    instance.fence("portalab::RunState::fenced_phase");
    const double ms = ms_since(start);
    const std::lock_guard<std::mutex> guard(m_lock);
    m_record.add(std::string(name) + "_ms", ms);
    m_record.timed_by = "fence on its instance after each phase";
  }

  // A figure of this call, reported beside the phases (median over reps).
  void metric(std::string_view name, double value) {
    const std::lock_guard<std::mutex> guard(m_lock);
    m_record.add(name, value);
  }
  double metric_value(std::string_view name) const { return m_record.metric(name); }

 private:
  static double ms_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
        .count();
  }

  const Space& m_exec;
  InstancePool<Space>& m_pool;
  int m_instances;
  kernels::Paths m_paths;
  CallRecord& m_record;
  InstanceTimes m_times;
  std::mutex m_lock;  // host instances report from threads of their own
};

}  // namespace portalab
