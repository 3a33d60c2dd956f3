"""One typed vocabulary: error codes, game statuses, option specs, the public namespace."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

import mayi_engine
from mayi_engine import (
    MAY_I,
    SHANGHAI,
    ConfigError,
    ErrorCode,
    GameStatus,
    IllegalMoveError,
    OptionSpec,
    Pass,
    card_code,
    card_codes,
    get_rules,
    new_game,
    play,
    register_variant,
)
from mayi_engine.rules import COMMON_OPTIONS, VARIANTS

PACKAGE = Path(mayi_engine.__file__).parent


def test_the_error_codes_are_the_engines_vocabulary():
    """The codes the engine's errors carry (the service gives each its HTTP status)."""
    assert {c.value for c in ErrorCode} == {
        "not_your_turn",
        "wrong_phase",
        "claims_open",
        "claim_not_allowed",
        "game_over",
        "not_due",
        "validation_error",
        "bad_card",
        "card_not_in_hand",
        "illegal_meld",
        "illegal_lay_off",
        "illegal_discard",
        "state_version",
    }
    assert not hasattr(ErrorCode.BAD_CARD, "http_status")  # the engine knows no HTTP


def test_an_error_code_outside_the_enum_is_refused():
    with pytest.raises(ValueError):
        IllegalMoveError("made_up", "no such code")
    assert IllegalMoveError("wrong_phase", "x").code is ErrorCode.WRONG_PHASE


def test_every_code_the_engine_raises_is_in_the_enum():
    raised = set()
    for path in PACKAGE.glob("*.py"):
        raised |= set(re.findall(r'Error\(\s*"([a-z_]+)"', path.read_text()))
        raised |= set(re.findall(r'\(\s*"([a-z_]+)",\s*\n?\s*"', path.read_text())) & {c.value for c in ErrorCode}
    assert raised and raised <= {c.value for c in ErrorCode}


def test_game_status_is_one_enum():
    assert [s.value for s in GameStatus] == ["waiting", "playing", "finished"]
    state = new_game(MAY_I, ["a", "b"], bytes(32))
    assert state.status is GameStatus.PLAYING and state.status == "playing"


def test_option_specs_are_declared_once_on_the_rules():
    assert [spec.name for spec in MAY_I.option_specs] == [
        "claim_seconds",
        "turn_seconds",
        "max_reshuffles",
        "max_turns",
    ]
    house = [spec.name for spec in SHANGHAI.option_specs if spec.house]
    assert house == ["all_out_final", "bury_joker_upcard", "free_goal_order"]
    table = {row["name"]: row for row in SHANGHAI.option_table()}
    assert table["claim_seconds"] == {
        "name": "claim_seconds",
        "type": "number",
        "minimum": 1,
        "maximum": 86400,
        "default": 15.0,
        "house": False,
        "description": "Claim window length",
    }
    assert table["bury_joker_upcard"]["default"] is True and table["max_turns"]["type"] == "integer"
    assert get_rules("shanghai", {"all_out_final": True}).rounds[-1].contract.all_cards


def test_a_custom_variant_declares_its_own_house_option_and_with_options_checks_it():
    """No option is special-cased by name: a new variant's spec for any Rules field works."""
    rules = register_variant(
        replace(
            MAY_I,
            name="may_i_no_hold",
            title="May I (house: no hold rule)",
            option_specs=(*COMMON_OPTIONS, OptionSpec("hold_rule", bool, "House option: the hold rule", house=True)),
        )
    )
    try:
        off = rules.with_options({"hold_rule": False})
        assert off.hold_rule is False and off.table_options() == {"hold_rule": False}
        assert get_rules("may_i_no_hold", {"hold_rule": False}) == off
        with pytest.raises(ConfigError, match=r"options\.hold_rule must be true or false"):
            rules.with_options({"hold_rule": 1})
        with pytest.raises(ConfigError, match="hold_rule"):
            MAY_I.with_options({"hold_rule": False})  # not an option of May I itself
        state, _ = play(new_game(off, ["a", "b"], bytes(32)), 0, Pass())
        assert state.rules.hold_rule is False
    finally:
        del VARIANTS["may_i_no_hold"]


def test_the_public_namespace_exports_every_name_it_lists():
    for name in mayi_engine.__all__:
        assert hasattr(mayi_engine, name), name
    assert {"new_game", "play", "legal_moves", "check_move", "player_view", "Discard", "ErrorCode"} <= set(
        mayi_engine.__all__
    )


def test_moves_and_melds_print_as_card_codes():
    from mayi_engine import Discard, GoDown, LayOff, LayOffPart, Meld, MeldKind, parse_card, parse_cards

    assert repr(Discard(parse_card("QS"))) == "Discard(card='QS')"
    go = GoDown((parse_cards(["7C", "7D", "7H"]),), (LayOffPart(0, parse_cards(["7S"]), None),))
    assert (
        repr(go) == "GoDown(melds=(('7C', '7D', '7H'),), lay_offs=(LayOffPart(meld=0, cards=('7S',), joker_to=None),))"
    )
    assert repr(LayOff((LayOffPart(1, parse_cards(["JK"]), "high"),))) == (
        "LayOff(parts=(LayOffPart(meld=1, cards=('JK',), joker_to='high'),))"
    )
    meld = Meld(0, 1, MeldKind.RUN, parse_cards(["4C", "5C", "JK", "7C"]), 4, 0)
    assert repr(meld) == "Meld(id=0, owner=1, kind='run', cards=('4C', '5C', 'JK', '7C'), low=4, suit=0)"


def test_a_state_prints_its_cards_as_codes():
    state = new_game(MAY_I, ["Ann", "Bob"], seed=bytes(32))
    text = repr(state)
    assert text.startswith("State(may_i, round=1, phase=first_offer, turn=0, actor=0, hands=((")
    assert repr(tuple(card_codes(state.hands[1]))) in text and f"upcard={card_code(state.discard[-1])!r}" in text


def test_memoised_results_are_tuples_no_caller_can_change():
    from mayi_engine import legal_moves, pending_claimants

    state = new_game(SHANGHAI, ["a", "b", "c"], bytes(32))
    moves = legal_moves(state, 0)
    assert isinstance(moves, tuple) and legal_moves(state, 0) is moves
    pending = pending_claimants(state)
    assert isinstance(pending, tuple) and pending == (1, 2) and pending_claimants(state) is pending
