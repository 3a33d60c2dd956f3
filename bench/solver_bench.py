"""Benchmark of the contract solver on worst-case and typical hands (uncached).

Run from the repository root::

    PYTHONPATH=engine python bench/solver_bench.py [--n 2000] [--seed 1] [--repeat 3]

Every solve starts from an empty cache. ``--repeat k`` times each case ``k``
times (cache cleared each time) and keeps the fastest, as ``timeit`` does, so
that a busy machine's scheduling noise does not count as solver time.

Goal: p99 <= 1 ms per uncached solve on the worst-case hands: 13 cards with 3
jokers from 3 decks (162 cards) against May I's round-6 contract (1 book + 2
runs, one joker a meld) and round-7 contract (3 runs using all cards).
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable

from mayi_engine.cards import JOKER, NATURALS, build_decks
from mayi_engine.rules import MAY_I, SHANGHAI, Contract, Rules
from mayi_engine.solver import clear_cache, find_contract

Case = tuple[str, tuple[int, ...], Contract, Rules]

ROUND_6 = MAY_I.rounds[5].contract  # 1 book + 2 runs
ROUND_7 = MAY_I.rounds[6].contract  # 3 runs, all cards
THREE_DECK_NATURALS = [c for c in build_decks(3) if c != JOKER]


def _naturals(rng: random.Random, k: int, clustered: bool) -> list[int]:
    """``k`` naturals from 3 decks; clustered: 2-4 suits and 5-8 neighbouring ranks (many candidate melds)."""
    pool = THREE_DECK_NATURALS
    if clustered:
        suits = set(rng.sample(range(4), rng.randint(2, 4)))
        lo = rng.randint(1, 8)
        ranks = set(range(lo, lo + rng.randint(5, 8)))
        if rng.random() < 0.3:
            ranks |= {1, 12, 13}
        pool = [c for c in pool if c % 4 in suits and (c // 4 in ranks or (c // 4 == 1 and 14 in ranks))]
    return rng.sample(pool, k)


def _run_cards(rng: random.Random, suit: int, length: int) -> list[int]:
    lo = rng.randint(1, 15 - length)
    return [(1 if p == 14 else p) * 4 + suit for p in range(lo, lo + length)]


def _near_miss(rng: random.Random, contract: Contract) -> list[int]:
    """10 naturals around a real arrangement of ``contract``, then one or two cards swapped out."""
    cards: list[int] = []
    suits = rng.sample(range(4), contract.runs)
    for s in suits:
        cards += _run_cards(rng, s, rng.randint(4, 5) if contract.all_cards else 4)
    for _ in range(contract.books):
        r = rng.randint(1, 13)
        cards += [r * 4 + rng.randrange(4) for _ in range(3)]
    rng.shuffle(cards)
    cards = cards[:10]
    for _ in range(rng.randint(1, 2)):
        cards[rng.randrange(len(cards))] = rng.choice(NATURALS)
    while len(cards) < 10:
        cards.append(rng.choice(NATURALS))
    return cards


def _worst(rng: random.Random, contract: Contract) -> tuple[str, tuple[int, ...]]:
    kind = rng.choice(("uniform", "clustered", "clustered", "near-miss"))
    naturals = _near_miss(rng, contract) if kind == "near-miss" else _naturals(rng, 10, kind == "clustered")
    hand = [JOKER] * 3 + naturals
    rng.shuffle(hand)
    return kind, tuple(hand)


def _typical(rng: random.Random) -> Case:
    """A dealt hand plus the drawn card (10-13 cards), any round of either variant."""
    rules = rng.choice((MAY_I, SHANGHAI))
    spec = rng.choice(rules.rounds)
    size = min(13, spec.deal + rng.randint(0, 1))
    hand = tuple(rng.sample(build_decks(3), size))
    return "typical", hand, spec.contract, rules


def _mixed_all_cards(rng: random.Random) -> Case:
    """Going out in one go in Shanghai (books and runs, every card): the solver's general path."""
    spec = rng.choice(SHANGHAI.rounds)
    contract = Contract(spec.contract.books, spec.contract.runs, all_cards=True)
    size = contract.min_cards + rng.randint(0, 1)
    if rng.random() < 0.5:
        hand = tuple(rng.sample(build_decks(3), size))
    else:
        hand = tuple([JOKER] * 2 + _naturals(rng, size - 2, clustered=True))
    return "mixed-all-cards", hand, contract, SHANGHAI


def solver_cases(n: int, seed: int) -> list[Case]:
    """``n`` cases of each family: ``(family, hand, contract, rules)``.

    Families: ``round6`` and ``round7`` (worst case: 13 cards with 3 jokers from 3
    decks, May I rules; uniform, clustered and near-miss hands), ``typical`` (a
    dealt hand of either variant, 10-13 cards) and ``mixed-all-cards`` (Shanghai
    contracts played all out, the general all-cards path).
    """
    rng = random.Random(seed)
    cases: list[Case] = []
    for family, contract in (("round6", ROUND_6), ("round7", ROUND_7)):
        for _ in range(n):
            _kind, hand = _worst(rng, contract)
            cases.append((family, hand, contract, MAY_I))
    cases.extend(_typical(rng) for _ in range(n))
    cases.extend(_mixed_all_cards(rng) for _ in range(n))
    return cases


def time_case(case: Case, clock: Callable[[], float] = time.perf_counter) -> tuple[float, bool]:
    """Seconds for one uncached solve, and whether the contract was met."""
    _, hand, contract, rules = case
    clear_cache()
    start = clock()
    plan = find_contract(hand, contract, rules)
    return clock() - start, plan is not None


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=2000, help="cases per family")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=3, help="uncached timings per case, fastest kept")
    args = parser.parse_args(argv)
    cases = solver_cases(args.n, args.seed)
    for case in cases[:200]:  # warm up
        time_case(case)
    times: dict[str, list[float]] = {}
    met: dict[str, int] = {}
    for case in cases:
        seconds, ok = min(time_case(case) for _ in range(max(1, args.repeat)))
        times.setdefault(case[0], []).append(seconds)
        met[case[0]] = met.get(case[0], 0) + ok
    print(f"uncached solve times, fastest of {max(1, args.repeat)} per case")
    print(f"{'family':<16} {'cases':>6} {'met':>6} {'median ms':>10} {'p99 ms':>8} {'max ms':>8}")
    for family, ts in times.items():
        ts.sort()
        p99 = ts[min(len(ts) - 1, int(0.99 * len(ts)))]
        print(
            f"{family:<16} {len(ts):>6} {met[family]:>6} {statistics.median(ts) * 1e3:>10.3f} "
            f"{p99 * 1e3:>8.3f} {ts[-1] * 1e3:>8.3f}"
        )


if __name__ == "__main__":
    main()
