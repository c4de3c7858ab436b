"""Run the service's selection pipeline and the reference rankers over eval data sets.

The service is measured exactly as the endpoint answers a catalog it already holds:
``Selector.select`` on a ``SearchRequest`` over the data set's whole catalog (built once and
reused, as the endpoint reuses a resent tool list), with the real encoder and an in-process
``MemoryCache``. Three rows come from it:

- ``service``: its real answer, abstention included (the hybrid path);
- ``service lexical``: the same ``Selector`` with no encoder attached, i.e. what the endpoint
  answers while a catalog is not embedded yet or with ``TOOL_SELECTOR_ENCODER=none``;
- ``service (no abstention)``: the hybrid top-k order before the relevance bar;
- ``service cold (static)`` (when the run has the static table): what the endpoint answers
  for a catalog the model has not embedded yet, past its embedding deadline: the static
  arm's tool vectors against the model's query vector, an answer that says no match read
  again by the models (``cold_selector``);
- ``service cold (shortlist)`` (likewise): the same with the static arm's first tools
  re-ranked by the models, as when the request's embedding deadline has room for their
  vectors (``pipeline.shortlist``).

Every query of a data set is encoded once, batched, up front; those vectors feed the dense
references and the service's own query cache (so ``ms/query`` leaves the encode out; it is
reported per data set as ``encode ms/query``).

No-match: queries with ``gold: []`` are needs no tool serves, counted as abstention, never as
recall. Optional synthetic negatives (``negatives > 0``) add the older measure: queries of the
other API-style sets against 20 of this catalog's tools (see ``Evaluator.negatives``).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import random
import sys
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, Any

import numpy as np

from tool_selector.embeddings.cache import MemoryCache, NullCache
from tool_selector.embeddings.encoder import Encoder, Ensemble, encode_query, parts_of
from tool_selector.lru import BoundedLRU
from tool_selector.offline.evaluation.dataset import (
    API_SETS,
    BenchQuery,
    Dataset,
    DatasetError,
    Split,
    load_dataset,
    load_files,
    pick_queries,
)
from tool_selector.offline.evaluation.metrics import MetricSums, Scoreboard
from tool_selector.offline.evaluation.references import Ranker, reference_rankers
from tool_selector.pipeline.ask import Ask, ToolSource
from tool_selector.pipeline.catalog_store import CatalogStore, fingerprint
from tool_selector.pipeline.jobs import EmbeddingJobs
from tool_selector.pipeline.selector import Selector
from tool_selector.pipeline.tool_vectors import Shortlist
from tool_selector.ranking.catalog import Catalog, dedupe
from tool_selector.ranking.dense import FloatArray
from tool_selector.ranking.fitted import Rules
from tool_selector.ranking.glossary import Glossary
from tool_selector.ranking.steps import StepRule
from tool_selector.settings import Settings
from tool_selector_client.wire import SearchRequest, Tool

SERVICE = "service"
SERVICE_LEXICAL = "service lexical"
SERVICE_RANKED = "service (no abstention)"
SERVICE_COLD = "service cold (static)"
SERVICE_SHORTLIST = "service cold (shortlist)"
SERVICE_OWN = "service, per-query catalogs"
#: The rows that are the service's own answers (``EvalConfig.answers`` writes them).
SERVICE_ROWS = (SERVICE, SERVICE_LEXICAL, SERVICE_RANKED, SERVICE_COLD, SERVICE_SHORTLIST)
#: Tools of a catalog a negative query is searched against.
NEGATIVE_TOOLS = 20
_CACHE_BYTES = 256 * 1024 * 1024
#: Built catalogs kept for a run, in total tools: every data set's pool plus BFCL's own lists.
_CATALOG_TOOLS = 50_000
#: Query vectors kept: every query of the largest split (MetaTool, about 10,500) fits.
_QUERY_VECTORS = 50_000
#: Queries per encode call (the encoder batches within it; chunks only drive the progress bar).
_ENCODE_CHUNK = 512


@dataclass(frozen=True, slots=True)
class EvalConfig:
    """What to run: data sets (names or folders), file pairs, split, limit, k, negatives."""

    bench_dir: Path
    datasets: Sequence[str]
    split: Split = "test"
    limit: int | None = None
    k: int = 5
    negatives: int = 0
    progress: bool = True
    per_query_catalogs: bool = False
    files: Sequence[tuple[Path, Path]] = ()
    answers: Path | None = None


@dataclass(slots=True)
class DatasetResult:
    """Metrics of every ranker on one data set, overall and per query category."""

    dataset: str
    source: str
    tools: int
    queries: int
    no_match: int
    rankers: dict[str, dict[str, float]]
    categories: dict[str, dict[str, Any]] = field(default_factory=dict)
    encode_ms: float = 0.0
    seconds: float = 0.0
    abstain_negative: float | None = None
    negatives: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "dataset": self.dataset,
            "source": self.source,
            "tools": self.tools,
            "queries": self.queries,
            "no_match_queries": self.no_match,
            "encode_ms_per_query": self.encode_ms,
            "seconds": round(self.seconds, 1),
            "rankers": self.rankers,
            "categories": self.categories,
            "abstain_negative_pct": self.abstain_negative,
            "negatives": self.negatives,
        }


@dataclass(slots=True)
class EvalReport:
    """The results of one ``tool-selector eval`` run."""

    config: EvalConfig
    results: list[DatasetResult] = field(default_factory=list)
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "split": self.config.split,
            "k": self.config.k,
            "limit": self.config.limit,
            "negatives_per_other_dataset": self.config.negatives,
            "split_rule": "dev if sha256(query id)[0] is even, else test",
            "seconds": round(self.seconds, 1),
            "results": [r.as_dict() for r in self.results],
        }


def _bar(items: Sequence[Any], desc: str, enabled: bool) -> Iterable[Any]:
    if not enabled:
        return items
    from tqdm import tqdm  # noqa: PLC0415

    bar: Iterable[Any] = tqdm(items, desc=desc, unit="q", leave=False, mininterval=1.0)
    return bar


def models_from_env(what: str) -> tuple[Encoder, Encoder | None]:
    """The encoder and the static arm this process's settings (``TOOL_SELECTOR_*``) ask for;
    exits 2 naming ``what`` when they ask for no encoder."""
    from tool_selector.embeddings.factory import (  # noqa: PLC0415
        encoder_from_settings,
        static_from_settings,
    )

    settings = Settings.from_env(os.environ)
    encoder = encoder_from_settings(settings)
    if encoder is None:
        sys.stderr.write(f"{what} needs an encoder\n")
        raise SystemExit(2)
    return encoder, static_from_settings(settings)


def cold_selector(warm: Selector, static: Encoder, *, shortlist: int = 0) -> Selector:
    """A selector that answers every catalog as the endpoint answers one the model has not
    embedded yet: past the embedding deadline, from the static arm with the model's query
    vector. Its own catalog store and no embedding cache (it never finds the model's tool
    vectors), a deadline of 0 and closed jobs (nothing embeds them behind it); the query
    vectors are shared with ``warm``. ``shortlist``: the static arm's first that many tools
    re-ranked by the models (``pipeline.shortlist``), as when the deadline has room for their
    vectors, read from ``warm``'s cache (those vectors only, never the whole catalog's where
    the dense arm looks); 0: the static arm's answer, as past the deadline, with its leaders
    read by the models only where it says no match (``Selector``'s rescue: encoded then,
    kept nowhere; its time limit, ``Shortlist.rescue``, not modelled: the best case, as the
    shortlist's row has its deadline's)."""
    jobs = EmbeddingJobs()
    jobs.close(0.0)
    past = Shortlist(0.0, NullCache(), NullCache(), rescue=math.inf)
    return Selector(
        encoder=warm.encoder,
        rules=replace(warm.rules, shortlist=shortlist or warm.rules.shortlist),
        catalogs=CatalogStore(_CATALOG_TOOLS),
        queries=warm.queries,
        jobs=jobs,
        embed_deadline=0.0,
        static=static,
        glossary=warm.glossary,
        shortlist=Shortlist(math.inf, warm.cache) if shortlist else past,
    )


def path_selectors(encoder: Encoder, static: Encoder | None) -> Iterator[tuple[str, Selector]]:
    """The three ranking paths as the endpoint has them: hybrid, cold (static), lexical."""
    warm = Selector(
        encoder=encoder,
        cache=MemoryCache(_CACHE_BYTES),
        catalogs=CatalogStore(_CATALOG_TOOLS),
        queries=BoundedLRU(_QUERY_VECTORS),
        embed_deadline=math.inf,
    )
    yield "hybrid", warm
    if static is not None:
        yield "static", cold_selector(warm, static)
    yield "lexical", Selector(encoder=None, catalogs=CatalogStore(_CATALOG_TOOLS))


def load_all(config: EvalConfig) -> list[Dataset]:
    """Every data set of ``config`` read and checked (names and folders, then file pairs)."""
    named = [load_dataset(config.bench_dir, name) for name in config.datasets]
    return named + [load_files(catalog, queries) for catalog, queries in config.files]


class Evaluator:
    """Holds the encoder, one embedding cache and the catalogs for a whole run.

    ``datasets``: what to evaluate, already read (``load_all``); default: read from
    ``config`` when the run starts. ``static``: the static arm, for the cold row.
    ``multilingual``: the multilingual arm the service rows read non-English queries with;
    ``glossary``: the English words every row glosses them with (as the service does);
    ``steps``: how every row ranks a multi-step pattern (``ranking.steps``; none: whole).
    """

    def __init__(
        self,
        encoder: Encoder,
        config: EvalConfig,
        datasets: Sequence[Dataset] | None = None,
        static: Encoder | None = None,
        multilingual: Encoder | None = None,
        *,
        glossary: Glossary | None = None,
        steps: StepRule | None = None,
    ) -> None:
        self.encoder = encoder
        self.config = config
        self.cache = MemoryCache(_CACHE_BYTES)
        catalogs = CatalogStore(_CATALOG_TOOLS)
        # no embedding deadline: eval measures the hybrid answer a warm catalog gets; the
        # lexical stand-in a cold catalog gets is the ``service lexical`` row
        self.selector = Selector(
            encoder=encoder,
            cache=self.cache,
            catalogs=catalogs,
            queries=BoundedLRU(_QUERY_VECTORS),
            embed_deadline=math.inf,
            multilingual=multilingual,
            glossary=glossary,
            rules=Rules(steps=steps),
        )
        self.lexical = Selector(
            encoder=None, rules=self.selector.rules, catalogs=catalogs, glossary=glossary
        )
        self.cold = None if static is None else cold_selector(self.selector, static)
        size = self.selector.rules.shortlist
        self.shortlist = (
            None
            if static is None or not size
            else cold_selector(self.selector, static, shortlist=size)
        )
        self.datasets = None if datasets is None else list(datasets)
        self._datasets = {d.name: d for d in self.datasets or ()}

    def dataset(self, name: str) -> Dataset:
        """A data set by known name or folder path, read once per run."""
        if name not in self._datasets:
            self._datasets[name] = load_dataset(self.config.bench_dir, name)
        return self._datasets[name]

    def run(self) -> EvalReport:
        """Evaluate every data set, in order."""
        start = time.perf_counter()
        report = EvalReport(config=self.config)
        sink = _AnswerSink(self.config.answers)
        with sink:
            for data in load_all(self.config) if self.datasets is None else self.datasets:
                report.results.append(self.evaluate(data, sink))
        report.seconds = time.perf_counter() - start
        return report

    def request(self, tools: Sequence[Tool], pattern: str) -> SearchRequest:
        return SearchRequest(pattern=pattern, tools=list(tools), top_k=self.config.k)

    def evaluate(self, data: Dataset, sink: _AnswerSink | None = None) -> DatasetResult:
        """Service rows and references on one data set's chosen queries, then its negatives."""
        cfg = self.config
        began = time.perf_counter()
        queries = pick_queries(data.queries, cfg.split, cfg.limit)
        source, catalog, matrix = self._catalog(data)
        refs = reference_rankers(list(catalog.texts), matrix, cfg.k)
        t0 = time.perf_counter()
        qvecs = self._encode(queries)
        encode_ms = 1000 * (time.perf_counter() - t0) / max(len(queries), 1)
        board = Scoreboard(k=cfg.k)
        for q, qvec in zip(_bar(queries, data.name, cfg.progress), qvecs, strict=True):
            answers = self._answers(source, q, qvec, refs)
            for ranker, (names, seconds) in answers.items():
                board.add(ranker, q.category, names, q.gold, seconds)
            if sink is not None:
                sink.write(data.name, q.id, answers)
        first = next(iter(board.overall.values()), MetricSums(k=cfg.k))
        result = DatasetResult(
            dataset=data.name,
            source=str(data.source),
            tools=len(catalog),
            queries=first.queries,
            no_match=first.no_match,
            rankers=board.summary(),
            categories=board.categories(),
            encode_ms=round(encode_ms, 2),
        )
        self._add_negatives(data, result)
        if cfg.per_query_catalogs and data.name == "bfcl":
            result.rankers[SERVICE_OWN] = self._own_catalogs(data, queries)
        result.seconds = time.perf_counter() - began
        if cfg.progress:
            sys.stderr.write(f"{data.name}: {len(queries)} queries in {result.seconds:.0f} s\n")
        return result

    def prepare(self, data: Dataset, queries: Sequence[BenchQuery]) -> ToolSource:
        """``data``'s catalog built and embedded and ``queries``' vectors cached, as the
        service rows have them: for a caller that asks the selectors itself."""
        source = self._catalog(data)[0]
        self._encode(queries)
        return source

    def _catalog(self, data: Dataset) -> tuple[ToolSource, Catalog, FloatArray]:
        """The data set's tools under their fingerprint (the key both selectors find their
        shared catalog by, never decoding the tools again), the catalog and its matrix."""
        tools = list(data.tools)
        catalog, matrix = self.selector.embedded(tools)
        if matrix is None:
            raise DatasetError(f"{data.name}: empty catalog")
        return ToolSource.of(tools, fingerprint(dedupe(tools)[0])), catalog, matrix

    def _encode(self, queries: Sequence[BenchQuery]) -> FloatArray:
        """Every query's vector in batched calls, each model's also put in the service's query
        cache under its own id (the cold row reads the first model's)."""
        texts = [q.text for q in queries]
        chunks = [texts[i : i + _ENCODE_CHUNK] for i in range(0, len(texts), _ENCODE_CHUNK)]
        label = f"encode {len(texts)} queries"
        models = parts_of(self.encoder)
        per_model: list[FloatArray] = [np.zeros((0, m.dim), np.float32) for m in models]
        for chunk in _bar(chunks, label, self.config.progress):
            for i, model in enumerate(models):
                per_model[i] = np.concatenate([per_model[i], encode_query(model, chunk)])
        for model, vecs in zip(models, per_model, strict=True):
            for text, vec in zip(texts, vecs, strict=True):
                self.selector.queries.put((model.model_id, text), vec)
        return Ensemble.of(self.encoder).combine(per_model)

    def _answers(
        self,
        source: ToolSource,
        q: BenchQuery,
        qvec: FloatArray,
        refs: dict[str, Ranker],
    ) -> dict[str, tuple[list[str], float]]:
        """Every ranker's answer to one query, with the seconds it took."""
        request = Ask(pattern=q.text, tools=source, top_k=self.config.k)
        t0 = time.perf_counter()
        hybrid = self.selector.select(request).ranking
        t1 = time.perf_counter()
        lexical = self.lexical.select(request).ranking
        t2 = time.perf_counter()
        out = {
            SERVICE: (hybrid.names, t1 - t0),
            SERVICE_LEXICAL: (lexical.names, t2 - t1),
            SERVICE_RANKED: (list(hybrid.ranked), t1 - t0),
        }
        for row, first in ((SERVICE_COLD, self.cold), (SERVICE_SHORTLIST, self.shortlist)):
            if first is not None:
                t0 = time.perf_counter()
                names = first.select(request).ranking.names
                out[row] = (names, time.perf_counter() - t0)
        for ref, rank in refs.items():
            t0 = time.perf_counter()
            ranked = rank(q.text, qvec)
            out[ref] = (ranked, time.perf_counter() - t0)
        return out

    def _add_negatives(self, data: Dataset, result: DatasetResult) -> None:
        negatives = self.negatives(data)
        if not negatives:
            return
        empty = sum(
            not self.selector.select(self.request(tools, text)).ranking.names
            for text, tools in _bar(negatives, f"{data.name} negatives", self.config.progress)
        )
        result.negatives = len(negatives)
        result.abstain_negative = round(100 * empty / len(negatives), 1)

    def negatives(self, data: Dataset) -> list[tuple[str, list[Tool]]]:
        """Needs this catalog does not serve, as ``(pattern, tools)`` requests.

        Queries of each other API-style set against ``NEGATIVE_TOOLS`` tools of this one
        (sampled per query, seeded by the query id); for BFCL also BFCL's irrelevance idea: a
        query against another query's own tool list, minus any of its gold tools.
        """
        count = self.config.negatives
        out: list[tuple[str, list[Tool]]] = []
        if count <= 0:
            return out
        for other in API_SETS:
            if other == data.name:
                continue
            for q in pick_queries(self.dataset(other).queries, self.config.split, count):
                rng = random.Random(hashlib.sha256(q.id.encode()).digest())  # noqa: S311
                size = min(NEGATIVE_TOOLS, len(data.tools))
                out.append((q.text, rng.sample(list(data.tools), size)))
        if data.name == "bfcl":
            out += self._bfcl_irrelevance(data, count)
        return out

    def _bfcl_irrelevance(self, data: Dataset, count: int) -> list[tuple[str, list[Tool]]]:
        by_name = {t.name: t for t in data.tools}
        pool = [q for q in data.queries if q.catalog]
        out: list[tuple[str, list[Tool]]] = []
        for q in pick_queries(data.queries, self.config.split, count):
            rng = random.Random(hashlib.sha256(q.id.encode()).digest())  # noqa: S311
            other_q = rng.choice(pool)
            tools = [by_name[n] for n in other_q.catalog if n not in q.gold and n in by_name]
            if tools and other_q.id != q.id:
                out.append((q.text, tools))
        return out

    def _own_catalogs(self, data: Dataset, queries: Sequence[BenchQuery]) -> dict[str, float]:
        """The service on each BFCL query's own small tool list (``catalogs.jsonl``)."""
        wanted = {q.id: q for q in queries}
        sums = MetricSums(k=self.config.k)
        rows = [(qid, tools) for qid, tools in data.catalogs() if qid in wanted]
        for qid, tools in _bar(rows, "bfcl own catalogs", self.config.progress):
            t0 = time.perf_counter()
            outcome = self.selector.select(self.request(tools, wanted[qid].text))
            sums.add(outcome.ranking.names, wanted[qid].gold, time.perf_counter() - t0)
        return sums.summary()


class _AnswerSink:
    """Writes the service rows' answer to every query as one JSON line (``--answers``):
    ``{"dataset", "query", "row", "names"}``; two runs' files are equal when every answer is."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._file: IO[str] | None = None

    def __enter__(self) -> _AnswerSink:
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._file = self.path.open("w", encoding="utf-8")
        return self

    def __exit__(self, *exc: object) -> None:
        if self._file is not None:
            self._file.close()

    def write(self, dataset: str, query: str, answers: dict[str, tuple[list[str], float]]) -> None:
        if self._file is None:
            return
        for row in SERVICE_ROWS:
            if row in answers:
                line = {"dataset": dataset, "query": query, "row": row, "names": answers[row][0]}
                self._file.write(json.dumps(line, ensure_ascii=False) + "\n")
