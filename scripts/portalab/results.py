"""Reading portalab's results.json files: shared by collect.py, plot.py and
compare.py so that the three agree on what a row and its key are. A run that
did not finish (killed, or out of disk) leaves its journal, results.jsonl,
beside the files; it is then read instead, as it holds every completed entry.

A row is one entry of a file's "results" list, flattened: the row's own
fields, the phase statistics as <phase>_<stat>_ms (total_min_ms, ...), and
the run it came from (host name, the device of the row's space, Slurm job,
deck, git commit, start time, file path).

Every file is read here, results and calibration (limits) files alike, and
its schema_version checked: a file of a version not read stops the script with
one line naming the file and its version (exit status 2, through fail()).
The formats are schema/results.schema.json and schema/limits.schema.json
(docs/results-schema.md); validate() checks a document against them.
"""
import io
import json
import math
import os
import re
import stat
import sys

from portalab import text

# The newest version of the files this module reads
# (miniapp/results/schema_version.hpp), and the oldest: version 2 lacks the
# rows' path (read as None: unknown); versions 2 and 3 name the speedups
# otherwise (RENAMED_IN_VERSION_4, read under version 4's names). Files
# without schema_version are version 1, whose numbers were text.
SCHEMA_VERSION = 4
OLDEST_VERSION = 2

PHASES = ("h2d", "kernel", "d2h", "total")
STATS = ("min_ms", "max_ms", "std_ms")

# What one measurement is: the machine (host and the device the space ran on),
# then what ran. Two rows with the same key measured the same thing.
MACHINE_KEY = ("hostname", "device")
# Rows on several ranks (MPI) and rows of other parameters are other
# measurements; files older than either field read as one rank, no parameters.
ENTRY_KEY = ("space", "experiment", "variant", "dtype", "n", "copies", "parameters", "ranks")
KEY = MACHINE_KEY + ENTRY_KEY

RUN_FIELDS = ("job_id", "array_task_id", "deck", "git_commit", "started_at", "source")


class ResultsError(Exception):
    """A file that is not a portalab results.json, or no file at all."""


class NotAFile(ResultsError):
    """A path that cannot be read as a file: missing, unreadable, a folder,
    a FIFO, a device."""


# ---- Files in and out -----------------------------------------------------------
# Every file the scripts read or write goes through these: a path that is not
# a regular file (a FIFO would hang the read, a link would be written through)
# is refused in one line.

NOT_A_FILE = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISLNK, "a symbolic link"),
              (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
              (stat.S_ISBLK, "a block device"))


def not_a_file(mode):
    """What a file of this st_mode is when it is not a regular file ("a FIFO"), else ""."""
    return next((what for test, what in NOT_A_FILE if test(mode)), "" if stat.S_ISREG(mode)
                else "not a regular file")


# The most bytes a file the scripts read may hold: a results.json, journal
# or results.csv of a sweep of a hundred thousand rows is a few hundred MB
# at most; a calibration file as portalab itself reads it
# (miniapp/engine/session.cpp). A file growing without end is never read whole.
RESULTS_MAX_BYTES = 1 << 30
LIMITS_MAX_BYTES = 16 << 20


def read_bytes(path, most=RESULTS_MAX_BYTES):
    """The bytes of a regular file of at most `most` bytes; ResultsError
    naming path for anything else: missing, unreadable, a folder, a FIFO or
    a device (opened without blocking, so that a FIFO with no writer cannot
    hang the script), larger."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as e:
        raise NotAFile(f"{text.shown(path)}: cannot read it ({e.strerror})") from e
    with os.fdopen(fd, "rb") as f:
        what = not_a_file(os.fstat(fd).st_mode)
        if what:
            raise NotAFile(f"{text.shown(path)}: {what}, not a file")
        try:
            data = f.read(most + 1)
        except OSError as e:
            raise NotAFile(f"{text.shown(path)}: cannot read it ({e.strerror})") from e
    if len(data) > most:
        raise ResultsError(f"{text.shown(path)}: more than {most} bytes, more than any file "
                           "portalab writes for these scripts: not read")
    return data


def regular_file(path, what="a file"):
    """path, when it is a regular file (followed through links); else
    NotAFile naming it: missing, a folder, a FIFO (whose open would wait
    for a writer), a device. For a file handed to another reader (SQLite,
    the portalab binary) that read_bytes() cannot guard."""
    if path == "":
        raise NotAFile(f"'' is not {what}: give its path")
    try:
        mode = os.stat(path).st_mode
    except OSError as e:
        raise NotAFile(f"{text.shown(path)}: cannot read it ({e.strerror})") from e
    kind = not_a_file(mode)
    if kind:
        raise NotAFile(f"{text.shown(path)}: {kind}, not {what}")
    return path


def sqlite_file(path, what="an SQLite database"):
    """path, an SQLite database whose files are regular: the database and
    the journal, WAL and shared memory SQLite opens beside it (a FIFO at
    <path>-journal would block the open). NotAFile naming the one that is not."""
    regular_file(path, what)
    for suffix in ("-journal", "-wal", "-shm"):
        if os.path.lexists(path + suffix):
            regular_file(path + suffix, f"a file of SQLite beside {text.shown(path)}")
    return path


def read_text(path, what, errors="strict", most=RESULTS_MAX_BYTES):
    """A regular file's text, UTF-8; ResultsError naming path and the first bad byte."""
    data = read_bytes(path, most)
    try:
        return data.decode("utf-8", errors)
    except UnicodeDecodeError as e:
        raise ResultsError(f"{path}: not a {what} (not UTF-8 text: byte {e.start})") from e


def _no_constant(name):
    raise ValueError(f"{name} is not a number JSON allows")


def _finite(text):
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text[:40]} is beyond a double's range")
    return value


def parse_json(text, path, what):
    """JSON as portalab writes it: NaN, Infinity and numbers beyond a
    double's range refused (Python's json takes them), as is nesting too deep
    to read; ResultsError naming path and where."""
    try:
        return json.loads(text, parse_constant=_no_constant, parse_float=_finite)
    except RecursionError as e:
        raise ResultsError(f"{path}: not a {what} (nested too deeply)") from e
    except ValueError as e:
        raise ResultsError(f"{path}: not a {what} ({e})") from e


