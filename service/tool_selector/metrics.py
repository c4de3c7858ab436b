"""Prometheus metrics, declared once on an injected registry (tests get their own).

Names are ``tool_selector_*``; every label has a small closed set of values.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, Info

from tool_selector.ranking.request_parts import PATTERN_KINDS

#: The results ``tool_selector_rescues_total`` counts: ``pipeline.columns.Rescue``'s values
#: (a test holds them equal; imported here, that module would bring numpy and the pipeline).
RESCUE_RESULTS = ("read", "declined")
#: The routes ``tool_selector_errors_total`` counts a refusal under (``http.edge.route_of``):
#: the two search contracts' paths (``tool_selector_request_duration_seconds``'s ``contract``,
#: which counts every request on them), the feedback path, the catalog report's, any other.
ROUTES = ("search", "compress", "feedback", "lint", "other")

#: Request latency buckets, dense around the proxy's 150 ms p95 budget.
LATENCY_BUCKETS = (
    0.001,
    0.0025,
    0.005,
    0.0075,
    0.01,
    0.015,
    0.02,
    0.03,
    0.05,
    0.075,
    0.1,
    0.125,
    0.15,
    0.2,
    0.3,
    0.5,
    1.0,
    2.0,
    5.0,
)
STAGE_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0)
SIZE_BUCKETS = (0, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000)


class Metrics:
    """Every metric the service exports."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.registry = registry
        self.request_seconds = Histogram(
            "tool_selector_request_duration_seconds",
            "Time to answer a search request, from an in-flight slot held (refused before one: "
            "from its arrival) to the response, by outcome (errors too) and wire contract (an "
            "error's: its path's).",
            ["outcome", "contract"],
            buckets=LATENCY_BUCKETS,
            registry=registry,
        )
        self.stage_seconds = Histogram(
            "tool_selector_stage_duration_seconds",
            "Time spent in each ranking stage.",
            ["stage"],
            buckets=STAGE_BUCKETS,
            registry=registry,
        )
        self.errors = Counter(
            "tool_selector_errors_total",
            "Requests refused, by error code and route (search, compress: the search paths, "
            "as tool_selector_request_duration_seconds counts them; feedback, lint, other).",
            ["code", "route"],
            registry=registry,
        )
        self.tools_per_request = Histogram(
            "tool_selector_tools_per_request",
            "Distinct tools per search request.",
            buckets=SIZE_BUCKETS,
            registry=registry,
        )
        self.selected = Histogram(
            "tool_selector_selected_tools",
            "Names returned per search request.",
            buckets=SIZE_BUCKETS[:8],
            registry=registry,
        )
        self.no_match = Counter(
            "tool_selector_no_match_total",
            "Searches where no tool cleared the relevance bar.",
            registry=registry,
        )
        self.empty_answers = Counter(
            "tool_selector_empty_answers_total",
            "Searches answered with no name at all, by wire contract (every proxy release "
            "reads an empty answer as a failure and falls back).",
            ["contract"],
            registry=registry,
        )
        self.patterns_cut = Counter(
            "tool_selector_patterns_cut_total",
            "Patterns (or queries) longer than max_pattern_chars, by the reading ranked "
            "(request_found, prose_fallback, positional_cut).",
            ["kind"],
            registry=registry,
        )
        for kind in PATTERN_KINDS:  # every reading reads 0 until it first ranks
            self.patterns_cut.labels(kind)
        self.duplicates = Counter(
            "tool_selector_duplicate_tools_total",
            "Tool entries dropped because an earlier entry had the same name.",
            registry=registry,
        )
        self.unknown_always_keep = Counter(
            "tool_selector_unknown_always_keep_total",
            "always_keep names not present in the request's tools (ignored).",
            registry=registry,
        )
        self.controls_removed = Counter(
            "tool_selector_controls_removed_tools_total",
            "Tools a caller's control left out, by control (each filter, budget, min_score).",
            ["control"],
            registry=registry,
        )
        self.budget_cut = Counter(
            "tool_selector_budget_cut_answers_total",
            "Searches whose answer the budget (max_bytes or max_tools) cut.",
            registry=registry,
        )
        self.context_requests = Counter(
            "tool_selector_context_requests_total",
            "Searches that carried conversation context (messages or recent_tools).",
            registry=registry,
        )
        self.embedded_answers = Counter(
            "tool_selector_embedded_answers_total",
            "Searches answered, by whether the encoders whose cosines ranked had the whole "
            "catalog's vectors (complete), some (partial: the second model still embedding, or "
            "the models' vectors of a new catalog's first ten tools) or no encoder ranked "
            "(none: the static table or BM25 alone).",
            ["embedded"],
            registry=registry,
        )
        self.rescues = Counter(
            "tool_selector_rescues_total",
            "Static answers that said no match on the static tables' word alone, a new "
            "catalog's leaders unread past the deadline, by what the rescue did: read (the "
            "models read the leaders, from the caches or encoded, and the answer rests on their "
            "cosines) or declined (their encode predicted past "
            "TOOL_SELECTOR_SHORTLIST_RESCUE_MS, or the deadline's rest if more: the static "
            "answer stands).",
            ["result"],
            registry=registry,
        )
        for result in RESCUE_RESULTS:  # each reads 0 until the first rescue
            self.rescues.labels(result)
        self.ranking_path = Counter(
            "tool_selector_ranking_path_total",
            "Searches answered, by ranking path.",
            ["path"],
            registry=registry,
        )
        self.cache = Counter(
            "tool_selector_embedding_cache_total",
            "Tool-embedding lookups by cache tier and result.",
            ["tier", "result"],
            registry=registry,
        )
        self.in_flight = Gauge(
            "tool_selector_in_flight_requests",
            "Search requests being processed.",
            registry=registry,
        )
        self.body_bytes = Gauge(
            "tool_selector_request_body_bytes",
            "Request body bytes buffered now by search requests (bounded by body_buffer_bytes).",
            registry=registry,
        )
        self.admission_wait = Histogram(
            "tool_selector_admission_wait_seconds",
            "Time a search request waited for an in-flight slot (only requests that found none "
            "free), by whether it got one (admitted) or a 503 (refused).",
            ["result"],
            buckets=LATENCY_BUCKETS,
            registry=registry,
        )
        self.build = Info(
            "tool_selector_build", "Service version and embedding model.", registry=registry
        )
        self.redis_breaker_open = Gauge(
            "tool_selector_redis_breaker_open",
            "1 while the Redis circuit breaker is open (Redis skipped), else 0.",
            registry=registry,
        )
        self.learn_breaker_open = Gauge(
            "tool_selector_learn_breaker_open",
            "1 while the learning Redis's circuit breaker is open (searches answered "
            "unremembered, evidence as last read, feedback 503), else 0.",
            registry=registry,
        )
        self.redis_breaker_transitions = Counter(
            "tool_selector_redis_breaker_transitions_total",
            "Redis circuit-breaker state changes, by new state.",
            ["state"],
            registry=registry,
        )
        self.redis_writes_dropped = Counter(
            "tool_selector_redis_writes_dropped_total",
            "Embeddings not written to Redis (breaker open, queue full, or write failed).",
            registry=registry,
        )
        self.embedding_jobs = Counter(
            "tool_selector_embedding_jobs_total",
            "Catalog embedding jobs, by event (inline, queued, dropped, done, failed).",
            ["event"],
            registry=registry,
        )
        self.embedding_queue_depth = Gauge(
            "tool_selector_embedding_queue_depth",
            "Catalog embedding jobs queued or running in the background.",
            registry=registry,
        )
        self.catalog_cache = Counter(
            "tool_selector_catalog_cache_total",
            "Catalog lookups (built index and embedding matrix reused or not), by result.",
            ["result"],
            registry=registry,
        )
        self.query_cache = Counter(
            "tool_selector_query_cache_total",
            "Query-embedding lookups, by result.",
            ["result"],
            registry=registry,
        )

        self.feedback = Counter(
            "tool_selector_feedback_total",
            "Feedback on searches, by result (accepted, duplicate, unknown_search, "
            "model_loading: its search was answered while the model was loading, "
            "unshown_only: it named only tools the search had not shown, learning_off, "
            "unavailable: the store could not keep it, bad_request: its body was refused).",
            ["result"],
            registry=registry,
        )
        self.feedback_names = Counter(
            "tool_selector_feedback_names_total",
            "Tool names in accepted feedback: called (kept) or unshown (moved nothing).",
            ["kind"],
            registry=registry,
        )
        self.learned_answers = Counter(
            "tool_selector_learned_answers_total",
            "Searches whose first top_k tools the scope's learned evidence changed.",
            registry=registry,
        )
        self.learn_scopes = Gauge(
            "tool_selector_learn_scopes",
            "Scopes whose learned evidence this replica has read.",
            registry=registry,
        )
        self.learn_events = Gauge(
            "tool_selector_learn_events",
            "Feedback records in the learned evidence this replica has read, all scopes.",
            registry=registry,
        )
        self.learn_scopes_dropped = Counter(
            "tool_selector_learn_scopes_dropped_total",
            "Scopes whose feedback this replica's store dropped whole to keep "
            "TOOL_SELECTOR_LEARN_MAX_TOTAL_EVENTS (the scope fed least recently first).",
            registry=registry,
        )
        self.learn_largest_scope = Gauge(
            "tool_selector_learn_largest_scope_events",
            "Feedback records of the largest scope this replica has read.",
            registry=registry,
        )


