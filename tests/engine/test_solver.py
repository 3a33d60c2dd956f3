"""The contract solver against an independent brute-force oracle.

The oracle knows nothing of the solver: it tries every way to pick the melds of a
contract out of a small hand (every sub-multiset for every labelled meld) and
checks each meld with the plain validity functions below.
"""

from __future__ import annotations

import ast
import doctest
import itertools
import random
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mayi_engine import solver
from mayi_engine.cards import JOKER, build_decks, card_codes, parse_cards
from mayi_engine.rules import MAY_I, SHANGHAI, Contract, Rules
from mayi_engine.solver import can_meet, find_contract

# --------------------------------------------------------------------------- #
# The oracle: obviously correct, slow.
# --------------------------------------------------------------------------- #


def naturals_of(cards):
    return [c for c in cards if c != JOKER]


def jokers_ok(cards, rules: Rules) -> bool:
    n_jokers = sum(1 for c in cards if c == JOKER)
    if rules.joker_limit is not None and n_jokers > rules.joker_limit:
        return False
    return len(cards) - n_jokers >= rules.min_naturals


def is_book(cards, rules: Rules) -> bool:
    """3+ cards, every natural of one rank."""
    return len(cards) >= 3 and len({c // 4 for c in naturals_of(cards)}) <= 1 and jokers_ok(cards, rules)


def is_legal_window(lo: int, length: int) -> bool:
    places = range(lo, lo + length)
    return lo >= 1 and lo + length - 1 <= 14 and not (1 in places and 14 in places)


def run_values(card: int):
    rank = card // 4
    return (1, 14) if rank == 1 else (rank,)


def is_run(cards, rules: Rules) -> bool:
    """4+ cards of one suit that can be laid in sequence (jokers fill the gaps)."""
    if len(cards) < 4 or not jokers_ok(cards, rules):
        return False
    nat = naturals_of(cards)
    if len({c % 4 for c in nat}) > 1:
        return False
    for lo in range(1, 15):
        if not is_legal_window(lo, len(cards)):
            continue
        window = set(range(lo, lo + len(cards)))
        for values in itertools.product(*(run_values(c) for c in nat)):
            if len(set(values)) == len(values) and set(values) <= window:
                return True
    return False


def contract_ok(books, runs, rules: Rules) -> bool:
    """Runs of different suits; books of different ranks where the rules say so."""
    run_suits = [naturals_of(r)[0] % 4 for r in runs if naturals_of(r)]
    if len(set(run_suits)) != len(run_suits) or len(runs) > 4:
        return False
    if rules.distinct_book_ranks:
        ranks = [naturals_of(b)[0] // 4 for b in books if naturals_of(b)]
        if len(set(ranks)) != len(ranks) or len(books) > 13:
            return False
    return True


def sub_multisets(cards, size):
    return set(itertools.combinations(sorted(cards), size))


def minus(cards, part):
    rest = Counter(cards)
    rest.subtract(part)
    return tuple(sorted(rest.elements()))


def oracle(hand, contract: Contract, rules: Rules) -> bool:
    """Is there any arrangement? Tries every sub-multiset for every labelled meld."""
    return oracle_fewest_jokers(hand, contract, rules) is not None


def oracle_fewest_jokers(hand, contract: Contract, rules: Rules) -> int | None:
    """Fewest jokers over all arrangements of an ordinary contract (every one is tried);
    for an all-cards contract, the jokers of the first arrangement found. None: no arrangement."""
    kinds = ["book"] * contract.books + ["run"] * contract.runs
    hand = tuple(sorted(hand))

    def valid(kind, meld):
        return is_book(meld, rules) if kind == "book" else is_run(meld, rules)

    def finish(chosen):
        books = [m for k, m in chosen if k == "book"]
        runs = [m for k, m in chosen if k == "run"]
        return contract_ok(books, runs, rules)

    def ordinary(i, rest, chosen):
        if i == len(kinds):
            return sum(m.count(JOKER) for _, m in chosen) if finish(chosen) else None
        size = 3 if kinds[i] == "book" else 4
        fewest = None
        for meld in sub_multisets(rest, size):
            if valid(kinds[i], meld):
                found = ordinary(i + 1, minus(rest, meld), [*chosen, (kinds[i], meld)])
                if found is not None and (fewest is None or found < fewest):
                    fewest = found
        return fewest

    def all_cards(i, rest, chosen):
        if i == len(kinds):
            return len(rest) == 0 and finish(chosen)
        if i == len(kinds) - 1:
            last = [rest]
        else:
            last = [m for size in range(3, len(rest) + 1) for m in sub_multisets(rest, size)]
        for meld in last:
            if valid(kinds[i], meld) and all_cards(i + 1, minus(rest, meld), [*chosen, (kinds[i], meld)]):
                return True
        return False

    if not contract.all_cards:
        return ordinary(0, hand, [])
    if all_cards(0, hand, []):
        return hand.count(JOKER)
    if rules.out_by_discard:
        for c in set(hand):
            if all_cards(0, minus(hand, (c,)), []):
                return hand.count(JOKER) - (c == JOKER)
    return None


# --------------------------------------------------------------------------- #
# Checking a returned plan.
# --------------------------------------------------------------------------- #


def run_in_order(cards) -> bool:
    """A run as written: some legal window lo.., each natural at its own place."""
    for lo in range(1, 15):
        if not is_legal_window(lo, len(cards)):
            continue
        if all(c == JOKER or lo + i in run_values(c) for i, c in enumerate(cards)):
            return True
    return False


def check_plan(plan, hand, contract: Contract, rules: Rules) -> None:
    kinds = [k for k, _ in plan]
    assert sorted(kinds) == sorted(["book"] * contract.books + ["run"] * contract.runs), plan
    books = [cards for k, cards in plan if k == "book"]
    runs = [cards for k, cards in plan if k == "run"]
    for cards in books:
        assert is_book(cards, rules), plan
        if not contract.all_cards:
            assert len(cards) == 3, plan
    for cards in runs:
        assert is_run(cards, rules) and run_in_order(cards), plan
        if not contract.all_cards:
            assert len(cards) == 4, plan
    assert contract_ok(books, runs, rules), plan
    used = Counter(c for _, cards in plan for c in cards)
    have = Counter(hand)
    assert not used - have, (plan, hand)
    if contract.all_cards:
        left = sum((have - used).values())
        assert left == 0 or (rules.out_by_discard and left == 1), (plan, hand)


def compare(hand, contract: Contract, rules: Rules) -> bool:
    """Solver and oracle agree; any plan is valid. Returns the verdict."""
    plan = find_contract(hand, contract, rules)
    fewest = oracle_fewest_jokers(hand, contract, rules)
    expected = fewest is not None
    assert (plan is not None) == expected, (hand, contract, rules.name, rules.joker_limit, rules.min_naturals, plan)
    assert can_meet(hand, contract, rules) == expected
    if plan is not None:
        check_plan(plan, hand, contract, rules)
        if not contract.all_cards:  # the solver promises the fewest jokers
            assert sum(cards.count(JOKER) for _, cards in plan) == fewest, (hand, contract, rules.name, plan)
    return expected


# --------------------------------------------------------------------------- #
# Random small hands.
# --------------------------------------------------------------------------- #

RULE_SETS = [
    MAY_I,
    SHANGHAI,
    replace(MAY_I, name="may_i_no_discard", out_by_discard=False),
    replace(SHANGHAI, name="shanghai_discard", out_by_discard=True),
    replace(MAY_I, name="two_jokers", joker_limit=2),
    replace(SHANGHAI, name="two_naturals", min_naturals=2),
    replace(SHANGHAI, name="no_naturals", min_naturals=0),
    replace(MAY_I, name="wild", joker_limit=None, min_naturals=0),
]
ORDINARY = [Contract(1, 0), Contract(2, 0), Contract(0, 1), Contract(1, 1), Contract(0, 2), Contract(3, 0)]
ALL_CARDS = [
    Contract(1, 0, True),
    Contract(2, 0, True),
    Contract(0, 1, True),
    Contract(1, 1, True),
    Contract(0, 2, True),
]


def random_hand(rng: random.Random) -> tuple[int, ...]:
    """6-10 cards from 1-2 decks, often from a few suits and ranks so melds happen."""
    decks = rng.choice((1, 2))
    size = rng.randint(6, 10)
    pool = build_decks(decks)
    if rng.random() < 0.75:
        suits = rng.sample(range(4), rng.randint(1, 3))
        lo = rng.randint(1, 9)
        ranks = set(range(lo, lo + rng.randint(3, 6)))
        if rng.random() < 0.3:
            ranks |= {1, 12, 13}  # aces at both ends
        pool = [c for c in pool if c == JOKER or (c // 4 in ranks and c % 4 in suits)]
        pool += [JOKER] * rng.randint(0, 2)
    return tuple(rng.sample(pool, min(size, len(pool))))


def planted_hand(rng: random.Random, contract: Contract) -> tuple[int, ...]:
    """A hand built around melds of ``contract`` (jokers anywhere, books often on the
    ranks of the runs, books of one rank twice), then disturbed: up to two extra
    cards, and sometimes one card taken away. Hits the corners a uniform hand misses.
    """
    cards: list[int] = []
    centre = rng.randint(1, 13)
    near = [r for r in range(centre - 2, centre + 3) if 1 <= r <= 13]
    books = contract.books
    for s in rng.sample(range(4), contract.runs):
        lo = max(1, min(11, centre - rng.randint(0, 3)))
        places = list(range(lo, lo + 4))
        shared = rng.choice(places) if books and rng.random() < 0.4 else None
        if shared is not None:
            # The book owns this run's natural; the run holds a joker in its place.
            rank = 1 if shared == 14 else shared
            cards += [rank * 4 + s, rank * 4 + rng.randrange(4), JOKER]
            books -= 1
        for place in places:
            wild = place == shared or rng.random() < 0.2
            cards.append(JOKER if wild else (1 if place == 14 else place) * 4 + s)
    for _ in range(books):
        r = rng.choice(near)
        cards += [JOKER if rng.random() < 0.25 else r * 4 + rng.randrange(4) for _ in range(3)]
    for _ in range(rng.randint(0, 2)):
        cards.append(JOKER if rng.random() < 0.2 else rng.choice(near) * 4 + rng.randrange(4))
    if cards and rng.random() < 0.3:
        cards.pop(rng.randrange(len(cards)))
    rng.shuffle(cards)
    return tuple(cards[:10])


def test_oracle_agrees_on_seeded_random_hands():
    rng = random.Random(20240611)
    comparisons = 0
    met = Counter()
    for i in range(12000):
        rules = rng.choice(RULE_SETS)
        contract = rng.choice(ORDINARY if rng.random() < 0.55 else ALL_CARDS)
        hand = random_hand(rng) if i % 2 else planted_hand(rng, contract)
        met[compare(hand, contract, rules)] += 1
        comparisons += 1
    # Both verdicts must be well represented, or the comparison proves little.
    assert met[True] > 2000 and met[False] > 2000, met
    print(f"\nseeded oracle comparisons: {comparisons} ({met[True]} met, {met[False]} not met)")


def test_oracle_agrees_when_books_and_runs_share_naturals():
    """Book + run contracts under joker limits, where a run may have to leave a natural
    to a book and take a joker instead (the solver's "releases")."""
    rng = random.Random(5)
    limited = [MAY_I, RULE_SETS[4], RULE_SETS[5], SHANGHAI]
    met = Counter()
    for _ in range(1500):
        contract = rng.choice((Contract(1, 1), Contract(2, 1)))
        met[compare(planted_hand(rng, contract), contract, rng.choice(limited))] += 1
    assert met[True] > 300 and met[False] > 300, met
    print(f"\nshared-natural oracle comparisons: {sum(met.values())} ({met[True]} met)")


@st.composite
def hands(draw):
    decks = draw(st.sampled_from((1, 2)))
    suits = draw(st.lists(st.integers(0, 3), min_size=1, max_size=4, unique=True))
    lo = draw(st.integers(1, 10))
    ranks = [*range(lo, lo + 5), 1, 13]
    pool = [c for c in build_decks(decks) if c == JOKER or (c // 4 in ranks and c % 4 in suits)]
    size = draw(st.integers(6, min(10, len(pool))))
    picks = draw(st.lists(st.integers(0, len(pool) - 1), min_size=size, max_size=size, unique=True))
    return tuple(pool[i] for i in picks)


@settings(max_examples=1200, deadline=None)
@given(hand=hands(), contract=st.sampled_from(ORDINARY + ALL_CARDS), rules=st.sampled_from(RULE_SETS))
def test_oracle_agrees_hypothesis(hand, contract, rules):
    compare(hand, contract, rules)


def test_runs_fast_path_agrees_with_general_path():
    """All-cards runs-only contracts have a fast path; the general path must agree."""
    rng = random.Random(7)
    for _ in range(1200):
        decks = build_decks(2)
        suits = rng.sample(range(4), rng.randint(1, 4))
        pool = [c for c in decks if c == JOKER or c % 4 in suits]
        hand = rng.sample(pool, rng.randint(4, 13))
        counts = solver.counts_of(hand)
        runs = rng.randint(1, 3)
        for rules in (MAY_I, SHANGHAI, replace(SHANGHAI, min_naturals=0)):
            limit = solver._NO_LIMIT if rules.joker_limit is None else rules.joker_limit
            args = (counts, 0, runs, limit, rules.min_naturals, rules.distinct_book_ranks)
            fast, general = solver._cover_runs(*args), solver._cover_mixed(*args)
            assert (fast is None) == (general is None), (hand, runs, rules.name)


def test_the_discards_worth_trying_are_every_discard_that_works():
    """Going out with runs by discarding one card: the solver tries only the discards
    ``_run_discards`` keeps; every discard that the fast path covers is among them."""
    rng = random.Random(9)
    for _ in range(1500):
        runs = rng.randint(1, 3)
        hand = []
        for suit in rng.sample(range(4), runs):
            lo = rng.randint(1, 9)
            hand += [JOKER if rng.random() < 0.1 else (r if r < 14 else 1) * 4 + suit for r in range(lo, lo + 4)]
        hand += rng.sample(build_decks(2), rng.randint(0, 2))
        hand = tuple(sorted(hand))
        counts = solver.counts_of(hand)
        for rules in (MAY_I, SHANGHAI):
            limit = solver._NO_LIMIT if rules.joker_limit is None else rules.joker_limit
            works = []
            for card in sorted(set(hand)):
                counts[card] -= 1
                if solver._cover_runs(counts, 0, runs, limit, rules.min_naturals, False) is not None:
                    works.append(card)
                counts[card] += 1
            kept = solver._run_discards(hand, counts, runs)
            assert set(works) <= set(kept) and kept == sorted(kept), (card_codes(hand), runs, rules.name)


# --------------------------------------------------------------------------- #
# Hand-written cases.
# --------------------------------------------------------------------------- #


def plan_of(codes, contract, rules):
    plan = find_contract(parse_cards(codes), contract, rules)
    if plan is not None:
        check_plan(plan, parse_cards(codes), contract, rules)
    return plan


ONE_RUN = Contract(0, 1)


def test_ace_high_run():
    plan = plan_of(["JH", "QH", "KH", "AH"], ONE_RUN, SHANGHAI)
    assert plan == (("run", tuple(parse_cards(["JH", "QH", "KH", "AH"]))),)


def test_ace_low_run():
    plan = plan_of(["AD", "2D", "3D", "4D"], ONE_RUN, MAY_I)
    assert plan == (("run", tuple(parse_cards(["AD", "2D", "3D", "4D"]))),)


def test_ace_high_with_joker():
    plan = plan_of(["QS", "KS", "AS", "JK"], ONE_RUN, MAY_I)
    assert plan == (("run", tuple(parse_cards(["JK", "QS", "KS", "AS"]))),)


def test_wrap_rejected():
    assert not can_meet(parse_cards(["KC", "AC", "2C", "3C"]), ONE_RUN, SHANGHAI)
    assert not can_meet(parse_cards(["QC", "KC", "AC", "2C"]), ONE_RUN, SHANGHAI)
    assert can_meet(parse_cards(["KC", "AC", "2C", "3C", "JK"]), ONE_RUN, SHANGHAI)  # A 2 3 + joker as 4


def test_ace_not_both_ends():
    # A 2 ... Q K A would need the ace twice; thirteen ranks is the longest run.
    hand = parse_cards(["AC", "2C", "3C", "4C", "5C", "6C", "7C", "8C", "9C", "TC", "JC", "QC", "KC", "AC"])
    assert not can_meet(hand, Contract(0, 1, True), replace(MAY_I, out_by_discard=False))
    assert can_meet(hand, Contract(0, 1, True), MAY_I)  # the spare ace is discarded


def test_run_never_repeats_a_rank():
    assert not can_meet(parse_cards(["5H", "5H", "6H", "7H"]), ONE_RUN, SHANGHAI)


def test_may_i_one_joker_per_meld():
    assert not can_meet(parse_cards(["5H", "JK", "JK", "8H"]), ONE_RUN, MAY_I)
    assert can_meet(parse_cards(["5H", "JK", "JK", "8H"]), ONE_RUN, SHANGHAI)
    assert not can_meet(parse_cards(["9C", "JK", "JK"]), Contract(1, 0), MAY_I)
    assert can_meet(parse_cards(["9C", "9D", "JK"]), Contract(1, 0), MAY_I)
    # Two books and a run with one joker each.
    plan = plan_of(["9C", "9D", "JK", "4S", "4H", "JK", "5D", "6D", "JK", "8D"], Contract(2, 1), MAY_I)
    assert plan is not None and all(cards.count(JOKER) == 1 for _, cards in plan)


def test_joker_in_run_lets_book_keep_naturals():
    # 5C 6C 7C 8C would leave the book 7D JK JK (two jokers, illegal in May I): the run
    # must take a joker in place of the 7C it holds, so that the book is 7C 7D JK.
    plan = plan_of(["7C", "7D", "JK", "JK", "5C", "6C", "8C"], Contract(1, 1), MAY_I)
    assert plan == (
        ("book", tuple(parse_cards(["7C", "7D", "JK"]))),
        ("run", tuple(parse_cards(["5C", "6C", "JK", "8C"]))),
    )


def test_shanghai_only_jokers_rejected():
    assert not can_meet(parse_cards(["JK", "JK", "JK"]), Contract(1, 0), SHANGHAI)
    assert not can_meet(parse_cards(["JK", "JK", "JK", "JK"]), ONE_RUN, SHANGHAI)
    assert can_meet(parse_cards(["JK", "JK", "3D"]), Contract(1, 0), SHANGHAI)
    assert can_meet(parse_cards(["JK", "JK", "JK", "3D"]), ONE_RUN, SHANGHAI)
    # A custom variant without a natural minimum accepts a meld of jokers only.
    assert can_meet(parse_cards(["JK", "JK", "JK"]), Contract(1, 0), replace(SHANGHAI, min_naturals=0))


def test_two_runs_same_suit_rejected():
    hand = parse_cards(["2H", "3H", "4H", "5H", "7H", "8H", "9H", "TH"])
    assert not can_meet(hand, Contract(0, 2), SHANGHAI)
    assert not can_meet(hand, Contract(0, 2), MAY_I)
    assert can_meet(parse_cards(["2H", "3H", "4H", "5H", "7S", "8S", "9S", "TS"]), Contract(0, 2), MAY_I)


def test_books_of_same_rank():
    hand = parse_cards(["7C", "7D", "7H", "7S", "7C", "7D"])
    assert can_meet(hand, Contract(2, 0), MAY_I)
    assert not can_meet(hand, Contract(2, 0), SHANGHAI)
    plan = plan_of(["7C", "7D", "7H", "7S", "7C", "7D"], Contract(2, 0), MAY_I)
    assert plan is not None and {cards[0] // 4 for _, cards in plan} == {7}


def test_round_7_three_runs_all_twelve_cards():
    codes = ["3C", "4C", "5C", "6C", "9D", "TD", "JK", "QD", "AH", "2H", "3H", "4H"]
    contract = MAY_I.rounds[6].contract
    plan = plan_of(codes, contract, MAY_I)
    assert plan is not None
    assert sum(len(cards) for _, cards in plan) == 12


def test_round_7_thirteen_cards_one_spare():
    codes = ["3C", "4C", "5C", "6C", "9D", "TD", "JK", "QD", "AH", "2H", "3H", "4H", "KS"]
    contract = MAY_I.rounds[6].contract
    plan = plan_of(codes, contract, MAY_I)
    assert plan is not None and sum(len(cards) for _, cards in plan) == 12
    assert not can_meet(parse_cards(codes), contract, replace(MAY_I, out_by_discard=False))
    # Two spare cards are one too many.
    assert not can_meet(parse_cards([*codes, "7S"]), contract, MAY_I)
    assert can_meet(parse_cards([*codes, "KD"]), contract, MAY_I)  # 9D TD JK QD KD, KS discarded


def test_round_7_longer_runs_and_joker_extension():
    codes = ["3C", "4C", "5C", "6C", "7C", "8C", "9D", "TD", "JD", "QD", "AH", "2H", "3H", "JK"]
    plan = plan_of(codes, MAY_I.rounds[6].contract, replace(MAY_I, out_by_discard=False))
    assert plan is not None and sum(len(cards) for _, cards in plan) == 14


def test_round_7_not_early():
    codes = ["3C", "4C", "5C", "6C", "9D", "TD", "JK", "QD", "AH", "2H", "3H", "4H", "KS", "7S"]
    assert not can_meet(parse_cards(codes), MAY_I.rounds[6].contract, MAY_I)
    assert can_meet(parse_cards(codes), Contract(0, 3), MAY_I)


def test_minimal_sizes_and_fewest_jokers():
    plan = plan_of(["5S", "6S", "7S", "8S", "9S", "JK", "KD", "KH", "KC", "KS"], Contract(1, 1), SHANGHAI)
    assert plan is not None
    assert [len(c) for _, c in plan] == [3, 4]
    assert all(JOKER not in cards for _, cards in plan)


def test_mixed_all_cards_contract():
    rules = replace(SHANGHAI, out_by_discard=False)
    contract = Contract(1, 1, True)
    assert plan_of(["5S", "6S", "7S", "8S", "5D", "5H", "5C"], contract, rules)
    # The 5S must serve the book: the run is 6S 7S 8S + joker.
    assert plan_of(["5S", "6S", "7S", "8S", "5D", "5H", "JK"], contract, rules)
    assert plan_of(["5S", "6S", "7S", "8S", "5D", "JK"], contract, rules) is None


def test_mixed_all_cards_natural_minimum():
    contract = Contract(1, 1, True)
    hand = ["5D", "5H", "5C", "8S", "JK", "JK", "JK"]
    assert plan_of(hand, contract, SHANGHAI)  # 8S JK JK JK is a run in Shanghai
    assert plan_of(hand, contract, replace(SHANGHAI, min_naturals=2)) is None  # 8S has no partner
    assert plan_of(["5D", "5H", "5C", "8S", "9S", "JK", "JK"], contract, replace(SHANGHAI, min_naturals=2))


def test_books_of_jokers_without_natural_minimum():
    wild = replace(MAY_I, joker_limit=None, min_naturals=0)
    assert plan_of(["JK"] * 6, Contract(2, 0), wild)
    assert plan_of(["JK"] * 6 + ["5C", "6C"], Contract(2, 0, True), wild)
    assert plan_of(["JK"] * 5, Contract(2, 0), wild) is None


def test_empty_and_degenerate_contracts():
    assert find_contract((), Contract(0, 0), MAY_I) == ()
    assert find_contract(parse_cards(["5S"]), Contract(0, 0, True), MAY_I) == ()
    assert find_contract(parse_cards(["5S"]), Contract(0, 0, True), SHANGHAI) is None
    assert find_contract(parse_cards(["5S", "6S", "7S", "8S"]), Contract(0, 5), SHANGHAI) is None


def test_cache_is_keyed_on_the_relevant_rules():
    hand = parse_cards(["7C", "7D", "7H", "7S", "7C", "7D"])
    solver.clear_cache()
    assert can_meet(hand, Contract(2, 0), MAY_I)
    assert not can_meet(hand, Contract(2, 0), SHANGHAI)
    assert can_meet(tuple(reversed(hand)), Contract(2, 0), MAY_I)
    assert solver._solve.cache_info().hits >= 1


# --------------------------------------------------------------------------- #
# Module hygiene.
# --------------------------------------------------------------------------- #


def test_doctests():
    result = doctest.testmod(solver)
    assert result.attempted > 0 and result.failed == 0


def test_solver_is_pure():
    tree = ast.parse(Path(solver.__file__).read_text())
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            imported.add("." * node.level + (node.module or ""))
    assert imported <= {"__future__", "collections.abc", "functools", "itertools", ".cards", ".rules"}, imported


@pytest.mark.parametrize("rules", [MAY_I, SHANGHAI])
def test_every_builtin_contract_on_a_dealt_hand(rules):
    """Dealt hands (random, and with the contract's melds planted in them): the solver
    finds a plan exactly when the brute-force oracle finds an arrangement, and every
    plan is valid. A solver that never found a plan fails on the planted hands."""
    rng = random.Random(3)
    for spec in rules.rounds:
        contract = spec.contract
        found = 0
        for i in range(50):
            deck = build_decks(3)
            if i % 2:
                hand = tuple(rng.sample(deck, spec.deal + 1))
            else:
                hand = _planted(rng, contract, deck, max(spec.deal + 1, contract.min_cards))
            plan = find_contract(hand, contract, rules)
            assert (plan is not None) == oracle(hand, contract, rules), (card_codes(hand), contract)
            if i % 2 == 0:
                assert plan is not None, (card_codes(hand), contract)
            if plan is not None:
                found += 1
                check_plan(plan, hand, contract, rules)
        assert found >= 25, (contract, found)


def _planted(rng: random.Random, contract: Contract, deck: list[int], size: int) -> tuple[int, ...]:
    """A hand holding ``contract``'s melds (natural cards; distinct book ranks, runs of
    distinct suits on ranks apart from the books), padded with random cards to ``size``
    (to exactly the melds' cards for an all-cards contract)."""
    ranks = rng.sample(range(1, 14), contract.books)
    cards = [r * 4 + s for r in ranks for s in rng.sample(range(4), 3)]
    free = [r for r in range(1, 11) if not any(b in ranks for b in range(r, r + 4))]
    for suit in rng.sample(range(4), contract.runs):
        lo = rng.choice(free)
        cards += [(lo + k) * 4 + suit for k in range(4)]
    if contract.all_cards:
        # Longer runs take the rest of the hand: extend the last run upwards.
        while len(cards) < size and cards[-1] // 4 < 13:
            cards.append(cards[-1] + 4)
        return tuple(cards)
    rest = list(deck)
    for c in cards:
        rest.remove(c)
    cards += rng.sample(rest, size - len(cards))
    return tuple(cards)
