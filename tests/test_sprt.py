"""The sequential probability ratio test on paired results (bgbot.referee.sprt)."""

from __future__ import annotations

import importlib.util
import math
import random
import sys
import time
from pathlib import Path
from types import ModuleType

import pytest

from bgbot.core.errors import FormatError
from bgbot.referee.sprt import MIN_PAIRS, SPRT_VALIDATED, Sprt, SprtConfig

ROOT = Path(__file__).resolve().parents[1]


def pair_points(rng: random.Random, ppg: float) -> float:
    """A pair of games with mean ``2 * ppg`` points: mostly 0 and ±1..±3, like mirrored pairs."""
    base = rng.choice([-3, -2, -1, -1, 0, 0, 0, 0, 1, 1, 2, 3])  # mean 0
    return base + 2 * ppg


def run(config: SprtConfig, ppg: float, seed: int, limit: int = 100_000) -> Sprt:
    rng = random.Random(seed)
    sprt = Sprt(config)
    while sprt.verdict is None and sprt.pairs < limit:
        sprt.add(pair_points(rng, ppg), 2)
    return sprt


def test_bounds_are_walds() -> None:
    sprt = Sprt(SprtConfig(0.0, 0.1, alpha=0.05, beta=0.1))
    lower, upper = sprt.bounds
    assert lower == pytest.approx(math.log(0.1 / 0.95))
    assert upper == pytest.approx(math.log(0.9 / 0.05))


def test_big_true_difference_accepts_h1_quickly() -> None:
    sprt = run(SprtConfig(0.0, 0.3), ppg=0.6, seed=1)
    assert sprt.verdict == "H1"
    assert sprt.decided_at is not None and sprt.decided_at < 300


def test_no_difference_accepts_h0() -> None:
    sprt = run(SprtConfig(0.0, 0.3), ppg=0.0, seed=2)
    assert sprt.verdict == "H0"
    assert sprt.llr <= sprt.bounds[0]


def test_hypotheses_may_point_down() -> None:
    sprt = run(SprtConfig(0.0, -0.3), ppg=-0.6, seed=3)
    assert sprt.verdict == "H1"


def test_no_verdict_before_min_pairs_even_on_identical_pairs() -> None:
    sprt = Sprt(SprtConfig(0.0, 0.1))
    for _ in range(MIN_PAIRS - 1):
        sprt.add(0, 2)  # zero variance: the LLR is extreme, but too few pairs to decide
    assert sprt.verdict is None
    assert sprt.llr < sprt.bounds[0]


def test_verdict_is_sticky() -> None:
    sprt = run(SprtConfig(0.0, 0.3), ppg=0.6, seed=4)
    decided = sprt.decided_at
    for _ in range(200):
        sprt.add(-6, 2)
    assert sprt.verdict == "H1" and sprt.decided_at == decided
    assert sprt.as_dict()["pairs"] == sprt.pairs


def test_llr_matches_normal_approximation_for_small_separation() -> None:
    rng = random.Random(5)
    config = SprtConfig(0.0, 0.02)
    sprt = Sprt(config)
    xs = [pair_points(rng, 0.05) / 2 for _ in range(2000)]
    for x in xs:
        sprt.add(2 * x, 2)
    n = len(xs)
    mean = sum(xs) / n
    var = sum((x - mean) ** 2 for x in xs) / n
    approx = n * (config.ppg1 - config.ppg0) * (2 * mean - config.ppg0 - config.ppg1) / (2 * var)
    assert sprt.llr == pytest.approx(approx, rel=0.02)


def test_as_dict_fields() -> None:
    sprt = Sprt(SprtConfig.parse("0,0.1"))
    sprt.add(1, 2)
    data = sprt.as_dict()
    assert {"config", "llr", "bounds", "verdict", "pairs"} <= set(data)
    assert data["config"] == {"ppg0": 0.0, "ppg1": 0.1, "alpha": 0.05, "beta": 0.05}


def test_parse_two_and_four_parts() -> None:
    assert SprtConfig.parse("0,0.1") == SprtConfig(0.0, 0.1, 0.05, 0.05)
    assert SprtConfig.parse(" -0.05 , 0.05 , 0.1 , 0.2 ") == SprtConfig(-0.05, 0.05, 0.1, 0.2)


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("x,0.1", "sprt ppg0"),
        ("0,abc", "sprt ppg1"),
        ("0,0.1,zz,0.05", "sprt alpha"),
        ("0,0.1,0.05,0.7", "sprt beta"),
        ("0,0.1,0", "sprt"),
        ("0.1,0.1", "sprt ppg1"),
        ("0,nan", "sprt ppg1"),
        ("0,5", "sprt ppg1"),
        ("0elo,5elo", "sprt"),
    ],
)
def test_parse_errors_name_the_bad_part(text: str, field: str) -> None:
    with pytest.raises(FormatError) as info:
        SprtConfig.parse(text)
    assert info.value.field == field


def test_add_rejects_empty_unit() -> None:
    with pytest.raises(ValueError):
        Sprt(SprtConfig(0.0, 0.1)).add(1.0, 0)


def _study() -> ModuleType:
    path = ROOT / "bench" / "sprt_study.py"
    spec = importlib.util.spec_from_file_location("sprt_study", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["sprt_study"] = module
    spec.loader.exec_module(module)
    return module


def test_tilting_hits_the_target_mean() -> None:
    study = _study()
    base = study.mirrored_model()
    for target in (-0.2, 0.0, 0.1, 0.4):
        assert base.tilted(2 * target).mean() == pytest.approx(2 * target, abs=1e-9)


def test_quick_study_passes(capsys: pytest.CaptureFixture[str]) -> None:
    start = time.time()
    assert _study().main(["--quick"]) == 0
    assert time.time() - start < 60
    assert "PASSED" in capsys.readouterr().out


def test_validated_flag_matches_the_study() -> None:
    # The flag may only be True when the study's code is in the repo to back it.
    assert not SPRT_VALIDATED or (ROOT / "bench" / "sprt_study.py").exists()
