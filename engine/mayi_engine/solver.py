"""Contract solver: can a hand meet a contract, and with which melds.

Glossary
--------
natural
    A card that is not a joker.
book
    Three or more cards of one rank, any suits (a "three" in Shanghai). A joker
    in a book stands for the book's rank.
run
    Four or more cards of one suit in sequence. The ace is low (A 2 3 4) or high
    (J Q K A) but never both in one run, and runs never wrap (K A 2 is illegal);
    so a run spans ranks ``lo..hi`` inside 1..14 (14 is the high ace) and is at
    most 13 long. A run never holds two cards of one rank. It is written low to
    high, each joker at the place of the rank it stands for.
contract
    What a player must lay down to go down (:class:`~mayi_engine.rules.Contract`):
    exactly that many books and runs. Runs of one contract are of different
    suits; where ``Rules.distinct_book_ranks`` is set (Shanghai) books of one
    contract are of different ranks too. An *all-cards* contract (May I round 7,
    the Shanghai "all out" house option) is met only by going out: every card of
    the hand in those melds, or every card but one that is then discarded where
    ``Rules.out_by_discard`` allows it.
lay-off
    Adding cards from the hand to a meld already on the table, once down. Not the
    solver's business: it only plans going down.
stand-in (joker)
    A joker in a meld stands in for one natural card: the book's rank, or the
    rank of its place in a run. ``Rules.joker_limit`` caps the jokers of one meld
    (May I: 1) and ``Rules.min_naturals`` sets the fewest naturals in one meld
    (1 in both variants, so a meld of only jokers is never legal there).

What the solver returns
-----------------------
:func:`find_contract` returns a plan, a tuple of :data:`PlannedMeld` (books
first, then runs in suit order), or ``None`` when the contract cannot be met.
It is exact: ``None`` only when no arrangement exists.

* Ordinary contract: exactly ``books`` books of 3 cards and ``runs`` runs of 4
  cards taken from the hand (as a multiset); the rest stays in the hand. With
  ``min_naturals <= 1`` any longer legal arrangement contains such a minimal one,
  so minimal melds lose nothing. Among all minimal arrangements the solver
  returns one using the fewest jokers (branch and bound over the runs, optimal
  books for each choice of runs).
* All-cards contract: the melds (longer than minimal where needed) hold every
  card, or every card but one when ``out_by_discard``; the caller works out the
  leftover card. An arrangement using every card is preferred; otherwise the
  first discard that works, trying cards in code order (jokers first). All the
  hand's jokers are used (except a discarded one), so there is no joker choice.

Results are cached (:func:`clear_cache` empties the cache).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from itertools import combinations, product

from .cards import CARD_SLOTS, JOKER, counts_of
from .rules import Contract, MeldKind, Rules

PlannedMeld = tuple[MeldKind, tuple[int, ...]]
"""``(MeldKind.BOOK | MeldKind.RUN, cards)``; a run's cards low to high, jokers at their places."""

BOOK = MeldKind.BOOK
RUN = MeldKind.RUN

_NO_LIMIT = 1 << 20  # stands for "no joker limit": more jokers than any hand holds
_LONGEST_RUN = 13
_RANK_BITS = [1 << (c >> 2) for c in range(CARD_SLOTS)]  # each card's rank as a bit
_RANKS = range(1, 14)
_Run = tuple[int, int, int, tuple[int, ...]]  # a chosen 4-card run: (suit, jokers, lo, places of naturals)


