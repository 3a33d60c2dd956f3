"""Contract matching: which goal a go-down's melds meet, and how each meld reads.

A submitted meld may read as a book or a run (:func:`melds.read_meld` gives every
:class:`~mayi_engine.melds.Reading`); a go-down meets a contract when one choice of
readings has the contract's books and runs, with the variant's conditions (two runs
of one contract in different suits; in Shanghai, books of different ranks). With the
free goal order (a Shanghai house option) a seat may meet any goal not met yet.
"""

from __future__ import annotations

from dataclasses import replace

from .errors import IllegalMoveError
from .melds import Reading
from .rules import Contract, MeldKind, Rules
from .state import State


def goals_for(state: State, seat: int) -> list[tuple[int, Contract]]:
    """The contracts ``seat`` may go down with now, as ``(goal, contract)``: the round's
    own, or with the free goal order every goal (a round's contract) it has not met yet,
    under this round's all-cards rule."""
    rules = state.rules
    current = rules.rounds[state.round - 1].contract
    if not rules.free_goal_order:
        return [(state.round - 1, current)]
    done = state.goals_done[seat]
    return [
        (i, replace(spec.contract, all_cards=current.all_cards)) for i, spec in enumerate(rules.rounds) if i not in done
    ]


def match_goal(
    s: State, seat: int, readings: list[list[Reading]], melds: tuple[tuple[int, ...], ...]
) -> tuple[int, Contract, list[Reading]]:
    """The goal that ``melds`` meet, its contract, and how each meld reads (book or run)."""
    goals = goals_for(s, seat)
    first: IllegalMoveError | None = None
    for goal, contract in goals:
        want = (
            f"Round {s.round}'s contract is {contract.describe()}"
            if len(goals) == 1
            else f"The goal {contract.describe()}"
        )
        try:
            return goal, contract, match_contract(readings, melds, contract, s.rules, want)
        except IllegalMoveError as exc:
            first = first or exc
    if len(goals) == 1 and first is not None:
        raise first
    left = "; ".join(c.describe() for _, c in goals)
    raise IllegalMoveError(
        "illegal_meld", f"These melds meet none of your goals not yet met ({left}): lay down exactly one of them"
    )


def match_contract(
    readings: list[list[Reading]],
    melds: tuple[tuple[int, ...], ...],
    contract: Contract,
    rules: Rules,
    want: str,
) -> list[Reading]:
    if len(melds) != contract.books + contract.runs:
        raise IllegalMoveError(
            "illegal_meld",
            f"{want}: lay down exactly {contract.books + contract.runs} melds, not {len(melds)}",
        )
    problem = ""
    for choice in _product(readings):
        books = [r for r in choice if r.kind is MeldKind.BOOK]
        runs = [r for r in choice if r.kind is MeldKind.RUN]
        if len(books) != contract.books or len(runs) != contract.runs:
            problem = problem or f"{want}; you laid down {_count_words(len(books), len(runs))}"
            continue
        if len({r.suit for r in runs}) < len(runs):
            problem = f"{want}: two runs of one contract must be of different suits"
            continue
        if rules.distinct_book_ranks and len({r.low for r in books}) < len(books):
            problem = f"{want}: in {rules.title} the books of one contract must be of different ranks"
            continue
        return list(choice)
    raise IllegalMoveError("illegal_meld", problem)


def _count_words(books: int, runs: int) -> str:
    return f"{books} book{'s' if books != 1 else ''} and {runs} run{'s' if runs != 1 else ''}"


def _product(options: list[list[Reading]]) -> list[tuple[Reading, ...]]:
    out: list[tuple[Reading, ...]] = [()]
    for opts in options:
        out = [(*prefix, o) for prefix in out for o in opts]
    return out
