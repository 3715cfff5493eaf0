"""The ``serve`` and ``replay`` subcommands of ``webshop-gym`` (listed in `webshop_gym.cli.COMMANDS`).

``webshop-gym serve`` runs the web shop and its JSON API (needs the ``web`` extra);
``webshop-gym replay FILE...`` re-runs recorded trajectories through the env and checks
that every observation and reward comes out as recorded (no extra needed).
Building the parsers imports nothing heavy; Flask is imported only when ``serve`` runs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

__all__ = ["add_replay_command", "add_serve_command", "run_replay", "run_serve"]

DEFAULT_LOG_DIR = "webshop-demonstrations"


def add_serve_command(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Adds ``serve`` to a ``webshop-gym`` subcommand parser."""
    parser = subparsers.add_parser(
        "serve",
        help="run the web shop (pages for people, JSON API for agents)",
        description=(
            "Serve the WebShop site and its JSON API with waitress. Visitors open / (a random goal) "
            "or /?goal=<i>; agents use /api/v1 (or gym.make('WebShop-Remote-v0', server_url=...)). "
            "Every visitor session is recorded as a trajectory file under --log-dir."
        ),
    )
    parser.add_argument(
        "--catalog", default="mini", help="'mini' (bundled), '1k', 'full' or a folder (default: mini)"
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (0.0.0.0: all interfaces)")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--threads", type=int, default=None, help="waitress worker threads (default 8)")
    parser.add_argument(
        "--goals", choices=("human", "synthetic"), default="human", help="visitors' goal source"
    )
    parser.add_argument(
        "--split", choices=("train", "dev", "test", "all"), default="test", help="visitors' goal split"
    )
    parser.add_argument(
        "--max-steps", type=int, default=100, help="actions per visitor episode (default 100)"
    )
    parser.add_argument("--show-attributes", action="store_true", help="item pages get the Attributes tab")
    parser.add_argument("--search-engine", default="bm25s", help="bm25s (default), rank_bm25 or lucene")
    parser.add_argument(
        "--log-dir",
        type=Path,
        default=Path(DEFAULT_LOG_DIR),
        help=f"visitor trajectories (default ./{DEFAULT_LOG_DIR})",
    )
    parser.add_argument("--no-log", action="store_true", help="record nothing")
    parser.add_argument("--log-api", action="store_true", help="also record episodes of API envs")
    parser.add_argument(
        "--max-sessions", type=int, default=10_000, help="live sessions (and API envs) at most"
    )
    parser.add_argument(
        "--idle-timeout", type=float, default=3600.0, help="seconds before an idle session may go"
    )
    parser.add_argument(
        "--instance",
        default=None,
        help="a name (letters, digits) that starts every session id, to route several processes by id",
    )
    parser.add_argument(
        "--debug", action="store_true", help="Flask's development server and debugger (local use only)"
    )
    return parser


def run_serve(args: argparse.Namespace) -> int:
    try:
        from webshop_gym.web import ServerConfig, create_app
        from webshop_gym.web.server import DEFAULT_THREADS, serve
    except ImportError as error:
        print(f"webshop-gym serve: {error}", file=sys.stderr)
        return 2
    config = ServerConfig(
        catalog=args.catalog,
        search_engine=args.search_engine,
        goals=args.goals,
        split=args.split,
        show_attributes=args.show_attributes,
        max_steps=args.max_steps,
        log_dir=None if args.no_log else args.log_dir,
        log_api=args.log_api,
        max_sessions=args.max_sessions,
        idle_timeout=args.idle_timeout,
        instance=args.instance,
    )
    print(f"loading catalogue {args.catalog!r} ...", file=sys.stderr, flush=True)
    try:
        app = create_app(config)
    except (FileNotFoundError, ValueError) as error:
        print(f"webshop-gym serve: {error}", file=sys.stderr)
        return 2
    where = f"http://{args.host}:{args.port}"
    logging = "not recorded" if config.log_dir is None else f"recorded under {config.log_dir}"
    server_kind = "Flask development server (debug)" if args.debug else "waitress"
    print(
        f"WebShop on {where}/ ({server_kind}); API at {where}/api/v1; sessions {logging}",
        file=sys.stderr,
        flush=True,
    )
    serve(app, host=args.host, port=args.port, threads=args.threads or DEFAULT_THREADS, debug=args.debug)
    return 0


def add_replay_command(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Adds ``replay`` to a ``webshop-gym`` subcommand parser."""
    parser = subparsers.add_parser(
        "replay",
        help="re-run recorded trajectories and check that they reproduce",
        description=(
            "Re-run each episode of trajectory files (from `webshop-gym serve` or TrajectoryRecorder) "
            "through a fresh env built from the recorded arguments; exit 1 if any observation, "
            "reward or end flag differs."
        ),
    )
    parser.add_argument("files", nargs="+", type=Path, help="trajectory .jsonl files or folders of them")
    parser.add_argument("--catalog", default=None, help="use this catalogue instead of the recorded one")
    return parser


def _trajectory_files(paths: list[Path]) -> list[Path]:
    files: list[Path] = []
    for path in paths:
        files.extend(sorted(path.glob("*.jsonl")) if path.is_dir() else [path])
    return files


def run_replay(args: argparse.Namespace) -> int:
    from webshop_gym.trajectories import read_trajectories, replay

    failures = episodes = 0
    for path in _trajectory_files(args.files):
        try:
            recorded = read_trajectories(path)
        except (OSError, ValueError) as error:
            print(f"{path}: cannot read: {error}", file=sys.stderr)
            failures += 1
            continue
        if recorded.dropped_torn_line:
            print(f"{path}: dropped a torn last line (a write cut short by a crash)")
        for number, episode in enumerate(recorded.episodes, start=1):
            episodes += 1
            try:
                result = replay(episode, catalog=args.catalog)
            except (FileNotFoundError, ValueError) as error:
                print(f"{path} episode {number}: cannot replay: {error}", file=sys.stderr)
                failures += 1
                continue
            verdict = "reproduced" if result.matches else "DIFFERS"
            print(
                f"{path} episode {number}: goal {episode.header['goal_index']}, "
                f"{len(episode.steps)} steps, return {result.recorded_return:.4f} recorded / "
                f"{result.replayed_return:.4f} replayed: {verdict}"
            )
            for mismatch in result.mismatches:
                print(f"    {mismatch}")
            failures += not result.matches
    print(f"{episodes} episodes replayed, {failures} failed")
    return 1 if failures else 0
