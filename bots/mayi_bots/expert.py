"""``expert``: ``strong``'s plan and card counting, with a search at the claims it weighs.

How it plays (docs/bots.md, "How ``expert`` plays", says more):

* **Where it searches.** A claim (May I's call, Shanghai's buy, the first upcard) or taking
  the upcard as the draw, before it is down, when the card would help its plan: each
  claim costs penalty cards, the decision with the most at stake. Every other decision
  (a single legal move, a card that helps nothing, going down, laying off, discarding)
  is ``strong``'s, at once, but for its plan in May I: each round's contract is read as
  the best assignment of its cards to the melds (:func:`contract_plan`, where ``strong``
  keeps two windows a suit and may count a card in two melds); in the round that must
  use every card (May I's last), as the runs it can go out with, each of four or five
  cards (:func:`last_round_plan`, where ``strong`` counts every card of a suit in one
  run), and there a seat well ahead dumps points (:data:`LEAD`). Two options (off by
  default): ``discards=True`` searches the discard too, among ``strong``'s closest picks;
  ``strong_playouts=True`` plays the seat's own moves in the playouts with ``strong``.
* **Worlds.** The hidden cards are sampled consistently with what the seat has seen: all
  the decks, less its hand, the melds on the table, the discard pile as it watched it
  (``strong``'s card tracking), and with the upcards others took dealt back to the hands
  of others; the rest are shuffled into the other hands (their sizes as shown) and the
  stock. Each world is an engine state (``mayi_engine``).
* **Playouts.** In each world every candidate is played forward with the engine, every
  seat following fast rules in ``strong``'s spirit on the engine's own state, until the
  round ends or :data:`HORIZON` moves are played; the outcome is the seat's advantage: the
  mean round score of the others less its own (unfinished hands estimated from their
  points and the cards their plan still misses). The same worlds serve every candidate.
* **Choice.** ``strong``'s own move, unless another beats it over the worlds by at least
  :data:`MARGIN` points and by :data:`CONFIDENCE` standard errors: a few worlds are noisy,
  and a claim chosen on noise costs real penalty cards.
* **Budget.** At most ``worlds`` worlds a decision (:data:`WORLDS`) and at most ``budget``
  seconds of CPU time (:data:`BUDGET`); the worlds are drawn from the bot's ``seed``, so
  a seeded bot plays the same moves in the same games whenever the budget does not cut a
  search short (with ``budget=None`` it never does).

It needs the rules engine, ``mayi_engine`` (the whole project, ``mayi-game-service``):
without it, making the bot raises :class:`~mayi_sdk.helpers.EngineMissing`, which says so.
"""

from __future__ import annotations

import random
import secrets
import time
from collections import Counter
from typing import Any

from mayi_sdk import WAIT, Bot, GameView, LegalMove, Meld, Wait
from mayi_sdk.bot import as_legal_move, is_wait
from mayi_sdk.cards import JOKER, order, rank, suit
from mayi_sdk.helpers import EngineMissing, engine, find_contract, is_meld
from mayi_sdk.local import seat_view

from .cards import book_rank, fitting, joker_limit, points, run_span
from .plans import NO_RUNS, Plan, contract_plan, last_round_plan
from .playouts import advantage, answer_claims, fast_move
from .strong import Memory, StrongBot, extend_melds

