#include "verdicts.hpp"

#include "deck/deck.hpp"
#include "results/results_check.hpp"
#include "store/verdict.hpp"
#include "support/console.hpp"
#include "support/text.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <iostream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

namespace portalab {

struct VerdictsCommand {
  CLI::App* cmd = nullptr;
};

std::shared_ptr<VerdictsCommand> add_verdicts_command(CLI::App& app) {
  auto c = std::make_shared<VerdictsCommand>();
  c->cmd = app.add_subcommand(
      "verdicts",
      "judge pairs of rows read as JSON on stdin (what scripts/compare.py sends): the U test on "
      "their repetitions, or the older rule where a side kept none (docs/result-files.md)");
  return c;
}

bool verdicts_command_given(const VerdictsCommand& command) { return command.cmd->parsed(); }

namespace {

// The request, as scripts/compare.py writes it:
//   {"alpha": 0.01, "tolerance": 0.03, "sigmas": 4, "min_noise": 0.01,
//    "pairs": [{"base": SIDE, "new": SIDE}, ...],
//    "noise_pairs": [[base_ms, new_ms], ...], "within_ratio": 3}
// SIDE: {"check", "ms", "min_ms", "max_ms", "std_ms", "reps", "repetitions",
// "runs"} (numbers or null; repetitions a list of ms, or null before schema
// 5; runs, where the side was run several times, each run's median).
double number_or(const nlohmann::json& doc, const char* key, double fallback) {
  const auto v = finite_number(doc, key);
  if (doc.contains(key) && !v)
    throw InputError(fmt::format("verdicts: \"{}\" must be a finite number", key));
  return v.value_or(fallback);
}

store::Measure measure(const nlohmann::json& side) {
  store::Measure m;
  m.check = side.value("check", std::string());
  m.ms = finite_number(side, "ms");
  m.min_ms = finite_number(side, "min_ms");
  m.max_ms = finite_number(side, "max_ms");
  m.std_ms = finite_number(side, "std_ms");
  m.reps = finite_number(side, "reps");
  return m;
}

std::vector<double> numbers(const nlohmann::json& side, const char* key) {
  std::vector<double> out;
  const auto it = side.find(key);
  if (it == side.end() || !it->is_array()) return out;
  for (const auto& x : *it) out.push_back(x.is_number() ? x.get<double>() : NAN);
  return out;
}

nlohmann::json or_null(const std::optional<double>& v) {
  return v && std::isfinite(*v) ? nlohmann::json(*v) : nlohmann::json();
}

nlohmann::json judge(const nlohmann::json& request) {
  if (!request.is_object() || !request.contains("pairs") || !request["pairs"].is_array())
    throw InputError("verdicts: expected a JSON object with a list \"pairs\"");
  const double alpha = number_or(request, "alpha", store::default_alpha);
  const double tolerance = number_or(request, "tolerance", store::default_tolerance);
  const double sigmas = number_or(request, "sigmas", store::default_sigmas);
  const double min_noise = number_or(request, "min_noise", store::default_min_noise);
  const double within_ratio = number_or(request, "within_ratio", store::default_within_ratio);
  if (!(alpha > 0 && alpha < 1) || !(tolerance >= 0) || !(sigmas > 0) || !(min_noise >= 0) ||
      !(within_ratio >= 1))
    throw InputError(
        "verdicts: alpha must lie in (0, 1), tolerance and min_noise be >= 0, sigmas > 0, "
        "within_ratio >= 1");

  std::vector<store::JudgedPair> pairs;
  for (const auto& pair : request["pairs"]) {
    if (!pair.is_object() || !pair.contains("base") || !pair.contains("new") ||
        !pair["base"].is_object() || !pair["new"].is_object())
      throw InputError("verdicts: each pair must be {\"base\": {...}, \"new\": {...}}");
    const auto& base = pair["base"];
    const auto& now = pair["new"];
    pairs.push_back({.base = measure(base),
                     .now = measure(now),
                     .base_ms = numbers(base, "repetitions"),
                     .now_ms = numbers(now, "repetitions"),
                     .base_runs = numbers(base, "runs"),
                     .now_runs = numbers(now, "runs")});
  }
  // The run-to-run noise of the older rule: of the pairs given for it, or
  // of these pairs' passing medians.
  std::vector<std::pair<double, double>> noise_pairs;
  if (const auto it = request.find("noise_pairs"); it != request.end() && it->is_array()) {
    for (const auto& p : *it)
      if (p.is_array() && p.size() == 2 && p[0].is_number() && p[1].is_number())
        noise_pairs.emplace_back(p[0].get<double>(), p[1].get<double>());
  } else {
    for (const auto& p : pairs)
      if (p.base.check == "PASS" && p.now.check == "PASS" && p.base.ms && p.now.ms)
        noise_pairs.emplace_back(*p.base.ms, *p.now.ms);
  }
  store::Noise noise(noise_pairs, min_noise);
  // The noise between each side's own repeats (a run's passes, or a side's
  // runs): what two runs of one build differ by, whatever changed between
  // the sides.
  std::vector<std::pair<double, double>> within_pairs;
  for (const auto& p : pairs)
    for (const auto* runs : {&p.base_runs, &p.now_runs})
      for (std::size_t i = 1; i < runs->size(); ++i)
        within_pairs.emplace_back((*runs)[i - 1], (*runs)[i]);
  const store::Noise within(within_pairs, min_noise);
  if (within.count() >= store::min_group) noise.cap(within, within_ratio);
  nlohmann::json out = nlohmann::json::array();
  int by_test = 0;
  for (const auto& j : store::judge_pairs(pairs, noise, alpha, tolerance, sigmas)) {
    by_test += j.p.has_value();
    nlohmann::json v = {{"verdict", j.verdict}, {"change", or_null(j.change)}, {"rule", j.rule}};
    if (j.rule != "spread") {
      v["p"] = or_null(j.p);
      v["p_adjusted"] = or_null(j.p_adjusted);
      v["min_change"] = j.min_change;
    }
    out.push_back(std::move(v));
  }
  nlohmann::json decades = nlohmann::json::object();
  for (const auto& [d, s] : noise.by_decade()) decades[std::to_string(d)] = s;
  // How the new side moved as a whole: the median change of the pairs that
  // passed on both; and how many pairs the cap above judged.
  std::vector<double> logs;
  int capped = 0;
  for (const auto& p : pairs)
    if (p.base.check == "PASS" && p.now.check == "PASS" && p.base.ms && p.now.ms &&
        *p.base.ms > 0 && *p.now.ms > 0) {
      logs.push_back(std::log(*p.now.ms / *p.base.ms));
      capped += noise.capped(*p.base.ms);
    }
  nlohmann::json within_json = nullptr;
  if (within.count() >= store::min_group)
    within_json = {{"pooled", within.pooled()},
                   {"pairs", within.count()},
                   {"ratio", within_ratio},
                   {"capped", capped}};
  return {{"verdicts", std::move(out)},
          {"tested", by_test},
          {"alpha", alpha},
          {"tolerance", tolerance},
          {"noise",
           {{"pooled", noise.pooled()},
            {"pairs", noise.count()},
            {"floor", noise.floor()},
            {"by_decade", decades},
            {"within", within_json}}},
          {"shift",
           logs.empty() ? nlohmann::json() : nlohmann::json(std::expm1(store::median_of(logs)))},
          {"shift_pairs", logs.size()}};
}

}  // namespace

int run_verdicts_command(const VerdictsCommand&) {
  const std::string text{std::istreambuf_iterator<char>(std::cin),
                         std::istreambuf_iterator<char>()};
  try {
    const auto request = nlohmann::json::parse(text);
    std::cout << judge(request).dump() << "\n";
  } catch (const nlohmann::json::exception& e) {
    print_to(stderr, "error: verdicts: stdin is no JSON request: {}\n", shown(e.what(), 300));
    return 2;
  } catch (const InputError& e) {
    print_to(stderr, "error: {}\n", e.what());
    return 2;
  }
  return 0;
}

}  // namespace portalab
