"""What a newcomer types: every path, command and option answered with the
real reason, the same way in every command, exit status 2 for bad input.

    PORTALAB=build/host/portalab python3 tests/reliability/test_input.py [TestClass...]

Each case runs the real binary; all but two stop before Kokkos starts.
"""
import json
import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_reliability import DECK, ENV, compiled_spaces  # noqa: E402

from portalab import results as portalab_results  # noqa: E402  (scripts/, on the path test_reliability set)

DEVICE_BUILD = bool(os.environ.get("PORTALAB_DEVICE_BUILD"))


def portalab(*args, env=ENV, cwd=None, **kw):
    return subprocess.run([os.path.abspath(os.environ["PORTALAB"]), *args], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=120, **kw)


class Case(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="portalab_input_")
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def path(self, name):
        return os.path.join(self.tmp, name)

    def assert_bad_input(self, p, *said):
        self.assertEqual(p.returncode, 2, p.stdout[-1000:] + p.stderr[-2000:])
        for s in said:
            self.assertIn(s, p.stderr)
        self.assertNotIn("Kokkos::abort", p.stderr)
        self.assertNotIn("A subcommand is required", p.stderr)


class PathTest(Case):
    """A path that exists but is no deck file is named for what it is, before
    the deck is read, in a run, a dry run, and as a calibration file; a pipe
    is never opened (it would block)."""

    def refused(self, path, reason, what="a deck file"):
        for extra in ([], ["--dry-run"]):
            with self.subTest(path=path, extra=extra):
                p = portalab("run", path, *extra)
                self.assert_bad_input(p, f"deck '{path}': {reason}")
                self.assertNotIn("no such file", p.stderr)
        if what:
            p = portalab("run", DECK, "--calibration", path)
            self.assert_bad_input(p, f"{path}: {reason}".replace("a deck file", what))

    def test_folder(self):
        self.refused(self.tmp, "a folder, not a deck file", "a calibration file")
        # By name: a folder is no deck, and the search goes on, saying so.
        os.mkdir(self.path("mydeck"))
        p = portalab("run", "mydeck", cwd=self.tmp)
        self.assert_bad_input(p, "deck 'mydeck': no deck file; looked in this order at "
                                 "mydeck (a folder), mydeck.toml, ")

    def test_character_device(self):
        self.refused("/dev/zero", "a character device, not a deck file", "a calibration file")

    def test_fifo(self):
        fifo = self.path("deck.toml")
        os.mkfifo(fifo)
        self.refused(fifo, "a named pipe (FIFO), not a deck file", "a calibration file")

    def test_socket(self):
        sock = socket.socket(socket.AF_UNIX)
        self.addCleanup(sock.close)
        sock.bind(self.path("deck.toml"))
        self.refused(self.path("deck.toml"), "a socket, not a deck file", "a calibration file")

    def test_broken_symlink(self):
        os.symlink(self.path("gone.toml"), self.path("deck.toml"))
        self.refused(self.path("deck.toml"),
                     f"a symbolic link to '{self.path('gone.toml')}', which does not exist")

    def test_symlink_loop(self):
        os.symlink(self.path("b.toml"), self.path("a.toml"))
        os.symlink(self.path("a.toml"), self.path("b.toml"))
        self.refused(self.path("a.toml"), "a loop of symbolic links")

    def test_path_through_a_file(self):
        with open(self.path("a_file"), "w"):
            pass
        self.refused(self.path("a_file/deck.toml"),
                     f"'{self.path('a_file')}' in it is a file, not a folder")

    def test_file_without_read_permission(self):
        deck = self.path("deck.toml")
        shutil.copy(DECK, deck)
        os.chmod(deck, 0)
        preexec = None
        if os.geteuid() == 0:
            # Root reads a file of mode 000: the run is made as an
            # unprivileged user instead, where the system allows it.
            try:
                nobody = pwd.getpwnam("nobody")
            except KeyError:
                self.skipTest("running as root, and there is no user 'nobody' to run as")
            os.chmod(self.tmp, 0o755)

            def preexec():
                os.setgid(nobody.pw_gid)
                os.setuid(nobody.pw_uid)
            try:
                probe = portalab("--version", preexec_fn=preexec)
            except (PermissionError, subprocess.SubprocessError) as e:
                self.skipTest(f"running as root, and cannot run as 'nobody': {e}")
            if probe.returncode != 0:
                self.skipTest("running as root, and 'nobody' cannot run the binary: "
                              + probe.stderr[-300:])
        for extra in ([], ["--dry-run"]):
            p = portalab("run", deck, *extra, preexec_fn=preexec)
            self.assert_bad_input(p, f"deck '{deck}': cannot be read: Permission denied")