def read_json(path, what="portalab results.json", most=RESULTS_MAX_BYTES):
    """The JSON document in a regular file at path (read_bytes, parse_json)."""
    return parse_json(read_text(path, what, most=most), path, what)


def save(path, data):
    """Writes data (str or bytes) to path without ever writing through what is
    there: into a new file of the same folder (O_EXCL, O_NOFOLLOW), renamed
    over path once complete. A symbolic link, FIFO, device or folder at path
    is refused; any failure stops the script with one line (fail()) and
    leaves path as it was."""
    try:
        what = not_a_file(os.lstat(path).st_mode)
    except FileNotFoundError:
        what = ""
    except OSError as e:
        fail(f"{path}: cannot write it ({e.strerror})")
    if what:
        fail(f"{path}: {what} is there, not a regular file: refusing to write through it")
    folder = os.path.dirname(path) or "."
    data = text.encoded(data) if isinstance(data, str) else data
    tmp = None
    try:
        for attempt in range(100):
            tmp = os.path.join(folder, f".{os.path.basename(path)}.{os.getpid()}.{attempt}.tmp")
            try:
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                             | os.O_CLOEXEC, 0o666)
                break
            except FileExistsError:
                tmp = None
        else:
            raise FileExistsError(17, "no free temporary name")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except OSError as e:
        if tmp:
            try:
                os.unlink(tmp)
            except OSError:
                pass
        fail(f"{path}: cannot write it ({e.strerror or e})")


def png(fig, dpi):
    """A matplotlib figure as PNG bytes, for save()."""
    import io as _io
    out = _io.BytesIO()
    fig.savefig(out, format="png", dpi=dpi)
    return out.getvalue()


def out_folder(option, path):
    """path made as a folder for a script's files (--out), or one line and
    exit status 2 (fail()) where it cannot be."""
    if os.path.lexists(path) and not os.path.isdir(path):
        fail(f"{option} {path}: not a folder")
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as e:
        fail(f"{option} {path}: cannot make this folder ({e.strerror})")
    return path


def file_name(text):
    """Text from a file (an experiment's name, a space's) as part of a file
    name: nothing but letters, digits and ._+-, no leading dot, so that a
    name holding "../" writes nowhere else."""
    return re.sub(r"[^A-Za-z0-9_.+-]", "_", text).lstrip(".") or "_"


def check_version(doc, path, what="results file"):
    """doc, when its schema_version is one read here; else ResultsError in
    one line naming path and the version, older or newer."""
    if not isinstance(doc, dict) or (
            "schema_version" not in doc and not {"provenance", "results", "calibration"} & doc.keys()):
        return doc  # not portalab's at all: the caller names what it lacks
    version = doc.get("schema_version", 1)
    number = isinstance(version, int) and not isinstance(version, bool)
    if number and OLDEST_VERSION <= version <= SCHEMA_VERSION:
        return doc
    if number and version < OLDEST_VERSION:
        why = ("written before portalab numbered its formats, " if "schema_version" not in doc
               else "")
        advice = (f"{why}older than version {OLDEST_VERSION}, the oldest these scripts read: "
                  "run portalab again, or read it with the scripts of the portalab that wrote it")
    else:
        advice = (f"these scripts read versions {OLDEST_VERSION} to {SCHEMA_VERSION}: "
                  "read it with the scripts of the portalab that wrote it")
    raise ResultsError(f"{path}: a {what} of schema_version {json.dumps(version)}, {advice}")


def read_limits(path):
    """A calibration file (`portalab calibrate --out FILE`), its version
    checked: {"schema_version", "provenance", "calibration"}."""
    doc = read_json(path, "portalab calibration file", LIMITS_MAX_BYTES)
    check_version(doc, path, "calibration file")
    if not isinstance(doc, dict) or "calibration" not in doc:
        raise ResultsError(f"{path}: not a portalab calibration file (no \"calibration\" in it)")
    problem = first_problem(doc, "limits")
    if problem:
        raise ResultsError(f"{path}: not a valid portalab calibration file ({problem})")
    return doc


# schema/ beside scripts/, in the source tree and installed (share/portalab/);
# this file is scripts/portalab/results.py.
SCHEMA_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                          "schema")
SCHEMA_KINDS = ("results", "limits")


_SCHEMAS = {}


def schemas():
    """{kind: JSON Schema} of the files portalab writes (schema/<kind>.schema.json)."""
    if not _SCHEMAS:
        for kind in SCHEMA_KINDS:
            with open(os.path.join(SCHEMA_DIR, f"{kind}.schema.json")) as f:
                _SCHEMAS[kind] = json.load(f)
    return _SCHEMAS


def _validator(schema, known):
    """A draft 2020-12 validator of schema that resolves references into the
    schemas known, with the jsonschema of Debian 12 (4.10) or a newer one."""
    import jsonschema
    try:
        from referencing import Registry, Resource  # jsonschema >= 4.18
    except ImportError:
        resolver = jsonschema.RefResolver.from_schema(
            schema, store={s["$id"]: s for s in known.values()})
        return jsonschema.Draft202012Validator(schema, resolver=resolver)
    registry = Registry().with_resources(
        (s["$id"], Resource.from_contents(s)) for s in known.values())
    return jsonschema.Draft202012Validator(schema, registry=registry)


def validate(doc, kind="results", part=None, at="", version=None):
    """Where doc breaks schema/<kind>.schema.json (or only its $defs/<part>,
    doc found at `at` in its file): one message per error, "<field>: <what>",
    the field as a path ("results/3/threads"). Needs python3-jsonschema.
    A document of schema_version 2 (version, for a part of one) may lack
    what version 3 added."""
    known = schemas()
    schema = known[kind]
    if part:
        schema = {"$ref": f"{schema['$id']}#/$defs/{part}"}
        if part == "row":
            doc = upgraded_row(doc, version)
    elif isinstance(doc, dict):
        version = doc.get("schema_version")
        if kind == "results":
            doc = upgraded(doc)
    older = {f"{k!r} is a required property" for k in ADDED_IN_VERSION_3} if version == 2 else ()
    try:
        errors = [e for e in _validator(schema, known).iter_errors(doc)
                  if not (e.validator == "required" and e.message in older)]
        return [f"{'/'.join([at] * bool(at) + [str(p) for p in e.absolute_path]) or '(top)'}: "
                f"{cut(e.message)}"
                for e in sorted(errors, key=lambda e: [(isinstance(p, str), p) for p in e.absolute_path])]
    except RecursionError:
        return [f"{at or '(top)'}: nested too deeply"]