#: Most worlds sampled for one decision.
WORLDS = 10
#: Most CPU seconds one decision may take (a search stops after the world it is in).
BUDGET = 0.25
#: Most moves a playout plays before its outcome is estimated.
HORIZON = 120
#: How sure the search must be that another move beats strong's (standard errors of the
#: mean gain over the worlds), and by how many points at least.
CONFIDENCE = 2.0
MARGIN = 3.0
#: Whether discards are searched (before it is down), among at most DISCARD_CANDIDATES
#: cards whose strong score is within DISCARD_WINDOW of strong's pick, in DISCARD_WORLDS.
SEARCH_DISCARDS = False
DISCARD_CANDIDATES = 3
DISCARD_WINDOW = 60.0
DISCARD_WORLDS = 6
#: Whether the seat's own moves in a playout are strong's (else the fast rules').
ROLLOUT_STRONG = False
#: The gate for a discard (no penalty rides on it: a smaller one than a claim's).
DISCARD_CONFIDENCE = 1.0
DISCARD_MARGIN = 1.0
#: In a round that must use every card (May I's last), a seat whose total is below every
#: other's by at least LEAD points weighs a card's points LEAD_WEIGHT more in its discards
#: than strong does (0.15-1.35 against 100 a card its plan needs): it keeps its lead by
#: holding fewer points rather than racing to go out.
LEAD = 20
LEAD_WEIGHT = 8.0
#: Whether a round that must use every card (May I's last) is planned as it is played out
#: (:func:`last_round_plan`) rather than by ``strong``'s estimate.
EXACT_LAST = True
#: The variants whose other rounds are planned exactly (:func:`contract_plan`) rather than
#: by ``strong``'s estimate (Shanghai keeps ``strong``'s: its goal is met).
EXACT_ROUNDS: frozenset[str] = frozenset({"may_i"})
#: Whether, in those rounds, the go-down is chosen among the solver's ways to meet the
#: contract (each with a card of the hand left out) by what it leaves to shed
#: (:meth:`_Planner.choose_melds_for`), rather than the solver's first way extended.
CHOOSE_MELDS = True


