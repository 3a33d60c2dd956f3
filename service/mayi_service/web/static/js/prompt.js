// The turn and claim prompt: whose move it is and what is the person's to do, the moves
// offered to them, and an upcard passed at once when the person chose so.
import * as C from "./cards.js";
import { h } from "./dom.js";
import { seatName } from "./events.js";
import { goDownPanel } from "./godown.js";
import { selectedCards } from "./hand.js";
import { button } from "./keys.js";
import { errorBox, send } from "./moves.js";
import { claimChoice, turnSound } from "./settings.js";
import { names } from "./state.js";
import * as V from "./variants.js";

/** The page's own title (the table prefixes it while the move is the person's). */
export const TITLE = document.title;

/** What is the person's to do now: "turn" (their move: a turn, the first upcard offered
 * to them, a discard owed), "answer" (they may claim the upcard before another seat draws),
 * or "none"; and the words that say so. */
export function yourPart(st) {
  const v = st.view;
  const legal = (st.token && v.legal) || [];
  if (!legal.length || typeof v.seat !== "number" || v.status !== "playing") return { part: "none", words: "" };
  const card = v.upcard ? C.cardText(v.upcard) : "";
  const claims = legal.some((m) => m.type === "claim");
  if (claims && v.phase !== "first_offer" && v.turn !== v.seat) {
    const what = V.claimWords(v.variant).act(card);
    return { part: "answer", words: `You may ${what}, or pass. ` };
  }
  if (v.phase === "first_offer") return { part: "turn", words: `Your move: take the upcard ${card}, or pass. ` };
  if (v.phase === "first_discard") return { part: "turn", words: "Your move: discard a card. " };
  if (v.phase === "draw") return { part: "turn", words: "Your move: draw. " };
  return { part: "turn", words: "Your move: go down, lay off, or discard. " };
}

/** The round and its contract, whose move it is (and the tab's title says if it is the
 * person's), the clock. */
export function statusLine(st) {
  const v = st.view;
  const n = names(v);
  let text;
  if (v.status === "finished") {
    const best = v.places.map((p, i) => [p, i]).filter(([p]) => p === 1).map(([, i]) => seatName(n, i));
    text = `Game over. Winner: ${best.join(" and ")}.`;
  } else if (v.phase === "first_offer") {
    text = `${seatName(n, v.actor)} is offered the first upcard ${C.cardText(v.upcard)}.`;
  } else if (v.claim_window && v.claim_window.pending.length && v.phase === "draw") {
    text = `${seatName(n, v.turn)} to draw; ${v.claim_window.pending.map((s) => seatName(n, s)).join(", ")} may still answer the upcard.`;
  } else {
    text = `${seatName(n, v.turn)} to ${v.phase === "draw" ? "draw" : v.phase === "first_discard" ? "discard" : "play"}.`;
  }
  const you = yourPart(st);
  if (you.part === "turn" && st.part !== undefined && st.part !== "turn") turnSound();
  st.part = you.part;
  document.title = (you.part === "turn" ? "Your turn · " : you.part === "answer" ? "Upcard on offer · " : "") + TITLE;
  return h(
    "div",
    { class: "status" },
    h("p", { class: "round" }, `Round ${v.round.number} of ${v.round.of}: `, h("strong", {}, v.round.contract.text), " · ", h("a", { href: "/rules", class: "rules-link" }, "Rules")),
    h("p", { class: "turn" + (you.part === "turn" ? " yours" : you.part === "answer" ? " answer" : ""), "aria-live": "polite", id: "turn", dataset: { you: you.part } }, you.words, text),
    h("p", { id: "clock", class: "clock", "aria-live": "off" }),
  );
}

/** Could `card` join a meld: a book or run of the hand, or a meld on the table? */
export function usefulCard(card, hand, melds) {
  if (C.isJoker(card)) return true;
  const order = "A23456789TJQKA";
  const near = (a, b, by) => {
    if (C.suitOf(a) !== C.suitOf(b)) return false;
    const ra = [order.indexOf(a[0]), order.lastIndexOf(a[0])];
    const rb = [order.indexOf(b[0]), order.lastIndexOf(b[0])];
    return ra.some((x) => rb.some((y) => Math.abs(x - y) <= by && x !== y));
  };
  if (hand.some((c) => C.isJoker(c) || c[0] === card[0] || near(c, card, 2))) return true;
  return melds.some((m) => {
    const naturals = m.cards.filter((c) => !C.isJoker(c));
    return m.type === "book" ? naturals.some((c) => c[0] === card[0]) : naturals.some((c) => near(c, card, 1) || near(c, card, m.cards.length));
  });
}

