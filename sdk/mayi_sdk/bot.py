"""The bot framework: a bot is one method, ``decide(view) -> move``.

A :class:`Bot` is fed a seat's :class:`~mayi_sdk.models.GameView`, whose ``legal`` list
holds every move the seat may make now (so a bot needs no rules code), and returns one
of them (a :class:`~mayi_sdk.models.LegalMove`, or its JSON form as a dict). The default
``decide`` asks a few optional hooks, each with a sensible default:

========================  ==============================================  ====================
hook                      asked when                                      default
========================  ==============================================  ====================
``claim(view)``           the upcard is on offer out of turn              ``False`` (pass)
``draw_from(view)``       the seat must draw                              ``"stock"`` (waits for it)
``go_down(view, moves)``  the contract can be laid down                   the first listed
``lay_off(view, moves)``  cards can be laid off                           the first listed
``discard(view, moves)``  the turn ends with a discard                    the card scoring most
========================  ==============================================  ====================

**Waiting.** ``decide`` may also answer :data:`WAIT`: "not now, ask me again when my
choices change". The case it is made for: the seat on turn while other seats may still
answer the upcard may take the upcard at once, but may draw from the stock only once the
claim window closes (every claimant has answered, or its clock ran out). A bot that wants
the stock waits; the default ``decide`` does so when ``draw_from`` answers ``"stock"``
and the stock is not listed yet. A waiting bot is not asked the same decision again: it
is asked when its legal moves change (another seat's answer, the window's clock), and if
nothing changes, the clock plays the decision at its deadline, as for any decision left
unanswered.

Runners (:func:`mayi_sdk.run_polling`, :func:`mayi_sdk.play_local`, the webhook receiver)
own polling, versions, waiting, retries and errors: a ``decide`` that raises or answers a
move that is not legal is logged, and the clock plays that decision.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Final

from .models import GameView, LegalMove, Variant


class Wait:
    """The type of :data:`WAIT` (its only value)."""

    _instance: Wait | None = None

    def __new__(cls) -> Wait:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "WAIT"

    def __reduce__(self) -> str:
        return "WAIT"


#: What ``decide`` answers to wait: the seat makes no move now, and is asked again when its
#: legal moves change (or the clock plays the decision at its deadline).
WAIT: Final = Wait()


class Bot:
    """Subclass and override :meth:`decide`, or only the hooks you care about."""

    #: The name the bot takes its seats with.
    name: str = "bot"
    #: The rules of the variants it plays, by name, as the server serves them
    #: (``Client.list_variants()``): the runners on a server fill it before the bot's first
    #: decision in a variant it lacks, so that the hooks (the default :meth:`discard` too)
    #: can score cards without the rules engine.
    variants: Mapping[str, Variant] = MappingProxyType({})

    def decide(self, view: GameView) -> LegalMove | Mapping[str, Any] | Wait:
        """The move to make now: one of ``view.legal`` (or its JSON form, ``{"type": ...}``),
        or :data:`WAIT` to let this decision pass until the seat's legal moves change."""
        claims = view.legal_of("claim")
        if claims:
            want = self.claim(view)
            return next((m for m in claims if m.body.get("claim") is want), claims[0])
        draws = view.legal_of("draw")
        if draws:
            source = self.draw_from(view)
            chosen = next((m for m in draws if m.body.get("source") == source), None)
            if chosen is not None:
                return chosen
            if source == "stock":  # not yet: others may still answer the upcard
                return WAIT
            return draws[0]
        go_downs = view.legal_of("go_down")
        if go_downs:
            chosen = self.go_down(view, go_downs)
            if chosen is not None:
                return chosen
        lay_offs = view.legal_of("lay_off")
        if lay_offs:
            chosen = self.lay_off(view, lay_offs)
            if chosen is not None:
                return chosen
        discards = view.legal_of("discard")
        if discards:
            return self.discard(view, discards)
        return view.legal[0]

    # -- hooks --------------------------------------------------------------
    def claim(self, view: GameView) -> bool:
        """Call "May I" (buy, in Shanghai) on ``view.claim_window.card``? Default: no."""
        return False

    def draw_from(self, view: GameView) -> str:
        """``"stock"`` or ``"discard"`` (take the upcard ``view.upcard``). Default: the stock.

        While others may still answer the upcard, only ``"discard"`` is legal: answering
        ``"stock"`` then waits until the claim window closes (see :data:`WAIT`)."""
        return "stock"

    def go_down(self, view: GameView, moves: list[LegalMove]) -> LegalMove | None:
        """Which way to lay down the contract, or ``None`` to wait. Default: the first listed."""
        return moves[0]

    def lay_off(self, view: GameView, moves: list[LegalMove]) -> LegalMove | None:
        """Which lay-off to make, or ``None`` for none. Default: the first listed."""
        return moves[0]

    def discard(self, view: GameView, moves: list[LegalMove]) -> LegalMove:
        """Which card to discard. Default: the one scoring most against you if kept (the
        points of :attr:`variants`, else the engine's)."""
        from .helpers import card_points

        variant = self.variants.get(view.variant, view.variant)
        return max(moves, key=lambda m: card_points(str(m.body.get("card")), variant))


def is_wait(answer: object) -> bool:
    """Whether a bot's answer is :data:`WAIT`."""
    return isinstance(answer, Wait)


def as_legal_move(answer: LegalMove | Mapping[str, Any] | Wait) -> LegalMove:
    """A bot's answer as a :class:`LegalMove` (a dict is a move's JSON form, with its ``type``)."""
    if isinstance(answer, LegalMove):
        return answer
    if isinstance(answer, Mapping) and isinstance(answer.get("type"), str):
        return LegalMove.from_json(dict(answer))
    if is_wait(answer):
        raise TypeError("WAIT is no move: check is_wait(answer) before as_legal_move(answer)")
    raise TypeError(f"decide must return a LegalMove, a move's JSON form with a 'type', or WAIT, not {answer!r}")