def find_contract(hand: Sequence[int], contract: Contract, rules: Rules) -> tuple[PlannedMeld, ...] | None:
    """Melds from ``hand`` that meet ``contract`` under ``rules``, or ``None``.

    >>> from mayi_engine.cards import card_codes, parse_cards
    >>> from mayi_engine.rules import MAY_I, SHANGHAI, Contract
    >>> hand = parse_cards(["7C", "7D", "7H", "5S", "6S", "JK", "8S", "KD", "2H"])
    >>> plan = find_contract(hand, Contract(books=1, runs=1), MAY_I)
    >>> [(kind, card_codes(cards)) for kind, cards in plan]
    [('book', ['7C', '7D', '7H']), ('run', ['5S', '6S', 'JK', '8S'])]

    A run lists its jokers at the places they stand for, and the ace can play high:

    >>> hand = parse_cards(["QH", "KH", "AH", "JK", "3C", "3D", "3S"])
    >>> [(kind, card_codes(cards)) for kind, cards in find_contract(hand, Contract(1, 1), SHANGHAI)]
    [('book', ['3C', '3D', '3S']), ('run', ['JK', 'QH', 'KH', 'AH'])]
    >>> find_contract(parse_cards(["KH", "AH", "2H", "3H", "JK"]), Contract(0, 1), SHANGHAI) is None
    False
    >>> find_contract(parse_cards(["KH", "AH", "2H", "4C"]), Contract(0, 1), SHANGHAI) is None
    True
    """
    return _solve(
        tuple(sorted(hand)),
        contract.books,
        contract.runs,
        contract.all_cards,
        rules.joker_limit,
        rules.min_naturals,
        rules.distinct_book_ranks,
        rules.out_by_discard,
    )


def can_meet(hand: Sequence[int], contract: Contract, rules: Rules) -> bool:
    """Whether ``hand`` can meet ``contract`` under ``rules``.

    >>> from mayi_engine.cards import parse_cards
    >>> from mayi_engine.rules import MAY_I, SHANGHAI, Contract
    >>> sevens = parse_cards(["7C", "7D", "7H", "7S", "7C", "7D"])
    >>> can_meet(sevens, Contract(books=2, runs=0), MAY_I), can_meet(sevens, Contract(books=2, runs=0), SHANGHAI)
    (True, False)
    """
    return find_contract(hand, contract, rules) is not None


def clear_cache() -> None:
    """Forget cached plans (benchmarks measure uncached solving)."""
    _solve.cache_clear()


@lru_cache(maxsize=65536)
def _solve(
    hand: tuple[int, ...],
    books: int,
    runs: int,
    all_cards: bool,
    joker_limit: int | None,
    min_naturals: int,
    distinct_book_ranks: bool,
    out_by_discard: bool,
) -> tuple[PlannedMeld, ...] | None:
    """:func:`find_contract` of a sorted hand, for the contract's fields (cached: plain values
    hash fast, where the contract would hash through its dataclass method)."""
    limit = _NO_LIMIT if joker_limit is None else joker_limit
    min_nat = max(min_naturals, 0)
    if books < 0 or runs < 0 or runs > 4 or (distinct_book_ranks and books > 13):
        return None
    if not all_cards:
        return _solve_minimal(hand, books, runs, limit, min_nat, distinct_book_ranks)
    cover = _cover_runs if books == 0 else _cover_mixed
    counts = counts_of(hand)
    plan = cover(counts, books, runs, limit, min_nat, distinct_book_ranks)
    if plan is not None or not out_by_discard:
        return plan
    for card in sorted(set(hand)) if books else _run_discards(hand, counts, runs):
        counts[card] -= 1
        plan = cover(counts, books, runs, limit, min_nat, distinct_book_ranks)
        counts[card] += 1
        if plan is not None:
            return plan
    return None


def _run_discards(hand: tuple[int, ...], counts: list[int], n_runs: int) -> list[int]:
    """The cards (in code order) whose discard may leave a hand that :func:`_cover_runs`
    covers with ``n_runs`` runs. It refuses a hand with a natural twice or with naturals
    in more suits than runs, so the other discards are not worth trying: where a natural
    is there twice, only that one may go; where there is one suit too many, only a suit's
    only natural may go."""
    held = sorted(set(hand))
    twice = [c for c in held if c and counts[c] > 1]
    if sum(counts[c] - 1 for c in twice) > 1:
        return []
    per_suit = [0, 0, 0, 0]
    for c in held:
        if c:
            per_suit[c & 3] += counts[c]
    suits = 4 - per_suit.count(0)
    if twice:
        return twice if suits <= n_runs else []
    if suits == n_runs + 1:
        return [c for c in held if c and per_suit[c & 3] == 1]
    return held if suits <= n_runs else []


