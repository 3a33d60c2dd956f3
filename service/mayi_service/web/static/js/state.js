// A table's state: what the page read and holds (the view, the hand's choices, the log).
import * as C from "./cards.js";
import { distinctNames } from "./events.js";

const LOG_SIZE = 60;

/** The state of the table of `gameId`, with the seat's `token` (null: watching); `render(st,
 * root)` draws it (every part of the table redraws through `redraw`). */
export function newState(gameId, watch, token, render) {
  return {
    id: gameId,
    watch,
    token,
    render,
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
}

/** Draw the table `st` in `root` again. */
export function redraw(st, root) {
  st.render(st, root);
}

/** Take `view` as the view read, unless the one held is later (an action's answer that
 * arrives after the stream's events were read): the staged melds, the selection and the
 * fresh cards follow it. */
export function setView(st, view) {
  const old = st.view;
  if (old && old.id === view.id && view.last_event < old.last_event) return;
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
export function roundOf(view) {
  return view.round ? view.round.number : null;
}

/** The card of the person's own `drew` event, when its public form does not say it. */
export function drawnCard(st, event) {
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

/** Add `event` to the log (once, in order, the last `LOG_SIZE` kept). */
export function addLog(st, event) {
  st.lastSeq = Math.max(st.lastSeq, event.seq);
  st.logSeq = Math.max(st.logSeq, event.seq);
  if (st.log.some((e) => e.seq === event.seq)) return;
  st.log.push(event);
  st.log.sort((a, b) => a.seq - b.seq);
  if (st.log.length > LOG_SIZE) st.log.splice(0, st.log.length - LOG_SIZE);
}

/** The seats' names as shown (told apart when two are alike). */
export function names(view) {
  return distinctNames(view.seats.map((s) => s.name));
}
