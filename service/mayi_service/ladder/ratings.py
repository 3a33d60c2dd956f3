"""The ladder's ratings: openskill's Plackett-Luce model, a match's result applied to its
players' ratings, and the leaderboard's rows (docs/ladder.md says why this model)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mayi_service.storage.ladder import RatingUpdate

#: Games before a rating is no longer provisional.
PROVISIONAL_GAMES = 10
#: Plackett-Luce parameters (openskill's defaults; docs/ladder.md says why).
MU = 25.0
SIGMA = MU / 3
BETA = SIGMA / 2
TAU = MU / 300
#: The conservative estimate the leaderboard orders by: mu minus this many sigmas.
Z = 3.0


def model() -> Any:
    """The rating model (openskill's Plackett-Luce with this module's parameters)."""
    from openskill.models import PlackettLuce

    return PlackettLuce(mu=MU, sigma=SIGMA, beta=BETA, tau=TAU)


def ordinal(mu: float, sigma: float) -> float:
    """The conservative estimate of a rating: ``mu - 3 sigma`` (a bot is this good or better,
    with about 99.9 % confidence)."""
    return mu - Z * sigma


def fresh() -> dict[str, Any]:
    """The rating of a bot that has played no match."""
    return {"mu": MU, "sigma": SIGMA, "games": 0, "wins": 0, "score_sum": 0, "last_at": None}


def ordinal_of(rating: dict[str, Any] | None) -> float:
    """The conservative estimate of ``rating`` (``None``: a fresh one)."""
    r = rating or fresh()
    return ordinal(r["mu"], r["sigma"])


def rate(
    match: dict[str, Any],
    ratings: dict[str, dict[str, Any]],
    places: Sequence[int],
    scores: Sequence[int],
    now: float,
) -> tuple[list[dict[str, Any]], list[RatingUpdate]]:
    """The standings of ``match`` (its seats finished at ``places`` with ``scores``, seat by
    seat) and each player's new rating and history entry, from its rating in ``ratings``."""
    rating_model = model()
    seats = match["seats"]
    before = [ratings.get(s["bot_id"]) or fresh() for s in seats]
    rated = rating_model.rate([[rating_model.rating(mu=b["mu"], sigma=b["sigma"])] for b in before], ranks=list(places))
    standings = []
    updates = []
    for s, b, team, place, score in zip(seats, before, rated, places, scores, strict=True):
        after = team[0]
        rating = {
            "mu": after.mu,
            "sigma": after.sigma,
            "games": b["games"] + 1,
            "wins": b["wins"] + (place == 1),
            "score_sum": b["score_sum"] + score,
            "last_at": now,
        }
        standings.append(
            {
                **s,
                "score": score,
                "place": place,
                "rating_before": round(ordinal(b["mu"], b["sigma"]), 3),
                "rating_after": round(ordinal(after.mu, after.sigma), 3),
            }
        )
        history = {
            "match_id": match["match_id"],
            "game_id": match["game_id"],
            "at": now,
            "place": place,
            "players": len(seats),
            "score": score,
            "mu": after.mu,
            "sigma": after.sigma,
            "rating": ordinal(after.mu, after.sigma),
        }
        updates.append(RatingUpdate(s["bot_id"], rating, history))
    return standings, updates


def board_row(bot_id: str, name: str, house: bool, max_games: int, rating: dict[str, Any] | None) -> dict[str, Any]:
    """A leaderboard row (without its rank) of a bot rated ``rating`` (``None``: fresh)."""
    r = rating or fresh()
    return {
        "bot_id": bot_id,
        "name": name,
        "house": house,
        "rating": round(ordinal(r["mu"], r["sigma"]), 3),
        "mu": round(r["mu"], 3),
        "sigma": round(r["sigma"], 3),
        "games": r["games"],
        "wins": r["wins"],
        "mean_score": round(r["score_sum"] / r["games"], 2) if r["games"] else None,
        "provisional": r["games"] < PROVISIONAL_GAMES,
        "max_games": max_games,
    }
