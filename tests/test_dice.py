"""Dice sources: seeded, scripted and mirrored per-game streams for duplicate-dice play."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from bgbot import IllegalAction, Play, Rules
from bgbot.core.dice import DiceExhausted, DiceSource, MirroredDice, ScriptedDice, SeededDice
from bgbot.core.game import Game, GameOutcome, Moved


def draw(source: DiceSource, game: int, n: int) -> list[tuple[int, int]]:
    dice = source.for_game(game)
    return [dice.opening()] + [dice.roll() for _ in range(n)]


def test_seeded_dice_follow_the_documented_scheme() -> None:
    # The documented derivation: random.Random("bgbot-dice:{seed}:{k}"), randint(1, 6) per die.
    rng = random.Random("bgbot-dice:42:3")
    expected = [(rng.randint(1, 6), rng.randint(1, 6)) for _ in range(21)]
    assert draw(SeededDice(42), 3, 20) == expected


def test_seeded_dice_are_reproducible_per_game() -> None:
    a, b = SeededDice("tournament-7"), SeededDice("tournament-7")
    # However many dice game 0 used in one run, game 1 starts from the same point.
    draw(a, 0, 500)
    assert draw(a, 1, 50) == draw(b, 1, 50)
    assert draw(a, 1, 50) == draw(a, 1, 50)
    assert draw(a, 1, 50) != draw(a, 2, 50)
    assert draw(SeededDice(1), 0, 50) != draw(SeededDice(2), 0, 50)


def test_seeded_dice_are_fair_dice() -> None:
    faces: Counter[int] = Counter()
    for game in range(100):
        stream = SeededDice(7).for_game(game)
        for _ in range(120):
            faces.update(stream.roll())
    assert set(faces) == {1, 2, 3, 4, 5, 6}
    # 24000 dice: each face 4000 expected, sd about 58; 6 sd is a safe bound.
    assert all(abs(count - 4000) < 350 for count in faces.values()), faces


def test_scripted_dice() -> None:
    source = ScriptedDice(openings=[(3, 3), (5, 2)], rolls=[(6, 6), (2, 1)])
    stream = source.for_game(0)
    assert [stream.opening(), stream.opening()] == [(3, 3), (5, 2)]
    assert [stream.roll(), stream.roll()] == [(6, 6), (2, 1)]
    with pytest.raises(DiceExhausted, match="only 2 rolls"):
        stream.roll()
    with pytest.raises(DiceExhausted, match="only 2 opening rolls"):
        stream.opening()
    assert source.for_game(5).roll() == (6, 6)  # every game replays the script


def test_scripted_dice_per_game() -> None:
    source = ScriptedDice.per_game([([(6, 1)], [(2, 2)]), ([(1, 6)], [])])
    assert source.for_game(0).opening() == (6, 1)
    assert source.for_game(1).opening() == (1, 6)
    with pytest.raises(DiceExhausted, match="only 2 games"):
        source.for_game(2)


def test_scripted_dice_must_be_dice() -> None:
    with pytest.raises(IllegalAction):
        ScriptedDice(rolls=[(0, 7)])


def test_mirrored_dice_swap_the_opening_only() -> None:
    source = SeededDice(99)
    mirror = MirroredDice(source)
    for game in range(20):
        original, mirrored = source.for_game(game), mirror.for_game(game)
        for _ in range(3):
            die0, die1 = original.opening()
            assert mirrored.opening() == (die1, die0)
        assert [original.roll() for _ in range(30)] == [mirrored.roll() for _ in range(30)]
    twice = MirroredDice(mirror)
    assert draw(twice, 4, 10) == draw(source, 4, 10)


def _play_game(source: DiceSource, k: int) -> Game:
    """One game with a deterministic choice that depends on neither the seat nor the dice order."""
    stream = source.for_game(k)
    game = Game(Rules(cube=False))
    while not game.opening_roll(*stream.opening()):
        pass
    for _ in range(2000):
        if game.is_over:
            break
        if game.dice is None:
            game.roll(stream.roll())
        results = game.play_results()
        if results:
            # Fewest opponent pips (no hits), then the back chequers first: a quick game.
            game.move(min(results, key=lambda pr: (pr[1].pip_counts()[1], pr[1].mover[::-1]))[0])
        else:
            game.move(Play())
    assert game.is_over
    return game


def test_mirrored_match_gives_each_seat_the_other_seats_dice() -> None:
    source = SeededDice(2024)
    for k in range(3):
        game, mirrored = _play_game(source, k), _play_game(MirroredDice(source), k)
        moves = [(a.seat, a.before, a.before.apply(a.play))
                 for a in game.history if isinstance(a, Moved)]
        mirror = [(a.seat, a.before, a.before.apply(a.play))
                  for a in mirrored.history if isinstance(a, Moved)]
        # The same plays from the same boards, each made by the other seat.
        assert len(moves) > 10
        assert [(1 - seat, before, after) for seat, before, after in moves] == mirror
        outcome, flipped = game.outcome, mirrored.outcome
        assert outcome is not None and flipped is not None
        assert flipped == GameOutcome(1 - outcome.winner, outcome.points, outcome.kind,
                                      outcome.ending, outcome.cube)
