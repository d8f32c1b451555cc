#!/usr/bin/env python3
"""`python3 -m portalab.roofline` as a command: the code is scripts/portalab/roofline.py."""
import sys

from portalab.roofline import main
sys.exit(main())
