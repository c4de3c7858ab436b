"""One decode per request: the contract from path and body, the tools decoded only when the
catalog store lacks them, a resent tool list never decoded again, nothing else changed."""

from __future__ import annotations

import json

import msgspec
import pytest

from tool_selector.errors import BadRequest
from tool_selector.lru import BoundedLRU
from tool_selector.pipeline.ask import Ask, ToolSource
from tool_selector.pipeline.catalog_store import CatalogEntry, CatalogStore
from tool_selector.pipeline.contracts import COMPRESS, SEARCH, Contract
from tool_selector.pipeline.decoding import Decoder
from tool_selector.pipeline.selector import Selector
from tool_selector.settings import Settings
from tool_selector_client.wire import COMPRESS_PATH, SEARCH_PATH, SearchRequest, Tool

SETTINGS = Settings()
TOOLS = [
    {
        "name": f"tool_{i}",
        "description": f"does thing {i} with a long enough description to matter",
        "definition": {"type": "function", "function": {"name": f"tool_{i}", "parameters": {}}},
    }
    for i in range(60)
]


def body(
    pattern: str = "thing 3", tools: list[dict[str, object]] = TOOLS, **extra: object
) -> bytes:
    return json.dumps({"pattern": pattern, "tools": tools, **extra}).encode()


def compress_body(query: str, tools: list[dict[str, object]] = TOOLS, **extra: object) -> bytes:
    return json.dumps({"query": query, "tools": tools, **extra}).encode()


class Counted:
    """Counts the decodes of an ``Ask``'s tools and the store's LRU probes."""

    def __init__(self, store: CatalogStore) -> None:
        self.loads = 0
        self.probes = 0
        lru: BoundedLRU[str, CatalogEntry] = store._entries
        get = lru.get

        def probe(key: str) -> CatalogEntry | None:
            self.probes += 1
            return get(key)

        lru.get = probe  # type: ignore[method-assign]

    def ask(self, ask: Ask) -> Ask:
        load = ask.tools.load

        def counted() -> list[Tool]:
            self.loads += 1
            return load()

        tools = ToolSource(ask.tools.named, counted)
        return Ask(
            ask.pattern,
            tools,
            top_k=ask.top_k,
            always_keep=ask.always_keep,
            explain=ask.explain,
            pattern_chars=ask.pattern_chars,
        )


def served(max_tools: int = 1000) -> tuple[Decoder, Selector, Counted]:
    selector = Selector(catalogs=CatalogStore(max_tools))
    return Decoder(SETTINGS), selector, Counted(selector.catalogs)


def full(raw: bytes, path: str = SEARCH_PATH) -> Ask:
    """The same body decoded by a decoder that never names tools by their bytes."""
    return Decoder(SETTINGS, name_by_bytes=False).decode(raw, path)[1]


def answer(decoder: Decoder, selector: Selector, raw: bytes, path: str = SEARCH_PATH) -> list[str]:
    return selector.select(decoder.decode(raw, path)[1]).ranking.names


def test_a_new_catalog_is_decoded_once_and_looked_up_once() -> None:
    decoder, selector, counted = served()
    outcome = selector.select(counted.ask(decoder.decode(body(), SEARCH_PATH)[1]))
    # one find: its byte key, then (a miss) the decoded tools' fingerprint
    assert (outcome.catalog_reused, counted.loads, counted.probes) == (False, 1, 2)


def test_a_resent_list_is_not_decoded_and_found_in_one_probe() -> None:
    decoder, selector, counted = served()
    answer(decoder, selector, body("first"))
    counted.probes = 0
    resent = counted.ask(
        decoder.decode(body("thing 7", top_k=3, always_keep=["tool_1"]), SEARCH_PATH)[1]
    )
    outcome = selector.select(resent)
    expected = Selector().select(full(body("thing 7", top_k=3, always_keep=["tool_1"])))
    assert (outcome.catalog_reused, counted.loads, counted.probes) == (True, 0, 1)
    names = outcome.ranking.names
    assert (names, names[0], "tool_1" in names) == (expected.ranking.names, "tool_7", True)


def test_the_lazy_tools_decode_like_a_full_decode() -> None:
    ask = Decoder(SETTINGS).decode(body(top_k=3, always_keep=["tool_1"]), SEARCH_PATH)[1]
    request = SearchRequest(
        pattern="thing 3",
        tools=[Tool(**t) for t in TOOLS],  # type: ignore[arg-type]
        top_k=3,
        always_keep=["tool_1"],
    )
    assert ask.tools.key is not None
    assert ask.tools.key.startswith("raw:search:")
    assert (ask.tools.load(), ask.top_k, ask.always_keep) == (request.tools, 3, ("tool_1",))


