"""The endpoint gives the same answers as ``tool-selector eval`` measures in process."""

import httpx
import msgspec
import pytest

from tests.support import BENCH_SLICE, ServiceProcess, warm_catalog
from tool_selector.embeddings.cache import MemoryCache
from tool_selector.embeddings.factory import encoder_from_settings
from tool_selector.offline.evaluation.dataset import load_dataset, pick_queries
from tool_selector.pipeline.selector import Selector
from tool_selector.settings import Settings
from tool_selector_client.wire import SearchRequest

pytestmark = pytest.mark.model


def test_http_answers_equal_in_process_answers(service: ServiceProcess) -> None:
    data = load_dataset(BENCH_SLICE, "metatool")
    # the service's own encoder (default settings); a deadline that never cuts the in-process
    # run short, as the warmed service also answers on the hybrid path
    selector = Selector(
        encoder=encoder_from_settings(Settings()),
        cache=MemoryCache(1 << 26),
        embed_deadline=float("inf"),
    )
    tools = msgspec.to_builtins(list(data.tools))
    warm_catalog(service.url, tools)
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
