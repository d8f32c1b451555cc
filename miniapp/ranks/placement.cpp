#include "ranks/placement.hpp"

#include "ranks/comm.hpp"
#include "support/console.hpp"
#include "support/environment.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fstream>
#include <map>
#include <sched.h>
#include <set>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(_OPENMP)
#include <omp.h>
#endif

extern char** environ;

namespace portalab {
namespace {

CpuSet affinity_of(pid_t tid) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CpuSet cpus;
  if (sched_getaffinity(tid, sizeof set, &set) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpus;
}

bool set_affinity(pid_t tid, const CpuSet& cpus) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cpus)
    if (c >= 0 && c < CPU_SETSIZE) CPU_SET(c, &set);
  return sched_setaffinity(tid, sizeof set, &set) == 0;
}

std::string text_of(const CpuSet& cpus) { return cpu_list_text(cpus); }

bool intersect(const CpuSet& a, const CpuSet& b) {
  std::vector<int> both;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(both));
  return !both.empty();
}

// Recorded before any library's constructor: a function's static (a global
// of the program would be constructed after, over it).
GivenPlacement& given_storage() {
  static GivenPlacement given;
  return given;
}
bool given_recorded = false;

// The value of NAME in an environment block; nullptr where unset.
const char* value_in(char** envp, const char* name) {
  const std::size_t n = std::strlen(name);
  for (char** e = envp; e && *e; ++e)
    if (std::strncmp(*e, name, n) == 0 && (*e)[n] == '=') return *e + n + 1;
  return nullptr;
}

// The launcher started several ranks (Open MPI, MPICH's Hydra, PMI, srun).
bool several_ranks(char** envp) {
  for (const char* name :
       {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "MPI_LOCALNRANKS", "SLURM_STEP_NUM_TASKS"})
    if (whole_number(value_in(envp, name)).value_or(0) > 1) return true;
  return false;
}

void record(char** argv, char** envp, bool may_hold) {
  GivenPlacement& g = given_storage();
  for (char** a = argv; a && *a; ++a)
    if (std::strncmp(*a, "--kokkos-device-id", 18) == 0 ||
        std::strncmp(*a, "--kokkos-map-device-id-by", 25) == 0)
      g.device_chosen = true;
  g.cpus = affinity_of(0);
  if (const char* v = value_in(envp, "OMP_PROC_BIND")) g.proc_bind = v;
  if (const char* v = value_in(envp, "OMP_PLACES")) g.places = v;
  g.explicit_cpus = value_in(envp, "GOMP_CPU_AFFINITY") != nullptr ||
                    (g.places && g.places->find('{') != std::string::npos);
  // Several ranks of a node would each bind from the first place of the
  // whole node: held back, applied in each rank's share (place_host_threads).
  if (may_hold && g.binds() && !g.explicit_cpus && several_ranks(envp)) {
    g.held = true;
    char** w = envp;
    for (char** e = envp; *e; ++e)
      if (std::strncmp(*e, "OMP_PROC_BIND=", 14) != 0 && std::strncmp(*e, "OMP_PLACES=", 11) != 0)
        *w++ = *e;
    *w = nullptr;
  }
  given_recorded = true;
}

// Where the agreement placed this process, and how its threads go.
struct Placed {
  bool done = false;
  CpuSet share;
  std::string bind, places;  // the policy portalab applies; bind "" where the runtime does
  std::string by;            // who chose, for provenance
  bool own = false;          // portalab's choice: the user set no placement
  bool set_proc_bind = false;
  std::vector<std::string> thread_cpus;
};
Placed& placed() {
  static Placed p;
  return p;
}

// An OMP_PROC_BIND list's first value, an OMP_PLACES name without its count.
std::string first_value(std::string_view list) {
  std::string v(list.substr(0, std::min(list.find(','), list.find('('))));
  std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return std::tolower(c); });
  return v;
}

