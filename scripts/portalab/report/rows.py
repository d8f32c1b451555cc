"""The loaded rows as the page reads them: selected, grouped, ordered and
labelled."""
from portalab import results as pr
from portalab.report.blocks import num, pct


# ---- Rows --------------------------------------------------------------------

def measured(r):
    return r["check"] in ("PASS", "FAIL") and r.get("total_ms") is not None


def metric(r, name):
    return (r.get("metrics") or {}).get(name)


def experiments_in(rows):
    """Experiments in the order the runs measured them."""
    return list(dict.fromkeys(r["experiment"] for r in rows))


def ordered(values, order=None):
    values = set(values)
    first = [v for v in (order or []) if v in values]
    return first + sorted(values - set(first), key=str)


def by(rows, **match):
    return [r for r in rows if all(r.get(k) == v for k, v in match.items())]


def groups(rows, *fields):
    """{(values of fields): [rows]} in one pass (one field: its value), the
    rows of each in their order: never by() once per key (a sweep of tens
    of thousands of rows made that quadratic)."""
    out = {}
    for r in rows:
        key = tuple(pr.hashable(r.get(f)) for f in fields)
        out.setdefault(key if len(fields) > 1 else key[0], []).append(r)
    return out


def host_rows(rows):
    return [r for r in rows if pr.is_host_space(r["space"])]


def device_spaces(rows):
    return ordered({r["space"] for r in rows if not pr.is_host_space(r["space"])})


def one_copy_mode(rows):
    """Host spaces have no copies (the mirror is the data): of their copy
    modes keep one row per entry, the fastest that passed (else the first),
    as copies "none", so that figures and tables show each host entry once."""
    keep, at = [], {}  # at: where the entry's row is in keep
    for r in rows:
        if not pr.is_host_space(r["space"]):
            keep.append(r)
            continue
        k = (r["hostname"], r["space"], r["experiment"], r["variant"], r["dtype"], r["n"],
             r["ranks"], pr.hashable(r["parameters"]))
        if k not in at:
            at[k] = len(keep)
            keep.append(dict(r, copies="none"))
        elif r["check"] == "PASS" and (keep[at[k]]["check"] != "PASS"
                                       or r["total_ms"] < keep[at[k]]["total_ms"]):
            keep[at[k]] = dict(r, copies="none")
    return keep


def series_label(r, many_hosts):
    name = f"{r['hostname']}/{r['space']}" if many_hosts else r["space"]
    copies = "" if pr.is_host_space(r["space"]) else f" {r['copies']}"
    ranks = f" {r['ranks']} ranks" if r["ranks"] != 1 else ""
    return f"{name} {r['variant']}{copies}{ranks}"


def many_hosts(rows):
    return len({r["hostname"] for r in rows}) > 1


def limit_rate(r):
    return (f"{num(r['gflops'])} GFLOP/s" if pr.limit_name(r) == "gemm"
            else f"{num(r['gbps'])} GB/s")


def limit_share(r):
    """A row's share of its limit for a table: "92%", "463% (suspect limit)"
    where the run found the limit suspect (the reason is in the row's
    limit), "-" where none."""
    if not r.get("pct_of_limit"):
        return "-"
    return pct(r["pct_of_limit"]) + (" (suspect limit)" if pr.limit_suspect(r) else "")


def pr_copies_order(c):
    return ("pageable", "pinned", "none").index(c) if c in ("pageable", "pinned", "none") else 9
