"""The fusion fit on the tiny agent fixture: it runs, and it lowers its own loss."""

import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from tests.fakes import HashingEncoder
from tool_selector.offline.evaluation.dataset import load_dataset
from tool_selector.offline.evaluation.fit import WEIGHTS, Block, dataset_blocks, fit, loss
from tool_selector.pipeline.selector import Selector
from tool_selector.ranking.dense import FloatArray
from tool_selector.ranking.fitted import CROSS
from tool_selector.ranking.fusion import FusionParams

FIXTURE = Path(__file__).parents[1] / "fixtures" / "agent_mini"


@pytest.fixture(scope="module")
def blocks() -> list[Block]:
    selector = Selector(encoder=HashingEncoder(), embed_deadline=math.inf)
    data = load_dataset(FIXTURE.parent, str(FIXTURE))
    return dataset_blocks(selector, data, split="all", limit=None, min_category=1)


def test_weights_are_finite_fusion_params_fields(blocks: list[Block]) -> None:
    weights = fit(blocks).weights
    assert set(weights) == set(WEIGHTS) <= set(FusionParams.__dataclass_fields__)
    assert all(math.isfinite(v) for v in weights.values())


def test_loss_decreases_from_the_start(blocks: list[Block]) -> None:
    result = fit(blocks)
    end = loss(np.array([result.weights[n] for n in WEIGHTS]), blocks)[0]
    assert end < result.start_loss - 0.1
    assert result.start_loss == pytest.approx(math.log(5))


class StaticTable(HashingEncoder):
    """A stand-in static table: other vectors (texts reversed) under another model id."""

    model_id = "test/static-table"

    def encode(self, texts: Sequence[str]) -> FloatArray:
        return super().encode([" ".join(reversed(t.split()[:3])) for t in texts])


def test_the_cross_arm_fits_over_the_static_tables_cosines(blocks: list[Block]) -> None:
    selector = Selector(encoder=HashingEncoder(), embed_deadline=math.inf)
    data = load_dataset(FIXTURE.parent, str(FIXTURE))
    cross = dataset_blocks(selector, data, "all", None, 1, static=StaticTable())
    lexical = slice(3, None)  # the dense half's three columns come first
    assert [b.category for b in cross] == [b.category for b in blocks]
    pairs = list(zip(cross, blocks, strict=True))
    assert all(np.array_equal(c.x[..., lexical], b.x[..., lexical]) for c, b in pairs)
    assert any(not np.allclose(c.x[..., :3], b.x[..., :3]) for c, b in pairs)
    assert fit(cross, CROSS).shipped_loss == pytest.approx(
        loss(np.array([getattr(CROSS, n) for n in WEIGHTS]), cross)[0]
    )


def test_the_static_arm_encodes_the_queries_with_the_table_too(blocks: list[Block]) -> None:
    selector = Selector(encoder=HashingEncoder(), embed_deadline=math.inf)
    data = load_dataset(FIXTURE.parent, str(FIXTURE))
    table = StaticTable()
    cross = dataset_blocks(selector, data, "all", None, 1, static=table)
    static = dataset_blocks(selector, data, "all", None, 1, static=table, static_queries=True)
    pairs = list(zip(static, cross, strict=True))
    assert all(np.array_equal(s.x[..., 3:], c.x[..., 3:]) for s, c in pairs)
    assert any(not np.allclose(s.x[..., :3], c.x[..., :3]) for s, c in pairs)