def cut(text, most=200):
    """A message of a file's text kept short: a 1 MB value is not echoed whole."""
    return text if len(text) <= most else text[:most] + f"... ({len(text)} characters)"


# Fields of schema_version 2 that files written before they were added lack
# (energy, 2026-11-25): a reader takes such files; validate() names them.
ADDED_IN_VERSION_2 = {"energy", "energy_sizes", "energy_with_copies", "energy_without_copies"}
# Fields of schema_version 3, which version 2 files lack: unknown there
# (None); validate() takes a version 2 file without them.
ADDED_IN_VERSION_3 = {"path"}
# Names version 4 gave each speedup, by what it is against, and the names
# older files give them: a row's field, the summary's entry, a metric (of
# copy_overlap's pipelined rows).
RENAMED_IN_VERSION_4 = {
    "row": {"speedup": "speedup_over_baseline"},
    "summary": {"speedups": "speedup_over_host"},
    "metrics": {"speedup": "speedup_over_serial"},
}


def _renamed(obj, names):
    """obj (a dict) with its keys of older names under their new ones."""
    if not isinstance(obj, dict) or not names.keys() & obj.keys():
        return obj
    return {names.get(k, k): v for k, v in obj.items()}


def upgraded_row(row, version):
    """A row of a file of schema_version `version` under version 4's names."""
    if not isinstance(version, int) or version >= 4 or not isinstance(row, dict):
        return row
    row = _renamed(row, RENAMED_IN_VERSION_4["row"])
    if isinstance(row.get("metrics"), dict):
        row = dict(row, metrics=_renamed(row["metrics"], RENAMED_IN_VERSION_4["metrics"]))
    return row


def upgraded(doc):
    """A results document (or a journal's head) of an older schema_version
    under version 4's names, its schema_version kept: the scripts and the
    schema know one name for each figure."""
    version = doc.get("schema_version", 1) if isinstance(doc, dict) else None
    if not isinstance(version, int) or version >= 4:
        return doc
    doc = dict(doc)
    if isinstance(doc.get("summary"), dict):
        doc["summary"] = _renamed(doc["summary"], RENAMED_IN_VERSION_4["summary"])
    if isinstance(doc.get("results"), list):
        doc["results"] = [upgraded_row(r, version) for r in doc["results"]]
    return doc


def _is_type(value, name):
    """Whether value is of the JSON type name (1.0 is an integer, True no number)."""
    return _TYPE_TESTS[name](value)


_TYPE_TESTS = {
    "null": lambda v: v is None,
    "boolean": lambda v: v is True or v is False,
    "string": lambda v: isinstance(v, str),
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "integer": lambda v: (isinstance(v, int) and not isinstance(v, bool))
    or (isinstance(v, float) and v.is_integer()),
}

# Signed 64-bit integers, as the binary writes them and the store keeps them
# (SQLite INTEGER): larger ones are no count of anything.
INT_RANGE = (-2 ** 63, 2 ** 63)


def _resolve(ref, defs):
    """The schema a $ref names: "#/$defs/x" in this file, "<kind>.schema.json#/$defs/x" in another."""
    where, _, fragment = ref.partition("#")
    if where:
        defs = schemas()[where.split(".")[0]]["$defs"]
    return defs[fragment.rsplit("/", 1)[1]], defs


def _shown(value):
    return cut(json.dumps(value), 40)


