"""`bgbot config check [FILE]` and `bgbot config show`: the daemon's configuration."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..daemon.config import Config

_EPILOG = """\
examples:
  bgbot config check                       check the default file (and BGBOT_* variables)
  bgbot config check /etc/bgbot/bgbot.toml
  bgbot config show                        every value, and where it came from (default,
                                           the file, a BGBOT_* variable)
  bgbot config show --config my.toml

config/bgbot.toml is the commented template with every option and its default.
An error names the file, the line and the key, e.g.
  bgbot.toml:12: limits.max_matchs: unknown key in [limits] (did you mean 'max_matches'?)
"""


def register(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    p = sub.add_parser(
        "config",
        help="check or show the daemon's configuration (TOML + BGBOT_* variables)",
        description="Check a configuration file, or show the effective configuration.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = p.add_subparsers(dest="config_command", metavar="ACTION")
    check = actions.add_parser("check", help="check a file; exit 0 when it is valid",
                               description="Read FILE (default: the file `bgbot serve` reads) "
                               "with the BGBOT_* overrides, and report the first error.")
    check.add_argument("file", nargs="?", metavar="FILE", default=None,
                       help="the TOML file to check (default: the file `bgbot serve` reads: "
                       "$BGBOT_CONFIG, else $CONFIGURATION_DIRECTORY/bgbot.toml, else the "
                       "per-user one)")
    check.set_defaults(func=_check)
    show = actions.add_parser("show", help="print the effective configuration as TOML",
                              description="Print every option's effective value, each marked "
                              "with where it came from (default, the file, a BGBOT_* variable), "
                              "and the resolved paths. Prints no secret: keys live in files.")
    show.add_argument("--config", metavar="FILE", default=None,
                      help="configuration file (default: the file `bgbot serve` reads)")
    show.set_defaults(func=_show)

    def usage(args: argparse.Namespace) -> int:
        p.print_help()
        return 0

    p.set_defaults(func=usage)


def _check(args: argparse.Namespace) -> int:
    from ..daemon.config import ConfigError, default_config_file, load_config

    name = args.file or str(default_config_file())
    try:
        config = load_config(args.file)
        key_note = _check_key(config)
    except ConfigError as exc:
        print(f"bgbot config check: {exc}", file=sys.stderr)
        return 1
    where = config.source or f"{name} (missing: defaults)"
    print(f"{where}: OK")
    print(key_note)
    return 0


def _check_key(config: "Config") -> str:
    """What `bgbot serve` will do with the control key: a ConfigError if it could not use it
    (a key file named but missing, unreadable, empty, or readable by every user)."""
    from ..daemon.config import ConfigError, load_control_key

    if config.control.allow_unsigned:
        return "control key: none (control.allow_unsigned: requests are not signed)"
    path, origin = config.key_path()
    if origin == "default" and not path.exists():
        return f"control key: {path} (missing: bgbot serve creates it at its first start)"
    key, path, origin = load_control_key(config)
    if not key.reveal():
        raise ConfigError("control.key_file", f"the key file {path} is empty (set "
                          "control.allow_unsigned to run without a key)", file=config.source)
    return f"control key: {path} ({origin}): OK"


def _show(args: argparse.Namespace) -> int:
    from ..daemon.config import load_config, show_config

    sys.stdout.write(show_config(load_config(args.config)))
    return 0
