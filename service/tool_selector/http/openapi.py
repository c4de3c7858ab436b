"""The OpenAPI document of the service, generated from the wire Structs and the settings.

The committed ``openapi.yaml`` is this function's output for default settings; a test fails
when they drift (regenerate with ``tool-selector export-openapi``).
"""

from __future__ import annotations

import inspect
from typing import Any

import msgspec
import yaml

from tool_selector import __version__
from tool_selector.http.guard import METRICS_PATH
from tool_selector.http.handlers import EMBEDDED_HEADER, RANKING_HEADER
from tool_selector.settings import Settings
from tool_selector_client.catalog_lint import LINT_PATH, LintReport, LintRequest
from tool_selector_client.wire import (
    COMPRESS_PATH,
    FEEDBACK_PATH,
    SCOPE_HEADER,
    SEARCH_ID_HEADER,
    SEARCH_PATH,
    CompressErrorBody,
    CompressRequest,
    CompressResponse,
    ErrorBody,
    Feedback,
    FeedbackRequest,
    SearchRequest,
    SearchResponse,
)

_REF = "#/components/schemas/{name}"


def _ref(name: str) -> dict[str, Any]:
    return {"$ref": _REF.format(name=name)}


def _error(description: str, schema: str = "ErrorBody") -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": _ref(schema)}}}


#: Service tokens (``TOOL_SELECTOR_API_KEYS``); either header works. mTLS sits below HTTP.
SECURITY_SCHEMES: dict[str, Any] = {
    "bearerAuth": {
        "type": "http",
        "scheme": "bearer",
        "description": "A service token from TOOL_SELECTOR_API_KEYS(_FILE).",
    },
    "apiKeyHeader": {
        "type": "apiKey",
        "in": "header",
        "name": "X-API-Key",
        "description": "The same service token, as newer proxies send it.",
    },
}


