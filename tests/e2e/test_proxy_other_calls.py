"""What Context Gateway's other features get when ``urls.compresr`` points at us.

v0.4.2-v0.5.1 post their pre-filter to ``urls.compresr`` and nowhere else, so their
operators point it here, and the proxy's Compresr clients then post tool-output and history
compression here too (bodies and header as ``internal/compresr/client.go`` builds them).
Each must get a plain non-2xx error, never a 200 the client could misread and never a hang:
the proxy then keeps the tool output as it was and forwards the compaction request unchanged
(docs/context-gateway.md, "What else `urls.compresr` feeds").
"""

from __future__ import annotations

import httpx
import pytest

from tests.support import ServiceProcess

HEADERS = {
    "Content-Type": "application/json",
    "X-API-Key": "the-compresr-key",
    "User-Agent": "Go-http-client/1.1",
}

#: (path, body) of each call that follows ``urls.compresr`` besides tool discovery.
OTHER_CALLS = [
    (
        "/api/compress/tool-output/",
        {
            "tool_output": "line 1\nline 2\n" * 400,
            "query": "why does the build fail",
            "tool_name": "read_file",
            "compression_model_name": "toc_latte_v1",
            "source": "gateway:anthropic",
        },
    ),
    (
        "/api/compress/history/",
        {
            "messages": [{"role": "user", "content": "summarise our session"}],
            "keep_recent": 3,
            "compression_model_name": "hcc_espresso_v1",
            "source": "gateway:anthropic",
        },
    ),
]


@pytest.mark.parametrize(("path", "body"), OTHER_CALLS, ids=[c[0] for c in OTHER_CALLS])
def test_a_call_we_do_not_serve_gets_a_plain_404(
    service: ServiceProcess, path: str, body: dict[str, object]
) -> None:
    response = httpx.post(service.url + path, json=body, headers=HEADERS, timeout=10)
    assert response.status_code == 404
    assert response.json()["code"] == "not_found"
    assert "success" not in response.json(), "a Compresr envelope the client could misread"
