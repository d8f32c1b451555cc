"""A row as the scripts group it: what one measurement is (its key), the
newest of each, and its fields as portalab's tables print them."""


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
