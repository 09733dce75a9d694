"""gnubg's own rollouts read back (`bgbot.engines.gnubg_rollout`), with the real gnubg.

The trial counts are small (36-144) and most positions are races or bear-offs, which gnubg
rolls out in a fraction of a second even with variance reduction, so CI stays fast.
"""

from __future__ import annotations

import asyncio
import json
import stat
from pathlib import Path
from typing import Any

import pytest

from bgbot.core.context import Context, CubeOwner
from bgbot.core.position import Position
from bgbot.core.rules import Rules
from bgbot.engines.gnubg import GnubgEngine
from bgbot.engines.gnubg_rollout import (
    GnubgRolloutError,
    RolloutSettings,
    context_from_json,
    context_to_json,
    parse_rollout_output,
    rollout_commands,
    rollout_play_candidates,
    rollout_position,
    rollout_positions,
    rollout_speed,
    rollout_transcript,
)
from bgbot.players.position_class import game_plan

from .conftest import board

# The side on roll bears its last two chequers off with any roll; the opponent has 10 off.
CERTAIN_WIN = board({1: 2}, {6: 2, 5: 2, 1: 1})
# An 85-89 pip race without gammons: gnubg's race evaluation knows it well (about 68.5 %).
RACE = board({6: 3, 5: 3, 4: 3, 8: 2, 9: 2, 3: 2}, {6: 3, 5: 3, 4: 2, 10: 2, 11: 2, 2: 3})
# A race the side on roll wins about 93 %: with the cube it doubles the opponent out next turn.
BIG_RACE_LEAD = board({6: 2, 5: 2, 4: 2, 3: 2, 2: 2, 1: 2}, {6: 4, 5: 4, 4: 4})
# After the opening 3-1 (8/5 6/5), the other side on roll: contact with gammons both ways.
AFTER_31 = Position.from_position_id("4HPwATDgc/ABMA")
QUICK = RolloutSettings(trials=36, seed=1)


def evaluation(position: Position, plies: int) -> tuple[float, ...]:
    async def ask() -> tuple[float, ...]:
        engine = GnubgEngine()
        try:
            result = await engine.evaluate(position, plies=plies)
            return tuple(result.probabilities)
        finally:
            await engine.close()

    return asyncio.run(ask())


@pytest.mark.gnubg
def test_a_certain_win_rolls_out_to_one_with_no_error(gnubg_binary: str) -> None:
    result = rollout_position(CERTAIN_WIN, settings=QUICK, binary=gnubg_binary)
    assert result.chances.win == 1.0
    assert tuple(result.chances[1:]) == (0.0, 0.0, 0.0, 0.0)
    assert tuple(result.chances_se) == (0.0,) * 5
    assert result.equity == (1.0, 0.0)
    assert result.cubeful_equity is None
    assert result.trials == 36
    assert result.gnubg_version.startswith("1.07")
    assert result.position_id == CERTAIN_WIN.position_id()


@pytest.mark.gnubg
def test_a_race_rolls_out_near_gnubgs_evaluation(gnubg_binary: str) -> None:
    result = rollout_position(RACE, settings=RolloutSettings(trials=144), binary=gnubg_binary)
    expected = evaluation(RACE, 2)
    assert abs(result.chances.win - expected[0]) < 0.01 + 3 * result.chances_se.win
    assert result.chances.win_gammon < 0.01 and result.chances.lose_gammon < 0.01
    # cubeless money equity from the chances: no gammons to speak of, so about 2p - 1
    assert result.equity.value == pytest.approx(2 * result.chances.win - 1, abs=0.002)
    assert 0 < result.equity.se < 0.02


@pytest.mark.gnubg
def test_the_same_seed_gives_the_same_rollout_and_another_seed_another(gnubg_binary: str) -> None:
    settings = RolloutSettings(trials=72, seed=11, variance_reduction=False)
    first, again = rollout_positions([(AFTER_31, None), (AFTER_31, None)], settings,
                                     binary=gnubg_binary)
    other = rollout_position(AFTER_31, settings=RolloutSettings(trials=72, seed=12,
                                                                variance_reduction=False),
                             binary=gnubg_binary)
    assert (first.chances, first.chances_se, first.equity) == (again.chances, again.chances_se,
                                                               again.equity)
    assert first.chances != other.chances


