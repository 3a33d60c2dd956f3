// A table: play (with this browser's seat token) or watch (no token: the public view).
import { ApiError, UNREACHABLE, act, errorText, games, houseBotNames, seats as seatStore } from "./api.js";
import * as C from "./cards.js";
import { h, replace } from "./dom.js";
import { EVENT_TYPES, describeEvent, distinctNames, plural, seatName } from "./events.js";
import { fillBotOptions } from "./lobby.js";
import * as V from "./variants.js";

const LOG_SIZE = 60;
/** A long-poll's wait (s) when the event stream is refused; how often (ms) a waiting table is read. */
const POLL_WAIT = 25;
const WAITING_POLL_MS = 2000;
/** The other seats' moves that change what the table shows: drawn one at a time (`PACES`). */
const PACED = new Set(["drew", "took_upcard", "claim_won", "discarded", "went_down", "laid_off"]);
/** How long (ms) each of the other seats' moves stays on the table before the next is drawn,
 * by the person's choice ("mayi.pace"); a backlog (a reconnection's catch-up) goes faster. */
export const PACES = { slow: 1400, normal: 800, fast: 350, instant: 0 };
const BACKLOG = 6;
/** How long (ms) the table may show an older state than the view read, waiting for its events. */
const CATCH_UP_MS = 3000;
const TITLE = document.title;

