"""The fusion fit on the tiny agent fixture: it runs, and it lowers its own loss."""

import math
from pathlib import Path

import numpy as np
import pytest

from tests.fakes import HashingEncoder
from tool_selector.offline.evaluation.dataset import load_dataset
from tool_selector.offline.evaluation.fit import WEIGHTS, Block, dataset_blocks, fit, loss
from tool_selector.pipeline.selector import Selector
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
