"""bgammon.org's protocol codec: events from the reference transcripts, commands, names, secrets.

The JSON lines below are the ones quoted in shared/reference/online-servers.md §2.3 (a real
bgammon server run on 127.0.0.1), completed where the report elides fields with the field list
of the server's ``event.go`` / ``GameState``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bgbot.core.errors import FormatError
from bgbot.core.position import Play, Position
from bgbot.frontends.bgammon import protocol as bp
from bgbot.frontends.bgammon.client import BgammonAccount
from bgbot.frontends.invitations import InvitationPolicy
from bgbot.util import resolve_secret

from .conftest import board

INITIAL = [0, -2, 0, 0, 0, 0, 5, 0, 3, 0, 0, 0, -5, 5, 0, 0, 0, -3, 0, -5, 0, 0, 0, 0, 2, 0, 0, 0]


def board_event(**overrides: object) -> str:
    """A ``board`` event with every field the server sends (values as in the transcript)."""
    event: dict[str, object] = {
        "Type": "board", "Player": "", "Started": 0, "Ended": 0,
        "Player1": {"Number": 1, "Name": "BOT_alpha", "Rating": 0, "Points": 0, "Entered": True,
                    "Inactive": 0, "Icon": 0},
        "Player2": {"Number": 2, "Name": "Guest_human_bravo", "Rating": 0, "Points": 0,
                    "Entered": True, "Inactive": 0, "Icon": 0},
        "Variant": 0, "Board": INITIAL, "Turn": 1, "Roll1": 6, "Roll2": 2, "Roll3": 0,
        "Moves": None, "Winner": 0, "Points": 1, "Crawford": 0, "DoubleValue": 1,
        "DoublePlayer": 0, "DoubleOffered": False, "Reroll": False, "PlayerNumber": 1,
        "Available": [[24, 22], [24, 18], [13, 11], [13, 7], [8, 6], [8, 2], [6, 4]],
        "Forced": False, "Spectating": False,
    }
    event.update(overrides)
    return json.dumps(event)


# ============================================================================ events


def test_transcript_hello_welcome_and_empty_list() -> None:
    hello = bp.parse_event("hello Welcome to bgammon.org! Please log in by sending the 'login' command.")
    assert isinstance(hello, bp.Hello) and hello.message.startswith("Welcome")
    welcome = bp.parse_event('{"Type":"welcome","Player":"","PlayerName":"BOT_alpha","Clients":1,"Games":0}')
    assert welcome == bp.Welcome("BOT_alpha", 1, 0)
    assert bp.parse_event('{"Type":"list","Player":"","Games":null}') == bp.ListEvent(())


def test_transcript_joined_rolled_moved_failedok_notice_win() -> None:
    assert bp.parse_event('{"Type":"joined","Player":"Guest_human_bravo","GameID":1,"PlayerNumber":2}') \
        == bp.Joined("Guest_human_bravo", 1, 2)
    assert bp.parse_event('{"Type":"rolled","Player":"BOT_alpha","Roll1":5,"Roll2":0,"Roll3":0,'
                          '"Selected":false}') == bp.Rolled("BOT_alpha", 5, 0)
    assert bp.parse_event('{"Type":"moved","Player":"Guest_human_bravo","Moves":[[1,3]]}') \
        == bp.Moved("Guest_human_bravo", ((1, 3),))
    failed = bp.parse_event('{"Type":"failedok","Player":"","Reason":"The following legal moves are '
                            'available: 24/18, 22/16, 13/7, 8/2"}')
    assert isinstance(failed, bp.Failed) and failed.kind == "ok" and "24/18" in failed.reason
    assert bp.parse_event('{"Type":"notice","Player":"","Message":"BOT_alpha offers a double (2 points)."}') \
        == bp.Notice("BOT_alpha offers a double (2 points).")
    assert bp.parse_event('{"Type":"win","Player":"BOT_alpha","Points":4,"Rating":0,"Resigned":""}') \
        == bp.Win("BOT_alpha", 4, 0, "")


def test_transcript_board_is_the_initial_position_with_us_on_roll() -> None:
    state = bp.parse_event(board_event())
    assert isinstance(state, bp.BoardState)
    assert state.position() == Position.initial()
    assert state.dice == (6, 2) and state.turn == 1
    assert state.me.name == "BOT_alpha" and state.opponent.name == "Guest_human_bravo"
    assert state.available[0] == (24, 22)


def test_board_sides_and_bars_map_onto_the_core_position() -> None:
    # We have 14 chequers on our 6-point and one on the bar; the opponent has one on its bar,
    # two on our 1-point (its 24-point) and twelve borne off.
    raw = [0] * 28
    raw[6], raw[26] = 14, 1
    raw[1], raw[27], raw[25] = -2, -1, -12
    state = bp.parse_event(board_event(Board=raw))
    assert isinstance(state, bp.BoardState)
    assert state.position() == board({6: 14}, {24: 2}, mover_bar=1, opponent_bar=1)
    assert state.position_for(2) == state.position().swapped()


def test_unknown_event_types_are_kept_not_rejected() -> None:
    event = bp.parse_event('{"Type":"settings","Player":"","AutoPlay":false}')
    assert isinstance(event, bp.Other) and event.type == "settings"


@pytest.mark.parametrize("line, field", [
    ('{"Type":"board","Board":[0,1]', "event"),                         # cut-off JSON
    ("not json at all", "event"),
    ("[1, 2]", "event"),
    ('{"Player":""}', "Type"),
    (board_event(Board=INITIAL[:27]), "Board"),                         # 27 spaces
    (board_event(Board=[3] + INITIAL[1:]), "Board"),                    # 18 chequers of ours
    (board_event(Turn=None), "Turn"),
    (board_event(Turn=3), "Turn"),
    (board_event(Roll1=7), "Roll1"),
    (board_event(DoubleValue=3), "DoubleValue"),
    (board_event(Available=[[24]]), "Available"),
    (board_event(Player2="bravo"), "Player2"),
])
def test_malformed_events_raise_format_errors_naming_the_field(line: str, field: str) -> None:
    with pytest.raises(FormatError) as info:
        bp.parse_event(line)
    assert info.value.field == field


# ============================================================================ commands and names


def test_move_command_writes_bar_and_off_in_the_order_played() -> None:
    pos = board({1: 1, 2: 1}, {1: 2}, mover_bar=1)
    entering = [p for p in pos.legal_plays((6, 1)) if p.steps[0].from_point == 25]
    assert entering and bp.move_command(entering[0]).startswith("move bar/")
    bearing = board({1: 2}, {1: 2})
    assert bp.move_command(bearing.legal_plays((2, 1))[0]) == "move 1/off 1/off"
    with pytest.raises(FormatError):
        bp.move_command(Play())


def test_login_command_sends_underscores_for_spaces_and_hides_the_password_in_errors() -> None:
    assert bp.login_command("bgbot-0.1/en", "bot_alpha", "two words") == "loginjson bgbot-0.1/en bot_alpha two_words"
    assert bp.login_command("bgbot-0.1/en", "bot_alpha", None) == "loginjson bgbot-0.1/en bot_alpha"
    with pytest.raises(FormatError) as info:
        bp.login_command("bgbot-0.1/en", "bot_alpha", "secret\nlist")
    assert "secret" not in str(info.value)


def test_create_command_for_public_and_private_backgammon_tables() -> None:
    assert bp.create_command(5) == "create public 5 0"
    assert bp.create_command(7, "bgbot match") == "create public 7 0 bgbot match"
    assert bp.create_command(3, password="p w") == "create private p_w 3 0"
    with pytest.raises(FormatError):
        bp.create_command(0)


def test_names_are_shown_as_the_server_rewrites_them() -> None:
    assert bp.display_name("bot_Alpha", guest=True) == "BOT_alpha"
    assert bp.display_name("human_bravo", guest=True) == "Guest_human_bravo"
    assert bp.display_name("guest_x", guest=True) == "Guest_x"
    assert bp.display_name("Carol", guest=False) == "carol"


@pytest.mark.parametrize("user", ["alpha", "bot_", "bot alpha", "bot_" + "x" * 15, "BOT-alpha", "1234"])
def test_bot_naming_rule_rejects_names_bgammon_would_refuse_or_ban(user: str) -> None:
    with pytest.raises(FormatError):
        bp.check_bot_name(user)
    assert bp.check_bot_name("BOT_alpha") == "BOT_alpha"


def test_resign_points_follow_the_servers_win_points() -> None:
    # The loser is the mover: nothing borne off -> 2; a chequer in the winner's home board or on
    # the bar -> 3; something borne off -> 1.
    assert bp.resign_points(Position.initial()) == 3          # our back chequers sit in its home
    assert bp.resign_points(board({6: 15}, {1: 15})) == 2
    assert bp.resign_points(board({6: 14}, {1: 15})) == 1
    assert bp.resign_points(board({6: 14}, {1: 15}, mover_bar=1)) == 3


def _raw_board(pos: Position) -> list[int]:
    """The protocol's 28 spaces for ``pos`` with us as the mover (PROTOCOL.md's layout)."""
    raw = [0] * 28
    for i in range(24):
        raw[i + 1] = pos.mover[i] - pos.opponent[23 - i]
    raw[26], raw[27] = pos.mover[24], -pos.opponent[24]
    raw[0], raw[25] = 15 - sum(pos.mover), -(15 - sum(pos.opponent))
    return raw


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 6), st.integers(1, 6)), min_size=0, max_size=40),
       st.randoms(use_true_random=False))
def test_any_reachable_board_round_trips_through_the_28_spaces(rolls: list[tuple[int, int]], rng: object) -> None:
    import random

    assert isinstance(rng, random.Random)
    pos = Position.initial()
    for dice in rolls:
        plays = pos.play_results(dice)
        if plays:
            pos = rng.choice(plays)[1]
        if pos.is_game_over():
            break
        pos = pos.swapped()
    assert bp.position_from_board(_raw_board(pos)) == pos
    assert bp.position_from_board(_raw_board(pos.swapped())) == pos.swapped()


# ============================================================================ account and secrets


def test_password_comes_from_env_then_config_then_systemd_credential(tmp_path: Path) -> None:
    creds = tmp_path / "creds"
    creds.mkdir()
    (creds / "bgammon-bot_alpha").write_text("from-credential\n")
    env = {"CREDENTIALS_DIRECTORY": str(creds)}
    def resolve_password(configured: str | None, user: str,
                         environ: dict[str, str]) -> tuple[str | None, str]:
        return resolve_secret("bgammon", user, value=configured, environ=environ)

    assert resolve_password(None, "bot_alpha", env) == ("from-credential", "credential bgammon-bot_alpha")
    assert resolve_password("from-config", "bot_alpha", env)[1] == "config"
    env["BGBOT_BGAMMON_PASSWORD"] = "from-env"
    assert resolve_password("from-config", "bot_alpha", env) == ("from-env", "environment BGBOT_BGAMMON_PASSWORD")
    env["BGBOT_BGAMMON_PASSWORD_BOT_ALPHA"] = "mine"
    password, source = resolve_password("from-config", "bot_alpha", env)
    assert password == "mine" and "mine" not in source
    assert resolve_password(None, "bot_alpha", {}) == (None, "none")


def test_account_repr_never_shows_the_password() -> None:
    account = BgammonAccount(user="bot_alpha", password="hunter2")
    assert "hunter2" not in repr(account) and "hunter2" not in str(account)
    assert account.display_name == "BOT_alpha"


def test_account_checks_keepalive_name_and_length_against_the_policy() -> None:
    with pytest.raises(FormatError):
        BgammonAccount(user="bot_alpha", keepalive_seconds=40)      # the server's deadline
    with pytest.raises(FormatError):
        BgammonAccount(user="alpha")                                # not a bot name
    with pytest.raises(FormatError):
        BgammonAccount(user="bot_alpha", match_length=9, policy=InvitationPolicy(max_length=7))
