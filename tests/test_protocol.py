"""The control protocol: SPEC.md, schema.json, golden fixtures and bgbot.daemon.protocol agree,
and every kind of bad message is refused with the right code."""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import json
import math
import os
import re
import time
from pathlib import Path
from typing import Any

import msgpack  # type: ignore[import-untyped, unused-ignore]
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bgbot.core.context import Context
from bgbot.core.dice import SeededDice
from bgbot.core import game
from bgbot.core.position import Position
from bgbot.core.rules import Rules
from bgbot.daemon import protocol as proto
from bgbot.daemon.paths import default_paths
from bgbot.daemon.protocol import (
    DELIMITER,
    MAX_MESSAGE_BYTES,
    PROTOCOL_VERSION,
    ErrorCode,
    KeyFileError,
    Message,
    ProtocolError,
    Signer,
    error_reply,
    load_key,
    new_message,
    validate_content,
    write_key,
)
from bgbot.daemon.schema import Validator, load_schema
from bgbot.daemon.wire import decision_request, event_message
from bgbot.referee import events as ev

ROOT = Path(__file__).resolve().parents[1]
PROTOCOL_DIR = ROOT / "protocol"
SPEC = (PROTOCOL_DIR / "SPEC.md").read_text("utf-8")
SCHEMA = json.loads((PROTOCOL_DIR / "schema.json").read_text("utf-8"))
FIXTURES = sorted((PROTOCOL_DIR / "fixtures").glob("*.msgpack"))
FIXTURE_KEY = b"bgbot-protocol-fixtures"  # SPEC §11
KEY = b"a test key, not a secret"


def spec_examples() -> dict[str, Any]:
    """The tagged JSON examples of SPEC.md, read independently of make_fixtures.py."""
    out: dict[str, Any] = {}
    for match in re.finditer(r"^```json ([a-z_]+)\n(.*?)^```$", SPEC, re.S | re.M):
        out[match.group(1)] = json.loads(match.group(2))
    return out


def fixture_frames(path: Path) -> list[bytes]:
    frames: list[bytes] = msgpack.unpackb(path.read_bytes())
    return frames


def envelope_of(frames: list[bytes]) -> list[bytes]:
    """The five envelope frames (an event's topic frame dropped)."""
    return frames[1:] if frames[0] != DELIMITER else frames


def frames_for(msg: Message, key: bytes = KEY) -> list[bytes]:
    return Signer(key).serialize(msg)


def refuse(frames: list[bytes], code: ErrorCode, signer: Signer | None = None) -> ProtocolError:
    with pytest.raises(ProtocolError) as info:
        (signer or Signer(KEY)).deserialize(frames)
    assert info.value.code is code, info.value
    return info.value


# ----------------------------------------------------------------------------- spec and schema


def test_spec_states_the_protocol_version() -> None:
    stated = re.search(r"^Protocol version: \*\*([0-9]+\.[0-9]+)\*\*$", SPEC, re.M)
    assert stated is not None and stated.group(1) == PROTOCOL_VERSION
    assert SCHEMA["x-protocol-version"] == PROTOCOL_VERSION
    assert f"## {PROTOCOL_VERSION} " in (PROTOCOL_DIR / "CHANGELOG.md").read_text("utf-8")
    assert DELIMITER == b"BGB" + PROTOCOL_VERSION.split(".")[0].encode()


def test_spec_states_the_limits() -> None:
    assert f"{MAX_MESSAGE_BYTES} bytes" in SPEC
    assert "300 seconds" in SPEC and Signer(None).replay_window == 300.0


def test_error_codes_are_the_same_closed_list_everywhere() -> None:
    in_code = {code.value for code in ErrorCode}
    in_schema = set(SCHEMA["messages"]["error"]["properties"]["code"]["enum"])
    section = SPEC[SPEC.index("The closed list of codes"):SPEC.index("## 7.")]
    in_spec = set(re.findall(r"^\| `([a-z_]+)` \|", section, re.M))
    assert in_code == in_schema == in_spec


def test_schema_is_valid_json_schema_and_uses_only_the_supported_subset() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    Validator(SCHEMA)  # raises on keywords the small validator does not implement


