#!/usr/bin/env python3
"""`python3 -m portalab.validate` as a command: the code is scripts/portalab/validate.py."""
import sys

from portalab.validate import main
sys.exit(main())
