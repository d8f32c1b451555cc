#!/usr/bin/env python3
"""`python3 -m portalab.plot` as a command: the code is scripts/portalab/plot.py."""
import sys

from portalab.plot import main
sys.exit(main())
