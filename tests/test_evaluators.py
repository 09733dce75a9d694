"""The evaluator by position class (issue 29.6): each class gets its own evaluator, in Python
and in C alike; a crashed network, when given, decides the crashed positions and nothing else;
and every agent spec that existed before the split plays as it did (tests/spec_plays.py
recorded their answers on 440 positions)."""

from __future__ import annotations

import json
import pickle
import struct
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bgbot.core.errors import FormatError
from bgbot.core.position import Position
from bgbot.deciders import create_agent
from bgbot.players import evaluator, network
from bgbot.players.base import Probabilities
from bgbot.players.by_class import BearoffExact, ByClass, Terminal, game_outcome
from bgbot.players.evaluator import HeuristicEvaluator
from bgbot.players.heuristic import HeuristicPlayer, _roll_average_python, shared_evaluator
from bgbot.players.linear import LinearHeads
from bgbot.players.network import PythonNetwork
from bgbot.players.position_class import PositionClass, position_class, side_class
from bgbot.players.race import race_chances
from bgbot.rollout.dice import RolloutDice
from bgbot.rollout.trial import kernel_trials, play_trial

from .conftest import board
from .networks import random_network
from .spec_plays import CHANCES_SAMPLE, CONTEXTS, digest, play_index, spec_text
from .strategies import legal_positions

RECORDED = Path(__file__).with_name("data") / "spec_plays.json"
COMPILED = shared_evaluator().compiled
needs_extension = pytest.mark.skipif(not COMPILED,
                                     reason="the C extension bgbot.players._contact is not built")


def _recorded() -> tuple[list[tuple[Position, tuple[int, int]]], dict[str, Any]]:
    data = json.loads(RECORDED.read_text())
    cases = [(Position.from_position_id(p["id"]), (p["dice"][0], p["dice"][1]))
             for p in data["positions"]]
    return cases, data["specs"]


CASES, SPECS = _recorded()


@needs_extension
@pytest.mark.parametrize("spec", sorted(SPECS))
def test_every_old_spec_plays_as_before(spec: str) -> None:
    """The same plays in money and match play, the same cube chances and evaluations to the
    last bit, as recorded on main before the split (the C build: the pure-Python one rounds
    differently)."""
    found = SPECS[spec]
    player: Any = create_agent(spec_text(spec), seed=7).player
    cases = CASES[:len(found["money"])]
    for name, context in CONTEXTS.items():
        plays = [play_index(position, dice, player.choose_play(position, dice, context))
                 for position, dice in cases]
        changed = [(cases[k][0].position_id(), cases[k][1]) for k in range(len(plays))
                   if plays[k] != found[name][k]]
        assert not changed, f"{spec} {name}: other plays at {changed[:5]}"
    sample = cases[:CHANCES_SAMPLE]
    cube = [digest(player.cube_probabilities(position)) for position, _ in sample]
    assert cube == found["cube"], spec
    evaluations = [digest(player.evaluator.evaluate(position)) for position, _ in sample]
    assert evaluations == found["evaluate"], spec


# ------------------------------------------------------------------------------ the dispatch

BY_CLASS = {kind: [position for position, _ in CASES if position_class(position) is kind]
            for kind in PositionClass if kind is not PositionClass.OVER}
OVER = [board({}, {6: 3}), board({1: 1}, {}), board({}, {19: 2, 6: 13})]
"""Finished games (the side on roll has won a single game, lost one, won a backgammon)."""


class _Marked:
    """An evaluator that answers one recognisable value (its class's index) and keeps what it
    was asked."""

    def __init__(self, index: int) -> None:
        self.value = Probabilities(index / 10.0, 0.0, 0.0, 0.0, 0.0)
        self.asked: list[tuple[tuple[int, ...], tuple[int, ...]]] = []

    def evaluate_sides(self, mover: tuple[int, ...], opponent: tuple[int, ...]) -> Probabilities:
        self.asked.append((mover, opponent))
        return self.value


