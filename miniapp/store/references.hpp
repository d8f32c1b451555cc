// The reference figures a GPU or node is held to (data/reference-figures.csv,
// or a site's own file): per model (the device name CUDA gives, or the CPU
// model) and quantity (a calibrated limit as the store names it), the figure
// portalab measured on a known-good machine and, beside it where one is
// published, the vendor's peak or a published measurement. Each names its
// source. `portalab db fleet` and `portalab health` judge against the
// measured one; the published one is shown, never judged against (a peak no
// program reaches would flag every GPU).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace portalab::store {

struct Reference {
  double value = 0;
  std::string unit, source, date;
};

struct ReferenceFigures {
  std::optional<Reference> measured;   // basis "portalab" (the default)
  std::optional<Reference> published;  // basis "public": a vendor's peak, a paper's figure
};

// model -> quantity -> figures
using References = std::map<std::string, std::map<std::string, ReferenceFigures>>;

// Reads a CSV of model,quantity,value,unit,source,date[,basis] (basis:
// "portalab" or "public"; lines starting with '#' are comments). Throws
// StoreError(2) naming the file and line of what it cannot take. "" reads
// nothing.
References read_references(const std::string& path);

// The file a command uses: `given`, else $PORTALAB_REFERENCE, else the one
// shipped with portalab (default_reference_figures(), store.hpp); "" where
// there is none.
std::string reference_file(const std::string& given);

// The fields of one CSV line ("" quoted, commas within quotes kept).
std::vector<std::string> csv_fields(const std::string& line);

}  // namespace portalab::store
