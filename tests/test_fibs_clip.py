"""The CLIP line splitter and parser, against the lines of reference/online-servers.md §1
(spec examples, the 2020 FIBS transcript, the BaldLies transcript)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bgbot.formats.fibsboard import Request, Side
from bgbot.frontends.fibs import clip

SPEC_BOARD = ("board:You:someplayer:3:0:0:0:-2:0:0:0:0:5:0:3:0:0:0:-5:5:0:0:0:-3:0:-5:0:0:0:0:2:0"
              ":1:6:2:0:0:1:1:1:0:1:-1:0:25:0:0:0:0:2:0:0:0")


def lines(*chunks: bytes) -> list[str]:
    splitter = clip.LineSplitter()
    out: list[str] = []
    for chunk in chunks:
        out.extend(splitter.feed(chunk))
    return out + splitter.flush()


def test_login_prompt_without_line_end_is_a_line() -> None:
    splitter = clip.LineSplitter()
    assert splitter.feed(b"Welcome\r\n\xff\xfb\x01login: ") == ["Welcome", "login:"]
    assert splitter.pending == ""


def test_lines_split_across_reads_crlf_bell_and_trailing_spaces() -> None:
    assert lines(b"7 alice alice logs", b" in.  \r", b"\n12 bob hi\x07\r\n") == [
        "7 alice alice logs in.", "12 bob hi"]


def test_unterminated_line_is_handed_out_by_flush() -> None:
    splitter = clip.LineSplitter()
    assert splitter.feed(b"alice wants to play a 5 point match with you.\r\nType 'join alice' "
                         b"to accept.") == ["alice wants to play a 5 point match with you."]
    assert splitter.flush() == ["Type 'join alice' to accept."]


def test_spanner_who_line_glued_to_a_board_is_split_at_the_53rd_field() -> None:
    glued = SPEC_BOARD[:-1] + "05 anotherplayer - - 0 0 1439.79 1 2 3 host client email"
    out = lines(glued.encode() + b"\r\n")
    assert out[0] == SPEC_BOARD
    assert isinstance(clip.parse_line(out[0]), clip.BoardLine)
    assert isinstance(clip.parse_line(out[1]), clip.WhoInfo)


def test_board_glued_to_the_next_message_and_text_glued_before_a_board() -> None:
    out = lines(f"{SPEC_BOARD}It's your turn. Please roll or double.\r\nYou roll 3 and 1."
                f"{SPEC_BOARD}\r\n".encode())
    assert out == [SPEC_BOARD, "It's your turn. Please roll or double.", "You roll 3 and 1.",
                   SPEC_BOARD]


def test_cube_line_glued_to_the_next_line() -> None:
    out = lines(b"bob accepts the double. The cube shows 2.You roll 6 and 3.\r\n")
    assert [type(clip.parse_line(x)) for x in out] == [clip.DoubleAccepted, clip.Rolled]


def test_clip_1_2_own_info_fields() -> None:
    welcome = clip.parse_line("1 myself 1041253132 192.168.1.308")
    assert welcome == clip.Welcome("myself", 1041253132, "192.168.1.308")
    own = clip.parse_line("2 myself 1 1 0 0 0 0 1 1 2396 0 1 0 1 3457.85 0 0 0 0 0 "
                          "Australia/Melbourne")
    assert isinstance(own, clip.OwnInfo)
    assert own.experience == 2396 and own.rating == 3457.85
    assert own.settings["allowpip"] and own.settings["double"] and own.settings["moreboards"]
    assert not own.settings["ready"] and own.settings["notify"] and not own.settings["greedy"]
    assert own.timezone == "Australia/Melbourne"


def test_clip_5_who_info_and_the_rest_of_the_numbers() -> None:
    who = clip.parse_line("5 GammonBot_VII pipcat - 1 0 2033.88 1208954 0 1593781365 "
                          "47.199.55.93 ParlorBot bots@moulton.us")
    assert who == clip.WhoInfo("GammonBot_VII", "pipcat", None, True, False, 2033.88, 1208954, 0,
                               1593781365, "47.199.55.93", "ParlorBot", "bots@moulton.us")
    assert clip.parse_line("3") == clip.MotdStart() and clip.parse_line("6") == clip.WhoEnd()
    assert clip.parse_line("7 someplayer someplayer logs in.") == clip.UserLoggedIn(
        "someplayer", "someplayer logs in.")
    assert clip.parse_line("8 someplayer someplayer drops connection.").name == "someplayer"
    assert clip.parse_line("12 bob hello there") == clip.Chat("say", "bob", "hello there")
    assert clip.parse_line("15 GammonBot_VII Hi, I am a computer program.") == clip.Chat(
        "kibitz", "GammonBot_VII", "Hi, I am a computer program.")
    assert clip.parse_line("16 bob hi") == clip.ChatEcho("say", "bob", "hi")


@pytest.mark.parametrize(("line", "event"), [
    ("Value of 'boardstyle' set to 3.", clip.SettingValue("boardstyle", "3")),
    ("humanbravo wants to play a 5 point match with you.", clip.Invited("humanbravo", 5)),
    ("bob wants to play an unlimited match with you.", clip.Invited("bob", None)),
    ("bob wants to resume a saved match with you.", clip.Invited("bob", None, resume=True)),
    ("WARNING: Don't accept if you want to continue the saved 7 point match!",
     clip.SavedMatchWarning(7)),
    ("Type 'join humanbravo' to accept.", clip.JoinHint("humanbravo")),
    ("** You are now playing a 5 point match with humanbravo", clip.MatchStarted("humanbravo", 5)),
    ("** Player botalpha has joined you for a 5 point match.", clip.MatchStarted("botalpha", 5)),
    ("Player bob has joined you for an unlimited match.", clip.MatchStarted("bob", None)),
    ("You are now playing with bob. Your running match was loaded.", clip.MatchLoaded("bob")),
    ("bob has joined you. Your running match was loaded.", clip.MatchLoaded("bob")),
    ("turn: bob.", clip.ResumeInfo("turn", "bob", "bob")),
    ("turn: bob", clip.ResumeInfo("turn", "bob", "bob")),
    ("points for user bob: 3", clip.ResumeInfo("points", "bob", "3")),
    ("match length: 5", clip.ResumeInfo("match length", None, "5")),
    ("points for bob: 3", clip.ResumeInfo("points", "bob", "3")),
    ("Starting a new game with humanbravo.", clip.NewGame("humanbravo")),
    ("You rolled 2, humanbravo rolled 6.", clip.OpeningRoll("You", 2, "humanbravo", 6)),
    ("GammonBot_VII rolled 1, pipcat rolled 5", clip.OpeningRoll("GammonBot_VII", 1, "pipcat", 5)),
    ("It's your turn to move.", clip.FirstMove("You")),
    ("pipcat makes the first move.", clip.FirstMove("pipcat")),
    ("It's your turn. Please roll or double.", clip.RollPrompt()),
    ("It's your turn. Please roll or double", clip.RollPrompt()),
    ("You roll 1 and 3.", clip.Rolled("You", (1, 3))),
    ("GammonBot_VII rolls 6 and 4.", clip.Rolled("GammonBot_VII", (6, 4))),
    ("Please move 2 pieces.", clip.PleaseMove(2)),
    ("GammonBot_VII moves 12-18 1-5 .", clip.Moved("GammonBot_VII", "12-18 1-5")),
    ("bob moves bar-22 .", clip.Moved("bob", "bar-22")),
    ("You can't move.", clip.CantMove("You")),
    ("GammonBot_VII can't move.", clip.CantMove("GammonBot_VII")),
    ("The only possible move is 24-23 .", clip.OnlyMove("24-23")),
    ("You double. Please wait for bob to accept or reject.", clip.Doubled("You")),
    ("humanbravo doubles. Type 'accept' or 'reject'.", clip.Doubled("humanbravo")),
    ("pipcat doubles.", clip.Doubled("pipcat")),
    ("You accept the double. The cube shows 2.", clip.DoubleAccepted("You", 2)),
    ("GammonBot_VII accepts the double.", clip.DoubleAccepted("GammonBot_VII", None)),
    ("bob gives up. You win 2 points.", clip.DoubleRejected("bob", 2)),
    ("You give up. bob wins 1 point.", clip.DoubleRejected("You", 1)),
    ("You want to resign. bob will win 2 points.", clip.ResignOffered("You", 2)),
    ("bob wants to resign. You will win 2 points. Type 'accept' or 'reject'.",
     clip.ResignOffered("bob", 2)),
    ("GammonBot_VII accepts and wins 4 points.", clip.ResignAccepted("GammonBot_VII", 4)),
    ("You accept and win 1 point.", clip.ResignAccepted("You", 1)),
    ("bob rejects. The game continues.", clip.ResignRejected("bob")),
    ("You win the game and get 1 point. Congratulations!", clip.GameWon("You", 1)),
    ("humanbravo wins the game and gets 2 points. Sorry.", clip.GameWon("humanbravo", 2)),
    ("score in 5 point match: humanbravo-0 botalpha-2",
     clip.ScoreLine(5, {"humanbravo": 0, "botalpha": 2})),
    ("Type 'join' if you want to play the next game, type 'leave' if you don't.",
     clip.JoinPrompt()),
    ("You win the 3 point match 3-0 .", clip.MatchWon("You", 3, 3, 0)),
    ("humanbravo wins the 5 point match 6-2 .", clip.MatchWon("humanbravo", 5, 6, 2)),
    ("** Player bob has left the game. The game was saved.", clip.GameSaved("bob", "left")),
    ("bob drops connection. The game was saved.", clip.GameSaved("bob", "drop")),
    ("Connection with bob timed out. The game was saved.", clip.GameSaved("bob", "timeout")),
    ("** You terminated the game. The game was saved.", clip.GameSaved("You", "terminated")),
    ("** Please wait for bob to join too.", clip.WaitForJoin("bob")),
    ("** You're now ready to invite or join someone.",
     clip.ServerMessage("You're now ready to invite or join someone.")),
    ("** Unknown command: 'xyz'", clip.ServerMessage("Unknown command: 'xyz'")),
    ("Connection timed out.", clip.ConnectionTimedOut()),
])
def test_game_and_match_messages(line: str, event: clip.Event) -> None:
    assert clip.parse_line(line) == event


def test_spec_board_line_is_read_from_the_player() -> None:
    event = clip.parse_line(SPEC_BOARD)
    assert isinstance(event, clip.BoardLine) and event.board is not None
    board = event.board
    assert board.kind is Request.MOVE and board.on_roll is Side.ME and board.dice == (6, 2)
    assert board.colour == 1 and board.direction == -1 and board.match_length == 3


def test_malformed_board_is_an_event_with_the_error_not_an_exception() -> None:
    bad = SPEC_BOARD.replace(":5:0:3:", ":5:x:3:", 1)
    event = clip.parse_line(bad)
    assert isinstance(event, clip.BoardLine) and event.board is None
    assert event.error is not None and "token" in str(event.error)
    short = clip.parse_line(":".join(SPEC_BOARD.split(":")[:40]))
    assert isinstance(short, clip.BoardLine) and short.board is None


def test_unknown_and_damaged_numbered_lines_are_unknown() -> None:
    assert clip.parse_line("FIBS has been down due to a hardware failure") == clip.Unknown(
        "FIBS has been down due to a hardware failure")
    assert isinstance(clip.parse_line("5 alice - - x 0 notanumber 1 2 3"), clip.Unknown)
    assert isinstance(clip.parse_line("2 alice 1 1"), clip.Unknown)


@given(st.binary(max_size=400))
def test_any_bytes_give_lines_and_events_without_raising(data: bytes) -> None:
    splitter = clip.LineSplitter()
    for line in splitter.feed(data) + splitter.flush():
        assert "\n" not in line and "\r" not in line
        clip.parse_line(line)


def test_text_glued_after_a_damaged_board_is_still_split() -> None:
    damaged = ":".join(SPEC_BOARD.split(":")[:50])
    out = lines(f"{damaged}It's your turn. Please roll or double.\r\n".encode())
    assert out == [damaged, "It's your turn. Please roll or double."]


# ------------------------------------------------------------------ long lines (issue 30.9)


def test_a_line_longer_than_the_cap_is_dropped_and_the_next_one_read() -> None:
    splitter = clip.LineSplitter()
    chunk = b"x" * 65536
    for _ in range(512):  # 32 MiB without a line end, as a hostile server sends them
        assert splitter.feed(chunk) == []
        assert len(splitter.pending) <= clip.MAX_LINE
    assert splitter.feed(b"yyy\r\n12 alice hello there\r\nlogin: ") == [
        "12 alice hello there", "login:"]
    assert splitter.dropped == 1


def test_a_line_just_under_the_cap_is_kept_whole() -> None:
    splitter = clip.LineSplitter()
    text = "12 alice " + "a" * (clip.MAX_LINE - 20)
    data = text.encode() + b"\r\n"
    lines = []
    for start in range(0, len(data), 1000):
        lines += splitter.feed(data[start:start + 1000])
    assert lines == [text] and splitter.dropped == 0


def test_many_lines_in_one_read_are_split_in_one_pass() -> None:
    splitter = clip.LineSplitter()
    lines = splitter.feed(b"5 bob - - 0 0 1500.00 10 0 0 host client email\r\n" * 50_000)
    assert len(lines) == 50_000 and splitter.pending == ""
