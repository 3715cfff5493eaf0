"""WebShop as an OpenEnv environment, in OpenEnv's env-package layout.

``WebShopEnv`` is the client (openenv-core's ``EnvClient``; ``.sync()`` gives a blocking one), the
models are the typed action, observation and state, and ``server/`` is the server OpenEnv runs.
The code is webshop-gym's (`webshop_gym.integrations.openenv`); this package gives it OpenEnv's
names, so ``AutoEnv.from_env("webshop", base_url=...)`` finds it.
"""

from .client import WebShopEnv
from .models import WebShopAction, WebShopObservation, WebShopState

__all__ = ["WebShopAction", "WebShopEnv", "WebShopObservation", "WebShopState"]
