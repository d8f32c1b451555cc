#include "store/prometheus.hpp"

#include "store/health.hpp"
#include "support/files.hpp"

#include <fmt/format.h>

#include <cmath>
#include <map>

namespace portalab::store {

namespace {
// Backslash and line feed escaped, and double quotes in a label's value
// (HELP text keeps them).
std::string escaped(const std::string& text, bool quotes) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '\n')
      out += "\\n";
    else if (c == '"' && quotes)
      out += "\\\"";
    else
      out += c;
  }
  return out;
}

std::string sample_value(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  return fmt::format("{}", v);
}
}  // namespace

std::string escape_label_value(const std::string& value) { return escaped(value, true); }

std::string prometheus_text(const std::vector<Gauge>& gauges) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<const Gauge*>> by_name;
  for (const auto& g : gauges) {
    if (!by_name.count(g.name)) order.push_back(g.name);
    by_name[g.name].push_back(&g);
  }
  std::string out;
  for (const auto& name : order) {
    const auto& samples = by_name[name];
    out += fmt::format("# HELP {} {}\n# TYPE {} gauge\n", name,
                       escaped(samples.front()->help, false), name);
    for (const Gauge* g : samples) {
      out += name;
      if (!g->labels.empty()) {
        out += '{';
        for (std::size_t i = 0; i < g->labels.size(); ++i)
          out += fmt::format("{}{}=\"{}\"", i ? "," : "", g->labels[i].first,
                             escape_label_value(g->labels[i].second));
        out += '}';
      }
      out += ' ' + sample_value(g->value) + '\n';
    }
  }
  return out;
}

void write_prometheus(const std::string& path, const std::vector<Gauge>& gauges) {
  write_file_atomically(path, prometheus_text(gauges));
}

namespace {
std::string number_label(const std::optional<double>& v) {
  return v ? fmt::format("{:.6g}", *v) : std::string();
}
}  // namespace

std::vector<Gauge> health_gauges(const Health& h, double unix_time) {
  std::vector<Gauge> out;
  for (const auto& f : h.figures)
    out.push_back(
        {"portalab_health_figure",
         "A figure portalab health measured on this node (a calibrated limit, a link), in its "
         "unit, with the reference it was judged against and the verdict",
         {{"host", f.host},
          {"gpu_uuid", f.kind == "node" || (f.kind == "link" && f.peer.empty()) ? "" : f.id},
          {"peer_uuid", f.peer},
          {"model", f.model},
          {"space", f.space},
          {"quantity", f.quantity},
          {"unit", f.unit},
          {"reference",
           number_label(f.reference ? std::optional(f.reference->value) : std::nullopt)},
          {"reference_source", f.reference ? f.reference->source : std::string()},
          {"published",
           number_label(f.published ? std::optional(f.published->value) : std::nullopt)},
          {"verdict", f.verdict}},
         f.value});
  out.push_back({"portalab_health_degraded",
                 "1 where portalab health found the node degraded (exit 1), 0 where healthy",
                 {{"host", h.host}},
                 h.degraded() ? 1.0 : 0.0});
  out.push_back({"portalab_health_timestamp_seconds",
                 "When portalab health wrote this file (seconds since 1970)",
                 {{"host", h.host}},
                 unix_time});
  return out;
}

std::vector<Gauge> fleet_gauges(const nlohmann::json& fleet) {
  std::vector<Gauge> out;
  for (const char* part : {"gpus", "nodes"}) {
    if (!fleet.contains(part)) continue;
    const bool gpu = std::string(part) == "gpus";
    for (const auto& m : fleet[part])
      for (const char* figures : {"limits", "rows"})
        for (const auto& f : m.value(figures, nlohmann::json::array())) {
          const bool flagged = !f.value("flagged", nlohmann::json::array()).empty();
          out.push_back(
              {"portalab_fleet_figure",
               "A figure of a GPU or node in portalab db fleet, in its unit, with its model's "
               "reference and whether it stands out (outlier) or not (ok)",
               {{"kind", gpu ? "gpu" : "node"},
                {"gpu_uuid", gpu ? m.value("id", "") : std::string()},
                {"host", m.value("host", "")},
                {"model", m.value("model", "")},
                {"quantity", f.value("quantity", "")},
                {"unit", f.value("unit", "")},
                {"reference", f.contains("reference") ? number_label(f["reference"].get<double>())
                                                      : std::string()},
                {"verdict", flagged ? "outlier" : "ok"}},
               f.value("value", 0.0)});
        }
  }
  return out;
}

}  // namespace portalab::store
