"""Which static tables the cold arm reads, against which models' query vectors
(``arms.paired``): each table with the model in its place while their dimensions agree."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pytest

from tool_selector.embeddings.encoder import Encoder, Ensemble
from tool_selector.pipeline.arms import paired
from tool_selector.ranking.dense import FloatArray


@dataclass(frozen=True)
class Sized:
    """An encoder stand-in: only its id and dimension matter here."""

    model_id: str
    dim: int

    def encode(self, texts: Sequence[str]) -> FloatArray:
        raise NotImplementedError


MINILM, BGE, WIDE = Sized("minilm", 384), Sized("bge", 384), Sized("wide", 768)
T1, T2 = Sized("minilm-static", 384), Sized("bge-static", 384)


@pytest.mark.parametrize(
    ("tables", "models", "want"),
    [
        ((T1, T2), (MINILM, BGE), ((T1, T2), (MINILM, BGE))),
        ((T1, T2), (MINILM,), ((T1,), (MINILM,))),
        ((T1,), (MINILM, BGE), ((T1,), (MINILM,))),
        ((T1,), (MINILM,), ((T1,), (MINILM,))),
        ((T1, T2), (MINILM, WIDE), ((T1,), (MINILM,))),
        ((T1, T2), (WIDE, BGE), ((T1,), None)),
        ((T1, T2), None, ((T1,), None)),
    ],
    ids=[
        "both",
        "no second model",
        "no second table",
        "one each",
        "second wider",
        "first wider",
        "no model",
    ],
)
def test_each_table_meets_the_model_in_its_place(
    tables: tuple[Encoder, ...],
    models: tuple[Encoder, ...] | None,
    want: tuple[tuple[Encoder, ...], tuple[Encoder, ...] | None],
) -> None:
    got_tables, got_models = paired(Ensemble(tables), None if models is None else Ensemble(models))
    assert got_tables.parts == want[0]
    assert (None if got_models is None else got_models.parts) == want[1]


def test_both_pairs_read_the_ensembles_as_they_are() -> None:
    tables, models = Ensemble([T1, T2]), Ensemble([MINILM, BGE])
    assert paired(tables, models) == (tables, models)
