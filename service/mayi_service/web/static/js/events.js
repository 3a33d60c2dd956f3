// Events in words (docs/api.md, "Events"): the table's log and the replay use them.
import { cardText } from "./cards.js";
import { claimWords } from "./variants.js";

export const EVENT_TYPES = [
  "round_started", "dealt", "took_upcard", "claimed", "passed", "claim_won", "drew",
  "stock_rebuilt", "stock_exhausted", "went_down", "laid_off", "discarded", "turn_limit",
  "round_ended", "game_ended", "seat_absent", "seat_returned",
];

/** The seats' names as the page shows them: a name that two seats share gets its seat's
 * number ("Ann (seat 1)", "Ann (seat 3)"), so every seat can be told apart. */
export function distinctNames(names) {
  const counts = new Map();
  for (const name of names) if (name) counts.set(name, (counts.get(name) || 0) + 1);
  return names.map((name, i) => (name && counts.get(name) > 1 ? `${name} (seat ${i + 1})` : name));
}

export function seatName(names, seat) {
  if (seat === null || seat === undefined) return "—";
  const name = names && names[seat];
  return name ? name : `Seat ${seat + 1}`;
}

const cards = (list) => list.map(cardText).join(" ");

/** "1 buy", "2 buys": `n` and the word, plural when `n` is not 1. */
export function plural(n, word, many = word + "s") {
  return `${n} ${n === 1 ? word : many}`;
}

/** One event as a sentence. `names`: seat names; `variant`: the variant's name (its claim's words). */
export function describeEvent(event, names, variant) {
  const who = seatName(names, event.seat);
  const d = event.data || {};
  const late = event.timeout ? " (out of time: played by the clock)" : "";
  const claim = claimWords(variant);
  switch (event.type) {
    case "round_started":
      return `Round ${d.round} starts: ${d.contract.text}. ${seatName(names, d.first)} plays first; the upcard is ${cardText(d.upcard)}.`;
    case "dealt":
      return event.private ? `${who} is dealt ${cards(event.private.hand)}.` : `${who} is dealt a hand.`;
    case "took_upcard":
      return `${who} takes the upcard ${cardText(d.card)}${late}.`;
    case "claimed":
      return `${who} ${claim.acts(cardText(d.card))}.`;
    case "passed":
      return `${who} passes on ${cardText(d.card)}${late}.`;
    case "claim_won":
      return `${who} wins ${cardText(d.card)} and takes ${d.penalty} penalty card${d.penalty === 1 ? "" : "s"}.`;
    case "drew": {
      const what = event.private ? ` (${cardText(event.private.card)})` : "";
      return d.penalty ? `${who} takes a penalty card from the stock${what}.` : `${who} draws from the stock${what}${late}.`;
    }
    case "stock_rebuilt":
      return `The stock is rebuilt from the discard pile (${d.cards} cards).`;
    case "stock_exhausted":
      return "The stock is exhausted: the round ends with nobody out.";
    case "went_down":
      return `${who} goes down: ${d.melds.map((m) => cards(m.cards)).join(" / ")}.`;
    case "laid_off":
      return `${who} lays off ${d.lay_offs.map((l) => cards(l.cards) + " on meld " + l.meld + (l.joker_to ? ` (joker to the ${l.joker_to} end)` : "")).join(", ")}.`;
    case "discarded":
      return `${who} discards ${cardText(d.card)}${late}.`;
    case "turn_limit":
      return `The round reaches ${d.turns} turns and ends with nobody out.`;
    case "round_ended":
      return `Round ${d.round} ends${d.out === null ? " with nobody out" : `: ${seatName(names, d.out)} went out`}. Scores: ${d.scores.map((s, i) => `${seatName(names, i)} ${s}`).join(", ")}.`;
    case "game_ended":
      return `The game is over. Totals: ${d.totals.map((s, i) => `${seatName(names, i)} ${s}`).join(", ")}.`;
    case "seat_absent":
      return `${who} is absent (${d.timeouts} timeouts in a row): the clock plays for them.`;
    case "seat_returned":
      return `${who} is back.`;
    default:
      return `${event.type}`;
  }
}