def test_the_dispatch_asks_the_evaluator_of_the_positions_class() -> None:
    marked = {kind: _Marked(k) for k, kind in enumerate(PositionClass)}
    by_class = ByClass(marked)
    for kind, positions in [*BY_CLASS.items(), (PositionClass.OVER, OVER)]:
        assert len(positions) >= 3
        for position in positions:
            assert by_class.classify(position.mover, position.opponent) is kind
            found = by_class.evaluate_sides(position.mover, position.opponent)
            assert found is marked[kind].value, (kind, position.position_id())
        assert len(marked[kind].asked) == len(positions)
    boards = [(p.mover, p.opponent) for p in BY_CLASS[PositionClass.RACE][:5]]
    assert by_class.evaluate_many(boards) == [marked[PositionClass.RACE].value] * 5
    with pytest.raises(ValueError, match="crashed"):
        ByClass({kind: evaluator for kind, evaluator in marked.items()
                 if kind is not PositionClass.CRASHED})


def test_the_classes_are_position_class_s_and_each_has_its_evaluator() -> None:
    """The player's evaluator: the game's outcome, the bear-off database, the race formula,
    the contact network for crashed and contact positions (no crashed network is shipped)."""
    evaluator = HeuristicEvaluator(compiled=False)
    classes = evaluator.classes
    assert isinstance(classes.evaluator_for(PositionClass.OVER), Terminal)
    assert isinstance(classes.evaluator_for(PositionClass.BEAROFF), BearoffExact)
    assert classes.evaluator_for(PositionClass.RACE) is evaluator.formula
    assert isinstance(classes.evaluator_for(PositionClass.CONTACT), PythonNetwork)
    assert classes.evaluator_for(PositionClass.CRASHED) is classes.evaluator_for(
        PositionClass.CONTACT)
    linear = HeuristicEvaluator(compiled=False, eval="linear")
    assert isinstance(linear.classes.evaluator_for(PositionClass.CONTACT), LinearHeads)
    for position in OVER:
        assert evaluator.evaluate(position) == game_outcome(position)
    assert evaluator.evaluate(OVER[2]) == Probabilities(1.0, 1.0, 1.0, 0.0, 0.0)
    for position in BY_CLASS[PositionClass.BEAROFF][:20]:
        database = evaluator.formula.database
        assert database is not None
        assert evaluator.evaluate(position) == database.probabilities(position)


@settings(max_examples=200, deadline=None)
@given(legal_positions())
def test_the_classes_by_sides_in_python_and_in_c_are_the_classes_of_positions(
        position: Position) -> None:
    kind = position_class(position)
    assert side_class(position.mover, position.opponent) is kind
    assert ByClass({k: Terminal() for k in PositionClass}).classify(
        position.mover, position.opponent) is kind
    if COMPILED:
        from bgbot.players import _contact

        assert _contact.position_class(position.mover, position.opponent) == kind.value


@needs_extension
def test_the_c_classes_of_every_class_are_position_class_s() -> None:
    from bgbot.players import _contact

    for kind, positions in [*BY_CLASS.items(), (PositionClass.OVER, OVER)]:
        for position in positions:
            assert _contact.position_class(position.mover, position.opponent) == kind.value


@needs_extension
def test_the_c_race_formula_is_race_py_s_to_the_last_bit() -> None:
    """Races outside the bear-off zone: the formula in C (the compiled evaluator's slot, which
    the look-ahead and rollout kernels use) gives race.py's chances exactly, with the bear-off
    database's wastage and with Keith's."""
    for use_bearoff in (True, False):
        fast = HeuristicEvaluator(eval="linear", use_bearoff=use_bearoff)
        pure = HeuristicEvaluator(eval="linear", use_bearoff=use_bearoff, compiled=False)
        assert fast._net is not None and fast._net.race_formula is not None
        races = BY_CLASS[PositionClass.RACE]
        for position in [*races, *(p.swapped() for p in races)]:
            assert fast.evaluate(position) == pure.evaluate(position) == race_chances(
                pure.formula.race_side(position.mover), pure.formula.race_side(
                    position.opponent), pure.race_spread), position.position_id()