RATIO_BUCKETS = (0.0, 0.2, 0.34, 0.5, 0.67, 0.8, 0.99, 1.0)
DURATION_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0)


class ShadowMetrics:
    """Agreement between the service's answers and the relevance scorer's picks."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.comparisons = Counter(
            "tool_selector_shadow_comparisons_total",
            "Searches compared with the relevance scorer.",
            registry=registry,
        )
        self.top1 = Counter(
            "tool_selector_shadow_top1_total",
            "Comparisons by whether both first picks are the same "
            "(agree, disagree; not_comparable when a side abstained).",
            ["result"],
            registry=registry,
        )
        self.overlap = Histogram(
            "tool_selector_shadow_overlap_ratio",
            "overlap@k: shared picks / the longer pick list (always_keep names excluded).",
            buckets=RATIO_BUCKETS,
            registry=registry,
        )
        self.jaccard = Histogram(
            "tool_selector_shadow_jaccard_ratio",
            "Jaccard similarity of the two pick sets (always_keep names excluded).",
            buckets=RATIO_BUCKETS,
            registry=registry,
        )
        self.abstain = Counter(
            "tool_selector_shadow_abstain_total",
            "Comparisons by which side returned nothing (none, selector, relevance, both).",
            ["side"],
            registry=registry,
        )
        self.errors = Counter(
            "tool_selector_shadow_errors_total",
            "Shadow comparisons that failed (swallowed; the answer was already sent).",
            registry=registry,
        )
        self.skipped = Counter(
            "tool_selector_shadow_skipped_total",
            "Shadow comparisons skipped because too many were waiting.",
            registry=registry,
        )
        self.seconds = Histogram(
            "tool_selector_shadow_duration_seconds",
            "Time to compute one shadow comparison (off the request path).",
            buckets=DURATION_BUCKETS,
            registry=registry,
        )