def _with_headers(response: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
    response["headers"] = {
        name: {"description": text, "schema": {"type": "string"}} for name, text in headers.items()
    }
    return response


#: What each Context Gateway release does with an empty answer: the release table of
#: docs/context-gateway.md says the same (tests/unit/test_proxy_docs.py checks both against
#: the fixture logs).
_EMPTY_ANSWER = {
    "search": "Empty `selected_names` means no useful match. Context Gateway v0.4.0-v0.4.1 "
    "then hand the model every deferred tool; v0.5.2 falls back to its own regex search.",
    "compress": "Empty `relevant_tools` means no useful match. v0.4.2-v0.5.1 (pre-filter) then "
    "forward every tool, as if not filtered; v0.5.3+ fall back to their own regex search.",
}


#: What an operator of Context Gateway must know before pointing it here: "What else
#: `urls.compresr` feeds" in docs/context-gateway.md says the same, release by release,
#: from the proxy's code.
_PROXY_CONFIGURATION = (
    "Context Gateway: `urls.compresr` is the proxy's address of the Compresr platform, and "
    "other features post there too, to paths this service does not serve (it answers them "
    "404): tool-output compression (`/api/compress/tool-output/`; v0.4.0-v0.4.1 "
    "`pipes.tool_output.api.endpoint`) and, from v0.4.4, the preemptive summarizer's "
    "history compression (`/api/compress/history/`). v0.4.0-v0.4.1 "
    "post the search to `pipes.tool_discovery.api.endpoint`, v0.5.2+ to "
    "`pipes.tool_discovery.compresr.endpoint`, as written: give a full URL to this service "
    "there and leave `urls.compresr` at Compresr. v0.4.2-v0.5.1 post their pre-filter to "
    "`urls.compresr` + `/api/compress/tool-discovery/` whatever the endpoint says, so it must "
    "point here: keep `pipes.tool_output.strategy` and `preemptive.summarizer.strategy` off "
    "Compresr's (`api`/`compresr`), or tool outputs reach the model uncompressed and "
    "compaction requests go to the model unsummarized (the proxy fails open on our 404). "
    "Never point the proxy's `COMPRESR_BASE_URL` here. docs/context-gateway.md says more, "
    "release by release."
)


#: Each search-shaped operation's request, answer and error schemas.
_SCHEMAS = {
    "search": ("SearchRequest", "SearchResponse", "ErrorBody"),
    "compress": ("CompressRequest", "CompressResponse", "CompressErrorBody"),
    "lint": ("LintRequest", "LintReport", "ErrorBody"),
}


def _search_operation(op_id: str, summary: str, contract: str) -> dict[str, Any]:
    """One search operation: its request and answer schemas (``_SCHEMAS``), what an empty
    answer means, and every error it can get."""
    request, response, error = _SCHEMAS[contract]
    empty = _EMPTY_ANSWER.get(contract, "")
    ranking = {
        "description": "Which ranker answered: hybrid (BM25 + the model's embeddings), static "
        "(BM25 + static embeddings, while the model embeds a new catalog) or lexical (BM25 "
        "alone).",
        "schema": {"type": "string", "enum": ["hybrid", "static", "lexical"]},
    }
    embedded = {
        "description": "Whether the encoders whose cosines ranked the answer had the whole "
        "catalog's vectors: complete (every one; the answer a fully embedded catalog gets), "
        "partial (some: while a new catalog is embedded by the second model, its first answers "
        "alone; or a foreign pattern's English gloss was not read; or a new catalog's first "
        "ten tools were re-ranked by the models, the shortlist arm), none (no model's: the "
        "static table or BM25 alone). A benchmark or a client waiting for a catalog's warm "
        "answers waits for complete.",
        "schema": {"type": "string", "enum": ["complete", "partial", "none"]},
    }
    return {
        "summary": summary,
        "operationId": op_id,
        "parameters": [SCOPE_PARAMETER],
        "requestBody": {
            "required": True,
            "description": "Strings are text wherever they sit: a lone UTF-16 surrogate escape "
            "(`\\ud83d`, a string cut mid-emoji as `JSON.stringify` writes it) reads as "
            "U+FFFD, never refused.",
            "content": {"application/json": {"schema": _ref(request)}},
        },
        "responses": {
            "200": {
                "description": f"Selected tool names, best first. {empty}",
                "headers": {RANKING_HEADER: ranking, EMBEDDED_HEADER: embedded},
                "content": {"application/json": {"schema": _ref(response)}},
            },
            "400": _error("Malformed JSON, wrong types or a limit exceeded.", error),
            "401": _with_headers(
                _error("Missing or wrong service token (when tokens are configured).", error),
                {"WWW-Authenticate": "Always `Bearer`."},
            ),
            "408": _error("The request body did not arrive within the body timeout.", error),
            "413": _error("Body larger than the configured cap.", error),
            "415": _error("Content-Type is not application/json.", error),
            "503": _with_headers(
                _error(
                    "`overloaded` (in-flight cap reached, with Retry-After) or "
                    "`deadline_exceeded` (no answer within the request deadline); fail open.",
                    error,
                ),
                {"Retry-After": "Seconds to wait before retrying (overload only)."},
            ),
        },
        "security": [{"bearerAuth": []}, {"apiKeyHeader": []}, {}],
    }


#: The first contract's body as Context Gateway v0.5.2 posts it to the compress path
#: (``pattern`` and no ``query``), answered as ``SearchResponse`` (``pipeline.decoding``).
_FIRST_CONTRACT_BODY = {"allOf": [_ref("SearchRequest"), {"not": {"required": ["query"]}}]}


def _compress_operation() -> dict[str, Any]:
    summary = "Pick the tools that fit a query (Context Gateway v0.4.2+ contract)"
    operation = _search_operation("compressToolDiscovery", summary, "compress")
    body = operation["requestBody"]["content"]["application/json"]
    body["schema"] = {"anyOf": [_ref("CompressRequest"), _FIRST_CONTRACT_BODY]}
    answer = operation["responses"]["200"]["content"]["application/json"]
    answer["schema"] = {"anyOf": [_ref("CompressResponse"), _ref("SearchResponse")]}
    operation["description"] = (
        "Also served without the trailing slash. A body of the first contract "
        "(`pattern`, no `query`), as Context Gateway v0.5.2 posts here, is answered in that "
        "contract's shape (`SearchResponse`). `query` may be a whole user message, never "
        "refused for its length: beyond `max_pattern_chars` it is ranked on the parts "
        "written to the assistant (pasted logs, code and documents left out), else cut."
    )
    return operation


#: A catalog report names its catalog once: a key or the tools, the other absent or null.
_ONE_CATALOG = [
    {"required": ["catalog"], "properties": {"catalog": {"type": "string"}}},
    {"required": ["tools"], "properties": {"tools": {"type": "array"}}},
]


def _lint_operation() -> dict[str, Any]:
    """The catalog report: the search operations' guard and errors, its own answer."""
    summary = "Report why tools of a catalog are not found (docs/catalog-lint.md)"
    operation = _search_operation("lintCatalog", summary, "lint")
    ok = operation["responses"]["200"]
    ok["description"] = "The findings, most urgent kind first, each with its fix."
    del ok["headers"]
    ok["content"]["text/plain"] = {"schema": {"type": "string"}}
    operation["responses"]["404"] = _error("`unknown_catalog`: the key is not held; send tools.")
    operation["parameters"] = [
        SCOPE_PARAMETER,
        {
            "name": "format",
            "in": "query",
            "required": False,
            "description": "`json` (default) or `text`.",
            "schema": {"type": "string", "enum": ["json", "text"], "default": "json"},
        },
    ]
    operation["description"] = (
        "Send `catalog` (a key the service holds: the `catalog` field of the search log "
        "line) or `tools` (as in a search request, same limits). Every tool's own probes are "
        "ranked as searches are; the deadline is `lint_deadline_seconds`."
    )
    return operation


#: A search's scope (``X-Tool-Selector-Scope``), as every search operation reads it.
SCOPE_PARAMETER: dict[str, Any] = {
    "name": SCOPE_HEADER,
    "in": "header",
    "required": False,
    "description": "Whose learned evidence the search reads and whose its feedback joins "
    "(1 to 128 printable characters, no space). Absent: the caller's service token's scope "
    "where tokens are on, else `default`. Searches of one scope never read another's.",
    "schema": {"type": "string", "pattern": "^[\\x21-\\x7e]{1,128}$"},
}


def _feedback_operations() -> dict[str, Any]:
    """``POST`` feedback on a search and ``DELETE`` a scope's feedback."""
    unavailable = _error(
        "`learning_unavailable`: the learning store cannot keep feedback now; not kept."
    )
    not_found = _error(
        "`unknown_search` (no search of that id is remembered: unknown, or answered longer "
        "ago than `learn_search_ttl_seconds`; or it was answered while the model was "
        "loading, by words alone, with no pattern vector to learn with: the detail says "
        "which) or `learning_off`."
    )
    common = {
        "400": _error(
            "Malformed JSON, wrong types, a bad `search_id` or scope, or a `called` name no "
            "search takes (blank, a control character, longer than `max_name_chars`)."
        ),
        "401": _error("Missing or wrong service token (when tokens are configured)."),
        "413": _error("Body larger than the configured cap."),
        "415": _error("Content-Type is not application/json."),
        "503": unavailable,
    }
    return {
        "post": {
            "summary": "Which tools of a search's answer the model then called",
            "operationId": "searchFeedback",
            "description": "Name the search by the `X-Tool-Selector-Search-Id` of its answer "
            "(either contract's); `called: []` says the model called none of its tools. The "
            "first feedback on a search stands (a repeat answers `duplicate: true` and moves "
            "nothing); names the answer did not hold are returned in `unshown` and move "
            "nothing. A 200 with `kept: true` means the feedback is kept: it survives a "
            "restart. Same auth, caps and errors as a search.",
            "requestBody": {
                "required": True,
                "content": {"application/json": {"schema": _ref("FeedbackRequest")}},
            },
            "responses": {
                "200": {
                    "description": "What became of the feedback.",
                    "content": {"application/json": {"schema": _ref("Feedback")}},
                },
                "404": not_found,
                **common,
            },
        },
        "delete": {
            "summary": "Forget a scope's feedback",
            "operationId": "forgetScope",
            "description": "Every replica's: the scope's searches then answer exactly as "
            "before any feedback.",
            "parameters": [
                {
                    "name": "scope",
                    "in": "query",
                    "required": True,
                    "schema": {"type": "string", "pattern": "^[\\x21-\\x7e]{1,128}$"},
                }
            ],
            "responses": {
                "200": {
                    "description": "Forgotten.",
                    "content": {
                        "application/json": {
                            "schema": {
                                "type": "object",
                                "properties": {"forgotten": {"type": "string"}},
                                "required": ["forgotten"],
                            }
                        }
                    },
                },
                "404": _error("`learning_off`."),
                **common,
            },
        },
    }


#: Prometheus' scrape: open unless ``auth_metrics`` asks for a service token.
_METRICS_OPERATION: dict[str, Any] = {
    "summary": "Prometheus metrics (docs/operations.md)",
    "operationId": "metrics",
    "description": "The text exposition format. Open by default; with `auth_metrics` it "
    "takes a service token, as a search does.",
    "responses": {
        "200": {
            "description": "This process's metrics.",
            "content": {"text/plain": {"schema": {"type": "string"}}},
        },
        "401": _error("`auth_metrics` is on and the service token is missing or wrong."),
    },
    "security": [{}, {"bearerAuth": []}, {"apiKeyHeader": []}],
}


def build_openapi(settings: Settings) -> dict[str, Any]:
    """The OpenAPI 3.1 document for ``settings`` (limits appear as schema bounds)."""
    wire = [SearchRequest, SearchResponse, ErrorBody]
    wire += [CompressRequest, CompressResponse, CompressErrorBody, LintRequest, LintReport]
    wire += [FeedbackRequest, Feedback]
    _, components = msgspec.json.schema_components(wire, ref_template=_REF)
    _clean_docstrings(components)
    _apply_limits(components, settings)
    components["LintRequest"]["oneOf"] = _ONE_CATALOG
    search = _search_operation("searchTools", "Pick the tools that fit a search pattern", "search")
    plain = {"type": "object", "properties": {"status": {"type": "string"}}}
    versioned = {
        "type": "object",
        "properties": {"status": {"type": "string"}, "version": {"type": "string"}},
        "required": ["status", "version"],
    }
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "tool-selector",
            "version": __version__,
            "description": "Picks the few tools an LLM needs out of a catalog of hundreds.\n\n"
            + _PROXY_CONFIGURATION,
        },
        "paths": _with_search_id(
            {
                SEARCH_PATH: {"post": search},
                COMPRESS_PATH: {"post": _compress_operation()},
                LINT_PATH: {"post": _lint_operation()},
                FEEDBACK_PATH: _feedback_operations(),
                "/healthz": {
                    "get": {
                        "summary": "Liveness",
                        "operationId": "healthz",
                        "responses": {
                            "200": {
                                "description": "Alive",
                                "content": {"application/json": {"schema": plain}},
                            }
                        },
                    }
                },
                "/health": {
                    "get": {
                        "summary": "Health, as Compresr's server serves it",
                        "operationId": "health",
                        "description": (
                            "The same answer as `/healthz` plus the service version: "
                            '`{"status": "ok", "version": ...}`. Always open, no '
                            "work behind it (no proxy release calls it; it is there for callers "
                            "written against Compresr's server)."
                        ),
                        "responses": {
                            "200": {
                                "description": "Alive",
                                "content": {"application/json": {"schema": versioned}},
                            }
                        },
                    }
                },
                "/readyz": {
                    "get": {
                        "summary": "Readiness (model loaded)",
                        "operationId": "readyz",
                        "responses": {
                            "200": {
                                "description": "Ready",
                                "content": {"application/json": {"schema": plain}},
                            },
                            "503": _error("Not ready yet."),
                        },
                    }
                },
                METRICS_PATH: {"get": _METRICS_OPERATION},
            }
        ),
        "components": {"schemas": components, "securitySchemes": SECURITY_SCHEMES},
    }


