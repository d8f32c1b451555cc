#!/usr/bin/env python3
"""`python3 -m portalab.timeline` as a command: the code is scripts/portalab/timeline.py."""
import sys

from portalab.timeline import main
sys.exit(main())
