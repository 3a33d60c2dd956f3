// The keyboard: the moves' shortcut keys, the arrows along the hand, the buttons that name
// their key, and where the focus goes when a redraw removes the focused control.
import { h } from "./dom.js";

/** The keys of the table's moves (none with a modifier, none while typing in a field). */
export const SHORTCUTS = [
  ["d", "draw-stock", "Draw from the stock"],
  ["t", "draw-discard", "Take the upcard"],
  ["p", "pass", "Pass on the upcard"],
  ["m", "claim", "Claim the upcard, or take the upcard offered"],
  ["g", "go-down", "Go down"],
  ["x", "discard", "Discard the selected card"],
  ["c", "continue", "Continue after a round's summary"],
];

/** Answer the key of `e`: a move's shortcut, or an arrow along the hand. */
export function shortcut(st, root, e) {
  if (e.altKey || e.ctrlKey || e.metaKey || st.closed) return;
  const there = e.target;
  if (there && there.closest && there.closest("input, select, textarea")) return;
  if (there && there.closest && there.closest(".hand-cards") && (e.key === "ArrowRight" || e.key === "ArrowLeft")) {
    const cards = [...root.querySelectorAll(".hand-cards button.card")];
    const at = cards.indexOf(there.closest("button.card"));
    const next = cards[(at + (e.key === "ArrowRight" ? 1 : cards.length - 1)) % cards.length];
    if (next) {
      e.preventDefault();
      next.focus();
    }
    return;
  }
  const found = SHORTCUTS.find(([key]) => key === e.key.toLowerCase());
  if (!found) return;
  const control = root.querySelector(`button[data-key="${found[1]}"]:not(:disabled)`);
  if (!control) return;
  e.preventDefault();
  control.click();
}

/** Put the focus on the action area: the hand (after a card, `key`), a move, the moves, the turn. */
export function focusMoves(root, key) {
  const cards = key && key.startsWith("card-") ? root.querySelector(".hand-cards button.card") : null;
  const target = cards || root.querySelector(".actions button:not(:disabled)") || root.querySelector("#moves") || root.querySelector("#turn");
  if (target) target.focus();
}

/** A button of the table, naming its shortcut key (`aria-keyshortcuts`) if it has one. */
export function button(label, key, onclick, extra = {}) {
  const keys = SHORTCUTS.find(([, k]) => k === key);
  return h("button", { type: "button", dataset: { key }, onclick, "aria-keyshortcuts": keys ? keys[0].toUpperCase() : false, ...extra }, label);
}
