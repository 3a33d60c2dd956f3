"""The Shanghai PettingZoo AEC environment: ``env(players=4)`` (see :mod:`mayi_rl.aec`)."""

from __future__ import annotations

from typing import Any

from .aec import MayIEnv


def env(players: int = 4, **kwargs: Any) -> MayIEnv:
    """A new shanghai table of ``players`` seats (keywords: ``obs_type``, ``options``, ``rounds``, ``render_mode``)."""
    return MayIEnv("shanghai", players, **kwargs)


raw_env = env
