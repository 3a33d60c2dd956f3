"""May I and Shanghai as environments for game AI (the ``rl`` extra: ``pip install -e '.[rl]'``).

* :mod:`mayi_rl.may_i_v0`, :mod:`mayi_rl.shanghai_v0`: PettingZoo AEC environments
  (``env(players=4)``), built by :class:`mayi_rl.aec.MayIEnv`;
* :mod:`mayi_rl.openspiel`: the OpenSpiel Python games ``python_may_i`` and
  ``python_shanghai`` (registered when the module is imported), gathered from its
  ``openspiel_*`` modules;
* :mod:`mayi_rl.encoding`: the fixed action space and the observation layout they share
  (:mod:`mayi_rl.actions`, :mod:`mayi_rl.observations`, :mod:`mayi_rl.cards`);
* :mod:`mayi_rl.bot`: a policy over those actions entered as an SDK bot.

docs/ai.md describes the layouts, the rewards and a training loop.
"""
