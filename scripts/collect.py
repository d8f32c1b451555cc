#!/usr/bin/env python3
"""`python3 -m portalab.collect` as a command: the code is scripts/portalab/collect.py."""
import sys

from portalab.collect import main
sys.exit(main())
