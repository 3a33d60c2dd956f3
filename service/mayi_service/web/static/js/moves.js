// Sending the person's actions to the API (moves, a seat taken, seats filled with house bots),
// and their errors, shown next to the action.
import { ApiError, UNREACHABLE, act, errorText, games, seats as seatStore } from "./api.js";
import * as C from "./cards.js";
import { h } from "./dom.js";
import { redraw, roundOf, setView } from "./state.js";
import { refresh } from "./stream.js";

/** Show `message` (words, or null to clear) next to the action area `at`, and bring it into view. */
export function setError(st, root, message, at) {
  st.error = message ? { message, at } : null;
  if (!st.closed && st.view) redraw(st, root);
}

/** Send `move` (one at a time); its error is shown next to the action area `at`. */
export async function send(st, root, move, at = "moves") {
  if (st.busy) return;
  st.busy = true;
  root.setAttribute("aria-busy", "true");
  setError(st, root, null);
  try {
    const view = await act(st.id, st.token, move, (message) => setError(st, root, message, at));
    if (view) {
      // Drawn at once, but for an action that ends the round: the new round waits for the
      // events that end this one (its summary comes first).
      if (!st.view || roundOf(st.view) === roundOf(view)) st.ownSeq = Math.max(st.ownSeq, view.last_event);
      setView(st, view);
    }
    st.error = null;
  } catch (error) {
    st.error = { message: C.withCardText(errorText(error)), at };
  } finally {
    // Not busy before the redraw: a move the redraw sends at once (an upcard passed by
    // itself) marks the table busy again, and keeps it so until its own answer.
    st.busy = false;
    root.removeAttribute("aria-busy");
    redraw(st, root);
  }
}

/** Take an open seat with `body` (a name) and keep its token in this browser. */
export async function takeSeat(st, root, body) {
  setError(st, root, null);
  try {
    const taken = await games.takeSeat(st.id, body);
    seatStore.set(st.id, { token: taken.token, seat: taken.seat, name: body.name || null });
    st.token = taken.token;
    setView(st, taken.game);
    await refresh(st, root);
  } catch (error) {
    setError(st, root, errorText(error), "seats");
  }
}

/** Seat a house bot of `kind` in each seat still open now (the lowest open one each time:
 * a seat someone takes meanwhile is theirs, and the filling stops when none is left). */
export async function fillWithBots(st, root, kind) {
  setError(st, root, null);
  st.busy = true;
  try {
    const fresh = await games.view(st.id, st.token);
    if (fresh) setView(st, fresh);
    const open = st.view.seats.filter((s) => !s.taken).length;
    for (let i = 0; i < open; i++) {
      try {
        await games.takeSeat(st.id, { house_bot: kind });
      } catch (error) {
        if (error instanceof ApiError && error.code === "game_started") break; // every seat is taken
        throw error;
      }
    }
  } catch (error) {
    st.error = { message: errorText(error), at: "seats" };
  } finally {
    st.busy = false;
  }
  await refresh(st, root);
}

/** The error of the action area `at`, if it has one. */
export function errorBox(st, at) {
  if (!st.error || st.error.at !== at) return null;
  const retrying = st.error.message === UNREACHABLE;
  return h(
    "p",
    { class: "error here" + (retrying ? " retrying" : ""), role: "alert", id: "action-error", dataset: { at } },
    h("span", { class: "error-text" }, st.error.message + (retrying ? "…" : "")),
    retrying ? null : h("button", { type: "button", class: "link", "aria-label": "Dismiss the message", dataset: { key: "dismiss-error" }, onclick: () => setError(st, st.root, null) }, "×"),
  );
}
