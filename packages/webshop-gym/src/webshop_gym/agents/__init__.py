"""What plays the env from outside: reference policies, page readers, an episode scheduler.

Everything here acts only through the Gymnasium API (observations, ``info``, ``step``), as
any agent does:

- `scripted`: the paper's rule baseline (`RulePolicy`), a privileged `ExpertPolicy` that
  makes demonstrations, and `run_episode`;
- `pages`: readers of the ``"text"`` observation (results and item pages, price limits,
  search keywords from an instruction), shared by hand-written agents and the features of
  `webshop_gym.wrappers.DiscreteActions`;
- `scheduler`: many episodes side by side on one vector env, each slot on its own goal and
  seed, with one batched ``act`` call per step (`play_episodes`).
"""
