// The other seats' moves drawn one at a time: the queue of events, the pace, the table as drawn.
import { addLog, redraw } from "./state.js";

/** The other seats' moves that change what the table shows: drawn one at a time (`PACES`). */
const PACED = new Set(["drew", "took_upcard", "claim_won", "discarded", "went_down", "laid_off"]);
/** How long (ms) each of the other seats' moves stays on the table before the next is drawn,
 * by the person's choice ("mayi.pace"); a backlog (a reconnection's catch-up) goes faster. */
export const PACES = { slow: 1400, normal: 800, fast: 350, instant: 0 };
const BACKLOG = 6;
/** How long (ms) the table may show an older state than the view read, waiting for its events. */
const CATCH_UP_MS = 3000;

/** Draw `event` (in order, after those before it): another seat's move on the table stays
 * there `PACES` ms before the next is drawn, with its line in the log. */
export function enqueue(st, root, event) {
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
        redraw(st, root);
        await new Promise((resolve) => setTimeout(resolve, ms));
      } else if (st.pace && event.seq > st.pace.last_event) {
        st.pace = { ...st.pace, last_event: event.seq };
      }
    }
  } finally {
    st.pace = null;
    st.pacing = false;
  }
  if (!st.closed && st.view) redraw(st, root);
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
 * when its events do not come). A new round's view, and a finished game's, wait for their
 * events too: the round's summary comes before the next round's table, and the places
 * after the last round's moves and summary. */
export function shownView(st) {
  if (st.pace) return st.pace;
  const v = st.view;
  if (!st.drawn || v.status === "waiting" || v.last_event <= st.logSeq || v.last_event <= st.ownSeq) {
    st.drawn = v;
    st.logSeq = Math.max(st.logSeq, v.last_event);
  } else if (!st.catchUp) {
    st.catchUp = setTimeout(() => {
      st.catchUp = null;
      if (st.closed || st.pacing) return;
      st.drawn = st.view;
      redraw(st, st.root);
    }, CATCH_UP_MS);
  }
  return st.drawn;
}
