// node_exporter's textfile collector format (Prometheus' text exposition
// format, version 0.0.4): gauges a site's Prometheus scrapes from a file
// in the collector's folder. `portalab health --prometheus FILE` and
// `portalab db fleet --prometheus FILE` write one, atomically.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <utility>
#include <vector>

namespace portalab::store {

struct Gauge {
  std::string name;  // a metric name: [a-zA-Z_:][a-zA-Z0-9_:]*
  std::string help;
  std::vector<std::pair<std::string, std::string>> labels;  // name, value (any text)
  double value = 0;
};

// A label value as the format wants it: backslash, double quote and line
// feed escaped.
std::string escape_label_value(const std::string& value);
// The file's text: each metric's HELP and TYPE once, its samples together.
std::string prometheus_text(const std::vector<Gauge>& gauges);
// Written as a temporary file in the same folder, then renamed over `path`
// (the collector never reads half a file; the temporary's name does not
// end in .prom, which it ignores). Throws OutputError.
void write_prometheus(const std::string& path, const std::vector<Gauge>& gauges);

struct Health;
// portalab_health_figure: one gauge per figure (its value; labels host,
// gpu_uuid, peer_uuid, model, space, quantity, unit, reference,
// reference_source, published, verdict), and the node's verdict
// (portalab_health_degraded) and time (portalab_health_timestamp_seconds).
std::vector<Gauge> health_gauges(const Health& h, double unix_time);
// portalab_fleet_figure: one gauge per figure of `db fleet`'s JSON (labels
// kind, gpu_uuid, host, model, quantity, unit, reference, verdict: outlier or ok).
std::vector<Gauge> fleet_gauges(const nlohmann::json& fleet);

}  // namespace portalab::store