# ------------------------------------------------------------ the bear-off database in C


def _refuse(*sides: Any) -> Any:
    """A call-back that fails when asked: C must answer without Python."""
    raise AssertionError(f"C called back into Python for {sides}")


def _handed(**options: Any) -> HeuristicEvaluator:
    """A compiled evaluator holding the bear-off database in C."""
    evaluator = HeuristicEvaluator(**options)
    assert evaluator.hand_bearoff_to_c() and evaluator._net is not None
    assert evaluator._net.has_bearoff
    return evaluator


home_boards = st.lists(st.integers(0, 5), min_size=1, max_size=15).map(
    lambda points: tuple(points.count(i) for i in range(6)) + (0,) * 19)


@needs_extension
@settings(max_examples=300, deadline=None)
@given(home_boards, home_boards)
def test_the_bearoff_database_in_c_is_bearoff_py_s_to_the_last_bit(
        mover: tuple[int, ...], opponent: tuple[int, ...]) -> None:
    """Any two home boards: the C evaluator's exact chances are the database's own (gammons
    from the first-off table where a side has all 15), without calling back."""
    fast = _handed()
    database = fast.formula.database
    assert database is not None and fast._net is not None
    expected = database.probabilities(Position(opponent, mover))
    assert fast._net.evaluate(mover, opponent, _refuse) == expected


@needs_extension
def test_the_bearoff_zone_of_the_recorded_positions_is_answered_in_c() -> None:
    fast, pure = _handed(), HeuristicEvaluator(compiled=False)
    assert fast._net is not None
    positions = BY_CLASS[PositionClass.BEAROFF]
    assert positions
    for position in [*positions, *(p.swapped() for p in positions)]:
        assert fast._net.evaluate(position.mover, position.opponent, _refuse) == pure.evaluate(
            position), position.position_id()


@needs_extension
def test_the_c_race_formula_takes_its_effective_pips_from_the_database_in_c() -> None:
    """With the database in C, the formula's effective pips are computed there: the epc
    call-back is never asked, and the chances are race.py's to the last bit."""
    fast = _handed(eval="linear")
    pure = HeuristicEvaluator(eval="linear", compiled=False)
    assert fast._net is not None
    fast._net.set_race_formula((_refuse, fast.race_spread))
    races = BY_CLASS[PositionClass.RACE]
    for position in [*races, *(p.swapped() for p in races)]:
        assert fast._net.evaluate(position.mover, position.opponent, _refuse) == pure.evaluate(
            position), position.position_id()


@needs_extension
def test_the_database_is_handed_to_c_at_the_first_race_and_not_pickled() -> None:
    evaluator = HeuristicEvaluator()
    assert evaluator._net is not None
    evaluator.evaluate(BY_CLASS[PositionClass.CONTACT][0])
    assert not evaluator._net.has_bearoff  # no race yet: nothing loaded for it
    bearoff = BY_CLASS[PositionClass.BEAROFF][0]
    first = evaluator.evaluate(bearoff)  # answered by Python, which hands the tables over
    assert evaluator._net.has_bearoff
    assert evaluator.evaluate(bearoff) == first
    copy = pickle.loads(pickle.dumps(evaluator))
    assert copy._net is not None and not copy._net.has_bearoff
    assert copy.evaluate(bearoff) == first and copy._net.has_bearoff
    assert HeuristicEvaluator(use_bearoff=False).hand_bearoff_to_c() is False


@needs_extension
def test_a_rollout_hands_the_database_over_before_its_trials() -> None:
    evaluator = HeuristicEvaluator()
    assert evaluator._net is not None and not evaluator._net.has_bearoff
    position = BY_CLASS[PositionClass.RACE][0]
    evaluator.rollout(position, 7, 0, 1, 4, False, RolloutDice(7).table)
    assert evaluator._net.has_bearoff