// Whole cores of `cpus`, ordered by their first CPU.
std::vector<CpuSet> cores_of(const CpuSet& cpus, const std::function<int(int)>& core_of) {
  std::map<int, CpuSet> by_core;
  for (int c : cpus) by_core[core_of(c)].push_back(c);
  std::vector<CpuSet> cores;
  for (auto& [core, members] : by_core) cores.push_back(members);
  std::sort(cores.begin(), cores.end());
  return cores;
}

// `units` split among k ranks, as evenly as whole units go.
std::vector<CpuSet> split(const std::vector<CpuSet>& units, std::size_t k) {
  std::vector<CpuSet> out(k);
  for (std::size_t j = 0; j < k; ++j) {
    for (std::size_t u = j * units.size() / k; u < (j + 1) * units.size() / k; ++u)
      out[j].insert(out[j].end(), units[u].begin(), units[u].end());
    std::sort(out[j].begin(), out[j].end());
  }
  return out;
}

std::string rank_names(const std::vector<int>& ranks) {
  return fmt::format("{} {}", ranks.size() == 1 ? "rank" : "ranks", fmt::join(ranks, ", "));
}

}  // namespace

CpuSet parse_cpu_list(std::string_view text) {
  CpuSet cpus;
  std::size_t i = 0;
  auto number = [&](int& v) {
    if (i >= text.size() || !std::isdigit(static_cast<unsigned char>(text[i]))) return false;
    v = 0;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])) && v < 1 << 20)
      v = v * 10 + (text[i++] - '0');
    return true;
  };
  while (i < text.size() && text[i] != '\n') {
    int a = 0, b = 0;
    if (!number(a)) return {};
    b = a;
    if (i < text.size() && text[i] == '-') {
      ++i;
      if (!number(b) || b < a) return {};
    }
    for (int c = a; c <= b; ++c) cpus.push_back(c);
    if (i < text.size() && text[i] == ',') ++i;
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

bool GivenPlacement::binds() const {
  if (proc_bind) return first_value(*proc_bind) != "false";
  return places.has_value() || explicit_cpus;
}

void before_openmp(char** argv, char** envp) {
  if (!given_recorded) record(argv, envp, true);
}

const GivenPlacement& given_placement() {
  if (!given_recorded) record(nullptr, environ, false);
  return given_storage();
}

NodeShares node_shares(const std::vector<RankCpus>& ranks, const std::function<int(int)>& core_of) {
  NodeShares out;
  out.shares.resize(ranks.size());
  // Ranks given the same CPUs share them out; different sets must not meet.
  std::vector<std::vector<std::size_t>> groups;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    auto g = std::find_if(groups.begin(), groups.end(), [&](const auto& members) {
      return ranks[members[0]].cpus == ranks[i].cpus;
    });
    if (g == groups.end())
      groups.push_back({i});
    else
      g->push_back(i);
  }
  for (std::size_t a = 0; a < groups.size(); ++a)
    for (std::size_t b = a + 1; b < groups.size(); ++b) {
      const RankCpus &x = ranks[groups[a][0]], &y = ranks[groups[b][0]];
      if (intersect(x.cpus, y.cpus)) {
        out.error = fmt::format(
            "rank {} may run on CPUs {} and rank {} on CPUs {}: the launcher (or taskset) gave "
            "them CPUs that overlap, so their threads would share CPUs; nothing ran. Give each "
            "rank CPUs of its own (mpirun --bind-to core, or --bind-to none and portalab splits "
            "the node; srun --cpu-bind=cores)",
            x.rank, text_of(x.cpus), y.rank, text_of(y.cpus));
        return out;
      }
    }
  for (const auto& members : groups) {
    const CpuSet& given = ranks[members[0]].cpus;
    const std::size_t k = members.size();
    if (k == 1) {
      out.shares[members[0]] = given;
      continue;
    }
    const auto cores = cores_of(given, core_of);
    // Near each one's GPU: every rank's GPU says where, and each NUMA node
    // has a core for each of its ranks.
    bool near = std::all_of(members.begin(), members.end(),
                            [&](std::size_t i) { return !ranks[i].gpu_cpus.empty(); });
    std::vector<std::pair<CpuSet, std::vector<std::size_t>>> by_gpu;  // GPU's CPUs, its ranks
    for (std::size_t i : members) {
      if (!near) break;
      auto d = std::find_if(by_gpu.begin(), by_gpu.end(),
                            [&](const auto& e) { return e.first == ranks[i].gpu_cpus; });
      if (d == by_gpu.end())
        by_gpu.push_back({ranks[i].gpu_cpus, {i}});
      else
        d->second.push_back(i);
    }
    for (std::size_t a = 0; near && a < by_gpu.size(); ++a)
      for (std::size_t b = a + 1; b < by_gpu.size(); ++b)
        if (intersect(by_gpu[a].first, by_gpu[b].first)) near = false;
    if (near) {
      std::vector<std::vector<CpuSet>> slices;
      for (const auto& [gpu, its] : by_gpu) {
        std::vector<CpuSet> local;
        for (const auto& core : cores)
          if (std::includes(gpu.begin(), gpu.end(), core.begin(), core.end()))
            local.push_back(core);
        if (local.size() < its.size()) {
          near = false;
          break;
        }
        slices.push_back(split(local, its.size()));
      }
      if (near) {
        for (std::size_t d = 0; d < by_gpu.size(); ++d)
          for (std::size_t j = 0; j < by_gpu[d].second.size(); ++j)
            out.shares[by_gpu[d].second[j]] = slices[d][j];
        continue;
      }
    }
    std::vector<CpuSet> units = cores;
    if (cores.size() < k) {  // fewer cores than ranks: hardware threads
      units.clear();
      for (int c : given) units.push_back({c});
    }
    if (units.size() >= k) {
      const auto parts = split(units, k);
      for (std::size_t j = 0; j < k; ++j) out.shares[members[j]] = parts[j];
      continue;
    }
    // More ranks than CPUs: they share, each rank one CPU in turn.
    std::vector<int> ids;
    for (std::size_t j = 0; j < k; ++j) {
      out.shares[members[j]] = given.empty() ? CpuSet{} : CpuSet{given[j % given.size()]};
      ids.push_back(ranks[members[j]].rank);
    }
    const bool binds = std::any_of(members.begin(), members.end(),
                                   [&](std::size_t i) { return ranks[i].binds; });
    if (binds) {
      out.error = fmt::format(
          "{} may run on CPUs {} only: {} ranks, {} CPU{}, and OMP_PROC_BIND/OMP_PLACES bind "
          "their threads, so ranks would be bound onto the same CPUs; nothing ran. Run fewer "
          "ranks a node, give them more CPUs (mpirun --bind-to none, srun --cpus-per-task), or "
          "unset OMP_PROC_BIND and OMP_PLACES",
          rank_names(ids), text_of(given), k, given.size(), given.size() == 1 ? "" : "s");
      return out;
    }
    out.shared += fmt::format("{}{} share CPUs {} ({} ranks, {} CPU{})",
                              out.shared.empty() ? "" : "; ", rank_names(ids), text_of(given), k,
                              given.size(), given.size() == 1 ? "" : "s");
  }
  return out;
}