def test_the_bytes_are_hashed_when_the_store_asks_and_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    hashed = hashes(monkeypatch)
    ask = Decoder(SETTINGS).decode(body(), SEARCH_PATH)[1]
    assert hashed == []  # a new pattern's encode starts first (``arms.encode_early``)
    keys = {ask.tools.key, ask.tools.key}
    outcome = Selector().select(ask)
    assert (len(hashed), keys, outcome.catalog_key) == (1, {outcome.catalog_key}, ask.tools.key)


def hashes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The lengths of the tool lists the decoder hashes from now on."""
    import tool_selector.pipeline.raw_names as raw_names  # noqa: PLC0415

    hashed: list[int] = []
    named = raw_names.raw_name

    def counted(contract: str, data: bytes | msgspec.Raw) -> str:
        hashed.append(len(memoryview(data)))
        return named(contract, data)

    monkeypatch.setattr(raw_names, "raw_name", counted)
    return hashed


def test_a_list_resent_byte_for_byte_is_named_without_hashing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    hashed, decoder = hashes(monkeypatch), Decoder(SETTINGS)
    first = decoder.decode(body("thing 3"), SEARCH_PATH)[1].tools.key
    again = decoder.decode(body("thing 7", top_k=2), SEARCH_PATH)[1].tools.key
    assert (len(hashed), again) == (1, first)


def test_a_list_of_the_same_length_and_ends_is_hashed_and_named_apart(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    hashed, decoder = hashes(monkeypatch), Decoder(SETTINGS)
    middle = [*TOOLS[:30], {**TOOLS[30], "name": "tool_x0"}, *TOOLS[31:]]
    keys = [decoder.decode(body(tools=t), SEARCH_PATH)[1].tools.key for t in (TOOLS, middle)]
    sent = [json.dumps(t).encode() for t in (TOOLS, middle)]
    ends = [(len(b), b[:64], b[-64:]) for b in sent]  # the same probe: the bytes tell them apart
    assert (ends[0] == ends[1], len(hashed), keys[0] != keys[1]) == (True, 2, True)


def test_with_no_bytes_to_keep_every_list_is_hashed(monkeypatch: pytest.MonkeyPatch) -> None:
    hashed = hashes(monkeypatch)
    decoder = Decoder(Settings(raw_names_bytes=0))
    keys = {decoder.decode(body(p), SEARCH_PATH)[1].tools.key for p in ("a", "b")}
    assert (len(hashed), len(keys)) == (2, 1)


def test_a_resent_list_keeps_its_duplicate_count() -> None:
    decoder, selector, _ = served()
    doubled = body(tools=[*TOOLS, TOOLS[0], TOOLS[1]])
    counts = [selector.select(decoder.decode(doubled, SEARCH_PATH)[1]).duplicates for _ in "ab"]
    assert counts == [2, 2]


def test_the_same_tools_share_a_key_and_changed_tools_do_not() -> None:
    decoder = Decoder(SETTINGS)
    changed = [*TOOLS[:-1], {**TOOLS[-1], "description": "something else entirely"}]
    keys = [decoder.decode(b, SEARCH_PATH)[1].tools.key for b in (body("a"), body("b"))]
    other = decoder.decode(body(tools=changed), SEARCH_PATH)[1].tools.key
    assert (keys[0] == keys[1], keys[0] != other) == (True, True)


@pytest.mark.parametrize(
    ("extra", "code"),
    [({"top_k": "2"}, "invalid_request"), ({"top_k": 1000}, "top_k_out_of_range")],
    ids=["wrong-type", "out-of-range"],
)
def test_bad_fields_next_to_known_tools_are_still_refused(
    extra: dict[str, object], code: str
) -> None:
    decoder, selector, _ = served()
    answer(decoder, selector, body())
    with pytest.raises(BadRequest) as caught:
        decoder.decode(body(**extra), SEARCH_PATH)
    assert caught.value.code == code


@pytest.mark.parametrize(
    ("tools", "max_tools", "name_by_bytes", "key"),
    [(TOOLS[:2], 1000, True, False), (TOOLS, 1000, False, False), (TOOLS, 10, True, True)],
    ids=["small-body", "disabled", "catalog-over-the-store-bound"],
)
def test_tools_are_decoded_again_when_reuse_does_not_apply(
    tools: list[dict[str, object]], max_tools: int, name_by_bytes: bool, key: bool
) -> None:
    selector = Selector(catalogs=CatalogStore(max_tools))
    decoder = Decoder(SETTINGS, name_by_bytes=name_by_bytes)
    counted = Counted(selector.catalogs)
    for _ in "ab":
        selector.select(counted.ask(decoder.decode(body(tools=tools), SEARCH_PATH)[1]))
    assert (decoder.decode(body(tools=tools), SEARCH_PATH)[1].tools.key is not None) == key
    # the second request finds its catalog by the fingerprint of its decoded tools
    assert counted.loads == 2


def test_bad_tools_are_refused_when_decoded_with_their_place_in_the_body() -> None:
    bad = [*TOOLS[:3], {"name": 5}]
    ask = Decoder(SETTINGS).decode(body(tools=bad), SEARCH_PATH)[1]
    with pytest.raises(BadRequest) as caught:
        Selector().select(ask)
    assert (caught.value.code, "$.tools[3].name" in caught.value.detail) == (
        "invalid_request",
        True,
    )


def test_too_many_tools_are_refused_when_decoded() -> None:
    settings = Settings(max_tools=10)
    ask = Decoder(settings).decode(body(), SEARCH_PATH)[1]
    with pytest.raises(BadRequest) as caught:
        ask.tools.load()
    assert caught.value.code == "too_many_tools"


@pytest.mark.parametrize(
    ("path", "raw", "expected"),
    [
        (SEARCH_PATH, body(), SEARCH),
        (COMPRESS_PATH, compress_body("x"), COMPRESS),
        (COMPRESS_PATH.rstrip("/"), compress_body("x"), COMPRESS),
        (COMPRESS_PATH, body(), SEARCH),
        (COMPRESS_PATH, json.dumps({"pattern": "x", "query": "y", "tools": []}).encode(), COMPRESS),
    ],
    ids=["search-path", "compress", "no-slash", "v0.5.2-body", "both"],
)
def test_the_contract_comes_from_path_and_body(path: str, raw: bytes, expected: Contract) -> None:
    assert Decoder(SETTINGS).decode(raw, path)[0] is expected


@pytest.mark.parametrize(
    ("raw", "code", "says"),
    [
        (b"[]", "invalid_request", "Expected `object`"),
        (b"{not json", "malformed_json", "not valid JSON"),
        (b'{"tools":[]}', "invalid_request", "`query`"),
        (b'{"pattern":"x"}', "invalid_request", "`tools`"),
        (b"  ", "empty_body", "empty"),
    ],
    ids=["array", "garbage", "neither-field", "search-shaped-without-tools", "empty"],
)
def test_a_bad_body_on_the_compress_path_gets_its_contracts_error(
    raw: bytes, code: str, says: str
) -> None:
    """Judged as the compress contract, unless it has ``pattern`` and no ``query``."""
    with pytest.raises(BadRequest) as caught:
        Decoder(SETTINGS).decode(raw, COMPRESS_PATH)
    assert (caught.value.code, says in caught.value.detail) == (code, True)


def test_a_resent_compress_list_is_recognised_under_its_own_key() -> None:
    decoder, selector, counted = served()
    answer(decoder, selector, compress_body("first"), COMPRESS_PATH)
    contract, ask = decoder.decode(compress_body("thing 7", max_tools=2), COMPRESS_PATH)
    expected = Selector().select(full(compress_body("thing 7", max_tools=2), COMPRESS_PATH))
    outcome = selector.select(counted.ask(ask))
    assert ask.tools.key is not None
    assert (contract, ask.tools.key.startswith("raw:compress:"), ask.top_k) == (COMPRESS, True, 2)
    assert (outcome.ranking.names, counted.loads) == (expected.ranking.names, 0)


def test_a_long_pattern_is_cut_on_the_warm_path_too() -> None:
    decoder, selector, counted = served()
    answer(decoder, selector, body("first"))
    ask = counted.ask(decoder.decode(body("thing 7 " * 400), SEARCH_PATH)[1])
    outcome = selector.select(ask)
    assert (outcome.catalog_reused, counted.loads) == (True, 0)
    assert (ask.pattern_cut, ask.pattern_chars) == (True, len("thing 7 " * 400))
    assert len(ask.pattern) <= SETTINGS.max_pattern_chars + 1


def test_recent_tools_no_catalog_can_name_are_dropped() -> None:
    """``context.recent_tools`` entries had no length cap (64 of 20 KB each, kept as memo
    keys: 1.3 MB a request); one longer than ``max_name_chars`` names no tool of any catalog
    and moves nothing, so it is dropped (a conversation is never bad input)."""
    named, unnamable = "read_file", "r" * (SETTINGS.max_name_chars + 1)
    context = {"messages": ["hi"], "recent_tools": [unnamable, named]}
    ask = Decoder(SETTINGS).decode(body(context=context), SEARCH_PATH)[1]
    assert ask.context is not None
    assert ask.context.recent_tools == [named]
