#include "results/analysis.hpp"

#include "platform/space_names.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

namespace portalab {
namespace {

// Best (smallest) time at each size.
using BySize = std::map<std::size_t, double>;

void keep_best(BySize& best, std::size_t n, double ms) {
  if (ms <= 0) return;
  auto [it, inserted] = best.try_emplace(n, ms);
  if (!inserted) it->second = std::min(it->second, ms);
}

Pays compare(const BySize& host, const BySize& device, std::vector<std::size_t>& sizes) {
  Pays p;
  std::vector<bool> faster;
  for (const auto& [n, host_ms] : host) {
    const auto d = device.find(n);
    if (d == device.end()) continue;
    p.measured = true;
    if (std::find(sizes.begin(), sizes.end(), n) == sizes.end()) sizes.push_back(n);
    faster.push_back(d->second < host_ms);
    if (faster.back() && !p.smallest_n) p.smallest_n = n;
  }
  if (p.smallest_n) {
    // Sizes are visited in increasing order: after the first win, any loss?
    const auto first = std::find(faster.begin(), faster.end(), true);
    p.holds_above = std::all_of(first, faster.end(), [](bool f) { return f; });
  }
  return p;
}

nlohmann::json to_json(const Pays& p) {
  return {{"measured", p.measured},
          {"smallest_n", p.smallest_n ? nlohmann::json(*p.smallest_n) : nlohmann::json()},
          {"holds_above", p.holds_above}};
}

std::string describe(const Pays& p, const std::vector<std::size_t>& sizes) {
  if (!p.measured) return "not measured";
  if (!p.smallest_n) return fmt::format("never, n from {} to {}", sizes.front(), sizes.back());
  return fmt::format("from n = {}{}", *p.smallest_n,
                     p.holds_above ? "" : " (but not at every larger size)");
}

}  // namespace

std::vector<Crossover> find_crossovers(const std::vector<Result>& results) {
  // experiment, variant, dtype, ranks: spaces compared on as many ranks
  using Key = std::tuple<std::string, std::string, std::string, int>;
  std::map<Key, BySize> host, host_j;
  struct DeviceTimes {
    BySize with_copies, pageable, pinned, alone;
  };
  std::map<std::pair<Key, std::string>, DeviceTimes> device;
  std::map<std::pair<Key, std::string>, std::pair<BySize, BySize>> device_j;  // copies, alone
  std::vector<std::pair<Key, std::string>> order;
  for (const auto& r : results) {
    if (r.status != Status::pass) continue;
    const Key key{r.experiment, r.variant, r.dtype, r.ranks};
    // Joules per repetition over all of them: a coarse counter moves in few.
    const SourceEnergy* own = r.energy && r.energy->own().measured() ? &r.energy->own() : nullptr;
    if (is_host_space(r.space)) {
      keep_best(host[key], r.n, r.total.median);
      if (own) keep_best(host_j[key], r.n, own->joules / own->reps);
      continue;
    }
    const auto dkey = std::make_pair(key, r.space);
    if (!device.count(dkey)) order.push_back(dkey);
    DeviceTimes& times = device[dkey];
    if (r.copies != CopyMode::none) keep_best(times.with_copies, r.n, r.total.median);
    if (r.copies == CopyMode::pageable) keep_best(times.pageable, r.n, r.total.median);
    if (r.copies == CopyMode::pinned) keep_best(times.pinned, r.n, r.total.median);
    keep_best(times.alone, r.n, r.kernel.median);
    if (own && r.energy->gpu_read) {
      auto& [with_copies_j, alone_j] = device_j[dkey];
      if (r.copies != CopyMode::none) keep_best(with_copies_j, r.n, own->joules / own->reps);
      keep_best(alone_j, r.n, own->kernel_joules / own->reps);
    }
  }
  std::vector<Crossover> out;
  for (const auto& dkey : order) {
    const auto& [key, space] = dkey;
    const auto h = host.find(key);
    if (h == host.end()) continue;  // no host space to compare with
    Crossover c;
    c.experiment = std::get<0>(key);
    c.variant = std::get<1>(key);
    c.dtype = std::get<2>(key);
    c.device = space;
    c.ranks = std::get<3>(key);
    const DeviceTimes& times = device[dkey];
    c.with_copies = compare(h->second, times.with_copies, c.sizes);
    c.with_pageable_copies = compare(h->second, times.pageable, c.sizes);
    c.with_pinned_copies = compare(h->second, times.pinned, c.sizes);
    c.without_copies = compare(h->second, times.alone, c.sizes);
    std::sort(c.sizes.begin(), c.sizes.end());
    c.energy_with_copies = compare(host_j[key], device_j[dkey].first, c.energy_sizes);
    c.energy_without_copies = compare(host_j[key], device_j[dkey].second, c.energy_sizes);
    std::sort(c.energy_sizes.begin(), c.energy_sizes.end());
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<DtypeRatio> find_dtype_ratios(const std::vector<Result>& results) {
  using Key = std::tuple<std::string, std::string, std::string, CopyMode, std::size_t, int>;
  std::map<Key, double> f32;
  for (const auto& r : results)
    if (r.status == Status::pass && r.dtype == "float32" && r.kernel.median > 0)
      f32[{r.experiment, r.variant, r.space, r.copies, r.n, r.ranks}] = r.kernel.median;
  std::vector<DtypeRatio> out;
  for (const auto& r : results) {
    if (r.status != Status::pass || r.dtype != "float64" || r.ranks != 1) continue;
    const auto it = f32.find({r.experiment, r.variant, r.space, r.copies, r.n, r.ranks});
    if (it != f32.end())
      out.push_back(
          {r.experiment, r.variant, r.space, r.copies, r.n, r.kernel.median / it->second});
  }
  return out;
}

std::vector<RankCrossover> find_rank_crossovers(const std::vector<Result>& results) {
  using Key = std::tuple<std::string, std::string, std::string, std::string, CopyMode, int>;
  std::map<Key, RankCrossover> found;
  std::vector<Key> order;
  std::map<Key, std::pair<BySize, BySize>> times;  // one rank (1.0), k ranks (1 / speedup)
  for (const auto& r : results) {
    const double speedup = r.metric("speedup_over_1_rank");
    if (r.status != Status::pass || r.ranks < 2 || speedup <= 0) continue;
    const Key key{r.experiment, r.variant, r.space, r.dtype, r.copies, r.ranks};
    if (!found.count(key)) {
      order.push_back(key);
      found[key] = {r.experiment, r.variant, r.space, r.dtype, r.copies, r.ranks, {}, {}};
    }
    // Rates against the one-rank row's: k ranks pay where they go faster.
    keep_best(times[key].first, r.n, 1.0);
    keep_best(times[key].second, r.n, 1.0 / speedup);
  }
  std::vector<RankCrossover> out;
  for (const auto& key : order) {
    RankCrossover c = found[key];
    c.pays = compare(times[key].first, times[key].second, c.sizes);
    std::sort(c.sizes.begin(), c.sizes.end());
    out.push_back(std::move(c));
  }
  return out;
}

nlohmann::json rank_crossover_json(const std::vector<RankCrossover>& found) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& c : found)
    out.push_back({{"experiment", c.experiment},
                   {"variant", c.variant},
                   {"space", c.space},
                   {"dtype", c.dtype},
                   {"copies", std::string(to_string(c.copies))},
                   {"ranks", c.ranks},
                   {"sizes", c.sizes},
                   {"pays", to_json(c.pays)}});
  return out;
}

nlohmann::json gpu_crossover_json(const std::vector<Crossover>& found) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& c : found)
    out.push_back({{"experiment", c.experiment},
                   {"variant", c.variant},
                   {"dtype", c.dtype},
                   {"device", c.device},
                   {"ranks", c.ranks},
                   {"sizes", c.sizes},
                   {"with_copies", to_json(c.with_copies)},
                   {"with_pageable_copies", to_json(c.with_pageable_copies)},
                   {"with_pinned_copies", to_json(c.with_pinned_copies)},
                   {"without_copies", to_json(c.without_copies)},
                   {"energy_sizes", c.energy_sizes},
                   {"energy_with_copies", to_json(c.energy_with_copies)},
                   {"energy_without_copies", to_json(c.energy_without_copies)}});
  return out;
}

