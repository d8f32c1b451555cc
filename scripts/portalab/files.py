"""Every file the scripts read or write: a path that is not a regular file
refused (a FIFO would hang the read, a link would be written through),
sizes bounded, JSON as portalab writes it, writes atomic."""

import json
import os
import re
import stat

from portalab import text
from portalab.cli import finite, fail


class ResultsError(Exception):
    """A file that is not a portalab results.json, or no file at all."""


class NotAFile(ResultsError):
    """A path that cannot be read as a file: missing, unreadable, a folder,
    a FIFO, a device."""


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


def no_json_constant(name):
    raise ValueError(f"{name} is not a number JSON allows")


def parse_json(text, path, what):
    """JSON as portalab writes it: NaN, Infinity and numbers beyond a
    double's range refused (Python's json takes them), as is nesting too deep
    to read; ResultsError naming path and where."""
    try:
        return json.loads(text, parse_constant=no_json_constant, parse_float=finite)
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


def walk(folder):
    """os.walk, sorted, a folder that cannot be listed a ResultsError (not
    skipped without a word)."""
    def refuse(e):
        raise ResultsError(f"{e.filename}: cannot list this folder ({e.strerror})")
    for root, dirs, names in os.walk(folder, onerror=refuse):
        dirs.sort()
        yield root, dirs, sorted(names)
