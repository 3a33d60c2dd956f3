// Following the game live: the view read again, the event stream (SSE, or long-polls once a
// stream is refused), and the reconnection.
import { ApiError, errorText, games, seats as seatStore } from "./api.js";
import { h, replace } from "./dom.js";
import { EVENT_TYPES } from "./events.js";
import { enqueue } from "./pacing.js";
import { addLog, redraw, setView } from "./state.js";

/** A long-poll's wait (s) when the event stream is refused. */
const POLL_WAIT = 25;

/** Read the game's view again and redraw (one read at a time: a call meanwhile reads once more). */
export async function refresh(st, root) {
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
    if (!st.closed && st.view) redraw(st, root);
  })();
  try {
    await st.refreshing;
  } finally {
    st.refreshing = null;
  }
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

export function openStream(st, root) {
  st.lastSeq = Math.max(st.lastSeq, st.view.last_event);
  preloadLog(st).then(() => redraw(st, root));
  follow(st, root);
}

/** Follow the game live: by SSE (the browser reconnects by itself, with Last-Event-ID, when
 * a stream ends), or, once a stream is refused (429: this address holds its streams, 503),
 * by long-polling the events (GET .../events?wait=, with the seat's token: counted per seat). */
export function follow(st, root) {
  if (st.closed || !st.view || st.view.status === "finished" || st.stream || st.poller) return;
  if (st.via === "poll") poll(st, root);
  else listen(st, root);
}

/** Stop following the game (offline, or the table closed). */
export function stopFollowing(st, root) {
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

/** Say in the header whether the table follows the game live, and how. */
export function setLive(st, root, state, via = st.via) {
  st.live = state;
  st.via = via;
  const badge = root.querySelector("#live");
  if (!badge) return;
  badge.textContent = state === true ? "live" : state === "reconnecting" ? "reconnecting…" : "not live";
  badge.dataset.state = String(state);
  badge.dataset.via = via;
  badge.title = state === true ? (via === "poll" ? "following the game by long-polling its events" : "following the game by its event stream") : "";
}