nlohmann::json dtype_ratios_json(const std::vector<DtypeRatio>& found) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& d : found)
    out.push_back({{"experiment", d.experiment},
                   {"variant", d.variant},
                   {"space", d.space},
                   {"copies", std::string(to_string(d.copies))},
                   {"n", d.n},
                   {"kernel_ratio", d.ratio}});
  return out;
}

std::vector<Speedup> find_speedups(const std::vector<Result>& results) {
  // experiment, variant, dtype, ranks: spaces compared on as many ranks
  using Key = std::tuple<std::string, std::string, std::string, int>;
  struct Times {
    BySize total, kernel;
  };
  std::map<std::pair<Key, std::string>, Times> best;  // by key and space
  std::map<Key, std::vector<std::string>> spaces;     // each key's spaces, in the rows' order
  std::vector<Key> order;
  for (const auto& r : results) {
    if (r.status != Status::pass) continue;
    const Key key{r.experiment, r.variant, r.dtype, r.ranks};
    if (!spaces.count(key)) order.push_back(key);
    auto& mine = spaces[key];
    if (std::find(mine.begin(), mine.end(), r.space) == mine.end()) mine.push_back(r.space);
    Times& t = best[{key, r.space}];
    // A device's total with copies: copies "none" times the kernel alone.
    if (is_host_space(r.space) || r.copies != CopyMode::none)
      keep_best(t.total, r.n, r.total.median);
    keep_best(t.kernel, r.n, r.kernel.median);
  }
  // The best of the reference spaces at each size.
  const auto best_of = [&](const Key& key, const std::vector<std::string>& against,
                           BySize Times::*phase) {
    BySize out;
    for (const auto& space : against)
      for (const auto& [n, ms] : best[{key, space}].*phase) keep_best(out, n, ms);
    return out;
  };
  const auto ratio_at = [](const BySize& reference, const BySize& mine,
                           std::size_t n) -> std::optional<double> {
    const auto r = reference.find(n);
    const auto m = mine.find(n);
    if (r == reference.end() || m == mine.end()) return std::nullopt;
    return r->second / m->second;
  };
  std::vector<Speedup> out;
  for (const auto& key : order) {
    std::vector<std::string> hosts;
    for (const auto& space : spaces[key])
      if (is_host_space(space)) hosts.push_back(space);
    for (const auto& space : spaces[key]) {
      std::vector<std::string> against;
      if (!is_host_space(space))
        against = hosts;
      else if (space != "Serial" && std::count(hosts.begin(), hosts.end(), "Serial"))
        against = {"Serial"};
      if (against.empty()) continue;
      const BySize ref_total = best_of(key, against, &Times::total);
      const BySize ref_kernel = best_of(key, against, &Times::kernel);
      const Times& mine = best[{key, space}];
      Speedup s{std::get<0>(key),
                std::get<1>(key),
                std::get<2>(key),
                space,
                std::get<3>(key),
                against,
                {}};
      std::set<std::size_t> sizes;
      for (const auto& [n, ms] : mine.kernel) sizes.insert(n);
      for (const auto& [n, ms] : mine.total) sizes.insert(n);
      for (std::size_t n : sizes) {
        Speedup::At at{n, ratio_at(ref_total, mine.total, n), ratio_at(ref_kernel, mine.kernel, n)};
        if (at.total || at.kernel) s.sizes.push_back(at);
      }
      if (!s.sizes.empty()) out.push_back(std::move(s));
    }
  }
  return out;
}

