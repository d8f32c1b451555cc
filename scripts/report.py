#!/usr/bin/env python3
"""`python3 -m portalab.report` as a command: the code is scripts/portalab/report/."""
import sys

from portalab.report.command import main
sys.exit(main())
