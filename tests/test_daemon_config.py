"""The daemon's configuration: the commented template, typed loading, errors that name the file,
line and key, BGBOT_* overrides, secrets, and the `bgbot config` commands."""

from __future__ import annotations

import dataclasses
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from bgbot.daemon.config import (
    Config,
    ConfigError,
    Secret,
    load_config,
    load_control_key,
    parse_config,
    show_config,
)

TEMPLATE = Path(__file__).resolve().parents[1] / "config" / "bgbot.toml"


def _uncommented(text: str) -> str:
    """The template with every '# key = value' default line switched on."""
    return re.sub(r"^# ([a-z_]+ = .*)$", r"\1", text, flags=re.M)


def _keys(obj: object, prefix: str = "") -> set[str]:
    out: set[str] = set()
    for item in dataclasses.fields(obj):  # type: ignore[arg-type]
        if item.metadata.get("internal") or item.name in ("gnubg_player", "accounts", "named"):
            continue
        value = getattr(obj, item.name)
        if dataclasses.is_dataclass(value):
            out |= _keys(value, f"{prefix}{item.name}.")
        else:
            out.add(f"{prefix}{item.name}")
    return out


def test_the_template_loads_as_the_defaults() -> None:
    assert parse_config(TEMPLATE.read_text(), file=str(TEMPLATE), environ={}) == Config()


def test_the_template_lists_every_option_with_its_default() -> None:
    switched_on = parse_config(_uncommented(TEMPLATE.read_text()), environ={})
    assert switched_on == Config()
    assert set(switched_on.origins) == _keys(Config())  # every key was set by the file


def test_the_template_documents_every_gnubg_player_key() -> None:
    from bgbot.daemon.config import GnubgPlayerConfig

    text = TEMPLATE.read_text()

    for item in dataclasses.fields(GnubgPlayerConfig):
        assert re.search(rf"^#\s+{item.name} = ", text, flags=re.M), item.name
    assert "[[fibs.accounts]]" in text


def test_the_template_documents_every_named_agent_key() -> None:
    from bgbot.daemon.config import NamedAgentConfig

    text = TEMPLATE.read_text()
    for item in dataclasses.fields(NamedAgentConfig):
        assert re.search(rf"^#\s+{item.name} = ", text, flags=re.M), item.name
    assert "#[[agents.named]]" in text


def test_the_template_documents_every_server_account_key() -> None:
    from bgbot.frontends.accounts import ServerAccountConfig

    text = TEMPLATE.read_text()
    for item in dataclasses.fields(ServerAccountConfig):
        assert re.search(rf"^#\s+{item.name} = ", text, flags=re.M), item.name
    assert "[[bgammon.accounts]]" in text


def test_server_accounts_load_and_errors_name_the_account_key() -> None:
    config = parse_config('[[fibs.accounts]]\nuser = "bgbot"\nhost = "127.0.0.1"\n'
                          'port = 4321\nblock = ["spam"]\ninvite = ["alice:5"]\n'
                          '[[bgammon.accounts]]\nuser = "BOT_bgbot"\n', environ={})
    assert config.accounts("fibs")[0].block == ("spam",)
    assert config.accounts("bgammon")[0].user == "BOT_bgbot"
    for text, key in [('[[fibs.accounts]]\nhost = "x"\n', "fibs.accounts[0].user"),
                      ('[[fibs.accounts]]\nuser = "a"\ninvite = ["bob:x"]\n',
                       "fibs.accounts[0].invite[0]"),
                      ('[[bgammon.accounts]]\nuser = "a"\nmax_length = 0\n',
                       "bgammon.accounts[0].max_length"),
                      ('[[fibs.accounts]]\nuser = "a"\nmax_length = 65\n',
                       "fibs.accounts[0].max_length"),
                      ('[daemon]\nmat_errors = "ignore"\n', "daemon.mat_errors"),
                      ('[[fibs.accounts]]\nuser = "a"\npasword_file = "x"\n',
                       "fibs.accounts[0].pasword_file"),
                      ('[[bgammon.accounts]]\nuser = "human"\n', "bgammon.accounts[0].user"),
                      ('[[bgammon.accounts]]\nuser = "bot_x"\nkeepalive = 60.0\n',
                       "bgammon.accounts[0].keepalive")]:
        with pytest.raises(ConfigError) as caught:
            parse_config(text, environ={})
        assert key in str(caught.value), (key, str(caught.value))


