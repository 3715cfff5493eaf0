"""What plays the env from outside: the agent protocol, the episode loop, reference policies, page readers.

Everything here acts only through the Gymnasium API (observations, ``info``, ``step``), as
any agent does:

- `protocol`: what an agent is (``reset(seed)``, ``act(observation, info)``, optionally a
  class method ``act_batch``) and `act_all`, which asks many agents at once;
- `episodes`: `play_agent_episodes`, the one episode loop: agents in vector-env slots,
  every episode returned as a `webshop_gym.trajectories` record (the benchmark runner
  writes them; ``webshop-gym replay`` plays them);
- `scripted`: the paper's rule baseline (`RulePolicy`), a privileged `ExpertPolicy` that
  makes demonstrations, and `run_episode`;
- `pages`: readers of the ``"text"`` observation (results and item pages, price limits,
  search keywords from an instruction, with `webshop_gym.data.instructions`), shared by
  hand-written agents and the features of `webshop_gym.wrappers.DiscreteActions`;
- `scheduler`: many episodes side by side on one vector env, each slot on its own goal and
  seed, with one batched ``act`` call per step (`play_episodes`).
"""