@pytest.mark.gnubg
def test_cubeful_and_cubeless_rollouts_differ_where_the_cube_matters(gnubg_binary: str) -> None:
    cubeless = rollout_position(BIG_RACE_LEAD, settings=QUICK, binary=gnubg_binary)
    cubeful = rollout_position(BIG_RACE_LEAD, settings=RolloutSettings(trials=36, cubeful=True),
                               binary=gnubg_binary)
    assert cubeless.cubeful_equity is None
    assert cubeful.cubeful_equity is not None
    # centred cube: the leader doubles next turn and the opponent must pass, worth ~1 point,
    # where the cubeless game is worth only its winning chances
    assert cubeful.cubeful_equity.value > cubeless.equity.value + 0.05
    assert cubeful.cubeful_equity.value == pytest.approx(1.0, abs=0.05)
    # the opponent owning the cube takes that away
    owned = rollout_position(BIG_RACE_LEAD, Context(cube_value=2, cube_owner=CubeOwner.OPPONENT),
                             RolloutSettings(trials=36, cubeful=True), binary=gnubg_binary)
    assert owned.cubeful_equity is not None
    assert owned.cubeful_equity.value < cubeful.cubeful_equity.value - 0.05


@pytest.mark.gnubg
def test_match_context_is_honoured(gnubg_binary: str) -> None:
    settings = RolloutSettings(trials=72, variance_reduction=False)
    money, dmp = rollout_positions([(AFTER_31, None), (AFTER_31, Context(match_length=1))],
                                   settings, binary=gnubg_binary)
    assert not money.match_play and dmp.match_play
    # at double match point the equity, a match-winning chance, is the chance to win the game
    assert dmp.equity.value == pytest.approx(dmp.chances.win, abs=0.001)
    assert money.equity.value == pytest.approx(
        2 * money.chances.win - 1 + money.chances.win_gammon - money.chances.lose_gammon
        + money.chances.win_backgammon - money.chances.lose_backgammon, abs=0.002)
    # far ahead in a match: 6-0 in a 7-point match (Crawford) the leader's MWC is high
    crawford = rollout_position(AFTER_31, Context(match_length=7, my_score=6, crawford=True),
                                settings, binary=gnubg_binary)
    assert crawford.equity.value > 0.9
    assert crawford.to_json()["equity_unit"] == "mwc"


@pytest.mark.gnubg
def test_rollout_speed_is_trials_over_gnubgs_own_seconds(gnubg_binary: str) -> None:
    speed, result = rollout_speed(RACE, settings=QUICK, binary=gnubg_binary)
    assert result.seconds > 0
    assert speed == pytest.approx(result.trials / result.seconds)


@pytest.mark.gnubg
def test_candidate_plays_rank_the_obvious_best_first(gnubg_binary: str) -> None:
    # 6-5 to play: 6/off 5/off takes two chequers off, anything else fewer
    position = board({6: 2, 5: 2, 4: 2, 2: 1}, {6: 3, 5: 3, 4: 2})
    ranked = rollout_play_candidates(position, (6, 5), settings=QUICK, binary=gnubg_binary)
    assert len(ranked) == len(position.legal_plays((6, 5)))
    assert ranked[0].notation == "6/off 5/off"
    assert ranked[0].equity.value >= ranked[-1].equity.value
    # the mover's view: chances flipped from the opponent-on-roll rollout
    assert ranked[0].chances.win == pytest.approx(1 - ranked[0].rollout.chances.win)


# ------------------------------------------------------------------ malformed output


@pytest.fixture(scope="module")
def transcript(gnubg_binary: str) -> str:
    return rollout_transcript(RACE, None, RolloutSettings(trials=36, cubeful=True),
                              binary=gnubg_binary)