def test_validator_refuses_keywords_it_does_not_implement() -> None:
    bad = {"$defs": {}, "messages": {"x_request": {"type": "object", "oneOf": []}}}
    with pytest.raises(ValueError, match="oneOf"):
        Validator(bad)


def test_packaged_schema_is_the_protocol_schema() -> None:
    assert load_schema() == SCHEMA


def test_every_message_type_has_an_example_and_a_fixture() -> None:
    types = set(SCHEMA["messages"])
    assert set(spec_examples()) == types
    assert {path.stem for path in FIXTURES} == types


def test_every_request_has_a_reply_type() -> None:
    for name, schema in SCHEMA["messages"].items():
        assert schema["x-kind"] in ("request", "reply", "event")
        if schema["x-kind"] == "request":
            assert name.endswith("_request")
            assert SCHEMA["messages"][schema["x-reply"]]["x-kind"] == "reply"


def test_schema_rules_and_context_match_the_core_dataclasses() -> None:
    # A new rule option or context field must be added to the protocol too (minor version).
    rules = {f.name for f in dataclasses.fields(Rules)}
    assert set(SCHEMA["$defs"]["rules"]["properties"]) == rules
    assert set(SCHEMA["$defs"]["rules_in_force"]["properties"]) == rules
    context = {f.name for f in dataclasses.fields(Context)} - {"rules"}
    assert set(SCHEMA["$defs"]["context"]["properties"]) == context


def test_evaluate_example_equity_follows_the_formula() -> None:
    reply = spec_examples()["evaluate_reply"]
    p = reply["probabilities"]
    equity = 2 * p["win"] - 1 + p["win_gammon"] - p["lose_gammon"] + p["win_backgammon"] - p["lose_backgammon"]
    assert reply["equity"] == pytest.approx(equity, abs=1e-9)


def test_play_examples_are_what_the_rules_core_writes() -> None:
    examples = spec_examples()
    start = Position.initial()
    for name in ("choose_play_reply", "played"):
        content = examples[name]
        plays = {str(play): start.apply(play).position_id() for play in start.legal_plays((3, 1))}
        assert plays[content["play"]] == content["after"]
    for candidate in examples["choose_play_reply"]["candidates"]:
        assert plays[candidate["play"]] == candidate["after"]


def spec_position_id(opponent: list[int], mover: list[int]) -> str:
    """SPEC 7.2's Position ID recipe, followed literally (no bgbot code)."""
    import base64

    bits: list[int] = []
    for side in (opponent, mover):
        for count in side:
            bits += [1] * count + [0]
    data = bytearray(10)
    for k, bit in enumerate(bits):
        data[k // 8] |= bit << (k % 8)
    return base64.b64encode(bytes(data)).decode().removesuffix("==")


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 6), st.integers(1, 6), st.integers(0, 50)), max_size=12))
def test_spec_position_id_recipe_matches_the_core(turns: list[tuple[int, int, int]]) -> None:
    position = Position.initial()
    assert spec_position_id(list(position.opponent), list(position.mover)) == "4HPwATDgc/ABMA"
    for d1, d2, pick in turns:
        plays = position.legal_plays((d1, d2))
        if plays:
            position = position.apply(plays[pick % len(plays)])
        if position.is_game_over():
            break
        position = position.swapped()
        assert spec_position_id(list(position.opponent), list(position.mover)) == position.position_id()


# ----------------------------------------------------------------------------- fixtures


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.stem)
def test_fixture_round_trips_byte_for_byte(path: Path) -> None:
    frames = fixture_frames(path)
    signer = Signer(FIXTURE_KEY, replay_window=math.inf)
    msg = signer.deserialize(envelope_of(frames))
    assert msg.msg_type == path.stem
    again = signer.serialize(msg)
    if proto.message_kind(msg.msg_type) == "event":
        topic, _ = event_topic_and(msg)
        again.insert(0, topic)
    assert again == frames
    assert msgpack.packb(again, use_bin_type=True) == path.read_bytes()


