// A table: play (with this browser's seat token) or watch (no token: the public view).
// The entry of the table's modules: it mounts a table and composes its parts into the page.
import { games, houseBotNames, seats as seatStore } from "./api.js";
import { logPanel, scoresPanel, seatsPanel, summaryPanel, tablePanel } from "./board.js";
import { h, replace } from "./dom.js";
import { handPanel } from "./hand.js";
import { focusMoves, shortcut } from "./keys.js";
import { shownView } from "./pacing.js";
import { TITLE, actionsPanel, autoPass, statusLine } from "./prompt.js";
import { waitingPanel } from "./seating.js";
import { settingsPanel } from "./settings.js";
import { newState, setView } from "./state.js";
import { follow, openStream, refresh, setLive, stopFollowing } from "./stream.js";
import * as V from "./variants.js";

export { PACES } from "./pacing.js";
export { SHORTCUTS } from "./keys.js";
export { usefulCard } from "./prompt.js";
export { CLAIM_CHOICES } from "./settings.js";

/** How often (ms) a waiting table is read. */
const WAITING_POLL_MS = 2000;

/** Mount the table of `gameId` in `root`; `watch`: never use a token. Returns the clean-up. */
export function mountTable(root, gameId, { watch = false } = {}) {
  const stored = watch ? null : seatStore.get(gameId);
  const st = newState(gameId, watch, stored ? stored.token : null, render);
  const clock = setInterval(() => tick(st), 250);
  // While the table waits for players, nothing happens in its events: its view is read again.
  // (Redrawn only when it changed: a choice being made in the page's forms is left alone.)
  const waiting = setInterval(async () => {
    if (!st.view || st.view.status !== "waiting" || st.busy || st.refreshing) return;
    try {
      const view = await games.view(st.id, st.token);
      if (!st.closed && view && JSON.stringify(view) !== JSON.stringify(st.view)) {
        setView(st, view);
        render(st, root);
      }
    } catch (_) {
      /* read again at the next tick; an action's error is shown by the action */
    }
  }, WAITING_POLL_MS);
  const skip = document.getElementById("skip-link");
  if (skip && !watch) {
    skip.textContent = "Skip to your hand and moves";
    skip.dataset.target = "#dock .hand-cards|#moves|.round-summary";
  }
  const onKey = (e) => shortcut(st, root, e);
  document.addEventListener("keydown", onKey);
  const offline = () => stopFollowing(st, root);
  const online = () => refresh(st, root).then(() => follow(st, root));
  window.addEventListener("offline", offline);
  window.addEventListener("online", online);
  houseBotNames().then((names) => {
    st.botNames = names;
    if (st.view && st.view.status === "waiting" && !st.closed) render(st, root);
  });

  refresh(st, root).then(() => {
    if (!st.closed && st.view) openStream(st, root);
  });

  return () => {
    st.closed = true;
    clearInterval(clock);
    clearInterval(waiting);
    clearTimeout(st.catchUp);
    document.removeEventListener("keydown", onKey);
    if (skip) {
      skip.textContent = "Skip to the content";
      delete skip.dataset.target;
    }
    window.removeEventListener("offline", offline);
    window.removeEventListener("online", online);
    stopFollowing(st, root);
    document.title = TITLE;
  };
}

// --- rendering --------------------------------------------------------------

function tick(st) {
  const el = document.getElementById("clock");
  if (!el || !st.view) return;
  const v = st.view;
  const window = v.claim_window;
  const until = window && window.closes_at && window.pending.length ? window.closes_at : v.deadline;
  if (!until || v.status !== "playing") {
    el.textContent = "";
    return;
  }
  const left = Math.max(0, Math.ceil(until - Date.now() / 1000));
  const what = window && window.closes_at && window.pending.length ? "claims close in" : "clock";
  el.textContent = `${what} ${Math.floor(left / 60)}:${String(left % 60).padStart(2, "0")}`;
  el.classList.toggle("low", left <= 10);
}

function render(st, root) {
  if (st.closed) return;
  st.root = root;
  const v = st.view;
  const playing = v.status !== "waiting";
  const shown = shownView(st);
  const summary = st.summary && playing ? summaryPanel(st, root) : null;
  const focused = document.activeElement;
  const hadFocus = focused && focused !== root && root.contains(focused);
  const focusedKey = hadFocus ? focused.dataset.key : undefined;
  replace(
    root,
    header(st),
    summary,
    playing ? (summary ? null : seatsPanel(st, shown)) : waitingPanel(st, root),
    playing && !summary ? tablePanel(st, shown) : null,
    // The hand and the moves: on a phone, fixed at the bottom of the screen (as card sites do).
    playing && st.token && !summary ? h("div", { class: "dock", id: "dock" }, handPanel(st, root), actionsPanel(st, root)) : null,
    playing ? scoresPanel(shown) : null,
    logPanel(st),
    playing && v.status === "playing" ? settingsPanel(st, root) : null,
  );
  tick(st);
  setLive(st, root, v.status === "finished" ? false : st.live);
  if (st.busy) root.querySelectorAll(".actions button, .waiting button").forEach((b) => (b.disabled = true));
  const box = root.querySelector("#action-error");
  if (box && box.getBoundingClientRect) box.scrollIntoView({ block: "nearest" });
  // The focus was on a control this redraw removed (a move made, an offer gone): it stays in
  // the action area, on its first move, never falling back to the page.
  if (hadFocus && !root.contains(document.activeElement)) focusMoves(root, focusedKey);
  autoPass(st, root);
  if (st.focusSummary && summary) {
    st.focusSummary = false;
    const next = root.querySelector("[data-key='continue']");
    if (next) next.focus();
  }
}

function header(st) {
  const v = st.view;
  const variant = V.title(v.variant);
  const you = typeof v.seat === "number" ? v.seat : null;
  const role = st.token && you !== null ? `You are ${v.seats[you].name || "a player"} (seat ${you + 1})` : "Watching as a spectator";
  return h(
    "section",
    { class: "game-head", "aria-label": "Game" },
    h("h1", {}, `${variant} · table `, h("code", { class: "game-id" }, v.id)),
    h(
      "p",
      { class: "meta" },
      h("span", { class: "role", dataset: { role: st.token ? "player" : "spectator" } }, role),
      " · ",
      h("span", { id: "live", class: "live" }, "…"),
      v.rated === false ? " · test table (unrated)" : "",
      " · ",
      h("a", { href: st.token ? `#/watch/${encodeURIComponent(v.id)}` : `#/game/${encodeURIComponent(v.id)}` }, st.token ? "open the spectator view" : "take a seat or play"),
      v.status === "finished" ? [" · ", h("a", { href: `#/replay/${encodeURIComponent(v.id)}`, class: "replay-link" }, "Replay this game")] : null,
    ),
    v.status === "waiting" ? null : statusLine(st),
  );
}