nlohmann::json speedups_json(const std::vector<Speedup>& found) {
  const auto or_null = [](const std::optional<double>& x) {
    return x ? nlohmann::json(*x) : nlohmann::json();
  };
  nlohmann::json out = nlohmann::json::array();
  for (const auto& s : found) {
    nlohmann::json sizes = nlohmann::json::array();
    for (const auto& at : s.sizes)
      sizes.push_back({{"n", at.n}, {"total", or_null(at.total)}, {"kernel", or_null(at.kernel)}});
    out.push_back({{"experiment", s.experiment},
                   {"variant", s.variant},
                   {"dtype", s.dtype},
                   {"space", s.space},
                   {"ranks", s.ranks},
                   {"against", s.against},
                   {"sizes", sizes}});
  }
  return out;
}

std::vector<FusionRatio> find_fusion_ratios(const std::vector<Result>& results) {
  using Key = std::tuple<std::string, std::string, std::string, int, std::size_t>;
  std::map<Key, std::pair<double, double>> kernels;  // the best fused, unfused
  std::vector<Key> order;
  for (const auto& r : results) {
    if (r.status != Status::pass || r.kernel.median <= 0 ||
        (r.variant != "fused" && r.variant != "unfused"))
      continue;
    const Key key{r.experiment, r.space, r.dtype, r.ranks, r.n};
    if (!kernels.count(key)) order.push_back(key);
    auto& [fused, unfused] = kernels[key];
    double& best = r.variant == "fused" ? fused : unfused;
    best = best > 0 ? std::min(best, r.kernel.median) : r.kernel.median;
  }
  std::vector<FusionRatio> out;
  for (const auto& key : order) {
    const auto& [fused, unfused] = kernels[key];
    if (fused > 0 && unfused > 0)
      out.push_back({std::get<0>(key), std::get<1>(key), std::get<2>(key), std::get<3>(key),
                     std::get<4>(key), unfused / fused});
  }
  return out;
}

