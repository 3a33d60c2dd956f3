// Cards: codes as the API writes them (rank then suit: "TH", "AS"; "JK" a joker).
import { h } from "./dom.js";

const SUIT_SYMBOL = { C: "♣", D: "♦", H: "♥", S: "♠" };
const SUIT_NAME = { C: "clubs", D: "diamonds", H: "hearts", S: "spades" };
const RANK_NAME = { A: "ace", T: "10", J: "jack", Q: "queen", K: "king" };
const RANK_ORDER = "23456789TJQKA"; // aces high when sorting
const SUIT_ORDER = "CDHS";

export const isJoker = (code) => code === "JK";
export const rankOf = (code) => (isJoker(code) ? null : code[0]);
export const suitOf = (code) => (isJoker(code) ? null : code[1]);

/** "10♥", "A♠", "Joker"; a rank alone ("K": what a book's joker stands for) as "K". */
export function cardText(code) {
  if (isJoker(code)) return "Joker";
  const rank = code[0] === "T" ? "10" : code[0];
  return code.length > 1 ? rank + SUIT_SYMBOL[code[1]] : rank;
}

/** "10 of hearts", "ace of spades", "joker"; a rank alone as "king": for screen readers. */
export function cardName(code) {
  if (isJoker(code)) return "joker";
  const rank = RANK_NAME[code[0]] || code[0];
  return code.length > 1 ? `${rank} of ${SUIT_NAME[code[1]]}` : rank;
}

function rankIndex(code) {
  return isJoker(code) ? 99 : RANK_ORDER.indexOf(code[0]);
}

function suitIndex(code) {
  return isJoker(code) ? 9 : SUIT_ORDER.indexOf(code[1]);
}

/** The hand sorted "suit" (by suit, then rank) or "rank" (by rank, then suit); jokers last. */
export function sortCards(cards, by) {
  const key = by === "rank" ? (c) => rankIndex(c) * 10 + suitIndex(c) : (c) => suitIndex(c) * 100 + rankIndex(c);
  return [...cards].sort((a, b) => key(a) - key(b));
}

/** A card as a face: suit in colour, jokers distinct. `standsFor`: what a joker on the table is.
 * A card shown is an image named in words ("king of clubs"); a card to press (a button) is
 * named by what it shows, then in words ("K♣ king of clubs"), so that its visible text is
 * part of its name (speech input says what it sees). */
export function cardFace(code, { standsFor = null, tag = "span", props = {} } = {}) {
  const suit = suitOf(code);
  const cls = ["card", isJoker(code) ? "joker" : "suit-" + suit, suit === "H" || suit === "D" ? "red" : "black"];
  const words = isJoker(code) && standsFor ? `joker as the ${cardName(standsFor)}` : cardName(code);
  const shown = isJoker(code) ? "★" : cardText(code);
  const label = tag === "button" ? `${shown} ${words}` : words;
  return h(
    tag,
    { class: cls.join(" ") + (props.class ? " " + props.class : ""), role: tag === "span" ? "img" : false, "aria-label": label, title: words, ...omit(props, "class"), dataset: { card: code, ...(props.dataset || {}) } },
    h("span", { class: "face", "aria-hidden": "true" }, shown),
    isJoker(code) && standsFor ? h("span", { class: "stands", "aria-hidden": "true" }, "=" + cardText(standsFor)) : null,
  );
}

function omit(object, key) {
  const { [key]: _, ...rest } = object;
  return rest;
}

/** Is `a` the same multiset of cards as `b`? */
export function sameCards(a, b) {
  if (a.length !== b.length) return false;
  const x = [...a].sort();
  const y = [...b].sort();
  return x.every((c, i) => c === y[i]);
}

/** `cards` less one of each of `taken` (a multiset difference). */
export function without(cards, taken) {
  const rest = [...cards];
  for (const card of taken) {
    const at = rest.indexOf(card);
    if (at >= 0) rest.splice(at, 1);
  }
  return rest;
}

/** Book or run, as a player would guess it from the cards (the service decides). */
export function guessMeldType(cards) {
  const ranks = new Set(cards.filter((c) => !isJoker(c)).map(rankOf));
  return ranks.size <= 1 ? "book" : "run";
}

/** A run's cards low to high (aces low only when a 2 is there and no king), jokers after. */
export function orderRun(cards) {
  const naturals = cards.filter((c) => !isJoker(c));
  const jokers = cards.filter(isJoker);
  const low = naturals.some((c) => c[0] === "2") && !naturals.some((c) => c[0] === "K");
  const order = low ? "A23456789TJQK" : RANK_ORDER;
  naturals.sort((a, b) => order.indexOf(a[0]) - order.indexOf(b[0]));
  // Put each joker in the first gap, so "4C 5C JK 7C" comes out as written by the rules.
  const out = [];
  for (let i = 0; i < naturals.length; i++) {
    out.push(naturals[i]);
    const next = naturals[i + 1];
    if (next) {
      let gap = order.indexOf(next[0]) - order.indexOf(naturals[i][0]) - 1;
      while (gap-- > 0 && jokers.length) out.push(jokers.pop());
    }
  }
  return out.concat(jokers);
}

/** Card codes in `text` (an API problem's detail: "7C 9C KC is not a run") written as the
 * page shows cards ("7♣ 9♣ K♣"). */
export function withCardText(text) {
  return String(text).replace(/\b(?:[2-9TJQKA][CDHS]|JK)\b/g, (code) => cardText(code));
}

const RUN_RANKS = "A23456789TJQK"; // an ace low is 0 here; an ace high is 13

/** What `cards` would be as a meld, as the person builds it (the service decides when they go
 * down): {type: "book" | "run" | null, problem: words or null}. `variant`: the variant as
 * `GET /v1/variants` serves it (its `joker_limit`, `title`), or null; every meld keeps a
 * natural card. */
export function meldCheck(cards, variant) {
  const shown = cards.map(cardText).join(" ");
  const naturals = cards.filter((c) => !isJoker(c));
  const jokers = cards.length - naturals.length;
  if (!cards.length) return { type: null, problem: null };
  if (!naturals.length) return { type: null, problem: `${shown}: a meld keeps at least one card that is not a joker.` };
  const limit = variant ? variant.joker_limit : null;
  const jokerProblem = limit !== null && jokers > limit ? `${shown}: ${variant.title} allows ${limit === 1 ? "one joker" : `${limit} jokers`} a meld.` : null;
  const ranks = new Set(naturals.map(rankOf));
  const suits = new Set(naturals.map(suitOf));
  if (cards.length < 3) {
    return { type: null, problem: `${shown}: not a meld yet. A book needs 3 or more cards of one rank; a run 4 or more of one suit in sequence.` };
  }
  if (ranks.size === 1) return { type: "book", problem: jokerProblem };
  if (suits.size > 1) return { type: null, problem: `${shown}: mixes ranks and suits. A book is of one rank; a run of one suit, in sequence.` };
  if (cards.length < 4) return { type: "run", problem: `${shown}: a run needs 4 or more cards of one suit in sequence.` };
  if (ranks.size < naturals.length) return { type: "run", problem: `${shown}: a run holds each rank once.` };
  const fits = [false, true].some((aceHigh) => {
    const at = naturals.map((c) => (c[0] === "A" && aceHigh ? 13 : RUN_RANKS.indexOf(c[0])));
    const span = Math.max(...at) - Math.min(...at) + 1;
    return span <= cards.length && cards.length <= 13;
  });
  if (!fits) return { type: "run", problem: `${shown}: not in sequence (a joker may stand for one missing card; an ace is high or low, never both).` };
  return { type: "run", problem: jokerProblem };
}