def _checker(schema, defs, made):
    """A function (value, at) -> "<field>: <what>" where value first breaks
    schema, else None: the subset of JSON Schema that schema/*.schema.json
    uses, made once per (sub)schema so that every row of a sweep is checked
    in a few microseconds (a general validator takes a millisecond)."""
    if id(schema) in made:
        return made[id(schema)]
    made[id(schema)] = lambda v, at: check(v, at)  # refers ahead: a schema may hold itself
    if "$ref" in schema:
        check = _checker(*_resolve(schema["$ref"], defs), made)
        made[id(schema)] = check
        return check
    tests = []
    for key in ("anyOf", "oneOf"):
        if key in schema:
            alternatives = [_checker(s, defs, made) for s in schema[key]]
            nullable = {"type": "null"} in schema[key]

            def any_of(v, at, alternatives=alternatives, nullable=nullable):
                if v is None and nullable:
                    return None
                found = []
                for alternative in alternatives:
                    problem = alternative(v, at)
                    if problem is None:
                        return None
                    found.append(problem)
                return min(found, key=len)
            tests.append(any_of)
    names = ()
    if "type" in schema:
        names = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        first, *others = [_TYPE_TESTS[n] for n in names]

        def of_type(v, at):
            if first(v) or any(t(v) for t in others):
                return None
            return f"{at or '(top)'}: {_shown(v)} is not of type {' or '.join(names)}"
        tests.append(of_type)
    if "enum" in schema:
        allowed = schema["enum"]
        tests.append(lambda v, at: None if v in allowed else
                     f"{at or '(top)'}: {_shown(v)} is not one of {json.dumps(allowed)}")
    if "const" in schema:
        const = schema["const"]
        tests.append(lambda v, at: None if v == const else
                     f"{at or '(top)'}: {_shown(v)} is not {json.dumps(const)}")
    low, above = schema.get("minimum"), schema.get("exclusiveMinimum")

    def number(v, at):
        if not isinstance(v, (int, float)) or isinstance(v, bool):
            return None
        if low is not None and v < low:
            return f"{at or '(top)'}: {v} is less than the minimum of {low}"
        if above is not None and v <= above:
            return f"{at or '(top)'}: {v} is not above {above}"
        if isinstance(v, int) and not INT_RANGE[0] <= v < INT_RANGE[1]:
            return f"{at or '(top)'}: {_shown(v)} is beyond a 64-bit integer"
        return None
    if low is not None or above is not None or not names or "integer" in names:
        tests.append(number)
    if "maxLength" in schema:
        longest = schema["maxLength"]
        tests.append(lambda v, at: None if not isinstance(v, str) or len(v) <= longest else
                     f"{at or '(top)'}: a text of {len(v)} characters, more than {longest}")
    if "pattern" in schema:
        pattern = re.compile(schema["pattern"])
        tests.append(lambda v, at: None if not isinstance(v, str) or pattern.search(v) else
                     f"{at or '(top)'}: {_shown(v)} does not match {pattern.pattern}")
    if "properties" in schema or "required" in schema or "additionalProperties" in schema:
        props = {k: _checker(v, defs, made) for k, v in schema.get("properties", {}).items()}
        required = [k for k in schema.get("required", ())
                    if k not in ADDED_IN_VERSION_2 | ADDED_IN_VERSION_3]
        extra = schema.get("additionalProperties", True)
        extra = extra if isinstance(extra, bool) else _checker(extra, defs, made)

        def fields(v, at):
            if not isinstance(v, dict):
                return None
            for name in required:
                if name not in v:
                    return f"{at or '(top)'}: {name!r} is missing"
            for name, x in v.items():
                check = props.get(name, extra)
                if check is False:
                    return f"{at or '(top)'}: {_shown(name)} is not one of its fields"
                if check is not True:
                    problem = check(x, f"{at}/{name}" if at else name)
                    if problem:
                        return problem
            return None
        tests.append(fields)
    if "if" in schema:
        when, then = _checker(schema["if"], defs, made), _checker(schema["then"], defs, made)
        tests.append(lambda v, at: then(v, at) if isinstance(v, dict) and when(v, at) is None
                     else None)
    if "items" in schema:
        item = _checker(schema["items"], defs, made)

        def items(v, at):
            if not isinstance(v, list):
                return None
            for i, x in enumerate(v):
                problem = item(x, f"{at}/{i}" if at else str(i))
                if problem:
                    return problem
            return None
        tests.append(items)

    def check(v, at):
        for test in tests:
            problem = test(v, at)
            if problem:
                return problem
        return None
    if len(tests) == 1:
        check = tests[0]
    made[id(schema)] = check
    return check


_CHECKERS = {}


def first_problem(doc, kind="results", part=None, at=""):
    """The first way doc breaks schema/<kind>.schema.json (or its
    $defs/<part>, found at `at` in its file), "<field>: <what>", or None:
    what the scripts check of every file they read, without jsonschema."""
    if (kind, part) not in _CHECKERS:
        schema = schemas()[kind]
        _CHECKERS[kind, part] = _checker(schema["$defs"][part] if part else schema,
                                         schema["$defs"], {})
    return _CHECKERS[kind, part](doc, at)


def csv_columns():
    """results.csv's columns, as the schema's row names them: a column per
    property of a row, but the limit as limit_<field>, the stats as
    <phase>_<stat> (the medians are the row's <phase>_ms), per_rank left out;
    parameters and metrics are their objects as JSON text, the energy the
    row's own side's figures ($defs/energy_columns)."""
    results = schemas()["results"]["$defs"]
    columns = []
    for name in results["row"]["properties"]:
        if name == "stats":
            columns += [f"{phase}_{stat}" for phase in results["row"]["properties"]["stats"]["properties"]
                        for stat in results["phase"]["properties"] if stat != "median_ms"]
        elif name == "limit":
            columns += [f"limit_{field}" for field in results["limit"]["properties"]]
        elif name == "energy":
            columns += list(results["energy_columns"]["properties"])
        elif name != "per_rank":
            columns.append(name)
    return columns


def _types(schema):
    """The JSON types a (sub)schema allows, as far as a CSV cell needs them."""
    if "type" in schema:
        return set(schema["type"]) if isinstance(schema["type"], list) else {schema["type"]}
    if "anyOf" in schema:
        return set().union(*(_types(s) for s in schema["anyOf"]))
    if "enum" in schema:
        return {"string"}
    return {"object"}  # a $ref: the limit