/** Mount the table of `gameId` in `root`; `watch`: never use a token. Returns the clean-up. */
export function mountTable(root, gameId, { watch = false } = {}) {
  const stored = watch ? null : seatStore.get(gameId);
  const st = {
    id: gameId,
    watch,
    token: stored ? stored.token : null,
    view: null,
    sortBy: localStorage.getItem("mayi.sort") === "rank" ? "rank" : "suit",
    selected: [], // indices into the visible (sorted, unstaged) hand
    staged: [], // melds being built for going down
    log: [],
    stream: null,
    busy: false,
    refreshing: null,
    again: false,
    closed: false,
    error: null, // {message, at}: shown next to the action `at` ("moves", "go-down", "seats")
    live: "reconnecting", // true, "reconnecting" or false; `via`: "stream" or "poll"
    via: "stream",
    lastSeq: 0,
    logSeq: 0, // the last event drawn on the table (and in the log)
    ownSeq: 0, // the last event of a view the person's own action answered
    queue: [], // events not yet drawn, oldest first
    pacing: false,
    pace: null, // the table as drawn while the other seats' moves are shown one at a time
    drawn: null, // the view the table shows (it lags the view read until its events are drawn)
    fresh: [], // the cards the person just drew or took
    draws: [], // {after, upto, cards}: what the hand gained between two views
  };
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

// --- data -----------------------------------------------------------------

async function refresh(st, root) {
  if (st.refreshing) {
    st.again = true;
    return st.refreshing;
  }
  st.refreshing = (async () => {
    do {
      st.again = false;
      try {
        const view = await games.view(st.id, st.token);
        if (view) setView(st, view);
      } catch (error) {
        if (error instanceof ApiError && st.token && (error.status === 401 || error.status === 403)) {
          seatStore.forget(st.id); // a token this game no longer knows: watch instead
          st.token = null;
          st.again = true;
          continue;
        }
        if (!st.view) {
          replace(root, h("h1", {}, "Table"), h("p", { class: "problem", role: "alert", text: errorText(error) }), h("p", {}, h("a", { href: "#/" }, "Back to the lobby")));
          return;
        }
        setLive(st, root, "reconnecting"); // the view is read again with the next event
      }
    } while (st.again && !st.closed);
    if (!st.closed && st.view) render(st, root);
  })();
  try {
    await st.refreshing;
  } finally {
    st.refreshing = null;
  }
}

function setView(st, view) {
  const old = st.view;
  st.view = view;
  const hand = view.hand || [];
  // Staged melds survive only while their cards are still in the hand.
  const stagedCards = st.staged.flat();
  if (!C.sameCards(C.without(hand, stagedCards).concat(stagedCards), hand) || view.phase !== "play") st.staged = [];
  if (!old || !C.sameCards(old.hand || [], hand)) st.selected = [];
  // The cards the person just drew or took: highlighted in the hand until their turn ends;
  // a draw's card is named in the log (the event stream carries no private part).
  if (old && old.hand && roundOf(old) === roundOf(view) && view.status === "playing") {
    const added = C.without(hand, old.hand);
    if (added.length) {
      st.fresh = added;
      st.draws.push({ after: old.last_event, upto: view.last_event, cards: added });
      if (st.draws.length > 20) st.draws.shift();
    } else if (old.turn === old.seat && view.turn !== view.seat) st.fresh = [];
  } else if (!old || roundOf(old) !== roundOf(view)) st.fresh = [];
}

/** The number of the view's round (null while the table waits for players). */
function roundOf(view) {
  return view.round ? view.round.number : null;
}

/** The card of the person's own `drew` event, when its public form does not say it. */
function drawnCard(st, event) {
  if (event.private || event.type !== "drew" || event.seat !== st.view.seat || st.watch) return null;
  for (const range of st.draws) {
    if (event.seq <= range.after || event.seq > range.upto) continue;
    // Of the cards the hand gained there, the ones not taken from the pile (those are named).
    const taken = st.log.filter((e) => e.seat === event.seat && e.seq > range.after && e.seq <= range.upto && (e.type === "took_upcard" || e.type === "claim_won")).map((e) => e.data.card);
    const drawn = C.without(range.cards, taken);
    const draws = st.log.filter((e) => e.type === "drew" && e.seat === event.seat && !e.private && e.seq > range.after && e.seq <= range.upto);
    const at = draws.findIndex((e) => e.seq === event.seq);
    if (at >= 0 && drawn[at]) return drawn[at];
  }
  return null;
}

async function preloadLog(st) {
  const after = Math.max(0, st.view.last_event - 20);
  try {
    const page = await games.events(st.id, after, { token: st.token });
    for (const event of page.events) addLog(st, event);
  } catch (_) {
    /* the log is a nicety */
  }
}

function openStream(st, root) {
  st.lastSeq = Math.max(st.lastSeq, st.view.last_event);
  preloadLog(st).then(() => render(st, root));
  follow(st, root);
}

/** Follow the game live: by SSE (the browser reconnects by itself, with Last-Event-ID, when
 * a stream ends), or, once a stream is refused (429: this address holds its streams, 503),
 * by long-polling the events (GET .../events?wait=, with the seat's token: counted per seat). */
function follow(st, root) {
  if (st.closed || !st.view || st.view.status === "finished" || st.stream || st.poller) return;
  if (st.via === "poll") poll(st, root);
  else listen(st, root);
}

function stopFollowing(st, root) {
  if (st.stream) st.stream.close();
  st.stream = null;
  if (st.poller) st.poller.abort();
  st.poller = null;
  if (!st.closed) setLive(st, root, "reconnecting");
}

function listen(st, root) {
  const source = new EventSource(games.streamUrl(st.id, st.lastSeq));
  st.stream = source;
  const onEvent = (message) => {
    let event;
    try {
      event = JSON.parse(message.data);
    } catch (_) {
      return;
    }
    enqueue(st, root, event);
    refresh(st, root).then(() => {
      if (event.type === "game_ended") source.close();
    });
  };
  for (const type of EVENT_TYPES) source.addEventListener(type, onEvent);
  source.addEventListener("open", () => setLive(st, root, true, "stream"));
  source.addEventListener("error", () => {
    if (st.stream !== source) return;
    if (source.readyState !== EventSource.CLOSED) {
      setLive(st, root, "reconnecting");
      refresh(st, root); // it resumes after the last event it had (Last-Event-ID)
      return;
    }
    // Refused (429, 503), or the game is over (204): long-poll instead, from the last event seen.
    st.stream = null;
    st.via = "poll";
    refresh(st, root).then(() => follow(st, root));
  });
}

async function poll(st, root) {
  const poller = new AbortController();
  st.poller = poller;
  let pause = 0;
  let wait = 0; // the first read answers at once (what happened meanwhile); then each waits
  while (!st.closed && st.poller === poller && st.view.status !== "finished") {
    if (pause) await new Promise((resolve) => setTimeout(resolve, pause));
    if (st.closed || st.poller !== poller) return;
    try {
      const onRetry = (message) => message && setLive(st, root, "reconnecting"); // the server is not answering
      const page = await games.events(st.id, st.lastSeq, { token: st.token, wait, signal: poller.signal, onRetry });
      pause = 0;
      wait = POLL_WAIT;
      setLive(st, root, true, "poll");
      if (page.events.length) {
        for (const event of page.events) enqueue(st, root, event);
        await refresh(st, root);
      }
    } catch (error) {
      if (poller.signal.aborted) return;
      setLive(st, root, "reconnecting");
      const after = error instanceof ApiError ? Number((error.problem && error.problem.retry_after) || 0) : 0;
      pause = Math.max(after * 1000, 2000);
    }
  }
  if (st.poller === poller) st.poller = null;
}

function setLive(st, root, state, via = st.via) {
  st.live = state;
  st.via = via;
  const badge = root.querySelector("#live");
  if (!badge) return;
  badge.textContent = state === true ? "live" : state === "reconnecting" ? "reconnecting…" : "not live";
  badge.dataset.state = String(state);
  badge.dataset.via = via;
  badge.title = state === true ? (via === "poll" ? "following the game by long-polling its events" : "following the game by its event stream") : "";
}

/** Draw `event` (in order, after those before it): another seat's move on the table stays
 * there `PACES` ms before the next is drawn, with its line in the log. */
function enqueue(st, root, event) {
  st.lastSeq = Math.max(st.lastSeq, event.seq);
  if (st.log.some((e) => e.seq === event.seq) || st.queue.some((e) => e.seq === event.seq)) return;
  st.queue.push(event);
  st.queue.sort((a, b) => a.seq - b.seq);
  if (!st.pacing) drawQueue(st, root);
}

function paceMs() {
  const chosen = localStorage.getItem("mayi.pace");
  return chosen in PACES ? PACES[chosen] : PACES.normal;
}

async function drawQueue(st, root) {
  st.pacing = true;
  try {
    while (st.queue.length && !st.closed) {
      const event = st.queue.shift();
      const shown = st.pace || st.drawn || st.view;
      addLog(st, event);
      if (event.type === "round_ended") {
        st.summary = event; // every hand, as counted: shown until the person continues
        st.focusSummary = true;
      }
      const mine = !st.watch && typeof st.view.seat === "number" && event.seat === st.view.seat;
      const ms = st.queue.length >= BACKLOG ? Math.min(150, paceMs()) : paceMs();
      if (PACED.has(event.type) && !mine && ms && shown && event.seq > shown.last_event) {
        st.pace = applyEvent(shown, event);
        render(st, root);
        await new Promise((resolve) => setTimeout(resolve, ms));
      } else if (st.pace && event.seq > st.pace.last_event) {
        st.pace = { ...st.pace, last_event: event.seq };
      }
    }
  } finally {
    st.pace = null;
    st.pacing = false;
  }
  if (!st.closed && st.view) render(st, root);
}

/** `view` after another seat's move `event`, as far as the public event tells it. */
function applyEvent(view, event) {
  const v = structuredClone(view);
  v.last_event = event.seq;
  const d = event.data || {};
  const seat = v.seats[event.seat];
  const under = v.under || (v.under = []);
  if (!seat) return v;
  // The pile's new top: the event says it (`discard_top`); an event logged before it did, the
  // card the page saw under it, if any.
  const fromPile = () => {
    const below = under.length ? under.pop() : null;
    v.discard_top = "discard_top" in d ? d.discard_top : below;
    v.discard_count = Math.max(0, v.discard_count - 1);
    seat.hand_count += 1;
  };
  switch (event.type) {
    case "drew":
      v.stock_count = Math.max(0, v.stock_count - 1);
      seat.hand_count += 1;
      break;
    case "took_upcard":
    case "claim_won":
      fromPile();
      v.claim_window = null;
      break;
    case "discarded":
      if (v.discard_top) under.push(v.discard_top);
      v.discard_top = d.card;
      v.discard_count += 1;
      seat.hand_count = Math.max(0, seat.hand_count - 1);
      v.claim_window = null;
      break;
    case "went_down":
      v.melds = v.melds.concat(d.melds || []);
      seat.down = true;
      seat.hand_count = Math.max(0, seat.hand_count - (d.melds || []).reduce((n, m) => n + m.cards.length, 0));
      break;
    case "laid_off": {
      const changed = new Map((d.melds || []).map((m) => [m.id, m]));
      v.melds = v.melds.map((m) => changed.get(m.id) || m);
      seat.hand_count = Math.max(0, seat.hand_count - (d.lay_offs || []).reduce((n, l) => n + l.cards.length, 0));
      break;
    }
    default:
      break;
  }
  if (v.status === "playing") {
    v.turn = event.seat;
    v.actor = event.seat;
  }
  return v;
}

/** The view the table shows now: the other seats' move being drawn, or the view read once
 * the events it holds are drawn (at once after the person's own action, or after CATCH_UP_MS
 * when its events do not come). */
function shownView(st) {
  if (st.pace) return st.pace;
  const v = st.view;
  if (!st.drawn || v.status !== "playing" || v.last_event <= st.logSeq || v.last_event <= st.ownSeq || roundOf(st.drawn) !== roundOf(v)) {
    st.drawn = v;
    st.logSeq = Math.max(st.logSeq, v.last_event);
  } else if (!st.catchUp) {
    st.catchUp = setTimeout(() => {
      st.catchUp = null;
      if (st.closed || st.pacing) return;
      st.drawn = st.view;
      render(st, st.root);
    }, CATCH_UP_MS);
  }
  return st.drawn;
}

function addLog(st, event) {
  st.lastSeq = Math.max(st.lastSeq, event.seq);
  st.logSeq = Math.max(st.logSeq, event.seq);
  if (st.log.some((e) => e.seq === event.seq)) return;
  st.log.push(event);
  st.log.sort((a, b) => a.seq - b.seq);
  if (st.log.length > LOG_SIZE) st.log.splice(0, st.log.length - LOG_SIZE);
}

function names(view) {
  return distinctNames(view.seats.map((s) => s.name));
}

// --- actions ----------------------------------------------------------------

/** Show `message` (words, or null to clear) next to the action area `at`, and bring it into view. */
function setError(st, root, message, at) {
  st.error = message ? { message, at } : null;
  if (!st.closed && st.view) render(st, root);
}

async function send(st, root, move, at = "moves") {
  if (st.busy) return;
  st.busy = true;
  root.setAttribute("aria-busy", "true");
  setError(st, root, null);
  try {
    const view = await act(st.id, st.token, move, (message) => setError(st, root, message, at));
    if (view) {
      st.ownSeq = Math.max(st.ownSeq, view.last_event);
      setView(st, view);
    }
    st.error = null;
  } catch (error) {
    st.error = { message: C.withCardText(errorText(error)), at };
  } finally {
    st.busy = false;
    render(st, root);
    root.removeAttribute("aria-busy");
  }
}

async function takeSeat(st, root, body) {
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
async function fillWithBots(st, root, kind) {
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

function errorBox(st, at) {
  if (!st.error || st.error.at !== at) return null;
  const retrying = st.error.message === UNREACHABLE;
  return h(
    "p",
    { class: "error here" + (retrying ? " retrying" : ""), role: "alert", id: "action-error", dataset: { at } },
    h("span", { class: "error-text" }, st.error.message + (retrying ? "…" : "")),
    retrying ? null : h("button", { type: "button", class: "link", "aria-label": "Dismiss the message", dataset: { key: "dismiss-error" }, onclick: () => setError(st, st.root, null) }, "×"),
  );
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
    playing ? scoresPanel(st) : null,
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

function focusMoves(root, key) {
  const cards = key && key.startsWith("card-") ? root.querySelector(".hand-cards button.card") : null;
  const target = cards || root.querySelector(".actions button:not(:disabled)") || root.querySelector("#moves") || root.querySelector("#turn");
  if (target) target.focus();
}

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

function shortcut(st, root, e) {
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

/** The round just ended (its `round_ended` event): every seat's hand as counted, its points
 * and its total; the table comes back when the person continues. */
function summaryPanel(st, root) {
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
        render(st, root);
        focusMoves(root);
      }, { class: "primary" }),
    ),
  );
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

/** What is the person's to do now: "turn" (their move: a turn, the first upcard offered
 * to them, a discard owed), "answer" (they may claim the upcard before another seat draws),
 * or "none"; and the words that say so. */
function yourPart(st) {
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

function statusLine(st) {
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

function botChoice(st) {
  const select = h("select", { name: "bot", dataset: { key: "bot-kind" }, onchange: (e) => (st.botKind = e.target.value) });
  fillBotOptions(select, st.botNames || []);
  if (st.botKind) select.value = st.botKind;
  return select;
}

function waitingPanel(st, root) {
  const v = st.view;
  const open = v.seats.filter((s) => !s.taken);
  const hasSeat = st.token && typeof v.seat === "number";
  // The table's host: whoever holds its first seat (the one who created it, in the lobby).
  const host = hasSeat && v.seat === 0;
  const shown = names(v);
  let nameInput;
  let botSelect;
  return h(
    "section",
    { class: "waiting", "aria-label": "Seats" },
    h("h2", {}, `Waiting for players (${v.seats.length - open.length} of ${v.seats.length} seated)`),
    h("ol", { class: "seat-list" }, v.seats.map((s) => h("li", { class: s.taken ? "taken" : "open", dataset: { seat: s.seat } }, s.taken ? shown[s.seat] || "taken" : "open seat", v.seat === s.seat ? " (you)" : ""))),
    open.length && !hasSeat && !st.watch
      ? h(
          "form",
          {
            class: "inline",
            onsubmit: (e) => {
              e.preventDefault();
              takeSeat(st, root, { name: nameInput.value });
            },
          },
          h("label", {}, "Your name ", (nameInput = h("input", { name: "name", required: true, maxlength: 40, autocomplete: "nickname", value: st.joinName || "", dataset: { key: "join-name" }, oninput: (e) => (st.joinName = e.target.value) }))),
          h("button", { type: "submit", dataset: { key: "join" } }, "Join"),
        )
      : null,
    open.length && host && (st.botNames || []).length
      ? h(
          "form",
          {
            class: "inline",
            onsubmit: (e) => {
              e.preventDefault();
              fillWithBots(st, root, botSelect.value);
            },
          },
          h("label", {}, "House bot ", (botSelect = botChoice(st))),
          h("button", { type: "submit", dataset: { key: "fill" } }, `Fill ${open.length} open seat${open.length === 1 ? "" : "s"} with house bots`),
        )
      : null,
    errorBox(st, "seats"),
    h("p", { class: "muted" }, "Share this page's address: others join from it, or watch."),
  );
}

function seatsPanel(st, v) {
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

function tablePanel(st, v) {
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

function visibleHand(st) {
  return C.sortCards(C.without(st.view.hand || [], st.staged.flat()), st.sortBy);
}

function selectedCards(st) {
  const hand = visibleHand(st);
  return st.selected.map((i) => hand[i]).filter(Boolean);
}

function handPanel(st, root) {
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
          render(st, root);
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
              render(st, root);
            },
          },
        }),
      ),
    ),
  );
}

