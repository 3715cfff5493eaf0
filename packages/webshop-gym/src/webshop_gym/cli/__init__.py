"""The ``webshop-gym`` command line.

::

    webshop-gym data download [--set 1k|full|all] [--source DIR|URL|hf:ORG/NAME]  # the official files
    webshop-gym data prepare  [--set 1k|full|all] | --from DIR [--out DIR]  # -> fast stores
    webshop-gym data status                                            # what is where
    webshop-gym data verify   [DIR...]                                 # check stores' checksums
    webshop-gym data generate --products N --out DIR                   # a synthetic catalogue
    webshop-gym serve [--catalog mini|1k|full|DIR] [--port 8000]        # the web shop + JSON API
    webshop-gym replay FILE_OR_DIR...                                  # re-run recorded trajectories

Every subcommand is one `Command` in `COMMANDS`: a function that adds its parser to a
group's subparsers and a function that runs it, so a module adds a subcommand with one
line here (e.g. ``Command(None, add_serve_command, run_serve)`` for a top-level ``serve``).
Errors the user can fix print one line saying how and exit with status 1, no traceback.

The subcommands, one module each: `data` (``data download | prepare | status | verify |
generate``), `serve` (the web shop, or an OpenEnv server), `replay`. Building the parser
imports nothing heavy: each command imports what it needs when it runs.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from webshop_gym.cli.data import (
    add_download_command,
    add_generate_command,
    add_prepare_command,
    add_status_command,
    add_verify_command,
    run_download,
    run_generate,
    run_prepare,
    run_status,
    run_verify,
)
from webshop_gym.cli.replay import add_replay_command, run_replay
from webshop_gym.cli.serve import add_serve_command, run_serve

__all__ = ["COMMANDS", "GROUPS", "Command", "main"]


@dataclass(frozen=True)
class Command:
    """One subcommand: its group (None: top level), how to add its parser, how to run it."""

    group: str | None
    add_parser: Callable[[argparse._SubParsersAction], argparse.ArgumentParser]
    run: Callable[[argparse.Namespace], int]


# Group name -> help text.
GROUPS: dict[str, str] = {"data": "download, prepare and inspect the real WebShop data"}

COMMANDS: list[Command] = [
    Command("data", add_download_command, run_download),
    Command("data", add_prepare_command, run_prepare),
    Command("data", add_status_command, run_status),
    Command("data", add_verify_command, run_verify),
    Command("data", add_generate_command, run_generate),
    Command(None, add_serve_command, run_serve),
    Command(None, add_replay_command, run_replay),
]


def build_parser() -> argparse.ArgumentParser:
    """The parser of every registered command."""
    from webshop_gym import __version__

    parser = argparse.ArgumentParser(prog="webshop-gym", description="WebShop as Gymnasium environments.")
    parser.add_argument("--version", action="version", version=f"webshop-gym {__version__}")
    top = parser.add_subparsers(dest="command", metavar="COMMAND")
    groups: dict[str, argparse._SubParsersAction] = {}
    for command in COMMANDS:
        if command.group is None:
            target = top
        else:
            if command.group not in groups:
                group = top.add_parser(command.group, help=GROUPS.get(command.group))
                groups[command.group] = group.add_subparsers(dest="subcommand", metavar="SUBCOMMAND")
                group.set_defaults(_group_parser=group)
            target = groups[command.group]
        command.add_parser(target).set_defaults(_run=command.run)
    parser.set_defaults(_group_parser=parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Runs ``webshop-gym``; returns the exit status."""
    from webshop_gym.data.download import DownloadError
    from webshop_gym.data.jsonstream import StreamError
    from webshop_gym.data.store import StoreError

    parser = build_parser()
    args = parser.parse_args(argv)
    run = getattr(args, "_run", None)
    if run is None:
        args._group_parser.print_help()
        return 2
    try:
        return int(run(args))
    except (DownloadError, StoreError, StreamError, FileNotFoundError, ValueError) as error:
        print(f"webshop-gym: error: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("webshop-gym: interrupted", file=sys.stderr)
        return 130