class ExpertBot(Bot):
    """``strong`` with a determinized search over its claims and upcard draws."""

    name = "expert"

    def __init__(
        self,
        seed: int | None = None,
        *,
        budget: float | None = BUDGET,
        worlds: int = WORLDS,
        discards: bool | None = None,
        strong_playouts: bool | None = None,
    ) -> None:
        """``discards``: search discards too (default :data:`SEARCH_DISCARDS`);
        ``strong_playouts``: the seat plays ``strong``'s moves in its playouts (default
        :data:`ROLLOUT_STRONG`); both off by default."""
        self.eng: Any = engine()  # EngineMissing, saying how to install it, without mayi_engine
        self.rng = random.Random(secrets.randbits(64) if seed is None else seed)
        self.budget = budget
        self.worlds = worlds
        self.discards = SEARCH_DISCARDS if discards is None else discards
        self.strong_playouts = ROLLOUT_STRONG if strong_playouts is None else strong_playouts
        self.strong = _Planner()
        self.searches = 0  # searches made so far (tests and benchmarks read it)

    # -- deciding -------------------------------------------------------------
    def decide(self, view: GameView) -> LegalMove | dict[str, object] | Wait:
        default = self.strong.decide(view)  # (also keeps strong's card tracking up to date)
        if len(view.legal) <= 1 or view.round is None or view.seat is None:
            return default
        try:
            candidates = self._candidates(view, default)
            # strong's own choice first: the search must show another is better to play it.
            first = next((i for i, c in enumerate(candidates) if _same(c, default)), None)
            if len(candidates) < 2 or first is None:
                return default
            candidates.insert(0, candidates.pop(first))
            chosen: LegalMove | Wait = self._search(view, candidates)
        except Exception:  # a view the search cannot read (a variant it does not know...): strong's move
            return default
        return chosen

    def _candidates(self, view: GameView, default: LegalMove | dict[str, object] | Wait) -> list[Any]:
        """The moves worth searching at this decision (fewer than two: play ``default``)."""
        legal = view.legal
        kinds = {m.type for m in legal}
        seat = view.seat
        assert seat is not None and view.round is not None
        down = view.seats[seat].down
        hand = tuple(sorted(order(c) for c in view.hand))
        if "claim" in kinds and view.claim_window is not None and not down:
            card = order(view.claim_window.card)
            if self.strong._plan(view, (*hand, card)).need < self.strong._plan(view, hand).need:
                return [m for m in legal if m.type == "claim"]
            return []
        if "draw" in kinds and not down:
            upcard = view.upcard
            sources = {m.body.get("source") for m in legal if m.type == "draw"}
            if upcard is None or "discard" not in sources:
                return []
            if self.strong._plan(view, (*hand, order(upcard))).need >= self.strong._plan(view, hand).need:
                return []
            take = next(m for m in legal if m.type == "draw" and m.body.get("source") == "discard")
            # Without a stock draw listed, others may still answer: the alternative is to wait for it.
            stock = next((m for m in legal if m.type == "draw" and m.body.get("source") == "stock"), WAIT)
            return [take, stock]
        discards = [m for m in legal if m.type == "discard"]
        if self.discards and discards and not down and len(discards) > 1:
            ranked = self._discard_ranking(view, hand, discards)
            best = ranked[0][0]
            cards = [c for score, c in ranked if score <= best + DISCARD_WINDOW][:DISCARD_CANDIDATES]
            return [m for c in cards for m in discards if m.body.get("card") == c][: len(cards)]
        return []

    def _discard_ranking(
        self, view: GameView, hand: tuple[int, ...], moves: list[LegalMove]
    ) -> list[tuple[float, str]]:
        """The cards of ``moves`` by ``strong``'s discard score (its pick first), before it is down."""
        strong = self.strong
        variant = view.variant
        cards = sorted({str(m.body["card"]) for m in moves}, key=order)
        held = view.held
        if held in cards and len(cards) > 1:
            cards.remove(held)
        fits: set[str] = set()
        for meld in view.melds:
            fits |= fitting(meld, variant)
        nxt = strong._next_seat(view)
        feeding = nxt is not None and view.seats[nxt].down
        scored = strong.discard_scores(view, hand, cards, fits, feeding)
        return [(score, c) for score, _, c in scored]

    # -- the search -----------------------------------------------------------
    def _search(self, view: GameView, candidates: list[Any]) -> Any:
        eng = self.eng
        seat = view.seat
        assert seat is not None
        start = time.thread_time()
        moves = [None if c is WAIT else eng.move_from_json({"type": c.type, **c.body}) for c in candidates]
        self.searches += 1
        gains: list[list[float]] = [[] for _ in candidates[1:]]  # each world: a candidate's outcome less the first's
        worlds = self.worlds
        if candidates[0] is not WAIT and candidates[0].type == "discard":
            worlds = min(worlds, DISCARD_WORLDS)
        for _ in range(worlds):
            world = self._world(view)
            base = self._playout(world, seat, moves[0])
            for i, move in enumerate(moves[1:]):
                gains[i].append(self._playout(world, seat, move) - base)
            if self.budget is not None and time.thread_time() - start >= self.budget:
                break
        discard = candidates[0] is not WAIT and candidates[0].type == "discard"
        confidence, margin = (DISCARD_CONFIDENCE, DISCARD_MARGIN) if discard else (CONFIDENCE, MARGIN)
        best, best_score = 0, 0.0
        for i, g in enumerate(gains):
            n = len(g)
            if n < 2:
                continue
            mean = sum(g) / n
            sd = (sum((x - mean) ** 2 for x in g) / (n - 1)) ** 0.5
            score = mean - confidence * sd / n**0.5  # a lower bound of the gain
            if score > best_score and mean >= margin:
                best, best_score = i + 1, score
        return candidates[best]

    def _world(self, view: GameView) -> Any:
        """One engine state consistent with the seat's view: its hidden cards sampled."""
        eng = self.eng
        rng = self.rng
        seat = view.seat
        assert seat is not None and view.round is not None
        rules = eng.get_rules(view.variant, view.options or None)
        players = len(view.seats)
        decks = rules.decks_for(players)
        unseen: Counter[int] = Counter({c: decks for c in range(4, 56)})
        unseen[0] = 2 * decks
        hand = sorted(order(c) for c in view.hand)
        unseen.subtract(hand)
        for m in view.melds:
            unseen.subtract(order(c) for c in m.cards)
        mem = self.strong.memory
        count = view.discard_count
        pile: list[int | None] = [None] * count
        for pos, code in mem.pile.items():
            if pos < count:
                pile[pos] = order(code)
        if count and view.discard_top is not None:
            pile[-1] = order(view.discard_top)
        unseen.subtract(c for c in pile if c is not None)
        taken = [order(c) for c, n in mem.taken.items() for _ in range(n)]
        known: list[int] = []  # upcards others took, still in some other hand
        for c in taken:
            if unseen[c] > 0:
                unseen[c] -= 1
                known.append(c)
        pool = [c for c, n in unseen.items() for _ in range(max(0, n))]
        rng.shuffle(pool)
        others = [s for s in range(players) if s != seat]
        sizes = {s: view.seats[s].hand_count for s in others}
        hands: dict[int, list[int]] = {s: [] for s in others}
        rng.shuffle(known)
        for c in known:
            room = [s for s in others if len(hands[s]) < sizes[s]]
            if not room:
                break
            hands[rng.choice(room)].append(c)
        for s in others:
            while len(hands[s]) < sizes[s]:
                hands[s].append(pool.pop() if pool else rng.randrange(4, 56))
        for i, known_card in enumerate(pile):
            if known_card is None:
                pile[i] = pool.pop() if pool else rng.randrange(4, 56)
        stock = [pool.pop() if pool else rng.randrange(4, 56) for _ in range(view.stock_count)]
        codes = eng.card_codes
        all_hands = [codes(sorted(hand)) if s == seat else codes(sorted(hands[s])) for s in range(players)]
        window = view.claim_window
        melds = []
        for m in view.melds:
            if m.type == "book":
                low, suit = book_rank(m), -1
            else:
                low, _, suit = run_span(m)
            melds.append([m.owner, m.type[0], "".join(m.cards), low, suit])
        phase = view.phase
        data = {
            "v": 1,
            "variant": view.variant,
            "options": view.options,
            "seed": rng.randbytes(32).hex(),
            "names": [f"p{s}" for s in range(players)],
            "round": view.round.number,
            "phase": phase,
            "turn": view.turn,
            "actor": view.actor,
            "hands": ["".join(h) for h in all_hands],
            "stock": "".join(codes(stock)),
            "discard": "".join(codes([c for c in pile if c is not None])),
            "melds": melds,
            "down": [int(s.down) for s in view.seats],
            "discarder": -1 if window is None or window.discarder is None else window.discarder,
            "claims": list(window.claims) if window is not None and phase == "draw" else [],
            "passes": list(window.passes) if window is not None and phase == "draw" else [],
            "claims_used": [s.claims_used for s in view.seats],
            "went_down": 0,  # (it searches only before it is down)
            "held": order(view.held) if view.held else -1,
            "reshuffles": view.reshuffles,
            "round_turns": 0,
            "totals": [s.total for s in view.seats],
            "results": [],
            "timeouts": [0] * players,
            "absent": [0] * players,
            "claim_closes_at": None,
            "turn_deadline": None,
            "start_round": 1,
            "moves": 0,
        }
        if rules.free_goal_order:
            data["goals_done"] = [[g - 1 for g in done] for done in view.raw.get("goals_done", [[]] * players)]
        return eng.from_json(data)

    def _playout(self, world: Any, seat: int, move: Any) -> float:
        """The seat's advantage after ``move`` (``None``: waiting for the stock) in ``world``."""
        eng = self.eng
        state = world
        round_ = state.round
        if move is not None:
            state, _ = eng.play(state, seat, move)
        else:  # the others answer the upcard first, then the seat draws from the stock
            state = answer_claims(eng, state)
            if state.phase is eng.Phase.DRAW and state.actor == seat:
                state, _ = eng.play(state, seat, eng.DrawStock())
        me = self._rollout_bot() if self.strong_playouts else None
        for _ in range(HORIZON):
            if state.round != round_ or state.phase is eng.Phase.FINISHED:
                break
            actor = int(eng.to_act(state)[0])
            legal = eng.legal_moves(state, actor)
            move = None
            if me is not None and actor == seat and len(legal) > 1:
                answer = me.decide(seat_view(state, seat))
                if not is_wait(answer):
                    played = as_legal_move(answer)
                    move = eng.move_from_json({"type": played.type, **played.body})
            state, _ = eng.play(state, actor, move if move is not None else fast_move(eng, state, actor, legal))
        return advantage(eng, state, world, seat, round_)

    def _rollout_bot(self) -> StrongBot:
        """A ``strong`` for the seat's own moves in a playout, with what this seat has seen."""
        bot = _Planner()
        mem = self.strong.memory
        bot.memory = Memory("local", mem.round, mem.reshuffles, dict(mem.pile), Counter(mem.taken))
        return bot