def event_topic_and(msg: Message) -> tuple[bytes, Message]:
    if msg.msg_type == "frontend_event":
        return proto.frontend_topic(msg.content["frontend"]), msg
    if msg.msg_type == "rollout_progress":
        return proto.rollout_topic(msg.content["rollout_id"]), msg
    return proto.match_topic(msg.content["match_id"]), msg


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.stem)
def test_fixture_is_what_spec_section_11_describes(path: Path) -> None:
    """Read with msgpack and hmac only, as SPEC.md tells a reader to."""
    frames = fixture_frames(path)
    kind = SCHEMA["messages"][path.stem]["x-kind"]
    if kind == "event":
        content = msgpack.unpackb(frames[-1], raw=False)
        if path.stem == "frontend_event":  # since 1.1: a server frontend's topic
            assert frames[0] == b"frontend." + content["frontend"].encode()
        elif path.stem == "rollout_progress":  # since 1.3: a running rollout's topic
            assert frames[0] == b"rollout." + content["rollout_id"].encode()
        else:
            assert frames[0] == b"match." + content["match_id"].encode()
        frames = frames[1:]
    delimiter, signature, header_raw, parent_raw, content_raw = frames
    assert delimiter == b"BGB1"
    expected = hmac.new(FIXTURE_KEY, header_raw + parent_raw + content_raw, hashlib.sha256)
    assert signature == expected.hexdigest().encode()
    header = msgpack.unpackb(header_raw, raw=False)
    assert list(header)[:4] == ["msg_id", "msg_type", "version", "time"]
    assert header["msg_type"] == path.stem and header["version"] == "1.0"
    assert header["time"] == 1767225600.25
    assert header["msg_id"] == hashlib.sha256(b"bgbot fixture " + path.stem.encode()).hexdigest()[:32]
    assert header.get("session") == ("fixture-client" if kind == "request" else None)
    parent = msgpack.unpackb(parent_raw, raw=False)
    if kind == "reply":
        request = "match_get_request" if path.stem == "error" else path.stem[:-len("_reply")] + "_request"
        assert parent == {"msg_id": hashlib.sha256(b"bgbot fixture " + request.encode()).hexdigest()[:32]}
    else:
        assert parent == {}
    assert msgpack.unpackb(content_raw, raw=False) == spec_examples()[path.stem]


def test_fixtures_agree_with_the_jsonschema_package() -> None:
    """Cross-check of the small validator: valid examples and mutations, judged by both."""
    jsonschema = pytest.importorskip("jsonschema")
    mine = Validator(SCHEMA)
    wrong_values: list[Any] = ["x", 1.5, None, [], {}, -1, 10**7, [1, 2]]
    checked = 0
    for name, content in spec_examples().items():
        reference = jsonschema.Draft202012Validator({**SCHEMA, "$ref": f"#/messages/{name}"})
        variants: list[Any] = [content]
        for key in content:
            variants.append({k: v for k, v in content.items() if k != key})
            variants.extend({**content, key: value} for value in wrong_values)
        variants.append({**content, "unexpected_field": 1})
        for variant in variants:
            expected = reference.is_valid(variant)
            try:
                mine.validate(name, variant)
                got = True
            except ValueError:
                got = False
            assert got == expected, (name, variant)
            checked += 1
    assert checked > 500


# ----------------------------------------------------------------------------- envelope


def test_round_trip_of_a_new_message() -> None:
    msg = new_message("choose_play_request", {"position": "4HPwATDgc/ABMA", "dice": [3, 1]},
                      session="s1")
    got = Signer(KEY).deserialize(frames_for(msg))
    assert got == msg


def test_reply_names_its_parent() -> None:
    request = new_message("status_request", {})
    reply = new_message("status_reply", {}, request)
    assert reply.parent_id == request.msg_id
    frames = Signer(KEY).serialize(reply)
    assert msgpack.unpackb(frames[3]) == {"msg_id": request.msg_id}


def test_unsigned_signer_sends_empty_signatures_and_accepts_any() -> None:
    msg = new_message("status_request", {})
    frames = Signer(None).serialize(msg)
    assert frames[1] == b""
    assert Signer(b"").deserialize(frames) == msg
    assert Signer(None).deserialize(frames_for(new_message("status_request", {}))).msg_type == "status_request"


def test_unsigned_message_is_refused_where_a_key_is_set() -> None:
    msg = new_message("status_request", {})
    error = refuse(Signer(None).serialize(msg), ErrorCode.UNAUTHORIZED)
    assert error.msg_id == msg.msg_id  # the error reply can name its parent


def test_forged_signature_is_refused() -> None:
    msg = new_message("status_request", {})
    refuse(Signer(b"another key").serialize(msg), ErrorCode.UNAUTHORIZED)