std::vector<CpuSet> thread_places(const CpuSet& share, int threads, std::string_view bind,
                                  std::string_view places, const std::function<int(int)>& core_of) {
  const std::string how = first_value(bind), kind = first_value(places);
  std::vector<CpuSet> list;
  if (kind == "threads")
    for (int c : share) list.push_back({c});
  else if (kind == "cores")
    list = cores_of(share, core_of);
  if (list.empty()) list.push_back(share);
  const std::size_t n = threads > 0 ? static_cast<std::size_t>(threads) : 0, p = list.size();
  std::vector<CpuSet> out(n, share);
  if (how == "false") return out;
  for (std::size_t i = 0; i < n; ++i) {
    std::size_t place = 0;
    if (how == "master" || how == "primary")
      place = 0;
    else if ((how == "close" || how == "true") && n <= p)
      place = i;
    else
      place = i * p / n;  // spread, and close with more threads than places
    out[i] = list[place];
  }
  return out;
}

namespace {
// A PCI device's file in sysfs: CUDA writes its bus id with an 8-digit
// domain in capitals, sysfs with a 4-digit one in small letters.
std::string pci_file(const std::string& bus_id, const std::string& sys_root, const char* name) {
  std::string id = bus_id;
  std::transform(id.begin(), id.end(), id.begin(), [](unsigned char c) { return std::tolower(c); });
  if (const auto colon = id.find(':'); colon != std::string::npos && colon > 4)
    id = id.substr(colon - 4);
  return sys_root + "/bus/pci/devices/" + id + "/" + name;
}
}  // namespace