@needs_extension
def test_a_small_database_answers_what_it_holds_and_calls_back_for_the_rest() -> None:
    """A database of at most 3 chequers (as `BGBOT_BEAROFF_MAX_CHEQUERS` makes for tests): C
    answers the bear-offs it holds, exactly, and asks the call-back for the others."""
    from bgbot.players.bearoff import BearoffDatabase

    small = BearoffDatabase.build(3)
    evaluator = HeuristicEvaluator()
    assert evaluator._net is not None
    evaluator._net.set_bearoff(small.c_tables())
    held = board({1: 2, 3: 1}, {2: 1, 6: 2})
    assert evaluator._net.evaluate(held.mover, held.opponent, _refuse) == small.probabilities(
        held)
    asked: list[Any] = []
    answer = (0.5, 0.0, 0.0, 0.0, 0.0)

    def call_back(mover: Any, opponent: Any) -> Any:
        asked.append((tuple(mover), tuple(opponent)))
        return answer

    too_many = board({1: 2, 3: 2}, {2: 1, 6: 2})
    assert evaluator._net.evaluate(too_many.mover, too_many.opponent, call_back) == answer
    assert asked == [(too_many.mover, too_many.opponent)]


@needs_extension
def test_tables_that_do_not_fit_are_refused_by_name() -> None:
    evaluator = HeuristicEvaluator()
    database = evaluator.formula.database
    assert database is not None and evaluator._net is not None
    tables = database.c_tables()
    net = evaluator._net
    for bad, words in [
        (tables[:5], "tuple of 11"),
        ((16, *tables[1:]), "0..15 chequers, not 16"),
        ((14, *tables[1:]), "full.expected has 54264 items, not 38760"),
        ((tables[0], tables[2], *tables[2:]), "full.expected holds 'B'"),
        ((*tables[:4], tables[5], tables[4], *tables[6:]), "full.offsets holds 'f'"),
        ((*tables[:5], tables[10], *tables[6:10], tables[5]), "full: its offsets do not cover"),
        ((*tables[:10], [0.5]), "first.data is not a contiguous array"),
    ]:
        with pytest.raises(ValueError, match=words):
            net.set_bearoff(bad)
        assert not net.has_bearoff
    net.set_bearoff(tables)
    assert net.has_bearoff
    net.set_bearoff(None)
    assert not net.has_bearoff


# --------------------------------------------------------------------- a crashed network

CONTACT_NET = random_network((16,), seed=3)
CRASHED_NET = random_network((12,), seed=5, phase="crashed")
CRASHED = BY_CLASS[PositionClass.CRASHED]
OTHERS = [p for kind, found in BY_CLASS.items() if kind is not PositionClass.CRASHED
          for p in found]


def _evaluators(compiled: bool) -> tuple[HeuristicEvaluator, HeuristicEvaluator]:
    """The same evaluator with and without the crashed network."""
    return tuple(  # type: ignore[return-value]
        HeuristicEvaluator(eval="net", network=CONTACT_NET, crashed_network=crashed,
                           compiled=compiled) for crashed in (CRASHED_NET, None))


def test_a_crashed_network_decides_the_crashed_positions_only() -> None:
    with_net, without = _evaluators(False)
    assert with_net.crashed_network is CRASHED_NET and without.crashed_network is None
    network = PythonNetwork(CRASHED_NET)
    for position in CRASHED:
        found = with_net.evaluate(position)
        assert found == network.chances_for(position.mover, position.opponent)
        assert found != without.evaluate(position)
    for position in OTHERS:
        assert with_net.evaluate(position) == without.evaluate(position)
    assert "crashed net" in with_net.knowledge and "crashed" not in without.knowledge


