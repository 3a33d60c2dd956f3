"""Plans of a hand for a contract: how far it is from the contract (its need: the cards
still missing) and the cards that would lower it. :func:`assess` is ``strong``'s quick
estimate; :func:`contract_plan` and :func:`last_round_plan` (May I) the exact best
assignment of its cards to the contract's melds, which ``expert`` plans with where the
estimate misjudges a hand."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations, product


@dataclass(frozen=True)
class Plan:
    """``need``: cards missing from the best partial contract; ``wanted``: the cards
    (numbers of :func:`~mayi_bots.cards.order`, 0 a joker) that would lower it."""

    need: int
    wanted: frozenset[int]


def _windows(ranks: set[int]) -> list[tuple[int, int]]:
    """The two best 4-rank windows of one suit: ``(have, low)`` (ranks ``low..low+3``, 14 a high ace)."""
    scored = [(sum(1 for r in range(low, low + 4) if r in ranks), low) for low in range(1, 12)]
    scored.sort(key=lambda x: (-x[0], -x[1]))
    return [w for w in scored[:2] if w[0] > 0]


@lru_cache(maxsize=200_000)
def assess(hand: tuple[int, ...], books: int, runs: int, all_cards: bool, limit: int | None, distinct: bool) -> Plan:
    """The :class:`Plan` of ``hand`` (sorted card numbers) for a contract of ``books`` and ``runs``
    (``limit``: most jokers a meld; the plan's books are always of different ranks, which
    ``distinct`` asks and May I merely allows). Candidates: the ranks held most, and each
    suit's two best windows of four ranks; a card held once and counted in a book and a
    run of the same plan counts as missing from one of them."""
    if all_cards:
        return _assess_all_cards(hand, runs, limit)
    jokers = hand.count(0)
    counts = Counter(c for c in hand if c)
    by_rank = Counter(c >> 2 for c in counts.elements())
    suit_ranks: list[set[int]] = [set(), set(), set(), set()]
    for c in counts:
        r, s = c >> 2, c & 3
        suit_ranks[s].add(r)
        if r == 1:
            suit_ranks[s].add(14)
    book_cands: list[tuple[int, int]] = sorted(((3 - min(n, 3), r) for r, n in by_rank.items()), key=lambda x: x[0])
    book_cands = book_cands[: books + 3]
    while len(book_cands) < books:  # not enough ranks: a book from nothing (never all jokers)
        book_cands.append((3, -len(book_cands) - 1))
    run_cands: list[list[tuple[int, int]]] = [
        [(4 - have, low) for have, low in _windows(suit_ranks[s])] for s in range(4)
    ]
    best = 99
    wanted: set[int] = set()
    cap = limit if limit is not None else 99
    for chosen_books in combinations(book_cands, books) if books else [()]:
        for suits in combinations(range(4), runs) if runs else [()]:
            options = [run_cands[s] or [(4, 0)] for s in suits]
            for chosen_runs in product(*options) if runs else [()]:
                missing = 0
                fill = 0
                for m, _ in chosen_books:
                    missing += m
                    fill += min(m, cap, 2)
                for (m, _low), _s in zip(chosen_runs, suits, strict=True):
                    missing += m
                    fill += min(m, cap, 3)
                # A card counted in a book and in a run, held once, can be in only one of them.
                for _, r in chosen_books:
                    if r <= 0:
                        continue
                    for (_, low), s in zip(chosen_runs, suits, strict=True):
                        if low and (low <= r <= low + 3 or (r == 1 and low == 11)) and counts.get(r * 4 + s) == 1:
                            missing += 1
                need = max(0, missing - min(jokers, fill))
                if need > best:
                    continue
                if need < best:
                    best = need
                    wanted = set()
                if need == 0:
                    continue
                if jokers < fill:
                    wanted.add(0)
                for m, r in chosen_books:
                    if m and r > 0:
                        wanted.update(r * 4 + s for s in range(4))
                for (m, low), s in zip(chosen_runs, suits, strict=True):
                    if m and low:
                        for r in range(low, low + 4):
                            if r not in suit_ranks[s]:
                                wanted.add((1 if r == 14 else r) * 4 + s)
    return Plan(best, frozenset(wanted))


def _assess_all_cards(hand: tuple[int, ...], runs: int, limit: int | None) -> Plan:
    """Runs that must hold every card (May I's last round): each of ``runs`` suits makes
    one run spanning its cards; gaps, short runs, repeated cards and cards of the other
    suits all count as missing (jokers fill gaps)."""
    jokers = hand.count(0)
    counts = Counter(c for c in hand if c)
    per_suit: list[list[int]] = [[], [], [], []]
    for c, n in counts.items():
        per_suit[c & 3].extend([c >> 2] * n)
    costs: list[tuple[int, int, set[int]]] = []  # (missing, joker room, wanted) per suit
    for s in range(4):
        ranks = per_suit[s]
        if not ranks:
            costs.append((4, 3, set()))
            continue
        best: tuple[int, int, set[int]] | None = None
        for high_ace in (False, True):
            rs = [14 if (r == 1 and high_ace) else r for r in ranks]
            distinct = set(rs)
            lo, hi = min(distinct), max(distinct)
            span = hi - lo + 1
            gaps = span - len(distinct)
            short = max(0, 4 - span)
            dupes = len(rs) - len(distinct)
            missing = gaps + short + dupes
            want = {(1 if r == 14 else r) * 4 + s for r in range(lo, hi + 1) if r not in distinct}
            if short:
                want |= {(1 if r == 14 else r) * 4 + s for r in (lo - 1, hi + 1) if 1 <= r <= 14}
            if best is None or missing < best[0]:
                best = (missing, gaps + short, want)
        assert best is not None
        costs.append(best)
    best_need = 99
    wanted: set[int] = set()
    cap = limit if limit is not None else 99
    for suits in combinations(range(4), runs):
        others = sum(len(per_suit[s]) for s in range(4) if s not in suits)
        missing = sum(costs[s][0] for s in suits) + max(0, others - 1)  # one card may be the last discard
        fill = sum(min(costs[s][1], cap) for s in suits)
        need = max(0, missing - min(jokers, fill))
        if need < best_need:
            best_need, wanted = need, set()
        if need == best_need and need:
            for s in suits:
                wanted |= costs[s][2]
            if jokers < fill:
                wanted.add(0)
    return Plan(best_need, frozenset(wanted))


#: The need :func:`last_round_plan` gives a hand that no runs of the lengths it may go out
#: with can hold (the planner then falls back on strong's estimate).
NO_RUNS = 99


@lru_cache(maxsize=200_000)
def contract_plan(hand: tuple[int, ...], books: int, runs: int, limit: int | None) -> Plan:
    """The :class:`Plan` of ``hand`` (sorted card numbers) for a contract of ``books``
    books of three and ``runs`` runs of four (of different suits), exactly: the best
    assignment of its cards to the melds, each run a window of four ranks of one suit,
    each book a rank (a rank may hold several books), a card in one meld only, a joker
    filling a gap within ``limit`` a meld (a book keeps one natural, a run one). ``need``:
    the cards still missing; ``wanted``: every card that would lower it (a joker if one
    would). ``strong``'s estimate keeps each suit's two best windows and counts a card
    shared by a book and a run only when held once, so it misjudges one hand in ten of
    a mixed contract and misses a fifth of the cards that help."""
    jokers = hand.count(0)
    per_rank = [0] * 14
    masks = [0, 0, 0, 0]
    for c in hand:
        if c:
            r, s = c >> 2, c & 3
            per_rank[r] += 1
            masks[s] |= 1 << r | (1 << 14 if r == 1 else 0)
    # Per suit, the windows grouped by the ranks of the hand they hold: (held, its ranks,
    # the cards the group's windows miss); without books only the best (with books, a
    # window holding fewer may leave the books more).
    options: list[list[tuple[int, list[int], set[int]]]] = []
    for s in range(4) if runs else ():
        groups: dict[int, set[int]] = {}
        for low in range(1, 12):
            held = masks[s] & (15 << low)
            miss = {(1 if r == 14 else r) * 4 + s for r in range(low, low + 4) if not held >> r & 1}
            groups.setdefault(held, set()).update(miss)
        items = [
            (held.bit_count(), [1 if r == 14 else r for r in range(1, 15) if held >> r & 1], miss)
            for held, miss in groups.items()
        ]
        top = max(i[0] for i in items)
        options.append([i for i in items if books or i[0] == top])
    cap = 99 if limit is None else limit
    held_ranks = [r for r in range(1, 14) if per_rank[r]] if books else []
    many = [r for r in held_ranks if per_rank[r] > 3]  # ranks that may hold two books
    best = NO_RUNS
    wanted: set[int] = set()
    for suits in combinations(range(4), runs):
        for chosen in product(*(options[s] for s in suits)):
            avail = per_rank[:]
            misses = []
            for have, ranks, _ in chosen:
                misses.append(4 - have)
                for r in ranks:
                    avail[r] -= 1
            # (naturals, rank) of each book the ranks can hold, the fullest first
            values = [(3 if a >= 3 else a, r) for r in held_ranks if (a := avail[r]) > 0]
            for r in many:
                values.extend((min(3, a), r) for a in range(avail[r] - 3, 0, -3))
            if books == 1:
                picked = [max(values, default=(0, 0))]
            else:
                values.sort(reverse=True)
                picked = values[:books] + [(0, 0)] * (books - len(values))
            book_misses = [3 - v for v, _ in picked]
            fill = sum(min(m, cap, 3) for m in misses) + sum(min(m, cap, 2) for m in book_misses)
            need = sum(misses) + sum(book_misses) - min(jokers, fill)
            if need > best:
                continue
            if need < best:
                best, wanted = need, set()
            if need == 0:
                continue
            if jokers < fill:
                wanted.add(0)
            for have, _, miss in chosen:
                if have < 4:
                    wanted |= miss
            weakest = picked[-1][0] if picked else 3
            for v, r in picked:
                if v < 3 and r:
                    wanted.update(r * 4 + x for x in range(4))
            if weakest < 3:  # a rank as far from a book as the weakest serves as well
                wanted.update(r * 4 + x for v, r in values if v == weakest for x in range(4))
                if weakest == 0:
                    wanted.update(range(4, 56))
    return Plan(best, frozenset(wanted))


@lru_cache(maxsize=200_000)
def last_round_plan(hand: tuple[int, ...], runs: int, limit: int | None, held: int) -> Plan:
    """The :class:`Plan` of ``hand`` (sorted card numbers) in a round whose ``runs`` runs
    must hold every card, for a seat holding ``held`` cards between turns.

    It goes out when the cards after a draw hold runs of ``held`` cards (the last one
    thrown) or ``held + 1``: so the runs' lengths (4 or more each, of different suits)
    sum to one of those, and ``need`` is the fewest cards still to draw: that length less
    the cards of ``hand`` the best such runs already hold (one of each rank, a joker
    filling a gap within ``limit`` a run). ``strong``'s estimate counts every card of a
    suit in one run instead, so it holds six cards of a suit that only four or five can
    use. ``wanted``: the cards missing from the best runs (a joker if one would help).
    Too few cards held for any such runs: need :data:`NO_RUNS`."""
    jokers = hand.count(0)
    ranks: list[set[int]] = [set(), set(), set(), set()]
    for c in hand:
        if c:
            r, s = c >> 2, c & 3
            ranks[s].add(r)
            if r == 1:
                ranks[s].add(14)
    cap = runs if limit is None else runs * limit  # jokers a full set of runs may hold
    best = NO_RUNS
    wanted: set[int] = set()
    for total in (held, held + 1):
        longest = total - 4 * (runs - 1)
        if longest < 4:
            continue
        # Per suit and length: the most cards of the hand one run holds, and its windows.
        kept: dict[tuple[int, int], tuple[int, list[int]]] = {}
        for s in range(4):
            for length in range(4, min(longest, 13) + 1):
                most, lows = -1, []
                for low in range(1, 16 - length):
                    have = sum(1 for r in range(low, low + length) if r in ranks[s])
                    if have > most:
                        most, lows = have, [low]
                    elif have == most:
                        lows.append(low)
                kept[(s, length)] = (most, lows)
        for suits in combinations(range(4), runs):
            for lengths in partitions(total, runs, longest):
                held_cards = 0
                gaps = 0
                for s, length in zip(suits, lengths, strict=True):
                    have = kept[(s, length)][0]
                    held_cards += have
                    gaps += 1 if have < length else 0
                fill = min(jokers, cap, gaps if limit == 1 else total - held_cards)
                need = total - held_cards - fill
                if need > best:
                    continue
                if need < best:
                    best, wanted = need, set()
                if need == 0:
                    continue
                if fill < min(jokers + 1, cap, gaps if limit == 1 else total - held_cards):
                    wanted.add(0)
                for s, length in zip(suits, lengths, strict=True):
                    for low in kept[(s, length)][1]:
                        for r in range(low, low + length):
                            if r not in ranks[s]:
                                wanted.add((1 if r == 14 else r) * 4 + s)
    return Plan(best, frozenset(wanted))


def partitions(total: int, parts: int, longest: int) -> list[tuple[int, ...]]:
    """The ordered ways to split ``total`` into ``parts`` lengths of 4 to ``longest``."""
    if parts == 1:
        return [(total,)] if 4 <= total <= longest else []
    return [(first, *rest) for first in range(4, longest + 1) for rest in partitions(total - first, parts - 1, longest)]