/** The person's answer to an upcard offered before another seat's turn ("mayi.claims"):
 * "ask" (every time), "useful" (only for a card that could join the hand's melds or the table's;
 * the others are passed at once), "pass" (pass every one at once). */
export const CLAIM_CHOICES = { ask: "Ask me every time", useful: "Ask me only for cards I can use", pass: "Pass automatically" };
const PACE_CHOICES = { slow: "Slow", normal: "Normal", fast: "Fast", instant: "At once" };
/** A sound when the move becomes the person's ("mayi.sound"; off unless they choose it). */
const SOUND_CHOICES = { off: "Off", on: "On" };

let audio = null;

/** A short tone (made by the Web Audio API: no file to load), if the person chose sounds. */
function turnSound(always = false) {
  if (!always && localStorage.getItem("mayi.sound") !== "on") return;
  try {
    audio = audio || new AudioContext();
    if (audio.state === "suspended") audio.resume();
    const tone = audio.createOscillator();
    const gain = audio.createGain();
    const now = audio.currentTime;
    tone.frequency.value = 660;
    gain.gain.setValueAtTime(0.2, now);
    gain.gain.exponentialRampToValueAtTime(0.001, now + 0.3);
    tone.connect(gain).connect(audio.destination);
    tone.start(now);
    tone.stop(now + 0.3);
  } catch (_) {
    /* no sound in this browser: the tab's title still says it */
  }
}

