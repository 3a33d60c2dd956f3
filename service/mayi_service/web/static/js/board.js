// What the table shows of the game: the players, the piles and the upcard on offer, the
// melds, the scores, the log of what happened, and a round's summary when it ends.
import * as C from "./cards.js";
import { h } from "./dom.js";
import { describeEvent, plural, seatName } from "./events.js";
import { button, focusMoves } from "./keys.js";
import { yourPart } from "./prompt.js";
import { scoresSection } from "./scores.js";
import { drawnCard, names, redraw } from "./state.js";
import * as V from "./variants.js";

export function seatsPanel(st, v) {
  return h(
    "section",
    { class: "seats", "aria-label": "Players" },
    h("h2", {}, "Players"),
    h(
      "ul",
      { class: "seat-list" },
      v.seats.map((s) => {
        const flags = [];
        if (s.seat === v.turn && v.status === "playing") flags.push(h("span", { class: "badge turn" }, "turn"));
        if (s.seat === v.actor && v.actor !== v.turn && v.status === "playing") flags.push(h("span", { class: "badge actor" }, "to answer"));
        if (s.down) flags.push(h("span", { class: "badge down" }, "down"));
        if (s.absent) flags.push(h("span", { class: "badge absent" }, "absent"));
        if (v.claim_window && v.claim_window.claims.includes(s.seat)) flags.push(h("span", { class: "badge claim" }, V.claimName(v.variant)));
        return h(
          "li",
          { class: "seat" + (s.seat === v.seat ? " me" : "") + (s.seat === v.turn ? " on-turn" : ""), dataset: { seat: s.seat } },
          h("span", { class: "name" }, seatName(names(v), s.seat), s.seat === v.seat ? " (you)" : ""),
          h("span", { class: "count", dataset: { handCount: s.hand_count } }, plural(s.hand_count, "card")),
          h("span", { class: "total" }, plural(s.total, "point")),
          s.claims_left !== null ? h("span", { class: "claims" }, V.claimWords(v.variant).left(s.claims_left)) : null,
          flags,
        );
      }),
    ),
  );
}

export function tablePanel(st, v) {
  const n = names(v);
  const window = v.claim_window;
  return h(
    "section",
    { class: "table", "aria-label": "Table" },
    h("h2", {}, "Table"),
    h(
      "div",
      { class: "piles" },
      h("div", { class: "pile stock" }, h("span", { class: "card back", "aria-hidden": "true" }, ""), h("span", { class: "pile-label" }, "Stock: ", h("strong", { id: "stock-count" }, String(v.stock_count)))),
      h(
        "div",
        { class: "pile discard" },
        v.discard_top ? C.cardFace(v.discard_top, { props: { id: "discard-top" } }) : h("span", { class: "card empty", role: "img", "aria-label": "no discard" }, ""),
        h("span", { class: "pile-label" }, "Discards: ", h("strong", { id: "discard-count" }, String(v.discard_count))),
      ),
      window
        ? h(
            "div",
            { class: "claim-window" },
            h("span", {}, "Upcard on offer: "),
            C.cardFace(window.card),
            window.discarder !== null ? h("span", {}, ` discarded by ${seatName(n, window.discarder)}.`) : null,
            window.claims.length ? h("span", {}, ` ${V.claimName(v.variant)}: ${window.claims.map((s) => seatName(n, s)).join(", ")}.`) : null,
            window.passes.length ? h("span", {}, ` Passed: ${window.passes.map((s) => seatName(n, s)).join(", ")}.`) : null,
          )
        : null,
    ),
    h("h3", {}, "Melds"),
    v.melds.length
      ? h(
          "ul",
          { class: "melds" },
          v.melds.map((m) => {
            const stands = new Map(m.jokers.map((j) => [j.index, j.stands_for]));
            return h(
              "li",
              { class: "meld", dataset: { meld: m.id, owner: m.owner } },
              h("span", { class: "meld-label" }, `${m.id}: ${seatName(n, m.owner)}'s ${m.type}`),
              h("span", { class: "cards" }, m.cards.map((c, i) => C.cardFace(c, { standsFor: stands.get(i) || null }))),
            );
          }),
        )
      : h("p", { class: "muted" }, "No melds yet this round."),
  );
}

/** The rounds' scores and totals of `v` (the view shown), and the places once it is finished. */
export function scoresPanel(v) {
  if (!v.results.length && v.status !== "finished") return null;
  const n = names(v);
  const places = v.status === "finished" ? h("p", { class: "places" }, "Places: ", v.places.map((p, i) => `${seatName(n, i)} ${p}`).join(", ")) : null;
  return scoresSection(n, v.results, v.seats.map((s) => s.total), places);
}

export function logPanel(st) {
  if (!st.log.length) return null;
  const v = st.view;
  return h(
    "section",
    { class: "log", "aria-label": "What happened" },
    h("h2", {}, "What happened"),
    h("ul", { class: "events", "aria-live": "polite", tabindex: "0", "aria-label": "Events, newest first" }, st.log.slice().reverse().map((e) => {
      const card = drawnCard(st, e);
      const told = card ? { ...e, private: { card } } : e;
      return h("li", { dataset: { seq: e.seq, type: e.type } }, describeEvent(told, names(v), v.variant));
    })),
  );
}

/** The round just ended (its `round_ended` event): every seat's hand as counted, its points
 * and its total; the table comes back when the person continues. */
export function summaryPanel(st, root) {
  const v = st.view;
  const n = names(v);
  const d = st.summary.data;
  const out = d.out === null || d.out === undefined ? null : d.out;
  const finished = v.status === "finished";
  const rows = v.seats.map((s) =>
    h(
      "tr",
      { dataset: { seat: s.seat } },
      h("th", { scope: "row" }, seatName(n, s.seat), s.seat === v.seat ? " (you)" : "", out === s.seat ? " (out)" : ""),
      h("td", { class: "summary-hand" }, (d.hands[s.seat] || []).length ? h("span", { class: "cards" }, d.hands[s.seat].map((c) => C.cardFace(c))) : "no cards"),
      h("td", { class: "points" }, String(d.scores[s.seat])),
      h("td", { class: "total" }, String(d.totals[s.seat])),
    ),
  );
  const continueLabel = finished ? "Show the final table" : `Continue to round ${v.round.number}`;
  return h(
    "section",
    { class: "round-summary", "aria-label": `Round ${d.round} summary` },
    h("h2", {}, `Round ${d.round} is over`),
    h("p", { class: "summary-out" }, out === null ? "Nobody went out." : `${seatName(n, out)} went out.`),
    yourPart(st).part !== "none" ? h("p", { class: "summary-next" }, `Round ${v.round.number} is dealt and the move is yours: continue to play (your clock is running).`) : null,
    h(
      "div",
      { class: "wide", tabindex: "0", role: "region", "aria-label": "Hands and points" },
      h(
        "table",
        { class: "summary-table" },
        h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Player"), h("th", { scope: "col" }, "Cards left"), h("th", { scope: "col" }, "Points"), h("th", { scope: "col" }, "Total"))),
        h("tbody", {}, rows),
      ),
    ),
    h(
      "div",
      { class: "buttons" },
      button(continueLabel, "continue", () => {
        st.summary = null;
        redraw(st, root);
        focusMoves(root);
      }, { class: "primary" }),
    ),
  );
}