@needs_extension
def test_a_crashed_network_in_c_is_the_python_dispatch_to_the_last_bit() -> None:
    """The C dispatch (the crashed slot) against the Python dispatch over the same compiled
    evaluations: equal to the last bit on every class; and within float32 rounding of the
    numpy evaluations."""
    fast, plain = _evaluators(True)
    pure, _ = _evaluators(False)
    assert fast._net is not None and fast._net.crashed_network is not None
    assert plain._net is not None and plain._net.crashed_network is None
    for position in [*CRASHED, *OTHERS, *OVER]:
        mover, opponent = position.mover, position.opponent
        c = fast.evaluate_sides(mover, opponent)
        assert c == fast.classes.evaluate_sides(mover, opponent), position.position_id()
        assert max(abs(a - b) for a, b in zip(c, pure.evaluate(position))) <= 1e-5
        if position in CRASHED:
            assert c != plain.evaluate(position)
        else:
            assert c == plain.evaluate(position)
    clone = pickle.loads(pickle.dumps(fast))
    assert clone._net is not None and clone._net.crashed_network is not None
    assert [clone.evaluate(p) for p in CRASHED[:10]] == [fast.evaluate(p) for p in CRASHED[:10]]


@needs_extension
def test_the_kernels_use_the_crashed_network_as_the_python_loops_do() -> None:
    """Look-ahead and rollouts over crashed positions: the C kernels (their own dispatch) give
    the Python definitions' chances to the last bit."""
    fast, plain = _evaluators(True)
    player = HeuristicPlayer(plies=2, evaluator=fast)
    differ = 0
    for position in CRASHED[:12]:
        kernel = fast.roll_average(position)
        assert kernel is not None
        assert tuple(kernel) == tuple(_roll_average_python(fast, position, 0, None))
        differ += kernel != plain.roll_average(position)
        results = position.play_results((6, 5))
        if results:
            after = results[0][1]
            assert tuple(fast.one_ply(after) or ()) == tuple(player._one_ply_python(after))
            assert tuple(fast.two_ply(after, 1, 0.0) or ()) == tuple(
                player._two_ply_python(after, 1, 0.0))
    assert differ >= 10
    dice = RolloutDice(29)
    for position in CRASHED[:3]:
        kernel = kernel_trials(fast, position, dice, 0, 4, 6, True)
        assert kernel == [play_trial(fast, position, dice, t, 6, True) for t in range(4)]


@needs_extension
def test_class_networks_must_be_networks_without_their_own() -> None:
    from bgbot.players._contact import Mlp

    fast, _ = _evaluators(True)
    assert fast._net is not None
    bare = Mlp(CRASHED_NET.parameters, CRASHED_NET.hidden)
    with pytest.raises(TypeError, match="crashed network must be an Mlp"):
        fast._net.set_crashed_network("crashed")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="another network"):
        fast._net.set_crashed_network(fast._net)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="another network"):
        bare.set_race_network(fast._net)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="race formula"):
        bare.set_race_formula((len, 0.0))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="race formula"):
        bare.set_race_formula("formula")  # type: ignore[arg-type]


@needs_extension
def test_self_play_records_the_crashed_positions_for_a_crashed_network() -> None:
    """Training's self-play with ``phase=2`` records the crashed positions only, each valued
    by the evaluation (the crashed network's, in the slot) of the position that follows."""
    from bgbot.players import _selfplay

    fast, _ = _evaluators(True)
    assert fast._net is not None
    boards, values, ends, _ = _selfplay.selfplay(fast._net, fast._race_sides, 4, 40, phase=2)
    n = len(ends)
    assert n > 50 and 5 <= sum(ends) < 40 and ends[-1] == 1
    value = [struct.unpack_from("=5d", values, 40 * k) for k in range(n)]

    def record(k: int) -> Position:
        return Position(tuple(boards[50 * k + 25:50 * k + 50]), tuple(boards[50 * k:50 * k + 25]))

    for k in range(n):
        assert position_class(record(k)) is PositionClass.CRASHED
        if not ends[k]:
            assert value[k] == tuple(fast.evaluate(record(k + 1)))
    with pytest.raises(ValueError, match="phase 0, 1 or 2"):
        _selfplay.selfplay(fast._net, fast._race_sides, 4, 1, phase=3)


