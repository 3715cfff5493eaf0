"""Adapters that plug WebShop into the trainers and servers people use, one module per framework.

Each module needs its framework, installed by the extra of the same name
(``pip install 'webshop-gym[openenv]'``); importing this package needs nothing.

* `webshop_gym.integrations.openenv`: an OpenEnv environment (openenv-core's server and client).
* `webshop_gym.integrations.trl`: an ``environment_factory`` for TRL's GRPOTrainer.
* `webshop_gym.integrations.skyrl`: a skyrl-gym text env.
* `webshop_gym.integrations.verl`: verl-agent's ``build_webshop_envs`` on a pool of Ray actors.
* `webshop_gym.integrations.tools`: the ``search`` and ``click`` tools the TRL and OpenEnv
  adapters share (needs no framework).
"""