def test_values_are_typed() -> None:
    config = parse_config('[limits]\nmax_matches = 5\ndecision_timeout = 2\n'
                          '[[gnubg_player]]\nlisten = "127.0.0.1:4321"\nagent = "pubeval"\n',
                          environ={})
    assert config.limits.max_matches == 5
    assert config.limits.decision_timeout == 2.0 and isinstance(config.limits.decision_timeout,
                                                                float)
    assert config.gnubg_player[0].agent == "pubeval"


@pytest.mark.parametrize("text, key, line", [
    ("[limits]\nmax_matchs = 3\n", "limits.max_matchs", 2),
    ("[limits]\n\nmax_matches = \"many\"\n", "limits.max_matches", 3),
    ("[limits]\ninline_decisions = 1\n", "limits.inline_decisions", 2),
    ("[control]\nmax_message_bytes = true\n", "control.max_message_bytes", 2),
    ("[control.curve]\nsecret_key = \"x\"\n", "control.curve.secret_key", 2),
    ("[fibs]\nuser = \"x\"\n", "fibs.user", 2),
    ("daemon = 3\n", "daemon", 1),
    ("[[gnubg_player]]\nlisten = \"127.0.0.1:1\"\n[[gnubg_player]]\nlisten = 5\n",
     "gnubg_player[1].listen", 4),
    ("[[gnubg_player]]\nlisten = \"127.0.0.1:1\"\nagent = \"nosuchagent\"\n",
     "gnubg_player[0].agent", 3),
    ("[logging]\nlevel = \"loud\"\n", "logging.level", 2),
    ("[control]\nrequests = \"tcp://127.0.0.1:5555\"\n", "control.requests", 2),
    ("[store]\njournal_sync = \"sometimes\"\n", "store.journal_sync", 2),
    ("[limits]\nmax_matches = 0\n", "limits.max_matches", 2),
    ("[[agents.named]]\nname = \"heuristic\"\nspec = \"pubeval\"\n", "agents.named[0].name", 2),
    ("[[agents.named]]\nname = \"Big One\"\nspec = \"pubeval\"\n", "agents.named[0].name", 2),
    ("[[agents.named]]\nname = \"a\"\nspec = \"pubeval\"\n[[agents.named]]\nname = \"a\"\n"
     "spec = \"random\"\n", "agents.named[1].name", 5),
    ("[[agents.named]]\nname = \"me\"\nspec = \"human\"\n", "agents.named[0].spec", 3),
    ("[[agents.named]]\nname = \"a\"\nspec = \"pubeval\"\n[[agents.named]]\nname = \"b\"\n"
     "spec = \"a\"\n", "agents.named[1].spec", 6),
    ("[agents]\ndefault = \"net:plies=1\"\n[[agents.named]]\nname = \"net\"\n"
     "spec = \"heuristic\"\n", "agents.default", 2),
    ("[agents]\ndefault = \"human\"\n", "agents.default", 2),
])
def test_errors_name_the_file_line_and_key(text: str, key: str, line: int) -> None:
    with pytest.raises(ConfigError) as info:
        parse_config(text, file="bgbot.toml", environ={})
    error = info.value
    assert error.key == key
    assert error.line == line
    assert str(error).startswith(f"bgbot.toml:{line}: {key}: ")


def test_named_agents_may_be_used_wherever_the_configuration_names_an_agent() -> None:
    config = parse_config('[agents]\ndefault = "wildbg"\n[[agents.named]]\nname = "wildbg"\n'
                          'spec = "ubgi:command=/usr/local/bin/wildbg-ubgi,timeout=5"\n'
                          '[[gnubg_player]]\nlisten = "127.0.0.1:4321"\nagent = "wildbg"\n',
                          environ={})
    assert config.agents.named[0].spec.startswith("ubgi:command=")
    assert config.agents.default == config.gnubg_player[0].agent == "wildbg"
    assert "[[agents.named]]" in show_config(config)


def test_an_unknown_key_gets_a_suggestion() -> None:
    with pytest.raises(ConfigError, match="did you mean 'max_matches'"):
        parse_config("[limits]\nmax_matchs = 3\n", environ={})


def test_invalid_toml_names_the_line() -> None:
    with pytest.raises(ConfigError) as info:
        parse_config("[limits]\nmax_matches = = 3\n", file="x.toml", environ={})
    assert info.value.line == 2 and "not valid TOML" in str(info.value)