CpuSet pci_local_cpus(const std::string& bus_id, const std::string& sys_root) {
  std::ifstream in(pci_file(bus_id, sys_root, "local_cpulist"));
  std::string line;
  if (!std::getline(in, line)) {
    const int node = pci_numa_node(bus_id, sys_root);
    if (node < 0) return {};
    std::ifstream nodes(fmt::format("{}/devices/system/node/node{}/cpulist", sys_root, node));
    if (!std::getline(nodes, line)) return {};
  }
  return parse_cpu_list(line);
}

int pci_numa_node(const std::string& bus_id, const std::string& sys_root) {
  std::ifstream in(pci_file(bus_id, sys_root, "numa_node"));
  int node = -1;
  if (!(in >> node)) return -1;
  return node;
}

int cpu_core(int cpu, const std::string& sys_root) {
  std::ifstream in(
      fmt::format("{}/devices/system/cpu/cpu{}/topology/thread_siblings_list", sys_root, cpu));
  std::string line;
  if (!std::getline(in, line)) return cpu;
  const CpuSet siblings = parse_cpu_list(line);
  return siblings.empty() ? cpu : siblings.front();
}

int place_ranks(const Comm& world, const std::string& gpu_bus_id) {
  const GivenPlacement& given = given_placement();
  Placed& me = placed();
  const auto core_of = [](int cpu) { return cpu_core(cpu); };
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  const CpuSet gpu = gpu_bus_id.empty() ? CpuSet{} : pci_local_cpus(gpu_bus_id);
  const nlohmann::json word{{"host", host},
                            {"cpus", text_of(given.cpus)},
                            {"gpu_cpus", text_of(gpu)},
                            {"binds", given.binds()}};
  nlohmann::json verdict{{"error", ""}, {"shared", ""}, {"shares", nlohmann::json::array()}};
  auto judge = [&](const std::vector<nlohmann::json>& words) {
    verdict["shares"] = std::vector<std::string>(words.size());
    std::vector<std::string> hosts;
    for (const auto& w : words) {
      // A string, not a json: g++ 13 finds no string == json in std::find.
      const auto host_of = w["host"].get<std::string>();
      if (std::find(hosts.begin(), hosts.end(), host_of) == hosts.end()) hosts.push_back(host_of);
    }
    for (const auto& h : hosts) {
      std::vector<RankCpus> node;
      std::vector<std::size_t> index;
      for (std::size_t r = 0; r < words.size(); ++r)
        if (words[r]["host"] == h) {
          node.push_back({static_cast<int>(r), parse_cpu_list(words[r]["cpus"].get<std::string>()),
                          parse_cpu_list(words[r]["gpu_cpus"].get<std::string>()),
                          words[r]["binds"].get<bool>()});
          index.push_back(r);
        }
      const NodeShares s = node_shares(node, core_of);
      const std::string where = hosts.size() > 1 ? fmt::format(" on {}", h) : std::string();
      if (!s.error.empty() && verdict["error"] == "") verdict["error"] = s.error + where;
      if (!s.shared.empty()) verdict["shared"] = s.shared + where;
      for (std::size_t j = 0; j < index.size(); ++j)
        verdict["shares"][index[j]] = text_of(s.shares[j]);
    }
  };
  if (world.size() == 1) {
    judge({word});
  } else {
    const auto parts = world.gather(word.dump());
    if (world.rank() == 0) {
      std::vector<nlohmann::json> words;
      for (const auto& p : parts) words.push_back(nlohmann::json::parse(p));
      judge(words);
    }
    verdict = nlohmann::json::parse(world.broadcast(verdict.dump()));
  }
  const std::string error = verdict["error"].get<std::string>();
  if (!error.empty()) {
    if (world.rank() == 0) print_to(stderr, "error: {}\n", error);
    return 2;
  }
  if (world.rank() == 0 && verdict["shared"] != "")
    print_to(stderr, "warning: {}: their threads take turns\n",
             verdict["shared"].get<std::string>());
  me.share = parse_cpu_list(verdict["shares"][world.rank()].get<std::string>());
  if (me.share.empty()) me.share = given.cpus;
  // The runtime bound the first thread as the user said (one process, or
  // OMP_PLACES naming CPUs): left as it is, checked once Kokkos started.
  const bool runtime_binds = given.binds() && !given.held;
  if (runtime_binds) me.share = given.cpus;
  // Every thread the process has (MPI's, a driver's) into the share; those
  // started from here on inherit it.
  if (DIR* tasks = runtime_binds ? nullptr : opendir("/proc/self/task")) {
    while (const dirent* e = readdir(tasks))
      if (const int tid = whole_number(e->d_name).value_or(0); tid > 0) set_affinity(tid, me.share);
    closedir(tasks);
    set_affinity(0, me.share);
  }
  if (given.held) {
    me.bind = given.proc_bind ? *given.proc_bind : "true";
    me.places = given.places ? *given.places : "threads";
    me.by = "OMP_PROC_BIND/OMP_PLACES, in this rank's share";
    // Given back to the environment: the runtime read its variables as it
    // loaded, without them; Kokkos and provenance read them.
    if (given.proc_bind) setenv("OMP_PROC_BIND", given.proc_bind->c_str(), 1);
    if (given.places) setenv("OMP_PLACES", given.places->c_str(), 1);
  } else if (given.proc_bind || given.places || given.explicit_cpus) {
    me.by = given.binds() ? "the OpenMP runtime, by OMP_PROC_BIND/OMP_PLACES" : "OMP_PROC_BIND";
  } else {
    me.bind = "spread";
    me.places = "cores";
    me.by = "portalab";
    me.own = true;
#if defined(_OPENMP)
    // Kokkos warns of an unset OMP_PROC_BIND, and advises a binding that
    // puts every rank of a node on its first CPU: portalab places the
    // threads itself. Unset again once Kokkos started (provenance's omp_env
    // records what the user set).
    setenv("OMP_PROC_BIND", "false", 1);
    me.set_proc_bind = true;
#endif
  }
  me.done = true;
  return 0;
}

