"""The page's parts (sections of sentences, lists, tables and warnings, which
the template renders) and numbers in words."""
import re


# ---- Numbers in words --------------------------------------------------------

def num(v, digits=3):
    """3 significant digits, no exponent below a million, thousands grouped."""
    if v is None:
        return "-"
    if v == 0:
        return "0"
    if abs(v) >= 1000:
        return f"{v:,.0f}" if abs(v) < 1e7 else f"{v:.{digits}g}"
    return f"{v:.{digits}g}"


def size(n):
    return f"{n:,}"


def times(x):
    if x is None:
        return "-"
    return f"{x:.2f}×" if x < 10 else f"{x:.3g}×"


def pct(x):
    return f"{100 * x:.0f}%" if x is not None else "-"


def count(k, one, many=None):
    """'1 row', '3 rows'."""
    return f"{k} {one if k == 1 else many or one + 's'}"


def join(words):
    words = list(words)
    if len(words) < 2:
        return "".join(words)
    return ", ".join(words[:-1]) + " and " + words[-1]


# ---- The page's parts ----------------------------------------------------------
# A section holds blocks: sentences, tables, figures (an SVG with its table
# beside it) and warnings; the template renders each kind.

def section(id_, title, *blocks, lead=""):
    return {"id": id_, "title": title, "lead": lead, "blocks": [b for b in blocks if b]}


def text(*sentences):
    sentences = [s for s in sentences if s]
    return {"kind": "text", "sentences": sentences} if sentences else None


def bullets(items):
    items = list(items)
    return {"kind": "list", "entries": items} if items else None


def warning(*sentences):
    sentences = [s for s in sentences if s]
    return {"kind": "warning", "sentences": sentences} if sentences else None


def table(head, rows, caption="", numeric=None):
    """numeric: the columns to right-align (default: those after the first
    whose cells look like numbers)."""
    if not rows:
        return None
    if numeric is None:
        numeric = {i for i in range(1, len(head))
                   if all(re.fullmatch(r"[-+0-9.,×%e ]*", str(r[i])) for r in rows)}
    return {"kind": "table", "head": head, "rows": [[str(c) for c in r] for r in rows],
            "caption": caption, "numeric": sorted(numeric)}