def test_environment_overrides_the_file_with_typed_values() -> None:
    env = {"BGBOT_LIMITS__MAX_MATCHES": "7", "BGBOT_LOGGING__LEVEL": "debug",
           "BGBOT_LIMITS__INLINE_DECISIONS": "yes", "BGBOT_CONTROL__CURVE__SECRET_KEY_FILE": "/k",
           "BGBOT_CACHE_DIR": "/not/an/override", "BGBOT_CONFIG": "/ignored/here"}
    config = parse_config("[limits]\nmax_matches = 3\n", environ=env)
    assert config.limits.max_matches == 7
    assert config.limits.inline_decisions is True
    assert config.logging.level == "debug"
    assert config.control.curve.secret_key_file == "/k"
    assert config.origins["limits.max_matches"] == "BGBOT_LIMITS__MAX_MATCHES"
    assert "set by BGBOT_LIMITS__MAX_MATCHES" in show_config(config)


@pytest.mark.parametrize("name, value, key", [
    ("BGBOT_LIMITS__MAX_MATCHES", "lots", "limits.max_matches"),
    ("BGBOT_LIMITS__MAX_MATCHS", "3", "limits.max_matchs"),
    ("BGBOT_NOPE__X", "1", "nope.x"),
    ("BGBOT_CONTROL__CURVE", "x", "control.curve"),
    ("BGBOT_LIMITS__INLINE_DECISIONS", "perhaps", "limits.inline_decisions"),
])
def test_bad_environment_overrides_name_the_variable(name: str, value: str, key: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_config("", environ={name: value})
    assert info.value.key == key
    assert name in str(info.value)


def test_a_missing_default_file_means_defaults(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                               ) -> None:
    monkeypatch.setenv("BGBOT_CONFIG", str(tmp_path / "absent.toml"))
    assert load_config() == Config()
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path / "absent.toml")  # an explicit file must exist


def test_secrets_stay_out_of_repr_show_and_pickles(tmp_path: Path) -> None:
    key_file = tmp_path / "control.key"
    key_file.write_text("s3cret-value-123\n")
    key_file.chmod(0o600)
    config = parse_config(f'[control]\nkey_file = "{key_file}"\n', environ={})
    secret, path, origin = load_control_key(config)
    assert secret.reveal() == b"s3cret-value-123"
    assert (path, origin) == (key_file, "file")
    assert "s3cret" not in repr(secret) and "s3cret" not in str(secret)
    assert "s3cret" not in show_config(config) and "s3cret" not in repr(config)
    import pickle

    with pytest.raises(TypeError):
        pickle.dumps(Secret(b"x"))