class _Planner(StrongBot):
    """``strong``, keeping a lead in a round that must use every card (:data:`LEAD`),
    planning that round as it is played out (:data:`EXACT_LAST`), and May I's other
    rounds as exact assignments of its cards to the contract's melds (:data:`EXACT_ROUNDS`),
    and there, when :data:`CHOOSE_MELDS`, choosing the go-down's melds by what they leave."""

    exact_last = EXACT_LAST
    exact_rounds = EXACT_ROUNDS
    choose_melds = CHOOSE_MELDS

    def _longer(self, view: GameView, move: LegalMove) -> LegalMove | dict[str, object]:
        contract = view.round.contract if view.round is not None else None
        if (
            not self.choose_melds
            or contract is None
            or contract.all_cards
            or view.variant not in self.exact_rounds
            or move.body.get("lay_offs")
            or view.options.get("free_goal_order")
        ):
            return super()._longer(view, move)
        try:
            melds = self.choose_melds_for(view, [list(m) for m in move.body.get("melds", [])])
        except EngineMissing:
            return super()._longer(view, move)
        return {"type": "go_down", "melds": melds}

    def choose_melds_for(self, view: GameView, first: list[list[str]]) -> list[list[str]]:
        """The go-down melds that leave the fewest cards it cannot lay off next turn (after
        this turn's discard), then the fewest cards, then the fewest points: among the
        solver's way ``first`` and its ways with one card of the hand left out, each
        extended with every natural that fits it and a spare joker where one may go."""
        assert view.round is not None
        contract = view.round.contract
        variant = view.variant
        hand = list(view.hand)
        bases = [first]
        for c in sorted(set(hand), key=order):
            less = list(hand)
            less.remove(c)
            found = find_contract(less, contract.books, contract.runs, variant)
            if found is not None and found not in bases:
                bases.append(found)
        best: list[list[str]] = first
        best_key: tuple[int, int, int] | None = None
        for base in bases:
            for melds in _extended(base, hand, contract.books, variant):
                rest = list(hand)
                for m in melds:
                    for c in m:
                        rest.remove(c)
                key = _leftover(view.melds, melds, rest, contract.books, variant)
                if best_key is None or key < best_key:
                    best, best_key = melds, key
        return best

    def _plan(self, view: GameView, hand: tuple[int, ...]) -> Plan:
        contract = view.round.contract if view.round is not None else None
        if contract is not None and not contract.all_cards and view.variant in self.exact_rounds:
            return contract_plan(tuple(sorted(hand)), contract.books, contract.runs, joker_limit(view.variant))
        if not self.exact_last or contract is None or not contract.all_cards or contract.books:
            return super()._plan(view, hand)
        # The hand it holds between turns: one card less while it has a discard to make.
        held = len(view.hand) - (1 if any(m.type == "discard" for m in view.legal) else 0)
        plan = last_round_plan(tuple(sorted(hand)), contract.runs, joker_limit(view.variant), held)
        return plan if plan.need < NO_RUNS else super()._plan(view, hand)

    def point_weight(self, view: GameView) -> float:
        weight = super().point_weight(view)
        if view.round is None or not view.round.contract.all_cards or view.seat is None:
            return weight
        mine = view.seats[view.seat].total
        others = [s.total for s in view.seats if s.seat != view.seat]
        if others and min(others) - mine >= LEAD:
            return weight + LEAD_WEIGHT
        return weight