def _card(place: int, suit: int) -> int:
    """The natural card at run place ``place`` (1..14, 14 = high ace) of ``suit``."""
    return (1 if place == 14 else place) * 4 + suit


def _rank_totals(counts: list[int]) -> list[int]:
    """Naturals per rank (index 1..13; index 0 unused)."""
    return [0] + [counts[4 * r] + counts[4 * r + 1] + counts[4 * r + 2] + counts[4 * r + 3] for r in _RANKS]


# --------------------------------------------------------------------------- #
# Ordinary contracts: minimal books (3 cards) and runs (4 cards).
# --------------------------------------------------------------------------- #


def _book_gains(naturals: list[int], books: int, amin: int, distinct: bool) -> list[int]:
    """The marginal gains (naturals used) of the books the ranks can host, for
    :func:`_plan_books`: each packed as ``gain << 4 | rank`` (so that the plain ints sort
    as ``(gain, rank)`` pairs would, and cheaply). A rank holding ``n`` naturals and
    hosting ``k`` books uses ``min(n, 3k)`` naturals and needs ``k * amin <= n``; that
    gain is concave in ``k``, so taking the ``books`` largest marginal gains is optimal
    (distinct ranks, or one book: at most one book a rank)."""
    if distinct or books == 1:  # at most one book a rank
        return [(n if n < 3 else 3) << 4 | r for r in _RANKS if (n := naturals[r]) >= amin]
    gains: list[int] = []
    for r in _RANKS:
        n = naturals[r]
        if n < amin:
            continue
        if amin and n < 2 * amin:
            gains.append((n if n < 3 else 3) << 4 | r)
            continue
        for k in range(books if amin == 0 else min(books, n // amin)):
            left = n - 3 * k
            gains.append((3 if left >= 3 else (left if left > 0 else 0)) << 4 | r)
    return gains


def _plan_books(naturals: list[int], books: int, amin: int, distinct: bool) -> tuple[int, list[tuple[int, int]]] | None:
    """Fewest jokers for ``books`` 3-card books given ``naturals`` per rank.

    Each book needs at least ``amin`` naturals. Returns ``(jokers, books)`` with
    each book as ``(rank, naturals used)``, or ``None``: the ``books`` largest
    marginal gains of :func:`_book_gains`.
    """
    if books == 0:
        return 0, []
    gains = _book_gains(naturals, books, amin, distinct)
    if len(gains) < books:
        return None
    gains.sort(reverse=True)
    chosen = gains[:books]
    per_rank: dict[int, int] = {}
    for g in chosen:
        r = g & 15
        per_rank[r] = per_rank.get(r, 0) + 1
    plan: list[tuple[int, int]] = []
    for r, k in per_rank.items():
        if k == 1:  # one book of the rank: every natural of it, up to 3
            n = naturals[r]
            plan.append((r, n if n < 3 else 3))
            continue
        used = min(naturals[r], 3 * k)
        sizes = [amin] * k
        spare = used - amin * k
        for i in range(k):
            add = min(spare, 3 - sizes[i])
            sizes[i] += add
            spare -= add
        plan.extend((r, a) for a in sizes)
    return 3 * books - sum(g >> 4 for g in chosen), plan


def _book_jokers(naturals: list[int], books: int, amin: int, distinct: bool) -> int | None:
    """The jokers of :func:`_plan_books`'s books (the sum of the ``books`` largest marginal
    gains), without making the plan; ``None`` where it finds none. (``naturals[0]``, no
    rank, is 0.)"""
    if books == 0:
        return 0
    if books == 1:  # the largest gain, min(n, 3), is that of the rank with the most naturals
        most = max(naturals)
        return None if most < amin else 3 - (most if most < 3 else 3)
    gains = _book_gains(naturals, books, amin, distinct)
    if len(gains) < books:
        return None
    gains.sort(reverse=True)
    return 3 * books - sum(g >> 4 for g in gains[:books])


def _suit_runs(masks: list[int], amin: int, max_jokers: int) -> list[tuple[tuple[int, int, tuple[int, ...]], ...]]:
    """Per suit, the 4-card runs of the ranks that are the bits 1..13 of its mask (bit 0 is
    not read): ``(jokers, lo, places of naturals)``, fewest jokers first, with at least
    ``amin`` naturals and at most ``max_jokers`` jokers.

    Each window ``lo..lo+3`` takes every natural it has (a run that leaves one out
    is found by the releases in :func:`_solve_minimal`); windows taking the same
    naturals are one candidate. They are those of :func:`_mask_runs` up to the
    joker count allowed (sorted, fewest jokers first).
    """
    most = min(4 - amin, max_jokers, 4)
    if most < 0:
        return [(), (), (), ()]
    table = _SUIT_RUNS or _suit_runs_table()
    out = []
    for have in masks:
        runs, ends = table[have >> 1]
        out.append(runs[: ends[most]])
    return out


_MaskRuns = tuple[tuple[tuple[int, int, tuple[int, ...]], ...], tuple[int, ...]]
#: :func:`_mask_runs` of every mask of ranks (bits 1..13), by ``mask >> 1``: a fixed table,
#: made whole the first time it is needed (about 25 ms; about 1.4 MB, its tuples shared).
_SUIT_RUNS: list[_MaskRuns] = []


def _suit_runs_table() -> list[_MaskRuns]:
    global _SUIT_RUNS
    shared: dict[tuple[int, ...], tuple[int, ...]] = {}
    table = [(runs, shared.setdefault(ends, ends)) for runs, ends in map(_mask_runs, range(0, 1 << 14, 2))]
    _SUIT_RUNS = table  # (assigned whole: a thread never sees it half made)
    return table


def _mask_runs(have: int) -> _MaskRuns:
    """Every window's run of a suit whose ranks are the bits of ``have``, sorted (fewest
    jokers first), windows taking the same naturals once; and for each joker count
    ``j`` (0..4) how many of them have at most ``j`` jokers."""
    if have & 2:
        have |= 1 << 14  # the ace also plays high
    seen = set()
    out = []
    ends = [0, 0, 0, 0, 0]
    for lo in range(1, 12):
        window = (have >> lo) & 15
        taken = window << lo
        if taken not in seen:
            seen.add(taken)
            run = _WINDOW_RUNS[lo][window]
            out.append(run)
            ends[run[0]] += 1
    out.sort()
    for j in range(1, 5):
        ends[j] += ends[j - 1]
    return tuple(out), tuple(ends)


#: The run places of window ``lo..lo+3`` whose naturals a 4-bit mask (bit i: place ``lo + i``) holds.
_WINDOW_PLACES: list[list[tuple[int, ...]]] = [
    [tuple(lo + i for i in range(4) if mask >> i & 1) for mask in range(16)] for lo in range(12)
]
#: ``(jokers, lo, places)`` of each window and mask (shared by the table of :func:`_suit_runs`).
_WINDOW_RUNS: list[list[tuple[int, int, tuple[int, ...]]]] = [
    [(4 - len(places), lo, places) for places in row] for lo, row in enumerate(_WINDOW_PLACES)
]


def _solve_minimal(
    hand: tuple[int, ...], n_books: int, n_runs: int, limit: int, min_nat: int, distinct: bool
) -> tuple[PlannedMeld, ...] | None:
    """Exactly ``n_books`` 3-card books and ``n_runs`` 4-card runs with the fewest jokers.

    Runs first (depth-first over suit choices and windows, branch and bound on the
    joker count), then the best books for the naturals the runs leave. A run
    normally takes every natural of its window; it may instead leave some to a
    book (a *release*, the run taking a joker there) when a book of that rank
    would otherwise lack naturals. A release never saves a joker overall (one
    more in the run, at most one fewer in the book), so it is tried only where it
    makes a book possible: then the search is exact.
    """
    run_amin = max(min_nat, 4 - limit, 0)
    book_amin = max(min_nat, 3 - limit, 0)
    if (n_runs and run_amin > 4) or (n_books and book_amin > 3) or len(hand) < 3 * n_books + 4 * n_runs:
        return None
    # One pass over the hand: naturals per rank (index 1..13, as _rank_totals counts them)
    # and per suit the ranks held as a bit mask (a joker, card 0, sets only bit 0).
    totals = [0] * 14
    masks = [0, 0, 0, 0]
    rank_bits = _RANK_BITS
    for c in hand:
        totals[c >> 2] += 1
        masks[c & 3] |= rank_bits[c]
    jokers = totals[JOKER]
    totals[JOKER] = 0
    if n_runs:
        candidates = _suit_runs(masks, run_amin, min(limit, jokers))
        suits = [s for s in range(4) if candidates[s]]
        if len(suits) < n_runs:
            return None
    # Books with every natural available: a lower bound for their jokers.
    book_floor = _book_jokers(totals, n_books, book_amin, distinct)
    if book_floor is None or book_floor > jokers:
        return None
    if n_runs == 0:
        bound = _plan_books(totals, n_books, book_amin, distinct)
        assert bound is not None
        return _emit_minimal(counts_of(hand), [], bound[1])

    suit_sets = list(combinations(suits, n_runs))

    best_total = jokers + 1
    # (chosen runs as (suit, jokers, lo, places), naturals per rank left to the books (their
    # plan is made once, for the best), releases as (run index, place))
    best: tuple[list[_Run], list[int], tuple[tuple[int, int], ...]] | None = None
    floor_all = min(sum(candidates[s][0][0] for s in ss) for ss in suit_sets) + book_floor

    def leaf(chosen: list[_Run], run_jokers: int) -> None:
        nonlocal best_total, best
        if not n_books:  # runs alone: no naturals to count for books
            if run_jokers < best_total:
                best_total = run_jokers
                best = (chosen, totals, ())
            return
        naturals = totals[:]
        for _, _, _, places in chosen:
            for p in places:
                naturals[1 if p == 14 else p] -= 1
        found = _book_jokers(naturals, n_books, book_amin, distinct)
        if found is not None and run_jokers + found < best_total:
            best_total = run_jokers + found
            best = (chosen, naturals, ())
        if book_amin == 0 or best_total <= run_jokers + book_floor:
            return
        # Releases: only at ranks where books may lack naturals.
        slots: list[tuple[int, int]] = []  # (run index, place)
        for i, (_, _, _, places) in enumerate(chosen):
            for p in places:
                r = 1 if p == 14 else p
                if naturals[r] < book_amin * n_books and totals[r] >= book_amin:
                    slots.append((i, p))
        if not slots:
            return
        slack = [len(places) - run_amin for _, _, _, places in chosen]
        room = jokers - run_jokers
        for size in range(1, min(len(slots), room) + 1):
            if run_jokers + size + book_floor >= best_total:
                break
            for picked in combinations(slots, size):
                used = [0] * len(chosen)
                ok = True
                for i, _ in picked:
                    used[i] += 1
                    if used[i] > slack[i]:
                        ok = False
                        break
                if not ok:
                    continue
                more = naturals[:]
                for _, p in picked:
                    more[1 if p == 14 else p] += 1
                found = _book_jokers(more, n_books, book_amin, distinct)
                if found is not None and run_jokers + size + found < best_total:
                    best_total = run_jokers + size + found
                    best = (chosen, more, tuple(picked))

    def search(ss: tuple[int, ...], depth: int, chosen: list[_Run], run_jokers: int, rest_floor: int) -> bool:
        if depth == len(ss):
            leaf(list(chosen), run_jokers)
            return best_total <= floor_all
        s = ss[depth]
        cands = candidates[s]
        rest_floor -= cands[0][0]
        for j, lo, places in cands:
            if run_jokers + j + rest_floor + book_floor >= best_total:
                break  # candidates come fewest jokers first
            chosen.append((s, j, lo, places))
            done = search(ss, depth + 1, chosen, run_jokers + j, rest_floor)
            chosen.pop()
            if done:
                return True
        return False

    for ss in suit_sets:
        if search(ss, 0, [], 0, sum(candidates[s][0][0] for s in ss)):
            break
    if best is None:
        return None
    chosen, book_naturals, released = best
    book_plan = _plan_books(book_naturals, n_books, book_amin, distinct)
    assert book_plan is not None
    runs: list[tuple[int, int, set[int]]] = []
    for i, (s, _, lo, places) in enumerate(chosen):
        runs.append((s, lo, set(places) - {p for k, p in released if k == i}))
    return _emit_minimal(counts_of(hand), runs, book_plan[1])


def _emit_minimal(
    counts: list[int], runs: list[tuple[int, int, set[int]]], books: list[tuple[int, int]]
) -> tuple[PlannedMeld, ...]:
    """Cards for the plan: runs as ``(suit, lo, places of naturals)``, books as ``(rank, naturals)``."""
    left = counts[:]
    run_melds: list[PlannedMeld] = []
    for s, lo, places in sorted(runs):
        run = tuple([(1 if p == 14 else p) * 4 + s if p in places else JOKER for p in range(lo, lo + 4)])
        for c in run:
            if c:
                left[c] -= 1
        run_melds.append((RUN, run))
    book_melds: list[PlannedMeld] = []
    for r, fewer in sorted([(r, -a) for r, a in books]):  # by rank, the most naturals first
        need = a = -fewer
        cards: list[int] = []
        for c in range(4 * r, 4 * r + 4):  # the rank's suits in order, as many as held and needed
            have = left[c]
            if have and need:
                take = have if have < need else need
                left[c] = have - take
                cards += [c] * take
                need -= take
        book_melds.append((BOOK, tuple(cards) + (JOKER,) * (3 - a)))
    return tuple(book_melds + run_melds)


# --------------------------------------------------------------------------- #
# All-cards contracts: every card of ``counts`` in the melds.
# --------------------------------------------------------------------------- #


def _run_span(places: Sequence[int], limit: int) -> tuple[int, int] | None:
    """``(fewest, most)`` jokers for a run of the naturals at ``places`` (ascending), or ``None``."""
    n = len(places)
    if n:
        span = places[-1] - places[0] + 1
        if span > _LONGEST_RUN:
            return None
        fewest = span - n + (4 - span if span < 4 else 0)
    else:
        fewest = 4
    most = min(limit, _LONGEST_RUN - n)
    return (fewest, most) if fewest <= most else None


def _build_run(places: Sequence[int], suit: int, jokers: int) -> tuple[int, ...]:
    """The run of ``suit`` with naturals at ``places`` and ``jokers`` jokers (filled, then extended up, then down)."""
    if places:
        lo, hi = places[0], places[-1]
        extra = jokers - (hi - lo + 1 - len(places))
    else:
        lo, hi, extra = 1, 0, jokers
    while extra > 0:
        if hi < 14 and not (lo == 1 and hi == 13):
            hi += 1
        else:
            lo -= 1
        extra -= 1
    have = set(places)
    return tuple(_card(p, suit) if p in have else JOKER for p in range(lo, hi + 1))


def _suit_places(counts: list[int], suit: int) -> list[int] | None:
    """Ranks (ascending) of the naturals of ``suit``, or ``None`` if one rank is there twice."""
    places = []
    for r in _RANKS:
        c = counts[4 * r + suit]
        if c:
            if c > 1:
                return None
            places.append(r)
    return places


def _ace_choices(places: list[int]) -> list[list[int]]:
    """The ways to place the naturals: ace low, or ace high when there is an ace."""
    if places and places[0] == 1 and len(places) > 1:
        return [places, [*places[1:], 14]]
    return [places]


def _spread(jokers: int, spans: list[tuple[int, int]]) -> list[int] | None:
    """Jokers per meld, each within its ``(fewest, most)``, all ``jokers`` used; fewest first."""
    low = sum(f for f, _ in spans)
    if low > jokers or sum(m for _, m in spans) < jokers:
        return None
    extra = jokers - low
    out = []
    for f, m in spans:
        add = min(extra, m - f)
        out.append(f + add)
        extra -= add
    return out


def _cover_runs(
    counts: list[int], n_books: int, n_runs: int, limit: int, min_nat: int, distinct: bool
) -> tuple[PlannedMeld, ...] | None:
    """``n_runs`` runs of different suits using every card in ``counts`` (no books).

    Each suit's naturals all go to that suit's run, so the only choices are where
    the ace plays and how the jokers spread, both settled by joker counts.
    """
    jokers = counts[JOKER]
    used: list[tuple[int, list[tuple[list[int], tuple[int, int]]]]] = []
    free_suits = []
    for s in range(4):
        places = _suit_places(counts, s)
        if places is None:
            return None
        if not places:
            free_suits.append(s)
            continue
        if len(places) < min_nat or len(used) == n_runs:
            return None
        options = []
        for ps in _ace_choices(places):
            span = _run_span(ps, limit)
            if span is not None:
                options.append((ps, span))
        if not options:
            return None
        used.append((s, options))
    empty = n_runs - len(used)
    if empty:  # runs of jokers only, possible only without a natural minimum
        span = _run_span([], limit)
        if min_nat > 0 or span is None:
            return None
        used.extend((s, [([], span)]) for s in free_suits[:empty])
    for choice in product(*(options for _, options in used)):
        spread = _spread(jokers, [span for _, span in choice])
        if spread is not None:
            return tuple((RUN, _build_run(ps, s, j)) for (s, _), (ps, _), j in zip(used, choice, spread, strict=True))
    return None


def _book_counts(
    naturals: list[int], n_books: int, amin: int, distinct: bool
) -> tuple[int, list[tuple[int, int]]] | None:
    """Books holding every natural of ``naturals`` (per rank), fewest jokers.

    Returns ``(fewest jokers, books per rank as (rank, count))``; rank 0 stands for
    books of jokers only (possible only when ``amin`` is 0). A rank with ``n``
    naturals and ``k`` books (``k * amin <= n``) needs ``max(0, 3k - n)`` jokers,
    convex in ``k``, so extra books go greedily where they cost least.
    """
    ranks = [r for r in _RANKS if naturals[r]]
    if len(ranks) > n_books:
        return None
    for r in ranks:
        if naturals[r] < amin:
            return None
    books = {r: 1 for r in ranks}
    cost = sum(max(0, 3 - naturals[r]) for r in ranks)
    for _ in range(n_books - len(ranks)):
        best_r, best_c = -1, 4
        if not distinct:
            for r in ranks:
                k, n = books[r], naturals[r]
                if (k + 1) * amin <= n:
                    c = max(0, 3 * (k + 1) - n) - max(0, 3 * k - n)
                    if c < best_c:
                        best_r, best_c = r, c
        if best_r < 0 and amin == 0 and (not distinct or books.get(0, 0) + len(ranks) < 13):
            best_r, best_c = 0, 3
        if best_r < 0:
            return None
        books[best_r] = books.get(best_r, 0) + 1
        cost += best_c
    return cost, sorted(books.items())


def _cover_mixed(
    counts: list[int], n_books: int, n_runs: int, limit: int, min_nat: int, distinct: bool
) -> tuple[PlannedMeld, ...] | None:
    """``n_books`` books and ``n_runs`` runs using every card in ``counts`` (general case).

    Enumerates the run suits and, for each, which of its naturals the run takes
    (one per rank at most; the rest go to books of their ranks) and where the ace
    plays; the books then hold every natural left. Every meld's joker count is an
    interval, so the jokers fit iff their number lies between the sums.

    Pruning: a natural outside the run suits, or a second copy in a run suit,
    forces a book of its rank; a run may leave out naturals of other ranks only
    while books remain for them.
    """
    jokers = counts[JOKER]
    book_amin = max(min_nat, 3 - limit, 0)
    totals = _rank_totals(counts)
    books_most = n_books * limit
    for suits in combinations(range(4), n_runs):
        forced = {r for r in _RANKS if totals[r] > sum(1 for s in suits if counts[4 * r + s])}
        spare = n_books - len(forced)
        if spare < 0:
            continue
        per_suit: list[list[tuple[list[int], tuple[int, int]]]] = []
        for s in suits:
            ranks = [r for r in _RANKS if counts[4 * r + s]]
            free = [r for r in ranks if r in forced]  # the run may take these or not
            must = [r for r in ranks if r not in forced]  # the run takes these but for `spare` of them
            options = []
            for n_out in range(min(spare, len(must)) + 1):
                for out in combinations(must, n_out):
                    kept = [r for r in must if r not in out]
                    for n_free in range(len(free) + 1):
                        for extra in combinations(free, n_free):
                            taken = sorted(kept + list(extra))
                            if len(taken) < min_nat:
                                continue
                            for ps in _ace_choices(taken):
                                span = _run_span(ps, limit)
                                if span is not None and span[0] <= jokers:
                                    options.append((ps, span))
            if not options:
                break
            options.sort(key=lambda o: o[1][0])
            per_suit.append(options)
        if len(per_suit) < n_runs:
            continue
        for choice in product(*per_suit):
            fewest = sum(span[0] for _, span in choice)
            if fewest > jokers or sum(span[1] for _, span in choice) + books_most < jokers:
                continue
            naturals = totals[:]
            for ps, _ in choice:
                for p in ps:
                    naturals[1 if p == 14 else p] -= 1
            books = _book_counts(naturals, n_books, book_amin, distinct)
            if books is None or fewest + books[0] > jokers:
                continue
            return _emit_mixed(counts, suits, choice, naturals, books[1], book_amin, limit)
    return None


def _emit_mixed(
    counts: list[int],
    suits: tuple[int, ...],
    choice: tuple[tuple[list[int], tuple[int, int]], ...],
    naturals: list[int],
    books: list[tuple[int, int]],
    amin: int,
    limit: int,
) -> tuple[PlannedMeld, ...]:
    left = counts[:]
    for s, (ps, _) in zip(suits, choice, strict=True):
        for p in ps:
            left[_card(p, s)] -= 1
    book_sizes: list[tuple[int, int]] = []  # (rank, naturals)
    for r, k in books:
        n = naturals[r] if r else 0
        sizes = [amin] * k
        spare = n - amin * k
        for i in range(k):
            add = min(spare, max(0, 3 - sizes[i]))
            sizes[i] += add
            spare -= add
        sizes[0] += spare
        book_sizes.extend((r, a) for a in sizes)
    spans = [span for _, span in choice] + [(max(0, 3 - a), limit) for _, a in book_sizes]
    spread = _spread(counts[JOKER], spans)
    assert spread is not None
    melds: list[PlannedMeld] = []
    for (r, a), j in zip(book_sizes, spread[len(choice) :], strict=True):
        cards: list[int] = []
        if r:
            for s in range(4):
                c = 4 * r + s
                take = min(left[c], a - len(cards))
                left[c] -= take
                cards.extend([c] * take)
        melds.append((BOOK, tuple(cards) + (JOKER,) * j))
    for s, (ps, _), j in zip(suits, choice, spread[: len(choice)], strict=True):
        melds.append((RUN, _build_run(ps, s, j)))
    return tuple(melds)
