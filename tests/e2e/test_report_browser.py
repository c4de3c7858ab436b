"""The shadow-compare report in a real browser: every chart drawn with a size, no script error.

Needs headless Chromium (Debian package ``chromium``; ``make test`` installs it when run as
root); skipped with that reason otherwise.
"""

from __future__ import annotations

import json
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from tests.support import ROOT
from tool_selector.offline.cli import main

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="headless Chromium not installed (apt-get install chromium)"
)
FIXTURES = ROOT / "tests" / "fixtures"
SOURCES = [FIXTURES / "shadow_capture.jsonl", FIXTURES / "context-gateway" / "tool_discovery.jsonl"]
# recorded by the page itself: script errors from the first moment, chart sizes at the end
ERRORS = "<script>window.errs=[];addEventListener('error',e=>errs.push(String(e.message)))</script>"
PROBE = """<script>
const probe=document.createElement('pre');probe.id='probe';
probe.textContent=JSON.stringify({errors:errs,charts:[...document.querySelectorAll('figure svg')]
  .map(s=>{const r=s.getBoundingClientRect();return [r.width,r.height]})});
document.body.appendChild(probe);</script>"""


def _chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"]
    profile = f"--user-data-dir={tmp_path / 'profile'}"
    command = [str(CHROMIUM), *flags, profile, "--enable-logging=stderr", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)


def _report(tmp_path: Path, source: Path) -> Path:
    html = tmp_path / "report.html"
    assert main(["shadow-compare", str(source), "--html", str(html), "--json", "/dev/null"]) == 0
    return html


@pytest.mark.parametrize("source", SOURCES, ids=["client_capture", "proxy_log"])
def test_charts_are_drawn_with_a_size_and_no_script_error(tmp_path: Path, source: Path) -> None:
    page = _report(tmp_path, source).read_text()
    probed = tmp_path / "probed.html"
    probed.write_text(
        page.replace("<head>", "<head>" + ERRORS).replace("</body>", PROBE + "</body>")
    )
    run = _chromium(tmp_path, "--dump-dom", probed.as_uri())
    dom = run.stdout
    probe = json.loads(
        dom[dom.index('<pre id="probe">') + 16 : dom.index("</pre>", dom.index('id="probe"'))]
    )
    assert probe["errors"] == []
    assert "Uncaught" not in run.stderr
    assert len(probe["charts"]) >= 6
    assert all(w >= 300 and h >= 200 for w, h in probe["charts"]), probe["charts"]


def test_screenshot_of_the_report(tmp_path: Path) -> None:
    html = _report(tmp_path, SOURCES[1])
    shot = tmp_path / "report.png"
    _chromium(tmp_path, "--window-size=1280,3000", f"--screenshot={shot}", html.as_uri())
    png = shot.read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", png[16:24]) == (1280, 3000)
    assert len(png) > 50_000  # charts and tables, not a blank page