def test_tampered_content_is_refused() -> None:
    frames = frames_for(new_message("match_get_request", {"match_id": "abc"}))
    frames[4] = msgpack.packb({"match_id": "abd"})
    refuse(frames, ErrorCode.UNAUTHORIZED)


def test_replayed_message_is_refused() -> None:
    signer = Signer(KEY)
    frames = frames_for(new_message("status_request", {}))
    signer.deserialize(frames)
    refuse(frames, ErrorCode.REPLAYED, signer)


def test_stale_and_future_messages_are_refused() -> None:
    for offset in (-301.0, 301.0):
        msg = dataclasses.replace(new_message("status_request", {}), time=time.time() + offset)
        error = refuse(frames_for(msg), ErrorCode.STALE)
        assert error.msg_id == msg.msg_id


def test_replay_history_overflow_never_lets_a_replay_through() -> None:
    signer = Signer(KEY, history=3)
    base = time.time() - 1.0
    sent = [frames_for(dataclasses.replace(new_message("status_request", {}), time=base + i * 0.001))
            for i in range(6)]
    for frames in sent:
        signer.deserialize(frames)
    for frames in sent:  # forgotten ids are refused as stale, remembered ones as replayed
        with pytest.raises(ProtocolError) as info:
            signer.deserialize(frames)
        assert info.value.code in (ErrorCode.REPLAYED, ErrorCode.STALE)
    older = dataclasses.replace(new_message("status_request", {}), time=base + 0.0015)
    refuse(frames_for(older), ErrorCode.STALE, signer)
    newer = new_message("status_request", {})
    assert signer.deserialize(frames_for(newer)) == newer


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 9), min_size=1, max_size=40), st.integers(1, 5))
def test_no_replay_is_ever_accepted(order: list[int], history: int) -> None:
    signer = Signer(KEY, history=history)
    messages = [frames_for(new_message("status_request", {})) for _ in range(10)]
    accepted: set[int] = set()
    for index in order:
        try:
            signer.deserialize(messages[index])
        except ProtocolError as exc:
            assert exc.code in (ErrorCode.REPLAYED, ErrorCode.STALE)
            continue
        assert index not in accepted
        accepted.add(index)


def test_oversized_message_is_refused_on_both_sides() -> None:
    big = new_message("match_abort_request", {"match_id": "abc", "reason": "x" * 4000})
    frames = frames_for(big)
    frames[4] = b"\x00" * MAX_MESSAGE_BYTES
    refuse(frames, ErrorCode.TOO_LARGE)
    huge_reply = new_message("match_get_reply", {"mat": "x" * MAX_MESSAGE_BYTES}, big)
    with pytest.raises(ProtocolError) as info:
        Signer(KEY).serialize(huge_reply)
    assert info.value.code is ErrorCode.TOO_LARGE and info.value.msg_id == big.msg_id
    assert info.value.reply().parent_id == big.msg_id


def test_garbage_frames_are_refused_as_bad_message() -> None:
    good = frames_for(new_message("status_request", {}))
    refuse([], ErrorCode.BAD_MESSAGE)
    refuse(good[:4], ErrorCode.BAD_MESSAGE)
    refuse(good + [b""], ErrorCode.BAD_MESSAGE)
    refuse([b"<IDS|MSG>", *good[1:]], ErrorCode.BAD_MESSAGE)
    refuse([b"hello"] * 5, ErrorCode.BAD_MESSAGE)


def test_other_major_versions_are_refused_as_bad_version() -> None:
    good = frames_for(new_message("status_request", {}))
    refuse([b"BGB2", *good[1:]], ErrorCode.BAD_VERSION)
    msg = dataclasses.replace(new_message("status_request", {}), version="2.0")
    refuse(frames_for(msg), ErrorCode.BAD_VERSION)
    newer_minor = dataclasses.replace(new_message("status_request", {}), version="1.7")
    assert Signer(KEY).deserialize(frames_for(newer_minor)).version == "1.7"