@pytest.mark.gnubg
def test_a_real_transcript_parses(transcript: str) -> None:
    (parsed,) = parse_rollout_output(transcript)
    assert parsed.trials == 36 and parsed.seed == 1 and parsed.cubeful
    assert parsed.cubeful_equity is not None
    assert parsed.variance_reduction and parsed.quasi_random and parsed.truncate is None
    assert parsed.chequer_plies == 0 and parsed.cube_plies == 0


def _last_block_changed(text: str, old: str, new: str) -> str:
    head, done, tail = text.rpartition("Rollout done. Printing final results.")
    assert done and old in tail
    return head + done + tail.replace(old, new, 1)


@pytest.mark.gnubg
@pytest.mark.parametrize("old, new, named", [
    (" - ", " + ", "W WG WBG - L LG LBG"),              # figures line reshaped
    ("CL", "XX", "W WG WBG - L LG LBG"),
    (" [", " (", "standard errors in brackets"),
    ("Full cubeful rollout", "Half cubeful rollout", "Full|Truncated"),
    ("36 games", "many games", "N games"),
    ("Play:", "Moves:", "Play: N-ply"),
])
def test_a_malformed_result_raises_naming_what(transcript: str, old: str, new: str,
                                               named: str) -> None:
    with pytest.raises(GnubgRolloutError, match=named.replace("|", r"\|")):
        parse_rollout_output(_last_block_changed(transcript, old, new))


@pytest.mark.gnubg
def test_inconsistent_figures_raise(transcript: str) -> None:
    head, done, tail = transcript.rpartition("Rollout done. Printing final results.")
    lines = tail.split("\n")
    index = next(i for i, line in enumerate(lines) if " CL " in line and "[" not in line)
    words = lines[index].split()
    words[0] = f"{float(words[0]) + 0.1:.4f}"  # win + lose is no longer 1
    lines[index] = "  " + " ".join(words)
    with pytest.raises(GnubgRolloutError, match="do not add up to 1"):
        parse_rollout_output(head + done + "\n".join(lines))
    with pytest.raises(GnubgRolloutError, match="output ends"):
        parse_rollout_output(head + done + "\nCurrent Position:\n")


@pytest.mark.gnubg
def test_a_gnubg_that_used_other_settings_is_caught(transcript: str, gnubg_binary: str,
                                                    tmp_path: Path) -> None:
    # A stand-in "gnubg" that replays a real transcript made with 36 trials, while 72 are
    # asked for: only a stand-in can disobey, the real gnubg does as it is told.
    fake = tmp_path / "gnubg"
    (tmp_path / "out.txt").write_text(transcript)
    fake.write_text(f"#!/bin/sh\ncat > /dev/null\ncat {tmp_path / 'out.txt'}\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    with pytest.raises(GnubgRolloutError, match="reports trials 36, but 72 was asked for"):
        rollout_position(RACE, settings=RolloutSettings(trials=72, cubeful=True), binary=str(fake))
    fake.write_text("#!/bin/sh\ncat > /dev/null\necho 'GNU Backgammon 1.07.001'\necho nonsense\n")
    with pytest.raises(GnubgRolloutError, match="finished 0 of 1 rollouts"):
        rollout_position(RACE, settings=QUICK, binary=str(fake))


def test_missing_gnubg_and_unsupported_contexts_are_refused() -> None:
    with pytest.raises(GnubgRolloutError, match="not found"):
        rollout_position(RACE, binary="/nonexistent/gnubg")
    with pytest.raises(GnubgRolloutError, match="Crawford rule"):
        rollout_commands(RACE, Context(match_length=5, rules=Rules(crawford=False)), QUICK)
    with pytest.raises(GnubgRolloutError, match="is over"):
        rollout_commands(board({}, {6: 1}), Context(), QUICK)
    with pytest.raises(GnubgRolloutError, match="cubeless game"):
        rollout_commands(RACE, Context(rules=Rules(cube=False)), RolloutSettings(cubeful=True))


def test_commands_set_every_setting_and_end_with_seed_then_rollout() -> None:
    settings = RolloutSettings(trials=216, seed=5, plies=1, truncate=7, cubeful=True,
                               variance_reduction=False, quasi_random=False)
    commands = rollout_commands(RACE, Context(rules=Rules(jacoby=True)), settings)
    assert commands[-2:] == ["set rollout seed 5", "rollout"]
    for expected in ("set threads 1", "set rollout trials 216", "set rollout cubeful on",
                     "set rollout varredn off", "set rollout quasirandom off",
                     "set rollout truncation enable on", "set rollout truncation plies 7",
                     "set rollout chequerplay plies 1", "set rollout cubedecision plies 1",
                     "set rollout truncation cubedecision plies 1", "set jacoby on",
                     "set rollout bearofftruncation exact off"):
        assert expected in commands
    assert commands[-3].startswith(f"set gnubgid {RACE.position_id()}:")


def test_context_json_round_trips() -> None:
    match = Rules().for_match(7)
    for context in (Context(), Context(match_length=7, my_score=6, opponent_score=3, crawford=True,
                                       rules=match),
                    Context(cube_value=4, cube_owner=CubeOwner.ME, rules=Rules(jacoby=True))):
        assert context_from_json(context_to_json(context)) == context
    with pytest.raises(Exception, match="cube_owner"):
        context_from_json({"cube_owner": "nobody"})


# ------------------------------------------------------------------ the committed reference set

DATA = Path(__file__).resolve().parents[1] / "bench" / "data" / "rollout_positions.jsonl"
REQUIRED_KINDS = {"opening", "middle_game_blots", "prime_vs_prime", "back_game", "crashed",
                  "holding", "race", "bearoff_contact", "bearoff"}


def _reference_set() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    lines = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line]
    return lines[0], lines[1:]