nlohmann::json fusion_json(const std::vector<FusionRatio>& found) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& f : found)
    out.push_back({{"experiment", f.experiment},
                   {"space", f.space},
                   {"dtype", f.dtype},
                   {"ranks", f.ranks},
                   {"n", f.n},
                   {"unfused_over_fused", f.ratio}});
  return out;
}

std::vector<HockneyFit> fit_hockney(const std::vector<Result>& results) {
  // experiment, variant, parameters, space, dtype, ranks
  using Key = std::tuple<std::string, std::string, Parameters, std::string, std::string, int>;
  struct Points {
    BySize kernel_ms;
    std::map<std::size_t, std::pair<double, double>> work;  // bytes, FLOPs per element
  };
  std::map<Key, Points> groups;
  std::vector<Key> order;
  for (const auto& r : results) {
    if (r.status != Status::pass || r.kernel.median <= 0 || r.n == 0) continue;
    const Key key{r.experiment, r.variant, r.parameters, r.space, r.dtype, r.ranks};
    if (!groups.count(key)) order.push_back(key);
    Points& p = groups[key];
    keep_best(p.kernel_ms, r.n, r.kernel.median);
    const double n = static_cast<double>(r.n);
    p.work[r.n] = {r.bytes / n, r.flops / n};
  }
  const auto same = [](double a, double b) { return std::abs(a - b) <= 1e-9 * std::max(a, b); };
  std::vector<HockneyFit> out;
  for (const auto& key : order) {
    const Points& p = groups[key];
    if (p.kernel_ms.size() < 3) continue;
    const auto [bytes, flops] = p.work.begin()->second;
    if (!std::all_of(p.work.begin(), p.work.end(), [&](const auto& w) {
          return same(w.second.first, bytes) && same(w.second.second, flops);
        }))
      continue;
    // Least squares of t = a + b n relative to each median (weights 1/t^2:
    // every size counts alike, though the times span decades), with n over
    // the largest size for the sums' sake.
    const double scale = static_cast<double>(p.kernel_ms.rbegin()->first);
    double s = 0, sx = 0, sxx = 0, st = 0, sxt = 0;
    for (const auto& [n, t] : p.kernel_ms) {
      const double x = static_cast<double>(n) / scale, w = 1.0 / (t * t);
      s += w, sx += w * x, sxx += w * x * x, st += w * t, sxt += w * x * t;
    }
    double b = (s * sxt - sx * st) / (s * sxx - sx * sx);
    double a = (sxx * st - sx * sxt) / (s * sxx - sx * sx);
    if (!(a >= 0)) a = 0, b = sxt / sxx;  // time that grows faster than n: no start-up term
    // Time that does not grow with n (its n term under 1% of the largest
    // size's time: n_half past 99 times the sizes run) tells no rate.
    if (!(b > 0) || !std::isfinite(b) || b < 0.01 * (a + b)) continue;
    HockneyFit f;
    std::tie(f.experiment, f.variant, f.parameters, f.space, f.dtype, f.ranks) = key;
    double squares = 0;
    for (const auto& [n, t] : p.kernel_ms) {
      f.sizes.push_back(n);
      const double model = a + b * static_cast<double>(n) / scale;
      squares += (model - t) * (model - t) / (t * t);
    }
    f.r_inf = 1e3 * scale / b;  // b: milliseconds per `scale` elements
    f.r_inf_gbps = f.r_inf * bytes / 1e9;
    f.r_inf_gflops = f.r_inf * flops / 1e9;
    f.n_half = a / b * scale;
    f.rms_error = std::sqrt(squares / static_cast<double>(f.sizes.size()));
    out.push_back(std::move(f));
  }
  return out;
}

nlohmann::json hockney_json(const std::vector<HockneyFit>& found) {
  nlohmann::json out = nlohmann::json::array();
  const auto or_null = [](double v) { return v > 0 ? nlohmann::json(v) : nlohmann::json(); };
  for (const auto& f : found)
    out.push_back({{"experiment", f.experiment},
                   {"variant", f.variant},
                   {"parameters", parameters_json(f.parameters, f.experiment)},
                   {"space", f.space},
                   {"dtype", f.dtype},
                   {"ranks", f.ranks},
                   {"sizes", f.sizes},
                   {"r_inf", f.r_inf},
                   {"r_inf_gbps", or_null(f.r_inf_gbps)},
                   {"r_inf_gflops", or_null(f.r_inf_gflops)},
                   {"n_half", f.n_half},
                   {"rms_error", f.rms_error}});
  return out;
}