# A number as JSON writes it (Python's int() and float() also take "nan",
# "inf", " 1", "1_000").
JSON_INTEGER = re.compile(r"-?(0|[1-9][0-9]*)")
JSON_NUMBER = re.compile(r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")


def _cell(text, types):
    """A CSV cell as the JSON value of a property of these types; text that
    is none of them stays text, for the schema to name."""
    if text == "" and ("null" in types or types == {"object"}):
        return None
    try:
        if "object" in types:
            return json.loads(text, parse_constant=_no_constant, parse_float=_finite)
        if "integer" in types and JSON_INTEGER.fullmatch(text):
            return int(text)
        if "number" in types and JSON_NUMBER.fullmatch(text):
            return _finite(text)
    except (ValueError, RecursionError):
        pass
    if "boolean" in types:
        return {"true": True, "false": False}.get(text, text)
    return text


def csv_problems(path):
    """Where a results.csv breaks the schema: its header against
    csv_columns(), then each line read back into a row (cells as the
    schema's types, the limit and stats put together again) and validated."""
    import csv
    results = schemas()["results"]["$defs"]
    props = results["row"]["properties"]
    try:
        reader = csv.reader(io.StringIO(read_text(path, "results.csv"), newline=""))
        lines = [(reader.line_num, cells) for cells in reader if cells]
    except NotAFile:
        raise
    except (ResultsError, csv.Error) as e:
        return [str(e) if isinstance(e, ResultsError) else f"{path}:{reader.line_num}: not CSV ({e})"]
    # A file of version 3 or older names the row's speedup otherwise.
    header = [RENAMED_IN_VERSION_4["row"].get(h, h) for h in lines[0][1]] if lines else []
    expected = csv_columns()
    problems = []
    if sorted(header) != sorted(expected):
        problems.append(f"{path}: columns {sorted(set(header) - set(expected))[:10]} are not the "
                        f"schema's, and {sorted(set(expected) - set(header))[:10]} are missing")
        return problems
    phases = props["stats"]["properties"]
    for i, cells in lines[1:]:
        if len(cells) != len(header):
            problems.append(f"{path}:{i}: {len(cells)} cells, the header has {len(header)} columns")
            continue
        cells = dict(zip(header, cells))
        row = {k: _cell(v, _types(props[k])) for k, v in cells.items() if k in props}
        limit = {k[len("limit_"):]: cells[k] for k in cells if k.startswith("limit_") and cells[k]}
        if "value" in limit:
            limit["value"] = _cell(limit["value"], {"number"})
        row["limit"] = limit or None
        row["stats"] = {p: {"median_ms": row[f"{p}_ms"],
                            **{s: _cell(cells[f"{p}_{s}"], {"number", "null"})
                               for s in results["phase"]["properties"] if s != "median_ms"}}
                        for p in phases}
        row["per_rank"] = []
        row["energy"] = None  # its columns are checked as $defs/energy_columns
        energy = {k: _cell(cells[k], _types(v)) for k, v in results["energy_columns"]["properties"].items()}
        problems += [f"{path}:{i}: {e}" for e in validate(row, "results", "row")]
        problems += [f"{path}:{i}: {e}" for e in validate(energy, "results", "energy_columns")]
    return problems


def _json_problems(path, doc, kind, what):
    """Where one JSON document breaks schema/<kind>.schema.json: its version
    first (one problem naming it), then each field, "<path>: <field>: <what>"."""
    try:
        check_version(doc, path, what)
    except ResultsError as e:
        return [str(e)]
    if kind == "results":
        doc = upgraded(doc)
    problems = validate(doc, kind)
    # What jsonschema does not check: integers past 64 bits.
    beyond = None if problems else first_problem(doc, kind)
    return [f"{path}: {e}" for e in problems + [beyond] * bool(beyond)]


def journal_lines(path):
    """A journal's head (its first line: version and provenance) and its
    updates, [(line number, update)]. A last line cut short by a kill is
    left out (what came before stands); any other line that is not an update
    {"first": n, "rows": [...]} carrying on from the rows before it is a
    ResultsError naming it: rows are never dropped without a word."""
    lines = read_text(path, "portalab journal", errors="replace").split("\n")
    head = parse_json(lines[0], f"{path}:1", "portalab journal")
    if not isinstance(head, dict) or not isinstance(head.get("provenance"), dict):
        raise ResultsError(f"{path}:1: not a portalab journal (no provenance on its first line)")
    check_version(head, path, "journal")
    body = [(i, line) for i, line in enumerate(lines[1:], start=2) if line]
    updates, count = [], 0
    for k, (i, line) in enumerate(body):
        try:
            update = parse_json(line, f"{path}:{i}", "journal line")
        except ResultsError:
            if i == len(lines):
                break  # the last line, with no end: cut short by a kill
            raise
        first = update.get("first") if isinstance(update, dict) else None
        if not isinstance(first, int) or isinstance(first, bool) \
                or not isinstance(update.get("rows"), list) or not 0 <= first <= count:
            raise ResultsError(f"{path}:{i}: not an update {{\"first\": 0 to {count}, "
                               f"\"rows\": [...]}} of the {count} rows before it")
        count = first + len(update["rows"])
        updates.append((i, update))
    return head, updates


def journal_problems(path):
    """Where a journal (results.jsonl) breaks the schema: its first line (the
    version and the provenance), then every row of every update. A last line
    cut short by a kill is left out, as read_journal() leaves it."""
    try:
        head, updates = journal_lines(path)
    except NotAFile:
        raise
    except ResultsError as e:
        return [str(e)]
    problems = [f"{path}:1: {e}"
                for e in validate(head.get("provenance"), "results", "provenance", "provenance")]
    for i, update in updates:
        for j, row in enumerate(update["rows"]):
            problems += [f"{path}:{i}: {e}" for e in validate(row, "results", "row", f"rows/{j}",
                                                              head.get("schema_version"))]
    return problems


def file_problems(path):
    """Where one file portalab wrote breaks its schema, "<file>: <field>:
    <what>" each: results.json, its journal results.jsonl, results.csv, or
    any other .json holding "calibration" (a limits file); [] for a file of
    none of these kinds. Needs python3-jsonschema."""
    name = os.path.basename(path)
    if name == JOURNAL:
        return journal_problems(path)
    if name.endswith(".csv"):
        return csv_problems(path) if name == "results.csv" else []
    if not name.endswith(".json"):
        return []
    try:
        doc = read_json(path, "JSON file")
    except NotAFile:
        raise
    except ResultsError as e:
        # Not JSON as portalab writes it: a problem of a results file, or of
        # a calibration file when a laxer reading (NaN taken) finds one.
        try:
            lax = json.loads(read_text(path, "JSON file"))
        except (ResultsError, ValueError, RecursionError):
            lax = None
        calibration = isinstance(lax, dict) and "calibration" in lax
        return [str(e)] if name == "results.json" or calibration else []
    if name == "results.json":
        return _json_problems(path, doc, "results", "results file")
    if isinstance(doc, dict) and "calibration" in doc:
        return _json_problems(path, doc, "limits", "calibration file")
    return []


def walk(folder):
    """os.walk, sorted, a folder that cannot be listed a ResultsError (not
    skipped without a word)."""
    def refuse(e):
        raise ResultsError(f"{e.filename}: cannot list this folder ({e.strerror})")
    for root, dirs, names in os.walk(folder, onerror=refuse):
        dirs.sort()
        yield root, dirs, sorted(names)


def written_files(paths, newer_than=None):
    """The files portalab writes (results.json, results.jsonl, results.csv,
    other .json) named by paths, folders searched; with newer_than (seconds
    since the epoch), those changed since then only."""
    found = []
    for p in paths:
        if os.path.isdir(p):
            for root, dirs, names in walk(p):
                found += [os.path.join(root, n) for n in sorted(names)
                          if n in (JOURNAL, "results.csv") or n.endswith(".json")]
        elif os.path.lexists(p):
            try:
                what = not_a_file(os.stat(p).st_mode)
            except OSError as e:
                raise NotAFile(f"{p}: cannot read it ({e.strerror})") from e
            if what:
                raise NotAFile(f"{p}: {what}, not a file")
            found.append(p)
        else:
            raise NotAFile(f"{p}: no such file or folder")
    return [f for f in found if newer_than is None or os.lstat(f).st_mtime >= newer_than]


def have_jsonschema():
    try:
        import jsonschema  # noqa: F401
        return True
    except ImportError:
        return False


def check_files(*paths):
    """For the tests of runs: every file portalab wrote under paths validated
    against schema/ (where python3-jsonschema is installed); ResultsError
    listing every problem, each naming the file and the field."""
    if not have_jsonschema():
        return
    problems = [p for f in written_files(paths) for p in shown(file_problems(f))]
    if problems:
        raise ResultsError("files that break schema/*.schema.json:\n" + "\n".join(problems))


def shown(problems, most=10):
    """A file's first problems, and how many more (a field wrong in every row
    is one mistake, not hundreds)."""
    return problems[:most] + [f"... and {len(problems) - most} more"] * (len(problems) > most)


def find_results(paths):
    """The results.json files named by paths: files as given, folders searched
    recursively (a Slurm job's results/<job id>/ holds one per deck)."""
    files = []
    for p in paths:
        if os.path.isdir(p):
            found = []
            for root, dirs, names in walk(p):
                # A run killed before its first full file has its journal only.
                if "results.json" in names or JOURNAL in names:
                    found.append(os.path.join(root, "results.json"))
            if not found:
                raise ResultsError(f"{p}: no results.json below this folder")
            files += found
        elif os.path.lexists(p) or os.path.lexists(os.path.join(os.path.dirname(p), JOURNAL)):
            files.append(p)  # read_bytes() names what it is if not a file
        else:
            raise ResultsError(f"{p}: no such file or folder")
    return files


# Parameters of named choices that files before 2026-11-26 held as numbers
# (scaling 0): read as their names, so that old and new rows compare.
NAMED_CHOICES = {("dot_distributed", "scaling"): ("strong", "weak")}


def flatten(row, run, devices):
    out = {k: v for k, v in row.items() if k != "stats"}
    out["parameters"] = dict(out.get("parameters") or {})
    for name, value in out["parameters"].items():
        choices = NAMED_CHOICES.get((out.get("experiment"), name))
        if choices and isinstance(value, int) and 0 <= value < len(choices):
            out["parameters"][name] = choices[value]
    out.setdefault("ranks", 1)
    out.setdefault("path", None)  # version 2: not recorded, unknown
    for phase in PHASES:
        stats = row.get("stats", {}).get(phase, {})
        for s in STATS:
            out[f"{phase}_{s}"] = stats.get(s)
    out["hostname"] = run["hostname"]
    out["device"] = devices.get(row["space"], "")
    out.update({k: run[k] for k in RUN_FIELDS})
    return out


JOURNAL = "results.jsonl"


def read_journal(path):
    """The document a run's journal (results.jsonl) holds: its provenance and
    every row it recorded, each update's rows replacing those from its
    "first" on. A last line cut short by a kill is left out."""
    head, updates = journal_lines(path)
    prov = head["provenance"]
    rows = []
    for _, update in updates:
        rows[update["first"]:] = update["rows"]
    counts = {c: sum(isinstance(r, dict) and r.get("check") == c for r in rows)
              for c in ("PASS", "FAIL", "ERROR", "SKIPPED", "N/A")}
    summary = {"entries": len(rows), "failed": counts["FAIL"], "errors": counts["ERROR"],
               "skipped": counts["SKIPPED"], "not_applicable": counts["N/A"],
               "incomplete": "the run did not finish: rows read from its journal"}
    return upgraded({"schema_version": head["schema_version"], "provenance": prov,
                     "summary": summary, "results": rows})


def read_document(path):
    """results.json as a run left it: while a journal lies beside it, the run
    did not finish (killed, or its files could not be written) and the
    journal holds every completed entry, results.json perhaps fewer."""
    return _read_document(path)[0]


def _read_document(path):
    """(read_document(path), the file it was read from)."""
    journal = os.path.join(os.path.dirname(path), JOURNAL)
    if os.path.basename(path) == JOURNAL:
        return read_journal(path), path
    if os.path.lexists(journal):
        try:
            return read_journal(journal), journal
        except ResultsError:
            if not (os.path.isfile(journal) and os.path.getsize(journal) == 0
                    and os.path.lexists(path)):
                raise
            # a journal begun but empty: results.json stands
    return upgraded(check_version(read_json(path), path)), path


def load_document(path):
    """read_document, for a script: a file that cannot be read, or of
    another schema_version, stops it with one line (fail(): exit status 2).
    Its rows are not checked against the schema (read_run() checks them)."""
    try:
        return read_document(path)
    except ResultsError as e:
        fail(str(e))


def load_run(path):
    """The document of one run (read_run(): its journal if it did not
    finish, checked against the schema), for a script: a file that cannot
    be read or breaks the schema stops it with one line (fail()), and a run
    that did not finish is named on stderr (tell_incomplete())."""
    try:
        doc, _ = read_run(path)
    except ResultsError as e:
        fail(str(e))
    tell_incomplete([(path, doc)])
    return doc


def read_run(path, check=True):
    """(document, flattened rows) of one results.json (or of its run's
    journal), checked against the schema: the first field that breaks it is
    a ResultsError naming the file and the field. check=False: only the
    shape the rows need, for a script whose inputs need not be complete
    files (energy_check.py)."""
    doc, source = _read_document(path)  # a ResultsError (another version) as it is
    if not isinstance(doc, dict):
        raise ResultsError(f"{source}: not a portalab results.json (not a JSON object)")
    for key in ("provenance", "results"):
        if key not in doc:
            raise ResultsError(f"{source}: not a portalab results.json (no '{key}' in it)")
    problem = document_problem(doc) if check else None
    if problem:
        raise ResultsError(f"{source}: {problem}")
    try:
        return doc, rows_of(path, doc["provenance"], doc["results"])
    except KeyError as e:
        raise ResultsError(f"{source}: not a portalab results.json (no {e} in it)") from e
    except (ValueError, TypeError, AttributeError) as e:
        raise ResultsError(f"{source}: not a portalab results.json ({e})") from e


def document_problem(doc):
    """The first way a results document breaks its schema, as the scripts
    read it: a summary made from a journal is the scripts' own, left out."""
    rows = doc["results"]
    if isinstance(doc.get("summary"), dict) and "incomplete" in doc["summary"]:
        problem = first_problem(doc["provenance"], "results", "provenance", "provenance")
    else:
        problem = first_problem(dict(doc, results=[]))
    if problem or not isinstance(rows, list):
        return problem or "results: not a list of rows"
    return next(filter(None, (first_problem(r, "results", "row", f"results/{i}")
                              for i, r in enumerate(rows))), None)


def rows_of(path, prov, rows):
    slurm = prov.get("slurm", {})
    run = {
        "hostname": prov.get("host", {}).get("hostname", ""),
        "job_id": slurm.get("job_id", ""),
        "array_task_id": slurm.get("array_task_id", ""),
        "deck": prov.get("deck", {}).get("path", ""),
        "git_commit": prov.get("portalab", {}).get("git_commit", "")[:12],
        "started_at": prov.get("started_at", ""),
        "source": path,
    }
    devices = {d["space"]: d.get("name", "") for d in prov.get("devices", [])}
    return [flatten(r, run, devices) for r in rows]


def read_file(path):
    """The flattened rows of one results.json (or of its run's journal)."""
    return read_run(path)[1]


def load(paths):
    """Every row of every results.json under paths."""
    rows = []
    for f in find_results(paths):
        rows += read_file(f)
    return rows


def load_runs(paths):
    """(path, document, flattened rows) of every results.json under paths."""
    return [(f, *read_run(f)) for f in find_results(paths)]


def incomplete(path, doc):
    """A sentence naming path when its run did not finish (killed, out of
    disk: its rows those it completed) or was interrupted (entries
    abandoned or not run), else None: every script that reads a run says
    so, as report.py's page does."""
    summary = doc.get("summary") if isinstance(doc, dict) else None
    if not isinstance(summary, dict):
        return None
    if summary.get("incomplete"):
        return (f"{text.shown(path)}: the run did not finish ({text.shown(summary['incomplete'])}):"
                " only the entries it completed are read")
    stop = summary.get("interrupted")
    if isinstance(stop, dict):
        return (f"{text.shown(path)}: the run was interrupted by {text.shown(stop.get('signal'))}: "
                f"{text.shown(stop.get('abandoned', 0))} entries abandoned, "
                f"{text.shown(stop.get('not_run', 0))} not run")
    return None


def fail_without_rows(message, runs):
    """Refuse in one line (fail()): message, and why runs hold fewer rows
    than they should (incomplete()), said here rather than on a line before."""
    why = [w for w in (incomplete(path, doc) for path, doc, *_ in runs) if w]
    fail(message + (f" ({'; '.join(why)})" if why else ""))


def tell_incomplete(runs):
    """incomplete() of each (path, document, ...) of runs, on stderr (say())."""
    for path, doc, *_ in runs:
        why = incomplete(path, doc)
        if why:
            say(why)


def hashable(value):
    """A row's value as a key can hold it: an object (parameters) as its sorted items."""
    return tuple(sorted(value.items())) if isinstance(value, dict) else value


def key_of(row, fields=KEY):
    return tuple(hashable(row[k]) for k in fields)


def newest_per_key(rows):
    """One row per key: that of the most recent run."""
    newest = {}
    for r in rows:
        k = key_of(r)
        if k not in newest or r["started_at"] > newest[k]["started_at"]:
            newest[k] = r
    return list(newest.values())


def sort_key(row):
    # n numerically, the rest as text.
    return tuple(row[k] if k == "n" else str(row[k]) for k in KEY)


def parameters_text(parameters):
    """An experiment's parameters as portalab prints them: "chunks=16 degree=2000"."""
    return " ".join(f"{k}={v}" for k, v in sorted((parameters or {}).items()))


def limit_name(row):
    """The name of the limit a row is held to ("memory", "gemm", "peer", ...), or ""."""
    return (row.get("limit") or {}).get("name", "")


def limit_text(limit):
    """A limit for people, as portalab's tables print it: "memory 4105 GB/s",
    "L2 180 GB/s", "L2 read 210 GB/s" (a level of the space's ladder),
    "gemm 51000 GFLOP/s", "duplex pinned copies 110 GB/s"; "" for none."""
    if not limit:
        return ""
    value = f"{limit['value']:.0f} {limit['unit']}"
    if limit.get("copies"):
        return f"{limit['name']} {limit['copies']} copies {value}"
    if limit["name"] == "allreduce":
        return f"allreduce bus {value}"
    if limit.get("level") and limit["name"] in ("memory", "read"):
        return f"{limit['level']}{' read' if limit['name'] == 'read' else ''} {value}"
    return f"{limit['name']} {value}"


def limit_level(row):
    """The level of its space's ladder a row's working set lives in ("L1",
    "L2", "L3", "memory", "HBM"), as the run named it; "" where none."""
    return (row.get("limit") or {}).get("level", "")


def limit_suspect(row):
    """Why the row, above 105% of its limit, makes the limit suspect; "" when not."""
    return (row.get("limit") or {}).get("suspect", "")


def threads_text(row):
    """A row's threads as portalab's tables print them: the space's, and the
    host library's where it differs ("2 (library 1)") or is not known."""
    threads, library = row.get("threads", ""), row.get("library_threads", 0)
    if library is None:
        return f"{threads} (library: unknown)"
    return str(threads) if library in (0, threads) else f"{threads} (library {library})"


def dtype_bytes(dtype):
    """Bytes of an element of a portalab type name (float32, int64, ...)."""
    digits = "".join(c for c in dtype if c.isdigit())
    return int(digits) // 8 if digits else 8


def passed(row):
    return row.get("check") == "PASS"


# Kokkos' execution spaces that run on the host, in host memory: their copies
# are no copies (copies_alias), and they are what a device is compared with.
HOST_SPACES = ("Serial", "OpenMP", "Threads", "HPX")


def own_energy(row):
    """The row's own energy figures (its GPU's for a device space, else its
    CPU's) where they were measured; else None."""
    e = row.get("energy")
    if not isinstance(e, dict):
        return None
    own = e.get("gpu") if "gpu" in e else e.get("cpu")
    if not isinstance(own, dict) or own.get("joules") is None or not own.get("reps"):
        return None
    return own


def joules_per_rep(row):
    """Joules per repetition over all of them (as the binary's crossover
    counts them: a coarse counter moves in a few), or None."""
    own = own_energy(row)
    return own.get("joules_per_rep") if own else None


def is_host_space(space):
    return space in HOST_SPACES


# The analysis results.json's summary carries, computed once by portalab
# (miniapp/results/analysis.cpp) at the end of a run: the scripts read it and
# never compute it again. Each kind with the fields that name one entry.
ANALYSIS = {
    "gpu_crossover": ("experiment", "variant", "dtype", "device", "ranks"),
    "multi_rank_crossover": ("experiment", "variant", "space", "dtype", "copies", "ranks"),
    "float64_over_float32": ("experiment", "variant", "space", "copies", "n"),
    "speedup_over_host": ("experiment", "variant", "dtype", "space", "ranks"),
    "fusion": ("experiment", "space", "dtype", "ranks", "n"),
}

# The ways a gpu_crossover counts the device's time against the best host
# space's total: its total with pageable copies, with pinned ones, the best
# of both, and its kernel alone (every row's kernel phase, whatever its copies).
CROSSOVER_MODES = {"pageable": "with_pageable_copies", "pinned": "with_pinned_copies",
                   "copies": "with_copies", "none": "without_copies"}

# The fields each kind's entries need beside their key: files of version 2
# lack some (the schema cannot require them of those), so a summary is read
# whole or not at all.
ANALYSIS_VALUES = {
    "gpu_crossover": ("sizes", *CROSSOVER_MODES.values()),
    "multi_rank_crossover": ("sizes", "pays"),
    "float64_over_float32": ("kernel_ratio",),
    "speedup_over_host": ("against", "sizes"),
    "fusion": ("unfused_over_fused",),
}


def missing_analysis(path, doc):
    """None where doc's summary holds the whole analysis; else why not, one
    sentence naming path and the portalab that wrote it."""
    summary = doc.get("summary") if isinstance(doc.get("summary"), dict) else {}
    if all(isinstance(summary.get(kind), list)
           and all(isinstance(e, dict) and e.keys() >= {*fields, *ANALYSIS_VALUES[kind]}
                   for e in summary[kind])
           for kind, fields in ANALYSIS.items()):
        return None
    what = "crossovers, speedups and ratios"
    if summary.get("incomplete"):
        return (f"{text.shown(path)}: the run did not finish ({text.shown(summary['incomplete'])}): "
                f"portalab writes the summary of its {what} at the end of a run, so there are none "
                "to show")
    commit = ((doc.get("provenance") or {}).get("portalab") or {}).get("git_commit") or "unknown"
    return (f"{text.shown(path)}: written by portalab {text.shown(commit[:12])} (schema_version "
            f"{text.shown(doc.get('schema_version', 1))}), before results.json carried the whole summary "
            f"of a run's {what}: they are not shown; run the deck again with this portalab "
            f"to have them")


def analysis(runs):
    """({kind: entries} of ANALYSIS over runs, [missing_analysis sentences]).
    runs: (path, document, rows) as load_runs(). Each entry gets its run's
    hostname; an entry that several runs of one host hold is the newest run's."""
    newest = {kind: {} for kind in ANALYSIS}
    missing = []
    for path, doc, _ in runs:
        why = missing_analysis(path, doc)
        if why:
            missing.append(why)
            continue
        prov = doc["provenance"]
        host = (prov.get("host") or {}).get("hostname", "")
        started = prov.get("started_at", "")
        for kind, fields in ANALYSIS.items():
            for entry in doc["summary"][kind]:
                key = (host, *(hashable(entry.get(f)) for f in fields))
                if key not in newest[kind] or started >= newest[kind][key][0]:
                    newest[kind][key] = (started, dict(entry, hostname=host))
    return {kind: [e for _, e in found.values()] for kind, found in newest.items()}, missing


def describe_pays(p, sizes):
    """A crossover's pays (gpu_crossover, multi_rank_crossover) in words,
    sizes the entry's: "pays from n = 1,000,000", "never pays (n from 1,000
    to 100,000,000)", "not measured"."""
    if not p["measured"]:
        return "not measured"
    if p["smallest_n"] is None:
        return f"never pays (n from {sizes[0]:,} to {sizes[-1]:,})" if sizes else "never pays"
    return f"pays from n = {p['smallest_n']:,}" + (
        "" if p["holds_above"] else ", but not at every larger size")


MATPLOTLIB_NEEDED = ("needs matplotlib to draw: install it (Debian/Ubuntu: apt-get install "
                     "python3-matplotlib; pip: python3 -m pip install matplotlib) or load a "
                     "module that has it.")


def require_matplotlib():
    """matplotlib.pyplot, drawing without a display; without matplotlib, the
    one sentence MATPLOTLIB_NEEDED on stderr and exit status 2 (no traceback)."""
    text.warnings_quoted()  # a name drawn may hold a control character
    try:
        import matplotlib
        matplotlib.use("Agg")  # batch nodes have no display
        import matplotlib.pyplot as plt
    except ImportError:
        fail(MATPLOTLIB_NEEDED)
    return plt


def finite_number(text):
    """An argparse type: a number that is finite ("nan" and "inf", which
    float() takes, are not)."""
    import argparse
    try:
        return _finite(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text[:40]!r} is not a finite number") from None


def say(message, file=None):
    """A message of the script on stderr (or file), "<script>: <message>", one
    line quoted as the run's messages are (text.one_line): a name from a
    file, or a path, cannot retitle or clear the terminal it is read on."""
    print(f"{text.shown(os.path.basename(sys.argv[0]))}: {text.one_line(message)}",
          file=file or sys.stderr)


def fail(message):
    """Bad input: message on stderr, exit status 2 as portalab itself."""
    say(message)
    sys.exit(2)
