#!/usr/bin/env python3
"""`python3 -m portalab.pct_of_limit` as a command: the code is scripts/portalab/pct_of_limit.py."""
import sys

from portalab.pct_of_limit import main
sys.exit(main())
