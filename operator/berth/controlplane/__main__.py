"""`python -m berth.controlplane up|down|env`, usable before the package is installed."""

import sys

from berth.controlplane.cli import main

sys.exit(main())
