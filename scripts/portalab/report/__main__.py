"""`python3 -m portalab.report`: the command scripts/report.py runs."""
import sys

from portalab.report.command import main

# Named as run in usage and messages, not __main__.py.
sys.argv[0] = "python3 -m portalab.report"
sys.exit(main())
