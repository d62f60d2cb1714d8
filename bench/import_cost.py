"""CPU seconds `berth run` spends importing before kopf starts: its parser, kopf, the handlers.

    PYTHONPATH=<tree>/operator python -m bench.import_cost

Run it alternately for two source trees (each holding `operator/berth`, byte-compiled) to
compare their import cost in one sitting; it prints the CPU seconds (`time.process_time`,
so a busy machine's waits are not counted) and how many modules were loaded.
"""

from __future__ import annotations

import importlib
import sys
import time


def main() -> int:
    began = time.process_time()
    cli = importlib.import_module("berth.cli.main")
    try:
        cli.get_parser("berth", "run")
    except TypeError:  # a tree from before the parser took the command
        cli.get_parser("berth")
    importlib.import_module("kopf")
    importlib.import_module("berth.kube.handlers")
    print(f"{time.process_time() - began:.3f} s CPU, {len(sys.modules)} modules")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
