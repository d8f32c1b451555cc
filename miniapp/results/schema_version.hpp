// The version of the files portalab writes (results.json, its journal
// results.jsonl, a calibration file): the "schema_version" at their top, the
// "const" of schema/results.schema.json and schema/limits.schema.json, and
// what scripts/portalab_results.py reads. Raise it with any change a reader
// must know of; files without the field are version 1 (numbers as text).
#pragma once

namespace portalab {

constexpr int schema_version = 2;

}  // namespace portalab