function claimChoice() {
  const chosen = localStorage.getItem("mayi.claims");
  return chosen in CLAIM_CHOICES ? chosen : "ask";
}

function settingsPanel(st, root) {
  const choice = (label, key, store, choices, current, then = null) =>
    h(
      "div",
      { class: "field" },
      h("label", { class: "label", for: key }, label),
      h(
        "select",
        {
          id: key,
          dataset: { key },
          onchange: (e) => {
            localStorage.setItem(store, e.target.value);
            if (then) then(e.target.value); // (a sound chosen: heard once now, within the person's gesture)
            render(st, root);
          },
        },
        Object.entries(choices).map(([value, words]) => h("option", { value, selected: value === current }, words)),
      ),
    );
  return h(
    "section",
    { class: "settings", "aria-label": "Table settings" },
    h("h2", {}, "Settings"),
    h(
      "div",
      { class: "fields" },
      st.token ? choice("Upcards others discard", "claims-choice", "mayi.claims", CLAIM_CHOICES, claimChoice()) : null,
      choice("Others' moves", "pace-choice", "mayi.pace", PACE_CHOICES, localStorage.getItem("mayi.pace") in PACES ? localStorage.getItem("mayi.pace") : "normal"),
      st.token ? choice("Sound on your turn", "sound-choice", "mayi.sound", SOUND_CHOICES, localStorage.getItem("mayi.sound") === "on" ? "on" : "off", (value) => value === "on" && turnSound(true)) : null,
    ),
    st.token
      ? h(
          "details",
          { class: "shortcuts" },
          h("summary", {}, "Keyboard shortcuts"),
          h(
            "ul",
            {},
            SHORTCUTS.map(([key, , words]) => h("li", {}, h("kbd", {}, key.toUpperCase()), ` ${words}`)),
            h("li", {}, h("kbd", {}, "←"), " ", h("kbd", {}, "→"), " the previous, the next card of the hand; ", h("kbd", {}, "Space"), " selects it"),
          ),
        )
      : null,
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
function autoPass(st, root) {
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

function button(label, key, onclick, extra = {}) {
  const keys = SHORTCUTS.find(([, k]) => k === key);
  return h("button", { type: "button", dataset: { key }, onclick, "aria-keyshortcuts": keys ? keys[0].toUpperCase() : false, ...extra }, label);
}

function actionsPanel(st, root) {
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

/** The staged melds against the contract: the counts, and what is missing or wrong, in words. */
function contractCheck(st) {
  const v = st.view;
  const contract = v.round.contract;
  const checks = st.staged.map((m) => C.meldCheck(m, V.variant(v.variant)));
  const books = checks.filter((c) => c.type === "book" && !c.problem).length;
  const runs = checks.filter((c) => c.type === "run" && !c.problem).length;
  const problems = checks.filter((c) => c.problem).map((c) => c.problem);
  const runSuits = st.staged.filter((m, i) => checks[i].type === "run").map((m) => C.suitOf(m.find((c) => !C.isJoker(c))));
  if (new Set(runSuits).size < runSuits.length) problems.push("Two runs of one contract must be of different suits.");
  const bookRanks = st.staged.filter((m, i) => checks[i].type === "book").map((m) => C.rankOf(m.find((c) => !C.isJoker(c))));
  const rules = V.variant(v.variant);
  if (rules && rules.distinct_book_ranks && new Set(bookRanks).size < bookRanks.length) problems.push(`Two books of one contract must be of different ranks in ${rules.title}.`);
  const parts = [];
  if (contract.books) parts.push(`${books} of ${contract.books} book${contract.books === 1 ? "" : "s"}`);
  if (contract.runs) parts.push(`${runs} of ${contract.runs} run${contract.runs === 1 ? "" : "s"}`);
  const over = [];
  if (books > contract.books) over.push(`${books - contract.books} book${books - contract.books === 1 ? "" : "s"} too many`);
  if (runs > contract.runs) over.push(`${runs - contract.runs} run${runs - contract.runs === 1 ? "" : "s"} too many`);
  if (over.length) problems.push(`The contract is ${contract.text}: ${over.join(", ")}.`);
  const complete = !problems.length && books === contract.books && runs === contract.runs;
  return { checks, parts, problems, complete };
}

function matchingGoDown(st, goDowns) {
  const key = (melds) => melds.map((m) => [...m].sort().join(",")).sort().join("|");
  const mine = key(st.staged);
  return goDowns.find((m) => key(m.melds) === mine) || null;
}

function goDownPanel(st, root, goDowns, chosen) {
  const v = st.view;
  const contract = v.round.contract;
  const can = goDowns.length > 0;
  const exact = matchingGoDown(st, goDowns);
  const check = contractCheck(st);
  const selection = C.meldCheck(chosen, V.variant(v.variant));
  const status = can
    ? "Your hand meets the contract: you may go down now."
    : "Your hand does not meet the contract yet (no way to go down is among your legal moves).";
  let next;
  if (chosen.length) next = selection.problem || `Selected: ${chosen.map(C.cardText).join(" ")}, a ${selection.type}. Make it a meld.`;
  else if (check.complete) next = "Your melds make the contract: go down.";
  else if (!st.staged.length) next = "Select the cards of a meld, then make it a meld.";
  else next = "Select the cards of the next meld.";
  return h(
    "div",
    { class: "go-down" },
    h("h3", {}, "Go down"),
    h("p", { class: "contract-status", dataset: { met: String(can) } }, `Contract: ${contract.text}. `, status),
    st.staged.length
      ? h(
          "ol",
          { class: "staged", "aria-label": "Melds being made" },
          st.staged.map((meld, i) =>
            h(
              "li",
              { dataset: { type: check.checks[i].type || "none" } },
              h("span", { class: "cards" }, meld.map((c) => C.cardFace(c))),
              ` ${check.checks[i].type && !check.checks[i].problem ? check.checks[i].type : "not a meld"} `,
              button("Take back", `unstage-${i}`, () => {
                st.staged.splice(i, 1);
                st.selected = [];
                render(st, root);
              }),
            ),
          ),
        )
      : null,
    h("p", { class: "muted", id: "staged-count" }, `Melds made: ${check.parts.join(", ")}.`),
    h("p", { class: "meld-check" + (selection.problem || check.problems.length ? " problem-text" : ""), id: "meld-check", "aria-live": "polite" }, [next, ...check.problems].join(" ")),
    h(
      "div",
      { class: "buttons" },
      button("Make a meld of the selected cards", "stage", () => {
        if (!chosen.length || selection.problem) return;
        const meld = selection.type === "run" ? C.orderRun(chosen) : chosen;
        st.staged.push(meld);
        st.selected = [];
        setError(st, root, null);
      }, { disabled: !chosen.length || Boolean(selection.problem) }),
      can ? button("Use the suggested melds", "suggest", () => {
        st.staged = goDowns[0].melds.map((m) => [...m]);
        st.selected = [];
        render(st, root);
      }) : null,
      button("Go down", "go-down", () => {
        if (!check.complete) return;
        const move = exact || { type: "go_down", melds: st.staged };
        send(st, root, move, "go-down");
      }, { disabled: !check.complete, class: "primary" }),
    ),
    errorBox(st, "go-down"),
  );
}

function scoresPanel(st) {
  const v = st.view;
  if (!v.results.length && v.status !== "finished") return null;
  const n = names(v);
  return h(
    "section",
    { class: "scores", "aria-label": "Scores" },
    h("h2", {}, "Scores"),
    h(
      "div",
      { class: "wide", tabindex: "0", role: "region", "aria-label": "Scores by round" },
      h(
      "table",
      { class: "score-table" },
      h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Round"), v.seats.map((s) => h("th", { scope: "col" }, seatName(n, s.seat))))),
      h(
        "tbody",
        {},
        v.results.map((r) => h("tr", { dataset: { round: r.round } }, h("th", { scope: "row" }, String(r.round)), r.scores.map((s, i) => h("td", { class: r.out === i ? "out" : "" }, String(s), r.out === i ? " (out)" : "")))),
      ),
      h("tfoot", {}, h("tr", {}, h("th", { scope: "row" }, "Total"), v.seats.map((s) => h("td", { class: "total" }, String(s.total))))),
      ),
    ),
    v.status === "finished" ? h("p", { class: "places" }, "Places: ", v.places.map((p, i) => `${seatName(n, i)} ${p}`).join(", ")) : null,
  );
}

function logPanel(st) {
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
