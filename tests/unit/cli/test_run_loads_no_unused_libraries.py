"""`berth run` loads no library it does not use: each costs the scheduler memory for good.

kopf, when imported, imports `kubernetes` and `pykube` if they are installed (kopf[full-auth]
installs them), to offer logins through them; Berth logs in itself, and the two cost about
20 MiB. `cryptography`
(about 10 MiB) is for `berth controlplane` only, and no other command's modules are loaded.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

DEFAULT_PROFILE = Path(__file__).resolve().parents[3] / "manifests" / "default-profile.yaml"


def _loaded_after(code: str) -> str:
    """What `code`, run in a fresh interpreter, reports on its last line after "loaded:"."""
    done = subprocess.run(
        [sys.executable, "-c", code, str(DEFAULT_PROFILE)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return done.stdout.strip().splitlines()[-1].removeprefix("loaded:")


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
    assert _loaded_after(code) == ""


def test_a_plugin_package_can_still_import_the_clients_berth_run_keeps_from_kopf() -> None:
    # Hidden from kopf only while it is imported: plugins load later, with the profiles.
    code = textwrap.dedent(
        """
        import sys
        from berth.cli.main import main

        try:
            main(["run", "--help"])
        except SystemExit:
            pass
        import kubernetes.client
        import pykube

        print("loaded:" + ",".join(name for name in ("kubernetes", "pykube") if name in sys.modules))
        """
    )
    assert _loaded_after(code) == "kubernetes,pykube"


def test_the_default_profile_loads_cel_only_when_a_pod_has_claims() -> None:
    # CEL's runtime (C++ with protobuf) is about 24 MiB resident; most clusters never use DRA.
    code = textwrap.dedent(
        """
        import sys
        from pathlib import Path

        import yaml

        from berth.profiles import load_profile

        document = yaml.safe_load(Path(sys.argv[1]).read_text())
        load_profile(document)
        print("loaded:" + ("cel_expr_python" if "cel_expr_python" in sys.modules else ""))
        """
    )
    assert _loaded_after(code) == ""