def signed(header: Any, parent: Any = None, content: Any = None, *, raw: bool = False) -> list[bytes]:
    """Frames signed with KEY around arbitrary (possibly bad) parts."""
    parts = [header if raw else msgpack.packb(header, use_bin_type=True),
             msgpack.packb({} if parent is None else parent, use_bin_type=True),
             content if isinstance(content, bytes) else msgpack.packb({} if content is None else content, use_bin_type=True)]
    return [DELIMITER, Signer(KEY).sign(parts), *parts]


def good_header(**changes: Any) -> dict[str, Any]:
    header = {"msg_id": os.urandom(8).hex(), "msg_type": "status_request", "version": "1.0",
              "time": time.time()}
    header.update(changes)
    return {k: v for k, v in header.items() if v is not None}


@pytest.mark.parametrize("field,value", [
    ("msg_id", None), ("msg_id", ""), ("msg_id", "has space"), ("msg_id", 5),
    ("msg_type", None), ("msg_type", "Status"), ("version", "1"), ("version", 1.0),
    ("time", "now"), ("time", float("nan")), ("time", True), ("session", 7),
])
def test_bad_header_fields_are_named(field: str, value: Any) -> None:
    header = good_header(**{field: value})
    if value is None:
        header.pop(field, None)
    error = refuse(signed(header), ErrorCode.BAD_MESSAGE)
    assert error.details["field"] == f"header.{field}"


def test_non_msgpack_and_non_map_parts_are_bad_messages() -> None:
    refuse(signed(b"\xc1", raw=True), ErrorCode.BAD_MESSAGE)
    refuse(signed(msgpack.packb([1, 2]), raw=True), ErrorCode.BAD_MESSAGE)
    refuse(signed(good_header(), parent=[1]), ErrorCode.BAD_MESSAGE)
    refuse(signed(good_header(), parent={"msg_id": 3}), ErrorCode.BAD_MESSAGE)
    refuse(signed(good_header(), content=b"\x92\x01"), ErrorCode.BAD_MESSAGE)


def test_binary_and_extension_types_are_refused() -> None:
    refuse(signed(good_header(), content={"x": b"bytes"}), ErrorCode.BAD_MESSAGE)
    ext = msgpack.packb({"x": msgpack.ExtType(5, b"abc")})
    refuse(signed(good_header(), content=ext), ErrorCode.BAD_MESSAGE)
    stamp = msgpack.packb({"x": msgpack.Timestamp(1, 0)})
    refuse(signed(good_header(), content=stamp), ErrorCode.BAD_MESSAGE)
    refuse(signed(good_header(), content=msgpack.packb({1: "int key"})), ErrorCode.BAD_MESSAGE)


def test_unknown_message_type_is_refused() -> None:
    error = refuse(signed(good_header(msg_type="launch_missiles_request")), ErrorCode.UNKNOWN_TYPE)
    assert error.msg_id is not None


def test_schema_violation_is_bad_value_naming_the_field() -> None:
    header = good_header(msg_type="choose_play_request")
    error = refuse(signed(header, content={"position": "4HPwATDgc/ABMA", "dice": [7, 1]}),
                   ErrorCode.BAD_VALUE)
    assert error.details["field"] == "dice[0]" and error.msg_id == header["msg_id"]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.binary(max_size=64), max_size=7))
def test_any_garbage_gives_a_protocol_error_and_nothing_else(frames: list[bytes]) -> None:
    with pytest.raises(ProtocolError):
        Signer(KEY).deserialize(frames)
    with pytest.raises(ProtocolError):
        Signer(None).deserialize([DELIMITER, *frames[:4]])


def test_routing_identities_are_split_at_the_delimiter() -> None:
    body = frames_for(new_message("status_request", {}))
    assert proto.split_identities([b"\x00id", *body]) == ([b"\x00id"], body)
    assert proto.split_identities([b"a", b"b", *body]) == ([b"a", b"b"], body)
    assert proto.split_identities([b"\x00id", b"junk"]) == ([b"\x00id"], [b"junk"])


# ----------------------------------------------------------------------------- content