nlohmann::json analysis_json(const std::vector<Result>& results) {
  return {{"gpu_crossover", gpu_crossover_json(find_crossovers(results))},
          {"multi_rank_crossover", rank_crossover_json(find_rank_crossovers(results))},
          {"float64_over_float32", dtype_ratios_json(find_dtype_ratios(results))},
          {"speedup_over_host", speedups_json(find_speedups(results))},
          {"fusion", fusion_json(find_fusion_ratios(results))},
          {"hockney", hockney_json(fit_hockney(results))}};
}

std::string format_analysis(const std::vector<Result>& results) {
  std::string out;
  const auto crossovers = find_crossovers(results);
  std::set<std::string> devices;
  for (const auto& r : results)
    if (!is_host_space(r.space)) devices.insert(r.space);
  out += "\nWhen the GPU pays: the smallest n at which a device space beats the best host space\n";
  if (devices.empty()) out += "  no device space ran: nothing to compare\n";
  for (const auto& c : crossovers)
    out += fmt::format("  {} {} {} on {}{}: with copies {}; without copies {}\n", c.experiment,
                       c.variant, c.dtype, c.device,
                       c.ranks > 1 ? fmt::format(" ({} ranks each)", c.ranks) : std::string(),
                       describe(c.with_copies, c.sizes), describe(c.without_copies, c.sizes));
  for (const auto& c : crossovers)
    if (c.energy_with_copies.measured || c.energy_without_copies.measured)
      out += fmt::format(
          "  {} {} {} on {}{}, in joules (GPU against CPU): with copies {}; "
          "without copies {}\n",
          c.experiment, c.variant, c.dtype, c.device,
          c.ranks > 1 ? fmt::format(" ({} ranks each)", c.ranks) : std::string(),
          describe(c.energy_with_copies, c.energy_sizes),
          describe(c.energy_without_copies, c.energy_sizes));
  if (const auto ranks = find_rank_crossovers(results); !ranks.empty()) {
    out +=
        "\nWhen more ranks pay: the smallest n at which k ranks beat one (the group's work "
        "per second)\n";
    for (const auto& c : ranks)
      out += fmt::format("  {} {} {} {} on {} ranks: {}\n", c.experiment, c.variant, c.space,
                         c.dtype, c.ranks, describe(c.pays, c.sizes));
  }

  if (const auto fits = fit_hockney(results); !fits.empty()) {
    out += "\nRate against size, Hockney's t = (n + n_half) / r_inf fitted to the kernel medians\n";
    for (const auto& f : fits) {
      const std::string parameters = to_string(f.parameters, f.experiment);
      std::string rate = fmt::format("{:.3g} elements/s", f.r_inf);
      if (f.r_inf_gbps > 0) rate = fmt::format("{:.4g} GB/s ({})", f.r_inf_gbps, rate);
      if (f.r_inf_gflops > 0) rate = fmt::format("{:.4g} GFLOP/s, {}", f.r_inf_gflops, rate);
      out += fmt::format(
          "  {} {}{} {} {}{}: r_inf {}, n_half {:.3g}{}; the medians {:.1f}% rms off it, {} sizes\n",
          f.experiment, f.variant, parameters.empty() ? "" : " " + parameters, f.space, f.dtype,
          f.ranks > 1 ? fmt::format(" ({} ranks)", f.ranks) : std::string(), rate, f.n_half,
          f.n_half > static_cast<double>(f.sizes.back()) ? " (beyond the largest n: r_inf is "
                                                           "extrapolated)"
                                                         : "",
          100 * f.rms_error, f.sizes.size());
    }
  }

  const auto ratios = find_dtype_ratios(results);
  if (!ratios.empty()) {
    out += "\nfloat64 / float32 kernel time, per space\n";
    // One line per experiment, variant, space and copy mode; its sizes in order.
    std::vector<std::string> keys;
    std::map<std::string, std::map<std::size_t, double>> lines;
    for (const auto& d : ratios) {
      const std::string key = fmt::format("  {} {} {} copies={}:", d.experiment, d.variant, d.space,
                                          to_string(d.copies));
      if (!lines.count(key)) keys.push_back(key);
      lines[key][d.n] = d.ratio;
    }
    for (const auto& key : keys) {
      out += key;
      for (const auto& [n, ratio] : lines[key]) out += fmt::format("  n={} {:.2f}x", n, ratio);
      out += "\n";
    }
  }
  return out;
}

}  // namespace portalab