def _with_search_id(paths: dict[str, Any]) -> dict[str, Any]:
    """Every response of every operation gets the ``X-Tool-Selector-Search-Id`` header."""
    for operations in paths.values():
        for operation in operations.values():
            for response in operation["responses"].values():
                response.setdefault("headers", {})[SEARCH_ID_HEADER] = {
                    "description": "This answer's id (32 hex digits); a search's log line "
                    "repeats it.",
                    "schema": {"type": "string", "pattern": "^[0-9a-f]{32}$"},
                }
    return paths


def _clean_docstrings(components: dict[str, Any]) -> None:
    """Each wire type's description (its docstring) with the indentation cleaned: msgspec
    0.23 cleans it, earlier releases kept it as written, and the document must not hang on
    which one is installed."""
    for schema in components.values():
        if isinstance(schema.get("description"), str):
            schema["description"] = inspect.cleandoc(schema["description"])


def _apply_limits(components: dict[str, Any], settings: Settings) -> None:
    for request_name, top_k, tool_name in (
        ("SearchRequest", "top_k", "Tool"),
        ("CompressRequest", "max_tools", "CompressTool"),
    ):
        request = components[request_name]["properties"]
        request[top_k]["maximum"] = settings.max_top_k
        request["tools"]["maxItems"] = settings.max_tools
        keep = request["always_keep"]
        names = keep["anyOf"][0] if "anyOf" in keep else keep
        names["maxItems"] = settings.max_tools
        tool = components[tool_name]["properties"]
        # always_keep names are checked like tool names (non-empty, no control characters)
        names["items"].update(
            minLength=1, maxLength=settings.max_name_chars, pattern=tool["name"]["pattern"]
        )
        tool["name"]["maxLength"] = settings.max_name_chars
        tool["description"]["anyOf"][0]["maxLength"] = settings.max_description_chars
        tool["search_text"]["anyOf"][0]["maxLength"] = settings.max_description_chars


def openapi_yaml(settings: Settings) -> str:
    text: str = yaml.safe_dump(build_openapi(settings), sort_keys=False, allow_unicode=True)
    return text