std::string place_host_threads() {
  Placed& me = placed();
  if (me.set_proc_bind) unsetenv("OMP_PROC_BIND");
  me.set_proc_bind = false;
  me.thread_cpus.clear();
#if defined(_OPENMP)
  if (!me.done) return {};
  const int threads = omp_get_max_threads();
  const auto core_of = [](int cpu) { return cpu_core(cpu); };
  std::string places = me.places;
  // More threads than cores: a place each hardware thread.
  if (me.own && static_cast<std::size_t>(threads) > cores_of(me.share, core_of).size())
    places = "threads";
  const bool pin = !me.bind.empty();
  const auto where = pin ? thread_places(me.share, threads, me.bind, places, core_of)
                         : std::vector<CpuSet>();
  std::vector<std::string> seen(static_cast<std::size_t>(threads));
#pragma omp parallel num_threads(threads)
  {
    const int t = omp_get_thread_num();
    // portalab's own choice leaves the first thread the whole share: the
    // threads it starts later (NCCL's, concurrent instances') inherit it.
    if (pin && !(me.own && t == 0)) set_affinity(0, where[static_cast<std::size_t>(t)]);
#pragma omp barrier
    seen[static_cast<std::size_t>(t)] = text_of(affinity_of(0));
  }
  me.thread_cpus = seen;
  if (me.own)
    return fmt::format(
        "placement: {} OpenMP thread{} on CPUs {}{}, spread over its {}, the first thread free "
        "among them (portalab's choice; OMP_PROC_BIND and OMP_PLACES set your own)",
        threads, threads == 1 ? "" : "s", text_of(me.share),
        world().size() > 1 ? fmt::format(" on rank {}, each rank its own", world().rank())
                           : std::string(),
        places);
  if (pin)
    return fmt::format(
        "placement: {} OpenMP thread{} placed by OMP_PROC_BIND={} "
        "OMP_PLACES={} within CPUs {}{}",
        threads, threads == 1 ? "" : "s", me.bind, me.places, text_of(me.share),
        world().size() > 1
            ? fmt::format(" on rank {}, each rank in CPUs of its own", world().rank())
            : std::string());
#endif
  return {};
}

