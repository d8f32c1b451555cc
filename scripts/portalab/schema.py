"""The formats, schema/results.schema.json and schema/limits.schema.json
(docs/results-schema.md): validate() checks a document with jsonschema,
first_problem() the subset every script checks of every file without it."""

import json
import os
import re

from portalab.upgrade import ADDED_IN_VERSION_2, ADDED_IN_VERSION_3, upgraded, upgraded_row


# schema/ beside scripts/, in the source tree and installed (share/portalab/);
# this file is scripts/portalab/schema.py.
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
    <phase>_<stat> (the medians are the row's <phase>_ms), per_rank and
    repetitions left out;
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
        elif name not in ("per_rank", "repetitions"):
            columns.append(name)
    return columns


def json_types(schema):
    """The JSON types a (sub)schema allows, as far as a CSV cell needs them."""
    if "type" in schema:
        return set(schema["type"]) if isinstance(schema["type"], list) else {schema["type"]}
    if "anyOf" in schema:
        return set().union(*(json_types(s) for s in schema["anyOf"]))
    if "enum" in schema:
        return {"string"}
    return {"object"}  # a $ref: the limit