class CommandTest(Case):
    """A mistyped or missing command is named, with the nearest one; help works
    as in git and cmake."""

    def test_unknown_command_is_named_with_the_nearest(self):
        for word, nearest in [("runn", "run"), ("calbrate", "calibrate"), ("lst", "list"),
                              ("inof", "info")]:
            p = portalab(word, DECK)
            self.assert_bad_input(p, f"'{word}' is not a portalab command",
                                  f"did you mean '{nearest}'?")
        p = portalab("deploy")
        self.assert_bad_input(p, "'deploy' is not a portalab command (run, calibrate, list, "
                                 "info, help, db, health, verdicts)")
        self.assertNotIn("did you mean", p.stderr)

    def test_no_command(self):
        self.assert_bad_input(portalab(), "a command is required", "portalab help")
        self.assertEqual(portalab("--version").returncode, 0)
        self.assertEqual(portalab("--help").returncode, 0)

    def test_help_and_help_of_each_command(self):
        p = portalab("help")
        self.assertEqual(p.returncode, 0, p.stderr)
        for part in ("run", "calibrate", "list", "info", "Exit codes"):
            self.assertIn(part, p.stdout)
        for command, option in [("run", "--dry-run"), ("calibrate", "--quick"),
                                ("list", "--decks"), ("info", "Kokkos configuration"),
                                ("help", "COMMAND")]:
            with self.subTest(command=command):
                p = portalab("help", command)
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertIn(option, p.stdout)
                # The same text as `portalab COMMAND --help`.
                self.assertEqual(p.stdout, portalab(command, "--help").stdout)
        self.assert_bad_input(portalab("help", "runn"), "help: 'runn' is not a portalab command",
                              "did you mean 'run'?")

    def test_unknown_option_is_named_with_the_nearest(self):
        p = portalab("run", DECK, "--spacess", "Serial")
        self.assert_bad_input(p, "run: unknown option '--spacess'", "portalab help run",
                              "did you mean '--spaces'?")
        p = portalab("calibrate", "--quik")
        self.assert_bad_input(p, "calibrate: unknown option '--quik'", "did you mean '--quick'?")
        self.assert_bad_input(portalab("run", DECK, DECK), "run: '")
        self.assert_bad_input(portalab("list", "--names", "--decks"), "--names")

    def test_a_seed_that_is_no_whole_number_of_64_bits(self):
        """--seed is refused before anything runs, naming what it got; with
        --in-order it is refused too (an order that is not shuffled has no
        seed)."""
        for bad in ("-1", "abc", "1.5", "18446744073709551616", "0x10", " 7"):
            p = portalab("run", DECK, "--seed", bad, "--dry-run")
            self.assert_bad_input(p, "--seed: expected a whole number from 0 to "
                                  "18446744073709551615; got '" + bad + "'")
            self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
        self.assert_bad_input(portalab("run", DECK, "--seed", "5", "--in-order", "--dry-run"),
                              "--seed excludes --in-order")

    def test_the_seed_is_said_and_recorded(self):
        """A run says the order's seed on its order: line and records it in
        the provenance; --in-order records why there is none."""
        for args, want in ((["--seed", "18446744073709551615"],
                            {"order": "shuffled", "seed": 18446744073709551615,
                             "seed_given": True}),
                           (["--in-order"], {"order": "in order", "why": "--in-order"})):
            out = self.path("out" + args[0])
            p = portalab("run", DECK, *args, "--spaces", "Serial", "--set", "calibrate=none",
                         "--set", "reps=2", "--out", out)
            self.assertEqual(p.returncode, 0, p.stderr[-2000:])
            with open(os.path.join(out, "results.json")) as f:
                self.assertEqual(json.load(f)["provenance"]["repetition_order"], want)
            self.assertIn("order: ", p.stderr)
            if "seed" in want:
                self.assertIn("--seed 18446744073709551615 repeats it", p.stderr)

    def test_kokkos_options_where_kokkos_does_not_start(self):
        for command in (["list"], ["list", "--decks"], ["help"]):
            p = portalab(*command, "--kokkos-num-threads=2")
            self.assert_bad_input(p, "'--kokkos-num-threads=2': cannot apply",
                                  "does not start Kokkos")


