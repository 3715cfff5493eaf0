"""The server OpenEnv runs: ``app`` (``uvicorn server.app:app``, as openenv.yaml says) and ``main``.

It serves the bundled catalogue: every client session gets its own env, with the env's 15
steps per episode, and resets that name no split play the test split. For another catalogue
or other settings, run ``webshop-gym serve --protocol openenv --help`` instead (installed with
webshop-gym; in the image too).
"""

from __future__ import annotations

import argparse

from .webshop_environment import SessionConfig, create_webshop_app

app = create_webshop_app(SessionConfig(catalog="mini", split="test"))


def main(host: str = "0.0.0.0", port: int = 8000) -> None:
    """Serves ``app`` on uvicorn (``server --host H --port P`` once the project is installed)."""
    import uvicorn

    parser = argparse.ArgumentParser(description="WebShop as an OpenEnv environment (bundled catalogue)")
    parser.add_argument("--host", default=host, help="address to listen on (default: %(default)s)")
    parser.add_argument("--port", type=int, default=port, help="port to listen on (default: %(default)s)")
    args = parser.parse_args()
    uvicorn.run(app, host=args.host, port=args.port)


if __name__ == "__main__":
    main()
