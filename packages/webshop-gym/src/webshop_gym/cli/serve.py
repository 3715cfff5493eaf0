"""The ``serve`` subcommand of ``webshop-gym`` (listed in `webshop_gym.cli.COMMANDS`).

``webshop-gym serve`` runs the web shop and its JSON API (`webshop_gym.web`, needs the ``web``
extra), or with ``--protocol openenv`` an OpenEnv server (`webshop_gym.integrations.openenv`,
the ``openenv`` extra). Building the parser imports nothing heavy; Flask or openenv-core is
imported only when ``serve`` runs.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import errno
import socket
import stat
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from webshop_gym.envs import GoalSource

__all__ = ["add_serve_command", "default_allowed_hosts", "run_serve"]

T = TypeVar("T")

DEFAULT_LOG_DIR = "webshop-demonstrations"


DEFAULT_THREADS = 8  # webshop_gym.web.server.DEFAULT_THREADS (not imported here: it brings Flask)
DEFAULT_MAX_CONNECTIONS = 1000  # webshop_gym.web.server.ConnectionLimits' defaults
DEFAULT_MAX_CONNECTIONS_PER_CLIENT = 100
ALL_INTERFACES = ("0.0.0.0", "::", "")
PROTOCOLS = ("web", "openenv")
# Options of the web shop that an OpenEnv server has no use for (given with it: an error).
WEB_ONLY_OPTIONS = (
    "product_images",
    "audience",
    "log_dir",
    "no_log",
    "log_api",
    "access_log",
    "no_access_log",
    "max_envs_per_client",
    "costly_actions_per_minute",
    "max_pages_per_visit",
    "max_connections",
    "max_connections_per_client",
    "request_timeout",
    "keep_alive_timeout",
    "allowed_host",
    "instance",
    "debug",
)


class _HelpWithDefaults(argparse.ArgumentDefaultsHelpFormatter):
    """Shows "(default: ...)" for options that have a real default (not flags or None)."""

    def _get_help_string(self, action: argparse.Action) -> str:
        if action.default in (None, False) or isinstance(action, argparse._StoreTrueAction):
            return action.help or ""
        return super()._get_help_string(action) or ""


def _env_default(argument: str) -> object:
    import inspect

    from webshop_gym.envs import WebShopEnv

    return inspect.signature(WebShopEnv).parameters[argument].default


def add_serve_command(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Adds ``serve`` to a ``webshop-gym`` subcommand parser."""
    parser = subparsers.add_parser(
        "serve",
        help="run the web shop (pages for people, JSON API for agents)",
        formatter_class=_HelpWithDefaults,
        description=(
            "Serve the WebShop site and its JSON API with waitress. Visitors open / (a random goal) "
            "or /?goal=<i>; agents use /api/v1 (or gym.make('WebShop-Remote-v0', server_url=...)). "
            "Every visitor session is recorded as a trajectory file under --log-dir."
        ),
    )
    parser.add_argument(
        "--protocol",
        choices=PROTOCOLS,
        default="web",
        help="web: the pages and the JSON API (waitress); openenv: an OpenEnv server (openenv-core's app on "
        "uvicorn, the openenv extra), one env per client session; --split is then the split of resets that "
        "name none, and the options for the web shop alone are refused",
    )
    parser.add_argument("--catalog", default="mini", help="'mini' (bundled), '1k', 'full' or a folder")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (0.0.0.0: all interfaces)")
    parser.add_argument("--port", type=int, default=8000, help="port to listen on")
    parser.add_argument(
        "--threads",
        type=int,
        default=DEFAULT_THREADS,
        help="worker threads (web: waitress's; openenv: the pool every session's resets and steps run on)",
    )
    parser.add_argument(
        "--goals",
        choices=("human", "synthetic"),
        default=None,
        help="visitors' goal source (default: human, or synthetic where the split has no human goal)",
    )
    parser.add_argument(
        "--split", choices=("train", "dev", "test", "all"), default="test", help="visitors' goal split"
    )
    parser.add_argument(
        "--max-steps",
        type=_positive_int,
        default=None,
        help="actions per episode (default: 100); with --protocol openenv: 15, as for agents",
    )
    parser.add_argument("--show-attributes", action="store_true", help="item pages get the Attributes tab")
    parser.add_argument(
        "--search-engine", default=_env_default("search_engine"), help="the search engine (see WebShopEnv)"
    )
    parser.add_argument(
        "--product-images",
        choices=("generated", "catalog"),
        default="generated",
        help="pictures drawn by the shop (offline), or the catalogue's image addresses",
    )
    parser.add_argument(
        "--audience",
        choices=("research", "crowd"),  # webshop_gym.web.config.AUDIENCES (not imported: it brings Flask)
        default="research",
        help="who the pages are for: crowd pages name no goal numbers or splits",
    )
    parser.add_argument(
        "--log-dir", type=Path, default=Path(DEFAULT_LOG_DIR), help="where visitor trajectories go"
    )
    parser.add_argument("--no-log", action="store_true", help="record nothing")
    parser.add_argument("--log-api", action="store_true", help="also record episodes of API envs")
    parser.add_argument(
        "--access-log",
        default="-",
        metavar="FILE",
        help="one line per request ('-': stderr; session ids cut short)",
    )
    parser.add_argument("--no-access-log", action="store_true", help="log no requests")
    parser.add_argument(
        "--max-sessions",
        type=_positive_int,
        default=None,
        help="live sessions (and, separately, API envs) at most (default: 10000); with --protocol "
        "openenv: 64",
    )
    parser.add_argument(
        "--max-sessions-per-client",
        type=_non_negative_int,
        default=None,
        help="live visitor sessions per client address (default: 100); with --protocol openenv: sessions, "
        "half of --max-sessions; 0: no limit (behind a reverse proxy every client has its address)",
    )
    parser.add_argument(
        "--max-envs-per-client",
        type=_non_negative_int,
        default=None,
        help="live API envs per client address (default: half of --max-sessions, at least 2 and at most "
        "100; 0: no limit)",
    )
    parser.add_argument(
        "--costly-actions-per-minute",
        type=_non_negative_int,
        default=None,
        help="session starts and actions on earlier pages (Back, a second tab) per client address a "
        "minute, in bursts of as many; beyond, 429 (default: 120; 0: no limit, e.g. behind a reverse proxy)",
    )
    parser.add_argument(
        "--max-pages-per-visit",
        type=_positive_int,
        default=None,
        help="pages one visitor session may make, Back and second tabs included (default: 300)",
    )
    parser.add_argument(
        "--idle-timeout",
        type=_positive_float,
        default=None,
        help="seconds before an idle session may go (default: 3600.0); with --protocol openenv: 300, "
        "then the session and its WebSocket are closed",
    )
    parser.add_argument(
        "--max-connections",
        type=_positive_int,
        default=DEFAULT_MAX_CONNECTIONS,
        help="open connections at most; beyond, the longest idle one makes room",
    )
    parser.add_argument(
        "--max-connections-per-client",
        type=_non_negative_int,
        default=DEFAULT_MAX_CONNECTIONS_PER_CLIENT,
        help="open connections per client address (the longest idle one makes room; 0: no limit, e.g. "
        "behind a reverse proxy)",
    )
    parser.add_argument(
        "--request-timeout",
        type=_positive_float,
        default=15.0,
        help="seconds a request may take to arrive whole (headers and body); slower ones are cut off",
    )
    parser.add_argument(
        "--keep-alive-timeout",
        type=_positive_float,
        default=30.0,
        help="seconds a connection may wait for its next request",
    )
    parser.add_argument(
        "--allowed-host",
        action="append",
        default=None,
        metavar="NAME",
        help="a host name requests may address besides the defaults (loopback names, and with --host "
        "0.0.0.0 this machine's names); '.example.org' allows its subdomains, '*' any; repeatable",
    )
    parser.add_argument(
        "--instance",
        default=None,
        help="a name (letters, digits) that starts every session id, to route several processes by id",
    )
    parser.add_argument(
        "--debug",
        action="store_true",
        help="Flask's development server and debugger (only with a loopback --host)",
    )
    parser.set_defaults(web_only_defaults={name: parser.get_default(name) for name in WEB_ONLY_OPTIONS})
    return parser


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {text}")
    return value