class SameRuleTest(Case):
    """One rule for a deck and the command line: a name listed twice is
    refused with the same words; the start line says what runs."""

    def deck(self, text):
        path = self.path("deck.toml")
        with open(path, "w") as f:
            f.write(text)
        return path

    def test_a_space_listed_twice(self):
        said = "(spaces compiled into this Kokkos): 'Serial' is listed twice"
        for command in (["run", DECK], ["run", DECK, "--dry-run"], ["calibrate", "--quick"]):
            for spaces in ("Serial,Serial", "serial,Serial"):
                with self.subTest(command=command, spaces=spaces):
                    p = portalab(*command, "--spaces", spaces)
                    self.assert_bad_input(p, "--spaces " + said)
        deck = self.deck('spaces = ["Serial", "Serial"]\n[vector_poly]\n')
        self.assert_bad_input(portalab("run", deck), "deck.toml:1:21: top-level spaces " + said)

    def test_every_list_listed_twice(self):
        for key, value in [("dtypes", '["float64","float64"]'), ("variants", '["fused","fused"]'),
                           ("sizes", "[1000,1e3]"), ("copies", '["none","none"]'),
                           ("spaces", '["Serial","Serial"]')]:
            with self.subTest(key=key):
                p = portalab("run", DECK, "--set", f"vector_poly.{key}={value}")
                self.assert_bad_input(p, "is listed twice")

    def test_spaces_option_runs_a_deck_written_for_another_build(self):
        other = next(s for s in ("Cuda", "HIP", "Threads", "OpenMP") if s not in compiled_spaces())
        deck = self.deck(f'spaces = ["{other}"]\ncalibrate = "none"\nreps = 1\nwarmups = 0\n'
                         'copies = ["none"]\n[vector_poly]\nsizes = [100]\n')
        self.assert_bad_input(portalab("run", deck), f"'{other}' is not one of")
        p = portalab("run", deck, "--spaces", "Serial")
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])

    def test_the_start_line_says_the_spaces_that_run(self):
        space = compiled_spaces()[-1]  # not Serial, the first
        p = portalab("run", DECK, "--spaces", space.lower(), "--set", "calibrate=none",
                     "--set", "reps=1", "--set", "warmups=0", "--set", "vector_poly.sizes=[100]",
                     "--set", "stream_copy.sizes=[100]", "--set", 'copies=["none"]')
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        start = next(line for line in p.stderr.splitlines() if line.startswith("portalab "))
        self.assertIn(f"| spaces {space} |", start)


class ApplyTest(Case):
    """A --kokkos-* option that cannot apply to this build is refused; a
    variable Kokkos would ignore is said; the same in every command."""

    COMMANDS = (["info"], ["run", DECK], ["run", DECK, "--dry-run"], ["calibrate", "--quick"])

    def refused_everywhere(self, arg, *said, env=ENV, before=()):
        for command in self.COMMANDS:
            with self.subTest(arg=arg, command=command[0]):
                p = portalab(*command, *before, arg, env=env)
                self.assert_bad_input(p, f"'{arg}'", *said)

    def test_a_device_id_without_a_device_or_beyond_those_present(self):
        if DEVICE_BUILD:
            self.refused_everywhere("--kokkos-device-id=99", "expected a device id from 0 to")
            for command in self.COMMANDS:
                p = portalab(*command, env=dict(ENV, KOKKOS_VISIBLE_DEVICES="99"))
                self.assert_bad_input(p, "environment variable KOKKOS_VISIBLE_DEVICES=99: "
                                         "expected device ids from 0 to")
        else:
            for arg in ("--kokkos-device-id=99", "--kokkos-device-id=0",
                        "--kokkos-map-device-id-by=random"):
                self.refused_everywhere(arg, "cannot apply: this build has no device space")

    def test_device_variables_on_a_build_without_a_device_are_said(self):
        if DEVICE_BUILD:
            self.skipTest("a device build uses them")
        for name, value in [("KOKKOS_DEVICE_ID", "99"), ("KOKKOS_VISIBLE_DEVICES", "0,1"),
                            ("KOKKOS_MAP_DEVICE_ID_BY", "random")]:
            with self.subTest(variable=name):
                env = dict(ENV, **{name: value})
                said = f"warning: environment variable {name}={value}: ignored: this build has no " \
                       "device space"
                p = portalab("info", env=env)
                self.assertEqual(p.returncode, 0, p.stderr[-2000:])
                self.assertIn(said, p.stderr)
                # The same before a run and a calibration (stopped here by bad input).
                self.assertIn(said, portalab("run", "no-such-deck", env=env).stderr)
                self.assertIn(said, portalab("calibrate", "--out", self.tmp, env=env).stderr)

    def test_options_kokkos_no_longer_reads(self):
        for arg in ("--kokkos-num-devices=2", "--kokkos-skip-device=1", "--kokkos-threads=2",
                    "--kokkos-numa=1"):
            self.refused_everywhere(arg, "Kokkos 4.6 no longer reads it")
        p = portalab("info", env=dict(ENV, KOKKOS_NUM_DEVICES="2"))
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        self.assertIn("warning: environment variable KOKKOS_NUM_DEVICES=2: ignored", p.stderr)

    def test_an_option_given_twice(self):
        self.refused_everywhere("--kokkos-num-threads=3",
                                "given twice (also '--kokkos-num-threads=2')",
                                before=["--kokkos-num-threads=2"])

    def test_a_dry_run_says_it_writes_nothing(self):
        # A dry run with limits given makes no calibration: quick.
        cal = self.path("cal.json")
        p = portalab("calibrate", "--quick", "--spaces", "Serial", "--out", cal)
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        portalab_results.check_files(cal)
        out = self.path("out")
        p = portalab("run", DECK, "--dry-run", "--limits", cal, "--spaces", "Serial", "--out", out)
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        self.assertIn(f"warning: --out {out}: a dry run writes nothing; ignored", p.stderr)
        self.assertFalse(os.path.exists(out))


if __name__ == "__main__":
    if "PORTALAB" not in os.environ:
        sys.exit("PORTALAB (the portalab binary) is not set")
    unittest.main(argv=[sys.argv[0], "-v", *sys.argv[1:]])