@pytest.mark.parametrize("msg_type,content,field", [
    ("evaluate_request", {}, "position"),
    ("evaluate_request", {"position": "4HPwATDgc/ABMA", "context": {"cube_value": 3}}, "context.cube_value"),
    ("evaluate_request", {"position": "4HPwATDgc/ABMA", "context": {"cube_owner": "nobody"}}, "context.cube_owner"),
    ("evaluate_request", {"position": "4HPwATDgc/ABMA", "context": {"my_score": True}}, "context.my_score"),
    ("evaluate_request", {"position": "4HPwATDgc/ABMA", "contxt": {}}, "contxt"),
    ("evaluate_request", {"position": "4HPwATDgc/ABMA", "rules": {"jacoby": "yes"}}, "rules.jacoby"),
    ("match_start_request", {"players": ["heuristic", ""]}, "players[1]"),
    ("match_start_request", {"players": ["heuristic"]}, "players"),
    ("match_start_request", {"players": ["a", "b"], "length": 2.0}, "length"),
    ("match_start_request", {"players": ["a", "b"], "seed": -1}, "seed"),
    ("match_get_request", {"match_id": "no/slash"}, "match_id"),
    ("frontend_start_request", {"name": "g", "options": {"Bad-Key": 1}}, "options.Bad-Key"),
    ("frontend_start_request", {"name": "g", "options": {"listen": [1]}}, "options.listen"),
])
def test_validate_content_names_the_field(msg_type: str, content: dict[str, Any], field: str) -> None:
    with pytest.raises(ProtocolError) as info:
        validate_content(msg_type, content)
    assert info.value.code is ErrorCode.BAD_VALUE
    assert info.value.details["field"] == field
    assert info.value.message.startswith(field + ":")


def test_replies_and_events_are_open_requests_closed() -> None:
    validate_content("status_reply", {**spec_examples()["status_reply"], "new_in_1_1": True})
    validate_content("played", {**spec_examples()["played"], "new_in_1_1": True})
    with pytest.raises(ProtocolError):
        validate_content("status_request", {"new_in_1_1": True})


def test_request_and_reply_names() -> None:
    assert proto.request_type("status") == "status_request"
    assert proto.request_type("status_request") == "status_request"
    assert proto.reply_type("choose_play") == "choose_play_reply"
    with pytest.raises(ProtocolError) as info:
        proto.request_type("fly")
    assert info.value.code is ErrorCode.UNKNOWN_TYPE
    proto.check_request(new_message("status_request", {}))
    with pytest.raises(ProtocolError) as info:
        proto.check_request(new_message("status_reply", {}))
    assert info.value.code is ErrorCode.UNKNOWN_TYPE


def test_error_reply_is_a_valid_error_message() -> None:
    request = new_message("match_get_request", {"match_id": "x"})
    reply = error_reply(request, ErrorCode.NOT_FOUND, "no match x", {"match_id": "x"})
    assert reply.msg_type == "error" and reply.parent_id == request.msg_id
    assert reply.content == {"code": "not_found", "message": "no match x", "details": {"match_id": "x"}}
    assert Signer(KEY).deserialize(frames_for(reply)) == reply
    assert error_reply(None, ErrorCode.BAD_MESSAGE, "?").parent_id is None


# ----------------------------------------------------------------------------- events


def referee_events() -> list[ev.Event]:
    import asyncio

    from bgbot.deciders import create_agent
    from bgbot.referee import Referee

    seen: list[ev.Event] = []
    agents = [create_agent("random:seed=1"), create_agent("random:seed=2")]
    referee = Referee(agents, SeededDice(5), length=1, listeners=[seen.append],
                      match_id="abc123")
    asyncio.run(referee.play())
    return seen


def test_every_referee_event_becomes_a_valid_event_message() -> None:
    events: list[Any] = referee_events()
    events += [ev.Acted("abc123", 1, action) for action in (
        game.Doubled(0, 2), game.Taken(1, 2), game.Dropped(1, 4), game.Raccooned(1, 4),
        game.ResignationRejected(1, 2))]
    seen_types = set()
    for number, event in enumerate(events, 1):
        found = event_message(event)
        if found is None:  # an automatic double, a resignation's offer: no event of their own
            assert isinstance(event, ev.Acted)
            assert isinstance(event.action, (game.AutoDoubled, game.Resigned))
            continue
        topic, msg = found
        assert topic == b"match.abc123"
        msg.content["n"] = number  # a match worker numbers each event (protocol 1.2)
        assert Signer(KEY).deserialize(frames_for(msg)) == msg
        seen_types.add(msg.msg_type)
        if msg.msg_type == "played":
            assert isinstance(event, ev.Acted) and isinstance(event.action, game.Moved)
            before = Position.from_position_id(msg.content["before"])
            assert before == event.action.before
            assert before.apply(event.action.play).position_id() == msg.content["after"]
            assert msg.content["play"] == str(event.action.play)
    referee_types = {"game_started", "rolled", "played", "doubled", "taken", "dropped",
                     "beavered", "resigned", "game_ended", "match_ended"}
    assert referee_types <= seen_types
    assert referee_types <= set(proto.EVENT_TYPES)