def _extended(base: list[list[str]], hand: list[str], books: int, variant: str) -> list[list[list[str]]]:
    """``base``'s melds extended with every natural of the rest of ``hand`` that fits:
    as they are, and with a spare joker added first to each meld that may take one."""
    rest = list(hand)
    for m in base:
        for c in m:
            rest.remove(c)
    plain = [list(m) for m in base]
    extend_melds(plain, list(rest), books, variant)
    out = [plain]
    if JOKER not in rest:
        return out
    limit = joker_limit(variant)
    for i, m in enumerate(base):
        if limit is not None and m.count(JOKER) >= limit:
            continue
        for cand in [[*m, JOKER]] if i < books else [[*m, JOKER], [JOKER, *m]]:
            if not is_meld(cand, variant):
                continue
            melds = [list(x) for x in base]
            melds[i] = cand
            left = list(rest)
            left.remove(JOKER)
            extend_melds(melds, left, books, variant)
            out.append(melds)
    return out


def _leftover(
    table: list[Meld], melds: list[list[str]], rest: list[str], books: int, variant: str
) -> tuple[int, int, int]:
    """What going down with ``melds`` leaves, keeping ``rest``: the cards it could not lay
    off next turn after this turn's discard (the highest that fits nowhere), the cards
    kept after it, their points."""
    limit = joker_limit(variant)
    ranks: set[int] = set()
    runs: list[list[int]] = []  # [low, high, suit] of every run, own and on the table
    room = 0  # melds that may still take a joker
    shown = [(m.type, list(m.cards)) for m in table]
    shown += [("book" if i < books else "run", m) for i, m in enumerate(melds)]
    for kind, cards in shown:
        if limit is None or cards.count(JOKER) < limit:
            room += 1
        naturals = [c for c in cards if c != JOKER]
        if not naturals:
            continue
        if kind == "book":
            ranks.add(rank(naturals[0]))
            continue
        first = next(i for i, c in enumerate(cards) if c != JOKER)
        r = rank(cards[first])
        low = (14 if r == 1 and first > 0 else r) - first
        runs.append([low, low + len(cards) - 1, suit(naturals[0])])
    left = sorted(rest, key=lambda c: (-points(c, variant), order(c)))
    placed = True
    laid: list[str] = []
    while placed:
        placed = False
        for c in left:
            if c == JOKER:
                if room > 0:
                    room -= 1
                    placed = True
            elif rank(c) in ranks:
                placed = True
            else:
                r, s_ = rank(c), suit(c)
                for run in runs:
                    if run[2] != s_:
                        continue
                    if run[1] < 14 and r == (run[1] + 1 if run[1] < 13 else 1) and (run[1] + 1 == 14) == (r == 1):
                        run[1] += 1
                        placed = True
                    elif run[0] > 1 and r == run[0] - 1:
                        run[0] -= 1
                        placed = True
                    if placed:
                        break
            if placed:
                left.remove(c)
                laid.append(c)
                break
    if left:
        left.pop(0)  # the discard: the highest that fits nowhere
    elif laid:
        laid.pop(0)
    kept = left + laid
    return len(left), len(kept), sum(points(c, variant) for c in kept)


def _same(move: Any, other: Any) -> bool:
    """Whether two answers (legal moves, or WAIT) are the same move."""
    if move is WAIT or other is WAIT:
        return move is other
    return bool(move.type == getattr(other, "type", None) and move.body == getattr(other, "body", None))


if __name__ == "__main__":
    import sys

    from mayi_bots.cli import main

    sys.exit(main("expert"))