int check_thread_overlap(const Comm& world) {
  if (world.size() == 1) return 0;
  const GivenPlacement& given = given_placement();
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  CpuSet mine;
  for (const auto& t : placed().thread_cpus) {
    const CpuSet c = parse_cpu_list(t);
    mine.insert(mine.end(), c.begin(), c.end());
  }
  std::sort(mine.begin(), mine.end());
  mine.erase(std::unique(mine.begin(), mine.end()), mine.end());
  const nlohmann::json word{{"host", host},
                            {"threads", text_of(mine)},
                            {"explicit", given.explicit_cpus}};
  const auto parts = world.gather(word.dump());
  std::string error;
  if (world.rank() == 0) {
    std::vector<nlohmann::json> words;
    for (const auto& p : parts) words.push_back(nlohmann::json::parse(p));
    for (std::size_t a = 0; a < words.size() && error.empty(); ++a)
      for (std::size_t b = a + 1; b < words.size() && error.empty(); ++b) {
        const CpuSet x = parse_cpu_list(words[a]["threads"].get<std::string>()),
                     y = parse_cpu_list(words[b]["threads"].get<std::string>());
        if (words[a]["host"] == words[b]["host"] && intersect(x, y) &&
            (words[a]["explicit"].get<bool>() || words[b]["explicit"].get<bool>()))
          error = fmt::format(
              "rank {} placed its threads on CPUs {} and rank {} on CPUs {}: OMP_PLACES (or "
              "GOMP_CPU_AFFINITY) names the same CPUs for ranks of one node; nothing ran. Give "
              "each rank its own list, or unset it and OMP_PROC_BIND (portalab then places "
              "each rank's threads in its own share)",
              a, text_of(x), b, text_of(y));
      }
  }
  error = world.broadcast(error);
  if (error.empty()) return 0;
  if (world.rank() == 0) print_to(stderr, "error: {}\n", error);
  return 2;
}

std::string process_cpus_text() {
  const Placed& me = placed();
  return text_of(me.done ? me.share : affinity_of(0));
}

std::vector<std::string> thread_cpus_text() { return placed().thread_cpus; }

std::string placement_chosen_by() { return placed().by; }

void with_whole_share(const std::function<void()>& f) {
  const Placed& me = placed();
  const CpuSet own = affinity_of(0);
  if (me.done) set_affinity(0, me.share);
  try {
    f();
  } catch (...) {
    set_affinity(0, own);
    throw;
  }
  set_affinity(0, own);
}

}  // namespace portalab
