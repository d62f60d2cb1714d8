"""The HTML report in a real browser: headless Chromium's screenshot of it shows the chart.

Chromium comes from Debian's `chromium` package. When it is missing, the first test of the run
installs it (apt-get, as root, once per run, saying what it does on the terminal); the test is
skipped, with the reason, only where it cannot be installed (no apt-get, not root, no mirror).
Set BERTH_REQUIRE_BROWSER=1 to make that a failure instead (CI that must prove the page renders).
`-m "not browser"` leaves these tests out.

docs/report-screenshot.png is this test's screenshot of the README's example (make the page with
`berth simulate --nodes examples/nodes.yaml --pods examples/pods.yaml --existing
examples/existing-pods.yaml --output html --output-file report.html`, then run `chromium` with
the arguments of `_screenshot` below, but `--window-size=1280,620`, which ends below the page).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from berth.cli.report_chart import BAR_COLOURS
from tests.unit.cli.png_pixels import read_rgb
from tests.unit.cli.simulate_support import simulate

pytestmark = pytest.mark.browser

EXAMPLES = Path(__file__).parents[3] / "examples"
WINDOW = (1280, 900)
INSTALL = ["apt-get", "install", "-y", "--no-install-recommends", "chromium"]
APT_TIMEOUT = 1200
BROWSER_TIMEOUT = 120


def _apt(command: list[str], say: Callable[[str], None]) -> bool:
    say(f"browser test set-up: running {' '.join(command)}")
    environment = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    try:
        done = subprocess.run(
            command,
            env=environment,
            capture_output=True,
            text=True,
            timeout=APT_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        say(f"browser test set-up: {command[0]} failed: {error}")
        return False
    if done.returncode:
        tail = " | ".join((done.stderr or done.stdout).strip().splitlines()[-3:])
        say(f"browser test set-up: {' '.join(command[:2])} exited {done.returncode}: {tail}")
    return done.returncode == 0


def _find_or_install(say: Callable[[str], None]) -> tuple[str | None, str]:
    """The chromium executable, or None and why it cannot be had."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found:
        return found, ""
    if shutil.which("apt-get") is None:
        return None, "chromium is not installed and there is no apt-get to install it"
    if os.geteuid() != 0:
        return None, "chromium is not installed and installing it needs root"
    # A fresh image may have no package lists yet: update once, only when the install needs it.
    if not _apt(INSTALL, say) and not (_apt(["apt-get", "update"], say) and _apt(INSTALL, say)):
        return None, "chromium is not installed and `apt-get install chromium` failed"
    found = shutil.which("chromium")
    say(f"browser test set-up: chromium installed at {found}")
    return found, "" if found else "apt-get installed chromium but it is not on PATH"


@pytest.fixture(scope="session")
def chromium(pytestconfig: pytest.Config) -> str:
    reporter = pytestconfig.pluginmanager.get_plugin("terminalreporter")
    capture = pytestconfig.pluginmanager.get_plugin("capturemanager")

    def say(line: str) -> None:
        # Straight to the terminal: an install of a minute or more should not look like a hang.
        if reporter is None or capture is None:
            return
        with capture.global_and_fixture_disabled():
            reporter.write_line(line)

    executable, reason = _find_or_install(say)
    if executable is None:
        if os.environ.get("BERTH_REQUIRE_BROWSER") == "1":
            pytest.fail(f"BERTH_REQUIRE_BROWSER=1 but {reason}")
        pytest.skip(reason)
    return executable


def _screenshot(chromium: str, page: Path, *, profile: Path) -> Path:
    target = page.with_suffix(".png")
    subprocess.run(
        [
            chromium,
            "--headless",
            "--no-sandbox",  # as root (CI, containers) Chromium refuses to start sandboxed
            "--disable-gpu",
            "--hide-scrollbars",
            f"--user-data-dir={profile}",  # never the user's profile, nor another run's
            f"--screenshot={target}",
            f"--window-size={WINDOW[0]},{WINDOW[1]}",
            page.resolve().as_uri(),
        ],
        capture_output=True,
        timeout=BROWSER_TIMEOUT,
        check=True,
    )
    return target


def _pixels_of(image: np.ndarray, colour: str) -> int:
    rgb = np.array([int(colour[i : i + 2], 16) for i in (1, 3, 5)], dtype=np.int16)
    # Exact colour, give or take a rounding step of the compositor.
    return int((np.abs(image.astype(np.int16) - rgb) <= 2).all(axis=2).sum())


def _drawn_area(page: str, colour: str) -> int:
    """Pixels the page's SVG fills with `colour` (bars are `width` by `height` rectangles)."""
    sizes = re.findall(rf'width="(\d+)" height="(\d+)" fill="{colour}"', page)
    return sum(int(width) * int(height) for width, height in sizes)


def test_the_report_of_the_readme_example_renders_its_chart_in_chromium(
    chromium: str, tmp_path: Path
) -> None:
    page = tmp_path / "report.html"
    outcome = simulate(
        "--nodes",
        EXAMPLES / "nodes.yaml",
        "--pods",
        EXAMPLES / "pods.yaml",
        "--existing",
        EXAMPLES / "existing-pods.yaml",
        "--output",
        "html",
        "--output-file",
        page,
    )
    assert outcome.code == 0, outcome.err
    image = read_rgb(_screenshot(chromium, page, profile=tmp_path / "profile"))
    assert image.shape == (WINDOW[1], WINDOW[0], 3)
    html = page.read_text()
    for resource, colour in BAR_COLOURS.items():
        drawn = _drawn_area(html, colour)
        assert drawn > 0, resource
        # Every bar of the chart is on screen (it sits at the top of the page): the screenshot
        # holds its colour over nearly the whole area the SVG gives it (edges are antialiased).
        assert _pixels_of(image, colour) >= 0.9 * drawn, resource
    # And the page is more than the chart: its text (dark pixels) is there too.
    assert int((image.max(axis=2) < 80).sum()) > 1000