def test_a_spec_names_a_crashed_network(tmp_path: Path) -> None:
    """``heuristic:crashed=FILE`` plays with that crashed network; a file of another phase, or
    none at all, is refused naming the option."""
    path = tmp_path / "crashed.bgw"
    CRASHED_NET.write(path)
    agent: Any = create_agent(f"heuristic:crashed={path}")
    evaluator = agent.player.evaluator
    assert evaluator.crashed_network == CRASHED_NET
    assert "crashed net" in agent.knowledge
    position = CRASHED[0]
    assert evaluator.evaluate(position) != shared_evaluator().evaluate(position)
    assert evaluator.evaluate(OTHERS[0]) == shared_evaluator().evaluate(OTHERS[0])
    contact_file = tmp_path / "contact.bgw"
    CONTACT_NET.write(contact_file)
    with pytest.raises(FormatError, match="option crashed.*a contact network, where a crashed"):
        create_agent(f"heuristic:crashed={contact_file}")
    with pytest.raises(FormatError, match="option crashed.*cannot read"):
        create_agent(f"heuristic:crashed={tmp_path / 'missing.bgw'}")


def test_a_spec_names_a_race_network(tmp_path: Path) -> None:
    """``heuristic:race=FILE`` plays the races with that race network (a run's network before
    it is shipped); the other classes are untouched; a file of another phase is refused
    naming the option, and so is a network file with the linear evaluation."""
    path = tmp_path / "race.bgw"
    race_net = random_network((8,), seed=7, phase="race")
    race_net.write(path)
    agent: Any = create_agent(f"heuristic:race={path}")
    evaluator = agent.player.evaluator
    assert evaluator.race_network == race_net
    races = BY_CLASS[PositionClass.RACE]
    assert any(evaluator.evaluate(p) != shared_evaluator().evaluate(p) for p in races)
    network = PythonNetwork(race_net)
    for position in races:  # the network's (in C: float32), or the bear-off database's
        found = tuple(evaluator.evaluate(position))
        assert (found == tuple(shared_evaluator().evaluate(position))
                or found == pytest.approx(
                    tuple(network.chances_for(position.mover, position.opponent)), abs=1e-6))
    assert evaluator.evaluate(OTHERS[0]) == shared_evaluator().evaluate(OTHERS[0])
    contact_file = tmp_path / "contact.bgw"
    CONTACT_NET.write(contact_file)
    with pytest.raises(FormatError, match="option race.*a contact network, where a race"):
        create_agent(f"heuristic:race={contact_file}")
    with pytest.raises(FormatError, match="option race.*eval=linear"):
        create_agent(f"heuristic:eval=linear,race={path}")
    assert create_agent("heuristic:race=model").player.evaluator.race_network is None


# --------------------------------------------------------------------------- the extensions


@needs_extension
def test_a_stale_training_extension_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    """`extension_status` covers training's extension too: a _selfplay whose network inputs
    differ from network.py (a build from older definitions) makes the status stale."""
    from bgbot.players import _selfplay

    monkeypatch.setattr(_selfplay, "encode",
                        lambda boards: (bytes(4 * network.N_INPUTS), bytes(6)))
    evaluator.extension_status.cache_clear()
    evaluator.training_extension_status.cache_clear()
    try:
        assert evaluator.training_extension_status().startswith("stale: bgbot.players._selfplay")
        assert evaluator.extension_status().startswith("stale: bgbot.players._selfplay")
    finally:
        monkeypatch.undo()
        evaluator.extension_status.cache_clear()
        evaluator.training_extension_status.cache_clear()
    assert evaluator.extension_status() == "ok"
    assert evaluator.training_extension_status() == "ok"


def test_the_runtime_extension_has_no_training_kernels() -> None:
    """Self-play and the screening duels live in _selfplay, which the player never imports."""
    try:
        from bgbot.players import _contact
    except ImportError:
        pytest.skip("the C extension bgbot.players._contact is not built")
    for name in ("selfplay", "duel", "duel_pubeval", "roll_averages", "encode"):
        assert not hasattr(_contact, name), name
