"""tools/train_network.py: a run resumed from its checkpoint ends bit-identical to the same run
uninterrupted, and its network is a weights file the player loads."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from bgbot.players.evaluator import HeuristicEvaluator, extension_status
from bgbot.players.network import WeightsFile

ROOT = Path(__file__).resolve().parents[1]
TOOL = ROOT / "tools" / "train_network.py"
SMALL = ["--games", "60", "--hidden", "12", "--screen", "8", "--seed", "5", "--epochs", "2"]

pytestmark = pytest.mark.skipif(extension_status() != "ok",
                                reason="training needs the C extension (self-play in C)")


def _train(run: Path, iterations: int, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(TOOL), "--run", str(run), "--iterations",
                           str(iterations), *SMALL, *extra], capture_output=True, text=True,
                          timeout=600)


def test_a_resumed_run_is_bit_identical_to_an_uninterrupted_one(tmp_path: Path) -> None:
    """With the window average on, which covers the plain run's state and the average's."""
    extra = ("--average-from", "1")
    straight, resumed = tmp_path / "straight", tmp_path / "resumed"
    assert _train(straight, 2, *extra).returncode == 0
    first = _train(resumed, 1, *extra)
    assert first.returncode == 0, first.stderr
    assert "iteration 1:" in first.stdout
    second = _train(resumed, 2, *extra)
    assert second.returncode == 0, second.stderr
    assert "resuming" in second.stdout and "iteration 1:" not in second.stdout
    assert (straight / "network.bgw").read_bytes() == (resumed / "network.bgw").read_bytes()
    average = (resumed / "average.bgw").read_bytes()
    assert average == (straight / "average.bgw").read_bytes()
    assert average != (resumed / "network.bgw").read_bytes()
    assert WeightsFile.read(resumed / "average.bgw").provenance["averaged_iterations"] == [1, 2]
    a, b = np.load(straight / "checkpoint.npz"), np.load(resumed / "checkpoint.npz")
    assert sorted(a.files) == sorted(b.files)
    for key in a.files:
        assert np.array_equal(a[key], b[key]), key
    state = json.loads((resumed / "state.json").read_text())
    assert state["iteration"] == 2 and state["games"] == 120 and state["positions"] > 1000
    assert [h["iteration"] for h in state["history"]] == [1, 2]


def test_the_run_writes_a_network_the_player_loads(tmp_path: Path) -> None:
    run = tmp_path / "run"
    assert _train(run, 1).returncode == 0
    weights = WeightsFile.read(run / "network.bgw")
    assert weights.hidden == (12,)
    assert weights.provenance["tool"] == "tools/train_network.py"
    assert weights.provenance["games"] == 60
    evaluator = HeuristicEvaluator(network=weights)
    assert evaluator.eval == "net"
    assert (run / "best.bgw").exists()


def test_a_run_refuses_to_resume_with_other_settings(tmp_path: Path) -> None:
    run = tmp_path / "run"
    assert _train(run, 1).returncode == 0
    changed = _train(run, 2, "--lam", "0.9")
    assert changed.returncode != 0 and "other settings (lam)" in changed.stderr


def test_smoothing_spreads_over_the_outcomes_still_possible_only() -> None:
    sys.path.insert(0, str(TOOL.parent))
    import train_network

    target = np.array([[1.0, 0, 0, 0, 0, 0], [0.25, 0.25, 0, 0.5, 0, 0]])
    allowed = np.array([[True, True, True, True, True, True],
                        [True, True, False, True, False, False]])
    smoothed = train_network.smooth_targets(target, allowed, 0.06)
    assert np.allclose(smoothed.sum(axis=1), 1.0)
    assert np.all(smoothed[~allowed] == 0.0)  # no mass where the outcome cannot happen
    assert np.all(smoothed[allowed] > 0.0)  # and some everywhere it can: finite logits
    assert smoothed[0, 0] == pytest.approx(0.94 + 0.01)


def test_a_run_started_before_an_option_existed_resumes_with_its_default(tmp_path: Path) -> None:
    run = tmp_path / "run"
    assert _train(run, 1).returncode == 0
    state = json.loads((run / "state.json").read_text())
    del state["config"]["smooth"], state["config"]["output_decay"]
    (run / "state.json").write_text(json.dumps(state))
    again = _train(run, 2)
    assert again.returncode == 0, again.stderr
    assert "resuming" in again.stdout
    refused = _train(run, 3, "--smooth", "0.01")
    assert refused.returncode != 0 and "smooth" in refused.stderr


def test_what_the_mask_rules_out_moves_to_the_next_smaller_outcome() -> None:
    sys.path.insert(0, str(TOOL.parent))
    import train_network

    target = np.array([[0.5, 0.1, 0.1, 0.2, 0.05, 0.05]])
    allowed = np.array([[True, True, False, True, False, False]])
    folded = train_network.fold_impossible(target, allowed)
    assert np.allclose(folded, [[0.5, 0.2, 0.0, 0.3, 0.0, 0.0]])


def test_a_masked_outcome_gets_no_gradient() -> None:
    sys.path.insert(0, str(TOOL.parent))
    import train_network

    rng = np.random.default_rng(3)
    n = train_network.N_OUT
    model = train_network.Model.new([4], np.zeros(train_network.N_INPUTS, np.float32),
                                    np.ones(train_network.N_INPUTS, np.float32), seed=1)
    before = [p.copy() for p in model.params]
    x = rng.standard_normal((8, train_network.N_INPUTS)).astype(np.float32)
    allowed = np.ones((8, n), bool)
    allowed[:, 2] = False  # no backgammon won anywhere in the batch
    target = np.full((8, n), 1.0 / n)  # yet mass on it (as an unfolded target would have)
    model.step(x, allowed, target, lr=1e-2)
    assert np.array_equal(model.params[-2][:, 2], before[-2][:, 2])
    assert model.params[-1][2] == before[-1][2]


def test_a_widened_network_keeps_its_function() -> None:
    """Net2Net widening (``--hidden`` wider than the ``--init`` network): the copies of a unit
    share its output weights, so the chances hardly move (only the copies' small noise)."""
    sys.path.insert(0, str(TOOL.parent))
    import train_network

    rng = np.random.default_rng(4)
    mu = rng.standard_normal(train_network.N_INPUTS).astype(np.float32)
    sd = (1.0 + rng.random(train_network.N_INPUTS)).astype(np.float32)
    model = train_network.Model.new([16], mu, sd, seed=2)
    model.params[-2] *= 30.0  # outputs far from uniform, so a change would show
    wide = model.widened([40], seed=7)
    assert wide.hidden == (40,)
    x = (mu + sd * rng.standard_normal((64, train_network.N_INPUTS))).astype(np.float32)
    allowed = np.ones((64, train_network.N_OUT), bool)
    before, _ = model.forward(x, allowed)
    after, _ = wide.forward(x, allowed)
    assert np.abs(after - before).max() < 0.02
    new_units, old_units = wide.params[0][:, 16:].T, model.params[0].T
    assert not any(np.array_equal(a, b) for a in new_units for b in old_units)  # they can part
    with pytest.raises(ValueError, match="widen"):
        model.widened([8], seed=7)


def test_every_hidden_layer_of_a_deep_network_can_be_widened_and_one_added() -> None:
    """``--hidden 24,24,24`` from a 16,16 network (or ``192,192,192,192,192`` from the shipped
    four layers of 128): each layer widened, then an identity layer after the last, and the
    chances hardly move; a narrower width or a wrong count is refused by name."""
    sys.path.insert(0, str(TOOL.parent))
    import train_network

    rng = np.random.default_rng(8)
    mu = rng.standard_normal(train_network.N_INPUTS).astype(np.float32)
    sd = (1.0 + rng.random(train_network.N_INPUTS)).astype(np.float32)
    model = train_network.Model.new([16, 16], mu, sd, seed=9)
    model.params[-2] *= 30.0
    wide = train_network.reshaped(model, [24, 24, 24], 1, Path("from.bgw"))
    assert wide.hidden == (24, 24, 24)
    x = (mu + sd * rng.standard_normal((64, train_network.N_INPUTS))).astype(np.float32)
    allowed = np.ones((64, train_network.N_OUT), bool)
    before, _ = model.forward(x, allowed)
    after, _ = wide.forward(x, allowed)
    assert np.abs(after - before).max() < 0.02
    assert not np.allclose(after, before, atol=1e-7)  # the copies' noise: they can part
    same = model.widened([16, 16], seed=1)
    assert np.array_equal(same.forward(x, allowed)[0], before)
    with pytest.raises(ValueError, match="cannot widen 16 hidden units to 8"):
        model.widened([24, 8], seed=1)
    with pytest.raises(ValueError, match="one width for each layer"):
        model.widened([24], seed=1)


def test_a_deepened_network_keeps_its_function_exactly() -> None:
    """Net2Net deepening (``--hidden 128,128`` from a 128 ``--init``): the new layer is the
    identity on ReLU outputs, so the chances are the same to the last bit, and one training
    step moves the new layer off the identity."""
    sys.path.insert(0, str(TOOL.parent))
    import train_network

    rng = np.random.default_rng(5)
    mu = rng.standard_normal(train_network.N_INPUTS).astype(np.float32)
    sd = (1.0 + rng.random(train_network.N_INPUTS)).astype(np.float32)
    model = train_network.Model.new([16], mu, sd, seed=3)
    model.params[-2] *= 30.0
    deep = model.deepened()
    assert deep.hidden == (16, 16)
    x = (mu + sd * rng.standard_normal((64, train_network.N_INPUTS))).astype(np.float32)
    allowed = np.ones((64, train_network.N_OUT), bool)
    assert np.array_equal(model.forward(x, allowed)[0], deep.forward(x, allowed)[0])
    target = np.full((64, train_network.N_OUT), 1.0 / train_network.N_OUT)
    deep.step(x, allowed, target, lr=1e-2)
    assert not np.array_equal(deep.params[2], np.eye(16, dtype=np.float32))


def test_an_init_of_either_kind_is_reshaped_to_the_hidden_layers_asked_for() -> None:
    """`reshaped` (used for ``--init RUN/checkpoint.npz`` and ``--init FILE.bgw`` alike):
    one more layer deepens a two-layer network too (``--hidden 128,128,128`` from the
    shipped 128,128), with the same chances; a shape it cannot reach exits naming the file."""
    sys.path.insert(0, str(TOOL.parent))
    import train_network

    rng = np.random.default_rng(6)
    mu = rng.standard_normal(train_network.N_INPUTS).astype(np.float32)
    sd = (1.0 + rng.random(train_network.N_INPUTS)).astype(np.float32)
    model = train_network.Model.new([16, 16], mu, sd, seed=4)
    deep = train_network.reshaped(model, [16, 16, 16], 1, Path("from.bgw"))
    assert deep.hidden == (16, 16, 16)
    x = (mu + sd * rng.standard_normal((32, train_network.N_INPUTS))).astype(np.float32)
    allowed = np.ones((32, train_network.N_OUT), bool)
    assert np.array_equal(model.forward(x, allowed)[0], deep.forward(x, allowed)[0])
    assert train_network.reshaped(model, [16, 16], 1, Path("from.bgw")) is model
    with pytest.raises(SystemExit, match=r"from.bgw has hidden layers \[16, 16\], not --hidden 128"):
        train_network.reshaped(model, [128], 1, Path("from.bgw"))


def test_two_ply_labels_are_the_two_ply_players_values_seen_from_the_side_on_roll() -> None:
    """``--label-plies 2``: a board (the side on roll first) is the position just after the
    other side's move; its label is that move's 2-ply value (`_two_ply_python`, the definition
    of the C kernel), seen from the side on roll."""
    sys.path.insert(0, str(TOOL.parent))
    import train_network

    from bgbot.core.position import Position
    from bgbot.players.heuristic import TWO_PLY_REPLIES, HeuristicPlayer

    on_roll = [0, 0, 0, 0, 0, 5, 0, 3, 0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 0]
    other = [0, 0, 0, 0, 0, 5, 0, 3, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0]
    boards = bytes(on_roll + other) + bytes(other + on_roll)
    labels = train_network.look_ahead(train_network._NoPool(), 1, None, (), None, boards, 2)
    player = HeuristicPlayer(plies=2, evaluator=train_network._race_evaluator())
    for k, (a, b) in enumerate([(on_roll, other), (other, on_roll)]):
        after = Position(opponent=a, mover=b)  # b has just moved, a is to roll
        theirs = player._two_ply_python(after, *TWO_PLY_REPLIES)
        assert np.allclose(labels[k], theirs.flipped(), atol=1e-9), k
    one_ply = train_network.look_ahead(train_network._NoPool(), 1, None, (), None, boards, 1)
    assert not np.allclose(labels, one_ply)  # a deeper look, not the 1-ply one again


def test_searched_labels_choose_each_play_by_its_deeper_value() -> None:
    """``--label-keep K``: each roll's play is the best at 1-ply of its K best at 0-ply, so with
    K = 1 the label is the plain 2-ply one and with more it can only be higher."""
    sys.path.insert(0, str(TOOL.parent))
    import train_network

    on_roll = [0, 0, 0, 0, 0, 5, 0, 3, 0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 0]
    other = [0, 0, 0, 0, 0, 5, 0, 3, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0]
    boards = bytes(on_roll + other) + bytes(other + on_roll)

    def labels(keep: int) -> np.ndarray:
        return train_network.look_ahead(train_network._NoPool(), 1, None, (), None, boards, 2,
                                        keep)

    plain, one, three = labels(0), labels(1), labels(3)
    assert np.allclose(one, plain, atol=1e-9)

    def equity(c: np.ndarray) -> np.ndarray:
        return 2 * c[:, 0] - 1 + c[:, 1] - c[:, 3] + c[:, 2] - c[:, 4]

    assert (equity(three) >= equity(plain) - 1e-12).all()
    assert (equity(three) > equity(plain) + 1e-6).any()


def test_the_anchor_decay_keeps_fine_tuning_near_the_network_it_started_from(
        tmp_path: Path) -> None:
    """``--anchor-decay``: each step also pulls every parameter towards the ``--init`` weights;
    the anchor is part of the checkpoint, so a resumed run pulls towards the same point."""
    sys.path.insert(0, str(TOOL.parent))
    import train_network

    rng = np.random.default_rng(8)
    mu = np.zeros(train_network.N_INPUTS, np.float32)
    sd = np.ones(train_network.N_INPUTS, np.float32)
    x = rng.standard_normal((256, train_network.N_INPUTS)).astype(np.float32)
    allowed = np.ones((256, train_network.N_OUT), bool)
    target = rng.dirichlet(np.ones(train_network.N_OUT), 256).astype(np.float32)

    def distance_after(anchor_decay: float) -> float:
        model = train_network.Model.new([16], mu, sd, seed=3)
        model.anchor = [p.copy() for p in model.params]
        for _ in range(50):
            model.step(x, allowed, target, 1e-2, anchor_decay=anchor_decay)
        return float(sum(np.abs(p - a).sum() for p, a in zip(model.params, model.anchor)))

    assert distance_after(20.0) < 0.5 * distance_after(0.0)
    model = train_network.Model.new([16], mu, sd, seed=3)
    model.anchor = [p + 1.0 for p in model.params]
    np.savez(tmp_path / "c.npz", **model.state())
    again = train_network.Model.from_state(np.load(tmp_path / "c.npz"))
    assert again.anchor is not None
    assert all(np.array_equal(a, b) for a, b in zip(again.anchor, model.anchor))
    refused = subprocess.run([sys.executable, str(TOOL), "--run", str(tmp_path / "r"),
                              "--anchor-decay", "5"], capture_output=True, text=True)
    assert refused.returncode != 0 and "give --init" in refused.stderr


def test_a_run_can_learn_from_the_one_ply_players_games(tmp_path: Path) -> None:
    """``--play-plies 1``: the iteration's games are the 1-ply player's (other games, so other
    records than the 0-ply run's of the same seed), the setting is part of the run's
    configuration, and it refuses the 0-ply runners-up (``--alternatives``)."""
    searched, greedy = tmp_path / "searched", tmp_path / "greedy"
    small = ["--games", "8", "--screen", "0"]
    done = _train(searched, 1, *small, "--play-plies", "1")
    assert done.returncode == 0, done.stderr
    assert _train(greedy, 1, *small).returncode == 0
    assert json.loads((searched / "state.json").read_text())["config"]["play_plies"] == 1
    assert (searched / "network.bgw").read_bytes() != (greedy / "network.bgw").read_bytes()
    refused = _train(tmp_path / "r", 1, *small, "--play-plies", "1", "--alternatives", "2")
    assert refused.returncode != 0 and "--play-plies 0" in refused.stderr


def test_the_window_average_is_the_mean_of_the_last_iterations_weights(tmp_path: Path) -> None:
    """``--keep-averages-every 1`` keeps the running mean after each iteration; the window
    since iteration 1 (`window_average` of the means after 3 and after 1) is the mean of the
    weights after iterations 2 and 3 (as float32 files hold them), and mismatched inputs are
    refused with a reason."""
    sys.path.insert(0, str(TOOL.parent))
    import train_network

    run = tmp_path / "run"
    keep = ("--average-from", "1", "--keep-averages-every", "1")
    assert _train(run, 2, *keep).returncode == 0
    second = WeightsFile.read(run / "network.bgw")
    done = _train(run, 3, *keep)
    assert done.returncode == 0, done.stderr
    third = WeightsFile.read(run / "network.bgw")
    kept = sorted(p.name for p in (run / "averages").iterdir())
    assert kept == ["0001.bgw", "0002.bgw", "0003.bgw"]
    first_mean = WeightsFile.read(run / "averages" / "0001.bgw")
    last_mean = WeightsFile.read(run / "averages" / "0003.bgw")
    assert (run / "averages" / "0003.bgw").read_bytes() == (run / "average.bgw").read_bytes()
    window = train_network.window_average(last_mean, first_mean)
    assert window.provenance["averaged_iterations"] == [2, 3]
    got = np.frombuffer(window.parameters, "<f4")
    want = (np.frombuffer(second.parameters, "<f4").astype(np.float64)
            + np.frombuffer(third.parameters, "<f4")) / 2
    assert np.allclose(got, want, rtol=1e-4, atol=1e-5)
    assert not np.allclose(got, np.frombuffer(last_mean.parameters, "<f4"), rtol=1e-4, atol=1e-5)
    with pytest.raises(ValueError, match="not two running means"):
        train_network.window_average(first_mean, last_mean)
    with pytest.raises(ValueError, match="averaged_iterations"):
        train_network.window_average(last_mean, second)
    # an option the trainer gained after the run began is recorded as None from then on:
    # still the same run (training/contact-deep's means after 112 and 144 differ so)
    newer = dataclasses.replace(last_mean, provenance={
        **last_mean.provenance,
        "config": {**last_mean.provenance["config"], "an_option_added_later": None}})
    assert train_network.window_average(newer, first_mean).parameters == window.parameters
    other = dataclasses.replace(last_mean, provenance={
        **last_mean.provenance, "config": {**last_mean.provenance["config"], "lam": 0.1}})
    with pytest.raises(ValueError, match="not two running means"):
        train_network.window_average(other, first_mean)


def test_a_window_that_ends_before_the_last_iteration_can_be_shipped(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``--ship --ship-which window --window-since M --window-until N`` ships the mean of the
    weights after iterations M+1..N (from the running means kept after M and N), not M+1 to
    the last, and records its checksum; a window whose end the run did not keep is refused."""
    sys.path.insert(0, str(TOOL.parent))
    import train_network

    run = tmp_path / "run"
    assert _train(run, 3, "--average-from", "1", "--keep-averages-every", "1").returncode == 0
    package = tmp_path / "root" / "bgbot" / "players"
    package.mkdir(parents=True)
    (package / "network.py").write_text('\nSHIPPED_SHA256 = "old"\n')
    monkeypatch.setattr(train_network, "ROOT", tmp_path / "root")
    monkeypatch.setattr(train_network, "SHIP_DIR", package / "data")
    train_network.ship(run, "window", since=1, until=2)
    shipped = WeightsFile.read(package / "data" / "contact.bgw")
    want = train_network.window_average(WeightsFile.read(run / "averages" / "0002.bgw"),
                                        WeightsFile.read(run / "averages" / "0001.bgw"))
    assert shipped.provenance["averaged_iterations"] == [2, 2]
    assert shipped.parameters == want.parameters
    digest = hashlib.sha256((package / "data" / "contact.bgw").read_bytes()).hexdigest()
    assert f'SHIPPED_SHA256 = "{digest}"' in (package / "network.py").read_text()
    with pytest.raises(SystemExit, match="after iteration 7"):
        train_network.ship(run, "window", since=1, until=7)


def test_rollout_labels_are_the_rollout_of_the_network_that_plays(tmp_path: Path) -> None:
    """``--label-rollout T,N``: a board's label is the variance-reduced rollout of its position
    (the side on roll first) by the network's own 0-ply player, the same as `bgbot.rollout`
    gives for that network and dice; the same board gets the same label in any job, and a
    deeper cut changes it."""
    sys.path.insert(0, str(TOOL.parent))
    import train_network

    from bgbot.core.position import Position
    from bgbot.rollout.dice import RolloutDice, mix64
    from bgbot.rollout.trial import play_trial

    shipped = WeightsFile.read(ROOT / "bgbot" / "players" / "data" / "contact.bgw")
    on_roll = [0, 0, 0, 0, 0, 5, 0, 3, 0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 0]
    other = [0, 0, 0, 0, 0, 5, 0, 3, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0]
    boards = bytes(on_roll + other) + bytes(other + on_roll)
    args = (train_network._NoPool(), 1, shipped.parameters, shipped.hidden, None)
    labels = train_network.look_ahead(*args, boards, 1, rollout=(2, 36, 7))
    alone = train_network.look_ahead(*args, boards[50:], 1, rollout=(2, 36, 7))
    assert np.array_equal(labels[1], alone[0])
    evaluator = HeuristicEvaluator(network=shipped, race_network=False, compiled=False)
    board = boards[:50]
    digest = int.from_bytes(__import__("hashlib").sha256(board).digest()[:8], "little")
    dice = RolloutDice(mix64(7 ^ digest ^ train_network._ROLLOUT_SALT) >> 1)
    position = Position(opponent=other, mover=on_roll)
    trials = [play_trial(evaluator, position, dice, t, 2, True) for t in range(36)]
    expected = np.mean([np.subtract(t.outcome, t.luck) for t in trials], axis=0)
    assert np.allclose(labels[0], expected, atol=1e-9)
    deeper = train_network.look_ahead(*args, boards, 1, rollout=(4, 36, 7))
    assert not np.allclose(labels, deeper)


def test_a_run_starts_from_a_network_file_with_its_play(tmp_path: Path) -> None:
    """``--init FILE.bgw`` (the shipped network): the model computes what the file computes
    (the input scaling measured on its own games and taken out of the first layer), and a run
    with rollout labels starts from it and finishes."""
    sys.path.insert(0, str(TOOL.parent))
    import train_network

    shipped_path = ROOT / "bgbot" / "players" / "data" / "contact.bgw"
    shipped = WeightsFile.read(shipped_path)
    model = train_network.model_of_weights(shipped, 3, 0.5)
    for (w, b), (w0, b0) in zip(model.export(), shipped.arrays()):
        assert np.allclose(w, w0, atol=1e-5) and np.allclose(b, b0, atol=1e-5)
    run = tmp_path / "run"
    done = subprocess.run([sys.executable, str(TOOL), "--run", str(run), "--iterations", "1",
                           "--games", "20", "--hidden", ",".join(map(str, shipped.hidden)),
                           "--init", str(shipped_path), "--oneply", "0.02", "--oneply-only",
                           "--oneply-mix", "1", "--label-rollout", "1,36", "--screen", "4",
                           "--lr", "1e-5"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    state = json.loads((run / "state.json").read_text())
    assert state["config"]["label_rollout"] == [1, 36] and state["iteration"] == 1
    refused = subprocess.run([sys.executable, str(TOOL), "--run", str(tmp_path / "x"),
                              "--label-rollout", "5,30", "--oneply", "0.1"],
                             capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2 and "multiple of 36" in refused.stderr


def test_a_crashed_run_trains_the_crashed_network_beside_the_shipped_contact_one(
        tmp_path: Path) -> None:
    """``--phase crashed --contact FILE``: self-play with the contact network, the network
    being trained evaluating the crashed positions (it starts as a copy of ``--init``), TD on
    the crashed positions alone; its file is a crashed network the player takes
    (``heuristic:crashed=FILE``), and a resumed run ends bit-identical."""
    shipped = ROOT / "bgbot" / "players" / "data" / "contact.bgw"
    hidden = ",".join(map(str, WeightsFile.read(shipped).hidden))
    common = ["--phase", "crashed", "--contact", str(shipped), "--init", str(shipped),
              "--hidden", hidden, "--games", "40", "--screen", "4", "--lr", "1e-5",
              "--seed", "3"]

    def train(run: Path, iterations: int) -> None:
        done = subprocess.run([sys.executable, str(TOOL), "--run", str(run), "--iterations",
                               str(iterations), *common], capture_output=True, text=True,
                              timeout=600)
        assert done.returncode == 0, done.stderr

    train(tmp_path / "straight", 2)
    train(tmp_path / "resumed", 1)
    train(tmp_path / "resumed", 2)
    made = WeightsFile.read(tmp_path / "straight" / "network.bgw")
    assert made.phase == "crashed"
    assert made.parameters == WeightsFile.read(tmp_path / "resumed" / "network.bgw").parameters
    state = json.loads((tmp_path / "straight" / "state.json").read_text())
    assert 0 < state["positions"] < 40 * 60  # crashed positions only: a fraction of the game

    from bgbot.deciders import create_agent

    agent = create_agent(f"heuristic:crashed={tmp_path / 'straight' / 'network.bgw'}")
    assert f"crashed net {made.sha256[:16]}" in (agent.knowledge or "")