def test_the_reference_set_is_well_formed() -> None:
    header, records = _reference_set()
    assert header["format"] == "bgbot-gnubg-rollouts-1"
    reference = RolloutSettings.from_json(header["reference"])
    assert not reference.cubeful and reference.variance_reduction and reference.trials % 36 == 0
    assert len(records) >= 24
    assert REQUIRED_KINDS <= {record["kind"] for record in records}
    assert len({record["id"] for record in records}) == len(records)
    assert sum(1 for record in records if "rollout_2ply" in record) >= 6
    for record in records:
        position = Position.from_position_id(record["id"])
        context = context_from_json(record["context"])
        assert game_plan(position) == record["kind"]
        assert list(position.pip_counts()) == record["pips"]
        rollout = record["rollout"]
        assert RolloutSettings.from_json(rollout["settings"]) == reference
        assert rollout["trials"] == reference.trials
        assert rollout["equity_unit"] == ("points" if context.is_money else "mwc")
        win, wg, wbg, lg, lbg = rollout["chances"]
        assert 0 <= wbg <= wg <= win <= 1 and 0 <= lbg <= lg <= 1 - win + 1e-4
        assert rollout["cubeful_equity"] is None
        if context.is_money:  # the cubeless money equity is the chances' equity
            assert rollout["equity"][0] == pytest.approx(
                2 * win - 1 + wg - lg + wbg - lbg, abs=0.002)


@pytest.mark.gnubg
def test_the_reference_set_reproduces(gnubg_binary: str) -> None:
    """gnubg's rollout of the set's quickest position, again at the recorded setting: the same
    figures to the last printed digit."""
    header, records = _reference_set()
    record = min(records, key=lambda item: item["rollout"]["seconds"])
    result = rollout_position(Position.from_position_id(record["id"]),
                              context_from_json(record["context"]),
                              RolloutSettings.from_json(header["reference"]), binary=gnubg_binary)
    stored = record["rollout"]
    assert [round(x, 6) for x in result.chances] == stored["chances"]
    assert [round(x, 6) for x in result.equity] == stored["equity"]


@pytest.mark.parametrize("field, value", [("trials", 0), ("trials", True), ("plies", 5),
                                          ("truncate", 0), ("seed", -1), ("cubeful", 1)])
def test_bad_settings_are_refused_by_name(field: str, value: object) -> None:
    with pytest.raises(Exception, match=field):
        RolloutSettings(**{field: value})  # type: ignore[arg-type]
    with pytest.raises(Exception, match="unknown keys"):
        RolloutSettings.from_json({"trials": 36, "speed": 2})
