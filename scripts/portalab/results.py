"""The one door through which the scripts read portalab's files (results.json,
its journal results.jsonl, results.csv, calibration files), so that they
agree on what a row and its key are and refuse what one of them refuses.

The code is in one module per concern, and this module names what the
scripts use (`from portalab import results as pr`):
  cli       a message on stderr, a refusal (exit status 2), option types, matplotlib
  files     every file read or written: regular files only, bounded, atomic writes
  upgrade   the versions read, older files under the newest names
  schema    schema/*.schema.json: validate() (jsonschema), first_problem() (without)
  problems  where written files break the schema (validate.py, the tests)
  reading   runs and their journals read as documents and flattened rows
  rows      a row's key, the newest of each, its fields as the tables print them
  analysis  the summary's crossovers, speedups and ratios, read, never recomputed
"""
from portalab.cli import (MATPLOTLIB_NEEDED, require_matplotlib, finite_number, say, fail)  # noqa: F401
from portalab.files import (ResultsError, NotAFile, NOT_A_FILE, not_a_file, RESULTS_MAX_BYTES,
                            LIMITS_MAX_BYTES, read_bytes, regular_file, sqlite_file, read_text,
                            parse_json, read_json, save, png, out_folder, file_name, walk)  # noqa: F401
from portalab.upgrade import (SCHEMA_VERSION, OLDEST_VERSION, check_version, ADDED_IN_VERSION_2,
                              ADDED_IN_VERSION_3, RENAMED_IN_VERSION_4, upgraded_row, upgraded)  # noqa: F401
from portalab.schema import (SCHEMA_DIR, SCHEMA_KINDS, schemas, validate, cut, INT_RANGE,
                             first_problem, csv_columns)  # noqa: F401
from portalab.problems import (JSON_INTEGER, JSON_NUMBER, csv_problems, journal_problems,
                               file_problems, written_files, have_jsonschema, check_files, shown)  # noqa: F401
from portalab.reading import (read_limits, journal_lines, find_results, NAMED_CHOICES, flatten,
                              JOURNAL, read_journal, read_document, load_document, load_run,
                              read_run, document_problem, rows_of, read_file, load, load_runs,
                              incomplete, fail_without_rows, tell_incomplete)  # noqa: F401
from portalab.rows import (PHASES, STATS, MACHINE_KEY, ENTRY_KEY, KEY, RUN_FIELDS, hashable, key_of,
                           newest_per_key, sort_key, parameters_text, limit_name, limit_text,
                           limit_level, limit_suspect, threads_text, dtype_bytes, passed,
                           HOST_SPACES, own_energy, joules_per_rep, is_host_space)  # noqa: F401
from portalab.analysis import (ANALYSIS, LATER_ANALYSIS, CROSSOVER_MODES, ANALYSIS_VALUES,
                               missing_analysis, analysis, describe_pays)  # noqa: F401
