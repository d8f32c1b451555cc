#!/usr/bin/env python3
"""`python3 -m portalab.compare` as a command: the code is scripts/portalab/compare.py."""
import sys

from portalab.compare import main
sys.exit(main())
