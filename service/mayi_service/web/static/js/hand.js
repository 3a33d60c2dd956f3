// The person's hand: its cards sorted (by suit or rank), the cards selected, the ones just drawn.
import * as C from "./cards.js";
import { h } from "./dom.js";
import { redraw } from "./state.js";

function visibleHand(st) {
  return C.sortCards(C.without(st.view.hand || [], st.staged.flat()), st.sortBy);
}

export function selectedCards(st) {
  const hand = visibleHand(st);
  return st.selected.map((i) => hand[i]).filter(Boolean);
}

export function handPanel(st, root) {
  const v = st.view;
  const hand = visibleHand(st);
  const sortButton = (by, label) =>
    h(
      "button",
      {
        type: "button",
        class: "toggle",
        "aria-pressed": String(st.sortBy === by),
        dataset: { key: "sort-" + by },
        onclick: () => {
          st.sortBy = by;
          st.selected = [];
          localStorage.setItem("mayi.sort", by);
          redraw(st, root);
        },
      },
      label,
    );
  const fresh = [...st.fresh];
  const isFresh = hand.map((card) => {
    const at = fresh.indexOf(card);
    if (at < 0) return false;
    fresh.splice(at, 1);
    return true;
  });
  const freshShown = hand.filter((_, i) => isFresh[i]);
  return h(
    "section",
    { class: "hand", "aria-label": "Your hand" },
    h("h2", {}, `Your hand (${hand.length})`, st.staged.length ? h("span", { class: "muted staged-note" }, ` and ${(v.hand || []).length - hand.length} in melds being made`) : null, h("span", { class: "sort" }, " Sort: ", sortButton("suit", "by suit"), sortButton("rank", "by rank"))),
    freshShown.length ? h("p", { class: "fresh-note", id: "fresh-note" }, `New in your hand: ${freshShown.map(C.cardText).join(" ")} (outlined).`) : null,
    v.held ? h("p", { class: "muted" }, `Taken this turn: ${C.cardText(v.held)} (it may not be laid off this turn).`) : null,
    h(
      "div",
      { class: "hand-cards", role: "group", "aria-label": "Cards: press to select" },
      hand.map((card, i) =>
        C.cardFace(card, {
          tag: "button",
          props: {
            type: "button",
            class: (st.selected.includes(i) ? "selected" : "") + (isFresh[i] ? " drawn" : ""),
            "aria-describedby": isFresh[i] ? "fresh-note" : false,
            "aria-pressed": String(st.selected.includes(i)),
            dataset: { key: `card-${i}-${card}` },
            onclick: () => {
              st.selected = st.selected.includes(i) ? st.selected.filter((x) => x !== i) : [...st.selected, i];
              redraw(st, root);
            },
          },
        }),
      ),
    ),
  );
}
