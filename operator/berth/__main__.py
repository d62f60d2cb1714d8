"""`python -m berth` is the same as the `berth` console script."""

import sys

from berth.cli.main import main

sys.exit(main())