def _non_negative_int(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {text}")
    return value


def _positive_float(text: str) -> float:
    value = float(text)
    if not 0 < value < float("inf"):  # also refuses nan
        raise argparse.ArgumentTypeError(f"must be a number of seconds above 0, got {text}")
    return value


def default_allowed_hosts(host: str) -> tuple[str, ...]:
    """The host names a server listening on ``host`` answers to by default."""
    from webshop_gym.web.config import LOOPBACK_HOSTS, is_loopback

    if is_loopback(host):
        return LOOPBACK_HOSTS
    if host not in ALL_INTERFACES:
        return (*LOOPBACK_HOSTS, host)
    names = {socket.gethostname(), socket.getfqdn()}
    with contextlib.suppress(OSError):
        names |= {str(info[4][0]) for info in socket.getaddrinfo(socket.gethostname(), None)}
    return (*LOOPBACK_HOSTS, *sorted(n for n in names if n))


def _catalogue_advice(catalog: str) -> str:
    """What to run when ``--catalog`` names data that is not there (in flags, not Python)."""
    from webshop_gym.data.locations import OFFICIAL_SETS, raw_dir, store_dir

    if catalog in OFFICIAL_SETS:
        official = OFFICIAL_SETS[catalog]
        if (raw_dir() / official.products).is_file():
            return (
                f"catalogue {catalog!r} is not prepared yet: run `webshop-gym data prepare --set {catalog}` "
                "(once), then serve again"
            )
        return (
            f"catalogue {catalog!r} is not on this machine ({store_dir(catalog)} does not exist): run "
            f"`webshop-gym data download --set {catalog}` and `webshop-gym data prepare --set {catalog}`, "
            "or pass --catalog FOLDER (a folder with the official files), or --catalog mini (bundled)"
        )
    return (
        f"--catalog {catalog}: no such folder; pass a folder with the official files "
        "(items_shuffle*.json, items_ins_v2*.json, items_human_ins*.json) or a prepared store, "
        "or --catalog mini / 1k / full"
    )


def _special_file(path: Path, depth: int = 2) -> Path | None:
    """The first file under ``path`` that is not a regular file or folder (a FIFO, a device, a
    socket: reading one can block or never end), following links; None if there is none."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return None  # missing or unreadable: the loader says so
    if stat.S_ISDIR(mode):
        if depth == 0:
            return None
        try:
            children = sorted(path.iterdir())
        except OSError:
            return None
        for child in children:
            found = _special_file(child, depth - 1)
            if found is not None:
                return found
        return None
    return None if stat.S_ISREG(mode) else path


def _kind_of(path: Path) -> str:
    mode = path.stat().st_mode
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _check_paths(args: argparse.Namespace) -> str | None:
    """Why a path option cannot be used as given (it would block or never end), or None."""
    if args.catalog not in ("mini", "1k", "full"):
        special = _special_file(Path(args.catalog))
        if special is not None:
            return (
                f"--catalog {args.catalog}: {special} is {_kind_of(special)}; a catalogue is a folder of "
                "regular files (copy the data into one)"
            )
    access_log = getattr(args, "access_log", "-")
    if args.protocol == "web" and access_log not in (None, "-") and not getattr(args, "no_access_log", False):
        target = Path(access_log)
        with contextlib.suppress(OSError):
            mode = target.stat().st_mode
            if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISDIR(mode):
                kind = "a folder" if stat.S_ISDIR(mode) else _kind_of(target)
                return f"--access-log {access_log}: is {kind}; pass a file ('-': stderr)"
    log_dir = getattr(args, "log_dir", None)
    if args.protocol == "web" and log_dir is not None and not getattr(args, "no_log", False):
        with contextlib.suppress(OSError):
            if not Path(log_dir).is_dir() and Path(log_dir).exists():
                return f"--log-dir {log_dir}: exists and is not a folder; pass a folder (or --no-log)"
    return None


def _setup_access_log(target: str | None) -> None:
    import logging

    from webshop_gym.web.app import ACCESS_LOGGER

    logger = logging.getLogger(ACCESS_LOGGER)
    if target is None:
        logger.setLevel(logging.WARNING)
        return
    handler = logging.StreamHandler(sys.stderr) if target == "-" else logging.FileHandler(target)
    handler.setFormatter(logging.Formatter("%(message)s"))
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False


def _load_app(args: argparse.Namespace, build: Callable[[GoalSource], T]) -> T | None:
    """``build(goals)``; without ``--goals``, synthetic goals where the split has no human one.

    Returns None after printing what to do when the catalogue or an argument is wrong.
    """
    from webshop_gym.envs import EmptySplitError

    print(f"loading catalogue {args.catalog!r} ...", file=sys.stderr, flush=True)
    try:
        try:
            return build(args.goals or "human")
        except EmptySplitError as error:
            if args.goals is not None:
                raise
            who = "visitors get" if args.protocol == "web" else "sessions play"
            print(
                f"note: catalogue {error.catalog_name!r} has no human goal in the {error.split!r} split "
                f"({error.goal_count} in all); {who} synthetic goals (pass --goals human --split all for "
                "the human ones)",
                file=sys.stderr,
            )
            return build("synthetic")
    except EmptySplitError as error:
        print(
            f"webshop-gym serve: the {error.split!r} split of the {error.goals} goals of catalogue "
            f"{error.catalog_name!r} is empty ({error.goal_count} goals in all): pass another --split "
            "(all, train, dev, test) or --goals synthetic",
            file=sys.stderr,
        )
    except FileNotFoundError as error:
        advice = _catalogue_advice(args.catalog) if not Path(args.catalog).is_dir() else str(error)
        print(f"webshop-gym serve: {advice}", file=sys.stderr)
    except ValueError as error:
        print(f"webshop-gym serve: {error}", file=sys.stderr)
    return None


def _cannot_listen(args: argparse.Namespace, error: OSError) -> int:
    reason = "the port is in use (another server?)" if error.errno == errno.EADDRINUSE else error.strerror
    print(
        f"webshop-gym serve: cannot listen on {args.host}:{args.port}: {reason}; pass --port with a free "
        "port (or --host)",
        file=sys.stderr,
    )
    return 2


def run_serve(args: argparse.Namespace) -> int:
    # Paths first, before any framework is imported: they are wrong whatever is installed.
    problem = _check_paths(args)
    if problem is not None:
        print(f"webshop-gym serve: {problem}", file=sys.stderr)
        return 2
    if args.protocol == "openenv":
        return run_openenv_serve(args)
    try:
        from webshop_gym.web import ServerConfig, create_app
        from webshop_gym.web.config import is_loopback
        from webshop_gym.web.server import ConnectionLimits, serve
    except ImportError as error:
        print(f"webshop-gym serve: {error}", file=sys.stderr)
        return 2
    if args.debug and not is_loopback(args.host):
        print(
            f"webshop-gym serve: --debug runs Flask's debugger, which runs any code a visitor sends; "
            f"it is refused with --host {args.host} (use --host 127.0.0.1, or leave out --debug)",
            file=sys.stderr,
        )
        return 2
    # Options left out take ServerConfig's defaults; 0 per client: no limit.
    chosen: dict[str, Any] = {
        name: value
        for name, value in (
            ("max_steps", args.max_steps),
            ("max_sessions", args.max_sessions),
            ("idle_timeout", args.idle_timeout),
        )
        if value is not None
    }
    if args.max_sessions_per_client is not None:
        chosen["max_sessions_per_client"] = args.max_sessions_per_client or None
    if args.costly_actions_per_minute is not None:
        chosen["costly_actions_per_minute"] = args.costly_actions_per_minute or None
    if args.max_pages_per_visit is not None:
        chosen["max_pages_per_visit"] = args.max_pages_per_visit
    if args.max_envs_per_client is not None:  # 0: as many as the server holds
        everyone = args.max_sessions or ServerConfig.max_sessions
        chosen["max_envs_per_client"] = args.max_envs_per_client or everyone
    try:
        limits = ConnectionLimits(
            max_connections=args.max_connections,
            max_connections_per_client=args.max_connections_per_client or None,
            request_timeout=args.request_timeout,
            idle_timeout=args.keep_alive_timeout,
        )
    except ValueError as error:
        print(f"webshop-gym serve: {error}", file=sys.stderr)
        return 2
    config = ServerConfig(
        catalog=args.catalog,
        search_engine=args.search_engine,
        goals="human",
        split=args.split,
        show_attributes=args.show_attributes,
        log_dir=None if args.no_log else args.log_dir,
        log_api=args.log_api,
        **chosen,
        instance=args.instance,
        allowed_hosts=(*default_allowed_hosts(args.host), *(args.allowed_host or ())),
        product_images=args.product_images,
        audience=args.audience,
    )

    def build(goals: GoalSource) -> Any:
        nonlocal config
        config = dataclasses.replace(config, goals=goals)
        return create_app(config)

    app = _load_app(args, build)
    if app is None:
        return 2
    _setup_access_log(None if args.no_access_log else args.access_log)
    where = f"http://{args.host}:{args.port}"
    logging = "not recorded" if config.log_dir is None else f"recorded under {config.log_dir}"
    server_kind = "Flask development server (debug)" if args.debug else "waitress"

    def say_where() -> None:
        print(
            f"WebShop on {where}/ ({server_kind}); API at {where}/api/v1; sessions {logging}; "
            f"answers to host names {', '.join(config.allowed_hosts)}",
            file=sys.stderr,
            flush=True,
        )

    try:
        serve(
            app,
            host=args.host,
            port=args.port,
            threads=args.threads,
            debug=args.debug,
            on_listening=say_where,
            limits=limits,
        )
    except OSError as error:
        return _cannot_listen(args, error)
    return 0


def run_openenv_serve(args: argparse.Namespace) -> int:
    """``serve --protocol openenv``: openenv-core's server over WebShop sessions, on uvicorn."""
    web_only = [
        f"--{name.replace('_', '-')}"
        for name, default in args.web_only_defaults.items()
        if getattr(args, name) != default
    ]
    if web_only:
        print(
            f"webshop-gym serve: {', '.join(web_only)} belong to --protocol web; leave them out with "
            "--protocol openenv",
            file=sys.stderr,
        )
        return 2
    try:
        import uvicorn

        from webshop_gym.integrations import openenv
    except ImportError as error:
        print(
            f"webshop-gym serve: {error}; --protocol openenv needs the openenv extra: "
            "pip install 'webshop-gym[openenv]'",
            file=sys.stderr,
        )
        return 2

    # The module's defaults where an option is left out (64 sessions, 15 steps, 300 s idle).
    max_sessions = args.max_sessions or openenv.DEFAULT_MAX_SESSIONS
    idle_timeout = args.idle_timeout or openenv.DEFAULT_IDLE_TIMEOUT
    per_client = max_sessions if args.max_sessions_per_client == 0 else args.max_sessions_per_client
    steps = {} if args.max_steps is None else {"max_steps": args.max_steps}

    def build(goals: GoalSource) -> Any:
        config = openenv.SessionConfig(
            catalog=args.catalog,
            goals=goals,
            split=args.split,
            search_engine=args.search_engine,
            show_attributes=args.show_attributes,
            **steps,  # type: ignore[arg-type]
        )
        return openenv.create_webshop_app(
            config,
            max_sessions=max_sessions,
            idle_timeout=idle_timeout,
            max_sessions_per_client=per_client,
            workers=args.threads,
        )

    app = _load_app(args, build)
    if app is None:
        return 2
    family = socket.AF_INET6 if ":" in args.host else socket.AF_INET
    try:
        listener = socket.create_server((args.host, args.port), family=family, backlog=2048)
    except OSError as error:
        return _cannot_listen(args, error)
    where = f"{args.host}:{args.port}"
    print(
        f"WebShop as an OpenEnv environment on http://{where} (uvicorn): sessions at ws://{where}/ws "
        f"(webshop_gym.integrations.openenv.WebShopClient), at most {max_sessions} "
        f"({per_client or max(2, max_sessions // 2)} per client address), closed after "
        f"{idle_timeout:g} s idle; /health, /schema, /metadata, /docs",
        file=sys.stderr,
        flush=True,
    )
    with listener:
        # Clients send resets and actions (MAX_ACTION_CHARS): a megabyte is plenty.
        config = uvicorn.Config(app, log_level="info", ws_max_size=1 << 20)
        uvicorn.Server(config).run(sockets=[listener])
    return 0
