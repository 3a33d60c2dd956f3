"""The policies the engine's tests play with: the engine's own ``random`` driver, and the
reference ``greedy`` bot of ``mayi_bots`` fed the seat's view (the project's one greedy bot)."""

from __future__ import annotations

from mayi_bots import make
from mayi_engine.policies import Policy, random_policy
from mayi_sdk.local import bot_policy

#: By name, as the tests' tables name their seats. Greedy keeps no memory: one instance serves all.
POLICIES: dict[str, Policy] = {"random": random_policy, "greedy": bot_policy(make("greedy"))}
