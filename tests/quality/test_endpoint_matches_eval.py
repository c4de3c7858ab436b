"""The endpoint gives the same answers as ``tool-selector eval`` measures in process."""

import time

import httpx
import msgspec
import pytest

from tests.support import ServiceProcess
from tool_selector.embeddings.cache import MemoryCache
from tool_selector.embeddings.encoder import SentenceTransformerEncoder
from tool_selector.evaluation.dataset import default_bench_dir, load_dataset, pick_queries
from tool_selector.selector import Selector
from tool_selector_client.wire import SearchRequest

BENCH = default_bench_dir()
pytestmark = [
    pytest.mark.model,
    pytest.mark.skipif(not (BENCH / "metatool").is_dir(), reason=f"no benchmark at {BENCH}"),
]


def warm(service: ServiceProcess, tools: object) -> None:
    """Send the catalog until the service answers it on the hybrid path (embeddings cached)."""
    body = {"pattern": "warm up", "tools": tools}
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        r = httpx.post(service.url + "/v1/tool-discovery/search", json=body, timeout=60)
        if r.status_code == 200 and r.headers["x-tool-selector-ranking"] == "hybrid":
            return
        time.sleep(0.5)
    raise TimeoutError("catalog never answered on the hybrid path")


def test_http_answers_equal_in_process_answers(service: ServiceProcess) -> None:
    data = load_dataset(BENCH, "metatool")
    selector = Selector(encoder=SentenceTransformerEncoder(), cache=MemoryCache(1 << 26))
    tools = msgspec.to_builtins(list(data.tools))
    warm(service, tools)
    answered = 0
    for query in pick_queries(data.queries, "test", 12):
        request = SearchRequest(pattern=query.text, tools=list(data.tools))
        expected = selector.select(request).ranking.names
        body = {"pattern": query.text, "tools": tools, "top_k": 5}
        r = httpx.post(service.url + "/v1/tool-discovery/search", json=body, timeout=60)
        assert r.status_code == 200, r.text
        assert r.json()["selected_names"] == expected, query.text
        answered += bool(expected)
    assert answered >= 10