def test_the_key_comes_from_a_systemd_credential(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    creds = tmp_path / "creds"
    creds.mkdir()
    (creds / "control.key").write_text("from-credential\n")
    (creds / "control.key").chmod(0o600)
    monkeypatch.setenv("CREDENTIALS_DIRECTORY", str(creds))
    secret, path, origin = load_control_key(parse_config("", environ={}))
    assert origin == "credential" and path == creds / "control.key"
    assert secret.reveal() == b"from-credential"


def test_a_world_readable_or_missing_key_file_is_refused(tmp_path: Path) -> None:
    key_file = tmp_path / "control.key"
    config = parse_config(f'[control]\nkey_file = "{key_file}"\n', environ={})
    with pytest.raises(ConfigError, match="control.key_file"):
        load_control_key(config, create=True)  # a named file is never created
    key_file.write_text("k\n")
    key_file.chmod(0o644)
    with pytest.raises(ConfigError, match="chmod 600"):
        load_control_key(config)


def test_a_missing_default_key_is_created_private(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONFIGURATION_DIRECTORY", str(tmp_path / "etc"))
    monkeypatch.delenv("CREDENTIALS_DIRECTORY", raising=False)
    secret, path, origin = load_control_key(parse_config("", environ={}), create=True)
    assert origin == "default" and path == tmp_path / "etc" / "control.key"
    assert len(secret.reveal()) == 64 and os.stat(path).st_mode & 0o777 == 0o600


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    code = ("import sys, argparse\n"
            "from bgbot.cli.config import register\n"
            "p = argparse.ArgumentParser(prog='bgbot'); register(p.add_subparsers())\n"
            "a = p.parse_args(sys.argv[1:]); sys.exit(a.func(a))\n")
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=60)


def test_config_check_and_show(tmp_path: Path) -> None:
    good = tmp_path / "good.toml"
    good.write_text("[limits]\nmax_matches = 9\n")
    result = _cli("config", "check", str(good))
    assert result.returncode == 0 and "OK" in result.stdout
    bad = tmp_path / "bad.toml"
    bad.write_text("[limits]\n\nmax_matches = 'nine'\n")
    result = _cli("config", "check", str(bad))
    assert result.returncode == 1
    assert f"{bad}:3: limits.max_matches: expected an integer" in result.stderr
    result = _cli("config", "show", "--config", str(good),
                  env={"BGBOT_LOGGING__LEVEL": "debug"})
    assert result.returncode == 0
    shown = result.stdout
    assert "max_matches = 9  # set in the file" in shown
    assert 'level = "debug"  # set by BGBOT_LOGGING__LEVEL' in shown
    body = "\n".join(line for line in shown.splitlines() if not line.startswith("#"))
    import tomllib

    assert tomllib.loads(body)["limits"]["max_matches"] == 9  # the output is TOML


# ------------------------------------------------------------------ issue 30 item 10


def _bgbot(*args: str, env: dict[str, str] | None = None,
           timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """The real `bgbot` command line."""
    return subprocess.run([sys.executable, "-m", "bgbot.cli", *args], capture_output=True,
                          text=True, timeout=timeout, stdin=subprocess.DEVNULL,
                          env={**os.environ, **(env or {})})


HOSTILE_CONFIGS = {
    "inline tables 5000 deep": ("x = " + "{a = " * 5000 + "1" + "}" * 5000 + "\n", None, None),
    "arrays 5000 deep": ("x = " + "[" * 5000 + "]" * 5000 + "\n", None, None),
    "tables 20 deep": ("[daemon." + ".".join(["t"] * 20) + "]\nx = 1\n", None, None),
    "NUL in state_dir": ('[daemon]\nstate_dir = "/tmp/a\\u0000b"\n', "daemon.state_dir", 2),
    "NUL in an agent": ('[agents]\ndefault = "random\\u0000"\n', "agents.default", 2),
    "100000 match workers": ("[limits]\nmatch_workers = 100000\n", "limits.match_workers", 2),
    "100000 decision workers": ("[limits]\ndecision_workers = 100000\n",
                                "limits.decision_workers", 2),
    "10**23 matches": ("[limits]\nmax_matches = 100000000000000000000000\n",
                       "limits.max_matches", 2),
    "a nan timeout": ("[limits]\ndecision_timeout = nan\n", "limits.decision_timeout", 2),
    "a year's window": ("[control]\nreplay_window = 31536000.0\n", "control.replay_window", 2),
    "a huge seed": ('[[gnubg_player]]\nlisten = "127.0.0.1:1"\nseed = 99999999999999999999\n',
                    "gnubg_player[0].seed", 3),
}


@pytest.mark.parametrize("name", sorted(HOSTILE_CONFIGS))
def test_hostile_configurations_get_an_error_with_file_line_and_key(tmp_path: Path,
                                                                    name: str) -> None:
    text, key, line = HOSTILE_CONFIGS[name]
    path = tmp_path / "bgbot.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert caught.value.file == str(path)
    if key is not None:
        assert caught.value.key == key and caught.value.line == line
    checked = _bgbot("config", "check", str(path))
    assert checked.returncode == 1 and "Traceback" not in checked.stderr
    assert str(path) in checked.stderr and (key is None or key in checked.stderr)
    served = _bgbot("serve", "--config", str(path), timeout=30)
    assert served.returncode == 2 and "Traceback" not in served.stderr, served.stderr
    assert str(path) in served.stderr


@pytest.mark.parametrize("problem", ["missing", "world-readable", "empty"])
def test_config_check_checks_the_key_file(tmp_path: Path, problem: str) -> None:
    key = tmp_path / "control.key"
    if problem != "missing":
        key.write_text("" if problem == "empty" else "0123456789abcdef\n")
        key.chmod(0o644 if problem == "world-readable" else 0o600)
    path = tmp_path / "bgbot.toml"
    path.write_text(f'[control]\nkey_file = "{key}"\n')
    checked = _bgbot("config", "check", str(path))
    assert checked.returncode == 1, checked.stdout
    assert "control.key_file" in checked.stderr and str(key) in checked.stderr
    key.write_text("0123456789abcdef\n")
    key.chmod(0o600)
    checked = _bgbot("config", "check", str(path))
    assert checked.returncode == 0 and f"control key: {key}" in checked.stdout


def test_config_check_says_a_default_key_is_made_at_the_first_start(tmp_path: Path) -> None:
    path = tmp_path / "bgbot.toml"
    path.write_text("[limits]\nmax_matches = 3\n")
    env = {"XDG_CONFIG_HOME": str(tmp_path / "cfg"), "HOME": str(tmp_path)}
    checked = _bgbot("config", "check", str(path), env=env)
    assert checked.returncode == 0 and "creates it at its first start" in checked.stdout