def test_event_message_refuses_other_objects() -> None:
    with pytest.raises(TypeError):
        event_message(object())


# ----------------------------------------------------------------------------- decisions


def test_decision_from_a_position_id_and_context() -> None:
    d = decision_request("cube_decision_request", {
        "position": "4HPwATDgc/ABMA",
        "context": {"cube_value": 2, "cube_owner": "me", "match_length": 7, "my_score": 2,
                    "opponent_score": 4},
        "rules": {"jacoby": True}})
    assert d.position == Position.initial()
    assert (d.context.cube_value, d.context.my_score, d.context.opponent_score) == (2, 2, 4)
    assert d.context.rules.jacoby is False  # money-only options are off in a match
    assert d.dice is None


def test_decision_from_a_gnubg_id_asks_the_right_player() -> None:
    # SPEC 8.3 take_decision example: player 0 on roll doubled at 2-4 (player 0 has 2).
    content = spec_examples()["take_decision_request"]
    taker = decision_request("take_decision_request", content).context
    doubler = decision_request("cube_decision_request", content).context
    assert (doubler.my_score, doubler.opponent_score) == (2, 4)
    assert (taker.my_score, taker.opponent_score) == (4, 2)
    assert taker.match_length == doubler.match_length == 7


def test_decision_from_an_xgid_reads_match_state_and_dice() -> None:
    d = decision_request("choose_play_request",
                         {"position": "XGID=-b----E-C---eE---c-e----AA:0:0:1:52:0:0:0:0:10"})
    assert d.dice is not None and sorted(d.dice) == [2, 5]
    assert d.context.is_money


@pytest.mark.parametrize("msg_type,content,field", [
    ("evaluate_request", {"position": "4HPwATDgc/ABM/"}, "position"),
    ("evaluate_request", {"position": "4HPwATDgc/ABMA:notamatchid!"}, "position"),
    ("evaluate_request", {"position": "4HPwATDgc/ABMA:cAkAAAAAAAAA", "context": {}}, "context"),
    ("evaluate_request", {"position": "4HPwATDgc/ABMA", "context": {"match_length": 5, "my_score": 5}},
     "context.my_score"),
    ("evaluate_request", {"position": "4HPwATDgc/ABMA", "context": {"crawford": True}}, "context.crawford"),
    ("choose_play_request", {"position": "4HPwATDgc/ABMA"}, "dice"),
    ("choose_play_request", {"position": "XGID=-b----E-C---eE---c-e----AA:0:0:1:52:0:0:0:0:10",
                             "dice": [6, 6]}, "dice"),
    ("evaluate_request", {"position": "AAAAAAAA4P8fAA"}, "position"),
])
def test_bad_decision_requests_name_the_field(msg_type: str, content: dict[str, Any], field: str) -> None:
    with pytest.raises(ProtocolError) as info:
        decision_request(msg_type, content)
    assert info.value.code is ErrorCode.BAD_VALUE and info.value.details["field"] == field


# ----------------------------------------------------------------------------- keys and paths


def test_load_key_reads_a_private_file(tmp_path: Path) -> None:
    path = tmp_path / "control.key"
    path.write_bytes(b"  s3cret-key\n")
    path.chmod(0o600)
    assert load_key(path) == b"s3cret-key"
    path.chmod(0o640)
    assert load_key(path) == b"s3cret-key"
    empty = tmp_path / "empty.key"
    empty.write_bytes(b"\n")
    empty.chmod(0o600)
    assert load_key(empty) == b""


def test_load_key_refuses_world_readable_and_missing_files(tmp_path: Path) -> None:
    path = tmp_path / "control.key"
    path.write_bytes(b"k")
    path.chmod(0o644)
    with pytest.raises(KeyFileError, match="chmod 600"):
        load_key(path)
    with pytest.raises(KeyFileError, match="does not exist"):
        load_key(tmp_path / "missing.key")
    with pytest.raises(KeyFileError, match="not a regular file"):
        load_key(tmp_path)


