// The version of the files portalab writes (results.json, its journal
// results.jsonl, a calibration file): the "schema_version" at their top, the
// newest of the "enum" of schema/results.schema.json and
// schema/limits.schema.json, and SCHEMA_VERSION of
// scripts/portalab/upgrade.py. Raise it with any change a reader must know
// of; files without the field are version 1 (numbers as text). 3 added each
// row's path; 4 named each speedup by what it is against (a row's
// speedup_over_baseline, the summary's speedup_over_host, copy_overlap's
// speedup_over_serial); 5 kept each row's repetitions and the interval of
// its median; the scripts and the store read versions 2 to 5.
#pragma once

namespace portalab {

constexpr int schema_version = 5;

}  // namespace portalab
