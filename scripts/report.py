#!/usr/bin/env python3
"""`python3 -m portalab.report` as a command: the code is scripts/portalab/report.py."""
import sys

from portalab.report import main
sys.exit(main())