/** Pass an upcard offered before another seat's turn at once, as the person chose. */
export function autoPass(st, root) {
  const v = st.view;
  if (!st.token || st.busy || v.status !== "playing" || typeof v.seat !== "number" || v.turn === v.seat) return;
  const pass = (v.legal || []).find((m) => m.type === "claim" && !m.claim);
  if (!pass || !v.upcard) return;
  const choice = claimChoice();
  if (choice === "ask" || (choice === "useful" && usefulCard(v.upcard, v.hand || [], v.melds))) return;
  const key = `${v.round.number}:${v.discard_count}:${v.upcard}`;
  if (st.autoPassed === key) return;
  st.autoPassed = key;
  send(st, root, pass);
}

export function actionsPanel(st, root) {
  const v = st.view;
  const legal = v.legal || [];
  const chosen = selectedCards(st);
  const parts = [];
  const claim = V.claimWords(v.variant);

  for (const move of legal.filter((m) => m.type === "draw")) {
    if (move.source === "stock") parts.push(button("Draw from the stock", "draw-stock", () => send(st, root, move)));
    else parts.push(button(`Take the upcard ${C.cardText(v.discard_top)}`, "draw-discard", () => send(st, root, move)));
  }
  for (const move of legal.filter((m) => m.type === "claim")) {
    const card = v.upcard ? C.cardText(v.upcard) : "";
    const label = move.claim ? (v.phase === "first_offer" ? `Take ${card}` : claim.button(card)) : `Pass on ${card}`;
    parts.push(button(label, move.claim ? "claim" : "pass", () => send(st, root, move), { class: move.claim ? "claim" : "" }));
  }

  const goDowns = legal.filter((m) => m.type === "go_down");
  const discards = legal.filter((m) => m.type === "discard");
  const mySeat = v.seats[v.seat];
  if (mySeat && !mySeat.down && v.phase === "play" && v.turn === v.seat) parts.push(goDownPanel(st, root, goDowns, chosen));

  const layOffs = legal.filter((m) => m.type === "lay_off");
  if (layOffs.length) {
    const shown = layOffs.filter((m) => !chosen.length || m.lay_offs.every((l) => l.cards.every((c) => chosen.includes(c))));
    parts.push(
      h(
        "div",
        { class: "lay-offs" },
        h("h3", {}, "Lay off"),
        h("p", { class: "muted" }, chosen.length ? "Lay-offs of the selected cards:" : "Select a card to see where it goes, or choose:"),
        shown.length
          ? h(
              "div",
              { class: "buttons" },
              shown.map((move) => {
                const l = move.lay_offs[0];
                const meld = v.melds.find((m) => m.id === l.meld);
                const owner = meld ? seatName(names(v), meld.owner) + "'s " + meld.type : "meld " + l.meld;
                const end = l.joker_to ? ` (joker to the ${l.joker_to} end)` : "";
                const key = `lay-${l.meld}-${l.cards.join("")}-${l.joker_to || ""}`;
                return button(`${l.cards.map(C.cardText).join(" ")} on ${l.meld}: ${owner}${end}`, key, () => send(st, root, move), { class: "lay-off", dataset: { key, meld: l.meld, cards: l.cards.join(" "), jokerTo: l.joker_to || "" } });
              }),
            )
          : h("p", { class: "muted" }, "The selected cards lay off nowhere."),
      ),
    );
  }

  if (discards.length) {
    const one = chosen.length === 1 ? discards.find((m) => m.card === chosen[0]) : null;
    parts.push(
      h(
        "div",
        { class: "discard-action" },
        button(one ? `Discard ${C.cardText(one.card)}` : "Discard (select one card)", "discard", () => one && send(st, root, one), { disabled: !one, class: "discard" }),
      ),
    );
  }
  if (!legal.length && v.status === "playing") parts.push(h("p", { class: "muted" }, "Nothing to do now: waiting for the others."));
  // An error of the go-down whose panel is gone (the person is down now) stays, here.
  const goDownShown = parts.some((p) => p && p.classList && p.classList.contains("go-down"));
  return h("section", { class: "actions", "aria-label": "Your moves", id: "moves", tabindex: "-1" }, h("h2", {}, "Your moves"), errorBox(st, "moves") || (goDownShown ? null : errorBox(st, "go-down")), parts);
}