def test_write_key_makes_a_private_random_key(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "control.key"
    key = write_key(path)
    assert (path.stat().st_mode & 0o777) == 0o600
    assert load_key(path) == key and len(key) == 64
    with pytest.raises(KeyFileError, match="exists"):
        write_key(path)
    assert write_key(path, overwrite=True) != key


def test_paths_under_systemd() -> None:
    env = {"RUNTIME_DIRECTORY": "/run/bgbot", "STATE_DIRECTORY": "/var/lib/bgbot",
           "LOGS_DIRECTORY": "/var/log/bgbot", "CONFIGURATION_DIRECTORY": "/etc/bgbot"}
    paths = default_paths(env, uid=987)
    assert paths.control_endpoint == "ipc:///run/bgbot/control"
    assert paths.events_endpoint == "ipc:///run/bgbot/events"
    assert paths.state_db == Path("/var/lib/bgbot/state.db")
    assert paths.logs_dir == Path("/var/log/bgbot")
    assert paths.config_file == Path("/etc/bgbot/bgbot.toml")
    assert paths.key_file == Path("/etc/bgbot/control.key")


def test_paths_prefer_a_systemd_credential_for_the_key(tmp_path: Path) -> None:
    (tmp_path / "control.key").write_bytes(b"k")
    env = {"RUNTIME_DIRECTORY": "/run/bgbot/a:/run/bgbot/b", "CREDENTIALS_DIRECTORY": str(tmp_path)}
    paths = default_paths(env, uid=987)
    assert paths.key_file == tmp_path / "control.key"
    assert paths.runtime_dir == Path("/run/bgbot/a")


def test_paths_for_a_user_and_for_root() -> None:
    user = default_paths({"XDG_RUNTIME_DIR": "/run/user/1000", "HOME": "/home/u"}, uid=1000)
    assert user.control_endpoint == "ipc:///run/user/1000/bgbot/control"
    assert user.state_dir == Path("/home/u/.local/state/bgbot")
    assert user.logs_dir == Path("/home/u/.local/state/bgbot/logs")
    assert user.key_file == Path("/home/u/.config/bgbot/control.key")
    bare = default_paths({"HOME": "/home/u"}, uid=1000)
    assert bare.runtime_dir == Path("/tmp/bgbot-1000")
    root = default_paths({"HOME": "/root"}, uid=0)
    assert root.control_endpoint == "ipc:///run/bgbot/control"
    assert (root.state_dir, root.logs_dir, root.config_dir) == (
        Path("/var/lib/bgbot"), Path("/var/log/bgbot"), Path("/etc/bgbot"))


def _leaves(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Paths to every value nested in ``value`` (dict keys and list indices)."""
    found = [path]
    if isinstance(value, dict):
        for key, item in value.items():
            found.extend(_leaves(item, path + (key,)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found.extend(_leaves(item, path + (index,)))
    return found


def _replaced(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {**value, head: _replaced(value[head], rest, new)}
    return [_replaced(item, rest, new) if i == head else item for i, item in enumerate(value)]


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_compiled_schema_check_agrees_with_the_schema_walk(data: st.DataObject) -> None:
    """The validator's fast compiled predicate (used on every message) accepts exactly what
    the field-naming walk accepts, for nested values replaced anywhere in every example."""
    mine = Validator(SCHEMA)
    examples = spec_examples()
    name = data.draw(st.sampled_from(sorted(examples)))
    content = examples[name]
    path = data.draw(st.sampled_from(_leaves(content)))
    new = data.draw(st.one_of(
        st.none(), st.booleans(), st.integers(-2, 10**8), st.floats(allow_nan=True),
        st.text(max_size=20), st.just([]), st.just({}), st.just([1, 2]), st.just({"x": 1}),
        st.sampled_from(["4HPwATDgc/ABMA", "cAkAAAAAAAAA", "6-5", "money", "centre"])))
    variant = _replaced(content, path, new)
    fast = mine._fast_messages[name](variant)
    try:
        mine.validate_value(mine.messages[name], variant)
        walked = True
    except ValueError:
        walked = False
    assert fast == walked, (name, path, new)
