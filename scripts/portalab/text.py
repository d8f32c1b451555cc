"""Untrusted text in what the scripts print: a name, host name, CPU model,
job id or path from a results file, a path or an option from the command
line. Echoed raw, an ESC or BEL byte retitles or clears the terminal that
shows it, U+202E reverses what follows it on the line, and a megabyte name is
printed whole. The rule is the run's own (miniapp/support/text.cpp), so that
portalab and its scripts show a name alike; JSON and CSV outputs keep every
value exact and never pass through here.

A str is taken as the bytes it stands for: UTF-8, with the surrogates
Python gives undecodable bytes of a file name (surrogateescape) as those
bytes, so that a folder named b"bad\\xff" is shown "bad\\xff" and never
raises UnicodeEncodeError on the way to the terminal.
"""
import codecs
import re

# The longest value a message shows whole (text.hpp's shown_max_bytes).
SHOWN_MAX_BYTES = 200
# A path a script prints as its output (a file it wrote): quoted, never cut
# (Linux's PATH_MAX).
PATH_MAX_BYTES = 4096
# The longest message (text.hpp's terminal_safe).
MESSAGE_MAX_BYTES = 16384


def _as_bytes(error):
    """An encode error handler: the surrogates of surrogateescape as the
    bytes they stand for, any other lone surrogate as its three bytes (not
    UTF-8, so quoted)."""
    out = bytearray()
    for c in error.object[error.start:error.end]:
        code = ord(c)
        out += bytes([code - 0xdc00]) if 0xdc80 <= code <= 0xdcff else c.encode("utf-8", "surrogatepass")
    return bytes(out), error.end


codecs.register_error("portalab.text", _as_bytes)


def _as_escapes(error):
    """An encode error handler: each surrogate as the \\xNN of the byte it
    stands for (surrogateescape), or of its three bytes."""
    data, end = _as_bytes(error)
    return "".join(f"\\x{b:02x}" for b in data), end


codecs.register_error("portalab.escapes", _as_escapes)


def encoded(text):
    """text as UTF-8 for a file the scripts write (a page, a table): a file
    name's undecodable bytes (surrogateescape) written \\xNN, as a message
    shows them, never raising UnicodeEncodeError and never making the file
    other than UTF-8."""
    return text.encode("utf-8", "portalab.escapes")

# Text that needs no quoting: printable ASCII.
_PLAIN = re.compile(r"[\x20-\x7e]*")
_LEAST = (0, 0, 0x80, 0x800, 0x10000)


def _printable_at(data, i):
    """The length of the UTF-8 character at data[i] when a terminal shows it
    as a character (printable, not a control or a direction override), else 0."""
    c = data[i]
    if 0x20 <= c < 0x7f:
        return 1
    if c < 0xc2 or c > 0xf4:
        return 0  # no lead byte of UTF-8
    length = 4 if c >= 0xf0 else 3 if c >= 0xe0 else 2
    if i + length > len(data):
        return 0
    code = c & (0x7f >> length)
    for k in range(1, length):
        if data[i + k] & 0xc0 != 0x80:
            return 0
        code = (code << 6) | (data[i + k] & 0x3f)
    # Overlong forms, surrogates and beyond U+10FFFF are no UTF-8.
    if code < _LEAST[length] or 0xd800 <= code <= 0xdfff or code > 0x10ffff:
        return 0
    # C1 controls (U+009B is a terminal's CSI); the bidirectional overrides
    # and isolates reorder what follows them on the line.
    if code < 0xa0 or 0x202a <= code <= 0x202e or 0x2066 <= code <= 0x2069:
        return 0
    return length


_NAMED = {ord("\n"): "\\n", ord("\t"): "\\t", ord("\r"): "\\r"}


def _quote(data, keep_lines):
    out = []
    i = 0
    while i < len(data):
        c = data[i]
        if keep_lines and c in (0x0a, 0x09):
            out.append(chr(c))
            i += 1
            continue
        n = _printable_at(data, i)
        if n:
            out.append(data[i:i + n].decode("utf-8"))
            i += n
        else:
            out.append(_NAMED.get(c) or f"\\x{c:02x}")
            i += 1
    return "".join(out)


def _cut_at(data, most):
    """Where to cut data to keep at most `most` bytes: not inside a UTF-8 character."""
    if len(data) <= most:
        return len(data)
    at = most
    while at > 0 and data[at] & 0xc0 == 0x80:
        at -= 1
    return at


# The characters of a str that _quote() would not keep, one regular
# expression (a str holds valid UTF-8 but for its surrogates): quoting a
# page or a long message goes at the speed of re.sub, not of a loop.
_UNSHOWN = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_UNSHOWN_KEEPING_LINES = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def _quote_char(match):
    return "".join(_NAMED.get(b) or f"\\x{b:02x}"
                   for b in match.group().encode("utf-8", "portalab.text"))


def _bytes(text):
    if isinstance(text, (bytes, bytearray)):
        return bytes(text)
    return str(text).encode("utf-8", "portalab.text")


def shown(text, max_bytes=SHOWN_MAX_BYTES):
    """text (str, bytes, or anything str() takes) as a message shows it:
    control bytes, DEL, C1 controls, invalid UTF-8 and the bidirectional
    overrides as \\xNN (\\n, \\t and \\r for those), text past max_bytes cut
    at a character's start and followed by "... (N bytes)". Printable text,
    UTF-8 included, is left as it is."""
    if isinstance(text, str) and len(text) <= max_bytes and _PLAIN.fullmatch(text):
        return text
    data = _bytes(text)
    keep = _cut_at(data, max_bytes)
    out = _quote(data[:keep], False)
    return out + f"... ({len(data)} bytes)" if keep < len(data) else out


def page_safe(page):
    """A whole page (HTML, its inline SVG) with every character a terminal
    or a browser would act on quoted as shown() quotes it, its line breaks
    and tabs kept, nothing cut: HTML escapes <, & and quotes, not ESC, BEL or
    U+202E, and `cat page.html` must not paint the terminal either."""
    return _UNSHOWN_KEEPING_LINES.sub(_quote_char, page)


def warnings_quoted():
    """Python's warnings (matplotlib's "Glyph 27 (\\x1b) missing", which
    holds the character itself) printed quoted, as any message of a script."""
    import sys
    import warnings

    def show(message, category, filename, lineno, file=None, line=None):
        (file or sys.stderr).write(terminal_safe(
            warnings.formatwarning(message, category, filename, lineno, line)))
    warnings.showwarning = show


def terminal_safe(message, max_bytes=MESSAGE_MAX_BYTES):
    """A whole message (its line breaks and tabs kept) made safe for a
    terminal: each line quoted as shown() quotes it, the message cut past
    max_bytes. The last guard of what a script prints."""
    data = _bytes(message)
    keep = _cut_at(data, max_bytes)
    out = _quote(data[:keep], True)
    return out + f"... ({len(data)} bytes; the rest not shown)\n" if keep < len(data) else out


def one_line(message, max_bytes=MESSAGE_MAX_BYTES):
    """A message kept to one line (a refusal: scripts print one line on
    stderr), its line breaks quoted as \\n, cut past max_bytes."""
    return shown(message, max_bytes)
