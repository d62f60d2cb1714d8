"""`berth run` loads no library it does not use: each costs the scheduler memory for good.

kopf, when imported, imports `kubernetes` and `pykube` if they are installed, to offer
logins through them; Berth logs in itself, and the two cost about 20 MiB. `cryptography`
(about 10 MiB) is for `berth controlplane` only, and no other command's modules are loaded.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap


def test_berth_run_loads_kopf_without_unused_libraries() -> None:
    code = textwrap.dedent(
        """
        import sys
        from berth.cli.main import main

        try:
            main(["run", "--help"])
        except SystemExit:
            pass
        assert "kopf" in sys.modules
        unused = ("kubernetes", "pykube", "cryptography", "berth.cli.simulate")
        loaded = [name for name in unused if sys.modules.get(name) is not None]
        print("loaded:" + ",".join(loaded))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert done.stdout.strip().splitlines()[-1] == "loaded:"
