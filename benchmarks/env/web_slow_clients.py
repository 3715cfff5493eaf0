"""Idle and slow connections against the web shop's server: are visitors still served? (issue 40)

    python -m benchmarks.env.web_slow_clients [--sockets 1050] [--visitors 25] [--timeout 5]
                                          [--servers legacy guarded] [--attacks idle slow]

For each server and attack, starts the server in its own process on 127.0.0.1, opens
``--sockets`` connections from one client (127.0.0.1) that hold on without finishing a
request, then sends ``--visitors`` new visitors at once (``GET /healthz``, each on its own
connection) and counts those answered within ``--timeout`` seconds. Attacks:

* ``idle``: the sockets connect and send nothing;
* ``slow``: each sends the first line of a request, then one more header byte every second
  (Slowloris: the connection never looks idle, the request never ends).

Servers: ``guarded`` is ``webshop_gym.web.server.serve`` as ``webshop-gym serve`` runs it
(`ConnectionLimits` defaults); ``legacy`` is waitress with the options the server had before
issue 40 (``connection_limit=1000``, ``channel_timeout=120``, select loop), for comparison.
Prints one Markdown row per run. Only 127.0.0.1 is ever contacted.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from benchmarks.markdown import row_line, table

ROOT = Path(__file__).resolve().parents[2]
SERVERS = ("legacy", "guarded")
ATTACKS = ("idle", "slow")


def run_server(kind: str, port: int) -> None:
    """The server itself (in the child process)."""
    from webshop_gym.web import ServerConfig, create_app

    app = create_app(ServerConfig(catalog="mini"))
    if kind == "legacy":
        from waitress.server import create_server

        server = create_server(
            app,
            host="127.0.0.1",
            port=port,
            threads=8,
            ident="webshop-gym",
            max_request_body_size=16 * app.config["MAX_CONTENT_LENGTH"],
            connection_limit=1000,
            channel_timeout=120,
        )
        server.run()
    else:
        from webshop_gym.web.server import serve

        serve(app, host="127.0.0.1", port=port)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def visit(port: int, timeout: float) -> float | None:
    """Seconds until a new visitor's answer, or None if none came within ``timeout``."""
    started = time.monotonic()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        connection.request("GET", "/healthz")
        response = connection.getresponse()
        response.read()
        return time.monotonic() - started if response.status == 200 else None
    except OSError:
        return None
    finally:
        connection.close()


def wait_until_up(port: int, server: subprocess.Popen[bytes], seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while visit(port, timeout=2) is None:
        if server.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"the server on port {port} did not start")
        time.sleep(0.2)


def attack(kind: str, port: int, count: int, stop: threading.Event) -> list[socket.socket]:
    sockets = []
    for _ in range(count):
        try:
            sock = socket.create_connection(("127.0.0.1", port), timeout=2)
        except OSError:
            break  # the backlog is full: the attack holds what it has
        if kind == "slow":
            sock.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        sockets.append(sock)
    if kind == "slow":

        def trickle() -> None:
            while not stop.wait(1.0):
                for sock in sockets:
                    with contextlib.suppress(OSError):  # closed by the server: it holds less
                        sock.send(b"a")

        threading.Thread(target=trickle, daemon=True).start()
    return sockets


def measure(
    server_kind: str, attack_kind: str, sockets: int, visitors: int, timeout: float
) -> dict[str, Any]:
    """One server under one attack: sockets opened and still open, visitors served, slowest answer."""
    port = free_port()
    command = [sys.executable, "-m", "benchmarks.env.web_slow_clients", "--serve-as", server_kind]
    command += ["--port", str(port)]
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
    stop = threading.Event()
    held: list[socket.socket] = []
    try:
        wait_until_up(port, server)
        held = attack(attack_kind, port, sockets, stop)
        time.sleep(2.0)  # the server accepts what it will
        results: list[float | None] = [None] * visitors

        def one(i: int) -> None:
            results[i] = visit(port, timeout)

        threads = [threading.Thread(target=one, args=(i,)) for i in range(visitors)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        still_open = sum(1 for sock in held if _open(sock))
        served = [r for r in results if r is not None]
        return {
            "server": server_kind,
            "attack": attack_kind,
            "sockets": len(held),
            "still_open": still_open,
            "served": len(served),
            "visitors": visitors,
            "slowest_s": max(served) if served else None,
        }
    finally:
        stop.set()
        for sock in held:
            sock.close()
        server.terminate()
        server.wait(timeout=30)


def _open(sock: socket.socket) -> bool:
    sock.setblocking(False)
    try:
        return sock.recv(1) != b""
    except BlockingIOError:
        return True
    except OSError:
        return False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sockets", type=int, default=1050, help="connections the attacking client opens")
    parser.add_argument("--visitors", type=int, default=25, help="new visitors sent during the attack")
    parser.add_argument("--timeout", type=float, default=5.0, help="seconds a visitor waits for its answer")
    parser.add_argument("--servers", nargs="+", choices=SERVERS, default=list(SERVERS))
    parser.add_argument("--attacks", nargs="+", choices=ATTACKS, default=list(ATTACKS))
    parser.add_argument("--serve-as", choices=SERVERS, help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve_as:
        run_server(args.serve_as, args.port)
        return 0
    print(
        f"{args.sockets} idle or slow connections from one client (127.0.0.1), then {args.visitors} new "
        f"visitors at once, each waiting {args.timeout:g} s for GET /healthz"
    )
    print()
    header = ["server", "attack", "sockets opened", "still open after the visitors", "visitors served"]
    lines = table([*header, "slowest answer (s)"], [])
    print("\n".join(lines), flush=True)
    for server_kind in args.servers:
        for attack_kind in args.attacks:
            r = measure(server_kind, attack_kind, args.sockets, args.visitors, args.timeout)
            slowest = "-" if r["slowest_s"] is None else f"{r['slowest_s']:.2f}"
            cells = [
                r["server"],
                r["attack"],
                r["sockets"],
                r["still_open"],
                f"{r['served']} / {r['visitors']}",
            ]
            print(row_line([*cells, slowest]), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
