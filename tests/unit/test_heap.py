"""What the long-lived caches keep is (almost) invisible to the garbage collector.

A full GC pass walks every tracked object; with thousands per cached catalog (decoded tool
dicts, a frozenset and a dataclass per tool) passes took 120 ms with 60 cold catalogs
cached, the cold path's p99. Cached catalogs must cost a small constant each instead.
"""

from __future__ import annotations

import gc
import json
from collections.abc import Callable

from tool_selector.pipeline.catalog_store import CatalogStore
from tool_selector.pipeline.decoding import Decoder
from tool_selector.pipeline.selector import Selector
from tool_selector.settings import Settings
from tool_selector_client.wire import SEARCH_PATH

CATALOGS, TOOLS = 8, 200


def body(catalog: int) -> bytes:
    tools = [
        {
            "name": f"c{catalog}_tool_{i}",
            "description": f"Does thing {i} of catalog {catalog} for the user",
            "definition": {
                "type": "function",
                "function": {
                    "name": f"c{catalog}_tool_{i}",
                    "parameters": {
                        "type": "object",
                        "properties": {
                            "path": {"type": "string", "description": "Where it is"},
                            "mode": {"type": "string", "enum": ["fast", "safe"]},
                        },
                        "required": ["path"],
                    },
                },
            },
        }
        for i in range(TOOLS)
    ]
    return json.dumps({"pattern": "thing 3", "tools": tools}).encode()


def tracked_growth(fill: Callable[[], object]) -> tuple[int, object]:
    """Tracked objects that survive ``fill`` (kept alive by what it returns)."""
    gc.collect()
    before = len(gc.get_objects())
    kept = fill()
    gc.collect()
    return len(gc.get_objects()) - before, kept


def test_cached_cold_catalogs_add_a_constant_not_per_tool_objects() -> None:
    selector = Selector(catalogs=CatalogStore(100_000))
    decoder = Decoder(Settings())
    bodies = [body(c) for c in range(CATALOGS + 1)]

    def fill(raws: list[bytes]) -> object:
        for raw in raws:
            selector.select(decoder.decode(raw, SEARCH_PATH)[1])
        return selector

    fill(bodies[:1])  # first use imports what bm25s loads lazily
    growth, _ = tracked_growth(lambda: fill(bodies[1:]))
    assert len(selector.catalogs) == CATALOGS + 1
    # before: about 10 tracked objects per tool (2,087 per catalog here); now a few per catalog
    assert growth / CATALOGS < 20
