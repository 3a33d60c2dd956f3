// The replay of a finished game (GET /v1/games/{id}/replay): every event, with every
// private detail, stepped through one at a time. The page rebuilds the table from the events.
import { errorText, games } from "./api.js";
import * as C from "./cards.js";
import { h, replace, showError } from "./dom.js";
import { describeEvent, distinctNames, plural, seatName } from "./events.js";
import { scoresSection } from "./scores.js";
import * as V from "./variants.js";

/** Autoplay's pace: ms an event, by the person's choice. */
const SPEEDS = { slow: 2000, normal: 1000, fast: 400 };

export function mountReplay(root, gameId) {
  const st = { id: gameId, replay: null, states: [], step: 0, sortBy: "suit", closed: false, playing: null, speed: "normal" };
  const onKey = (e) => {
    if (!st.replay || e.target.closest("input, select, textarea")) return;
    if (e.key === "ArrowRight") go(st, root, st.step + 1);
    else if (e.key === "ArrowLeft") go(st, root, st.step - 1);
    else if (e.key === "Home") go(st, root, 0);
    else if (e.key === "End") go(st, root, st.states.length - 1);
    else return;
    e.preventDefault();
  };
  document.addEventListener("keydown", onKey);
  replace(root, h("h1", {}, "Replay"), h("p", { class: "muted" }, "Loading the replay…"));
  games
    .replay(gameId)
    .then((replay) => {
      if (st.closed) return;
      st.replay = { ...replay, names: distinctNames(replay.names) };
      st.states = rebuild(st.replay);
      st.step = 0;
      render(st, root);
    })
    .catch((error) => {
      replace(root, h("h1", {}, "Replay"), h("p", { class: "problem", role: "alert", text: errorText(error) }), h("p", {}, h("a", { href: `#/watch/${encodeURIComponent(gameId)}` }, "Watch the table"), " · ", h("a", { href: "#/" }, "Lobby")));
    });
  return () => {
    st.closed = true;
    stop(st);
    document.removeEventListener("keydown", onKey);
  };
}

function stop(st) {
  clearInterval(st.playing);
  st.playing = null;
}

/** Autoplay: one event forward each SPEEDS[speed] ms, until the end or a pause. */
function play(st, root) {
  stop(st);
  if (st.step >= st.states.length - 1) st.step = 0;
  st.playing = setInterval(() => {
    if (st.closed) return stop(st);
    go(st, root, st.step + 1, { keep: true });
    if (st.step >= st.states.length - 1) {
      stop(st);
      render(st, root);
    }
  }, SPEEDS[st.speed]);
  render(st, root);
}

function go(st, root, step, { keep = false } = {}) {
  if (!keep) stop(st);
  st.step = Math.max(0, Math.min(st.states.length - 1, step));
  showError(null);
  render(st, root);
}

/** The table after each event: states[0] before any, states[i] after events[i-1]. */
export function rebuild(replay) {
  const n = replay.names.length;
  let s = { round: null, contract: "", hands: Array.from({ length: n }, () => []), melds: [], pile: [], results: [], totals: Array(n).fill(0), down: Array(n).fill(false), stock: null };
  const states = [s];
  for (const event of replay.events) {
    s = structuredClone(s);
    const d = event.data || {};
    const seat = event.seat;
    switch (event.type) {
      case "round_started":
        s.round = d.round;
        s.contract = d.contract.text;
        s.hands = Array.from({ length: n }, () => []);
        s.melds = [];
        s.pile = [d.upcard];
        s.down = Array(n).fill(false);
        break;
      case "dealt":
        s.hands[seat] = [...event.private.hand];
        break;
      case "took_upcard":
      case "claim_won":
        s.hands[seat].push(d.card);
        s.pile.pop();
        break;
      case "drew":
        if (event.private) s.hands[seat].push(event.private.card);
        break;
      case "stock_rebuilt":
        s.pile = s.pile.slice(-1);
        break;
      case "went_down":
        s.down[seat] = true;
        for (const meld of d.melds) {
          s.hands[seat] = C.without(s.hands[seat], meld.cards);
          s.melds.push(meld);
        }
        break;
      case "laid_off":
        for (const lay of d.lay_offs) s.hands[seat] = C.without(s.hands[seat], lay.cards);
        for (const meld of d.melds) {
          const at = s.melds.findIndex((m) => m.id === meld.id);
          if (at >= 0) s.melds[at] = meld;
          else s.melds.push(meld);
        }
        break;
      case "discarded":
        s.hands[seat] = C.without(s.hands[seat], [d.card]);
        s.pile.push(d.card);
        break;
      case "round_ended":
        s.hands = d.hands.map((hand) => [...hand]);
        s.results.push({ round: d.round, scores: d.scores, out: d.out });
        s.totals = d.totals;
        break;
      case "game_ended":
        s.totals = d.totals;
        s.places = d.places;
        break;
      default:
        break;
    }
    states.push(s);
  }
  return states;
}

/** Who won (the places of `game_ended`; a shared first place names each), with their total. */
function winnerLine(r, s) {
  const first = s.places.map((p, i) => [p, i]).filter(([p]) => p === 1).map(([, i]) => `${seatName(r.names, i)} (${plural(s.totals[i], "point")})`);
  return h("p", { class: "winner", id: "winner" }, `${first.length > 1 ? "Winners" : "Winner"}: ${first.join(" and ")}.`);
}

function render(st, root) {
  const r = st.replay;
  const s = st.states[st.step];
  const last = st.states.length - 1;
  const event = st.step > 0 ? r.events[st.step - 1] : null;
  const rounds = r.events.map((e, i) => [e, i]).filter(([e]) => e.type === "round_started");
  const variant = V.title(r.variant);
  const nav = (label, key, step, disabled) => h("button", { type: "button", dataset: { key }, disabled, onclick: () => go(st, root, step) }, label);
  replace(
    root,
    h("h1", {}, `Replay · ${variant} · table `, h("code", { class: "game-id" }, r.id)),
    h("p", { class: "meta" }, h("a", { href: `#/watch/${encodeURIComponent(r.id)}` }, "The table"), " · seed ", h("code", {}, r.seed)),
    h(
      "div",
      { class: "replay-controls", role: "group", "aria-label": "Step through the game" },
      nav("« Start", "first", 0, st.step === 0),
      nav("◀ Back", "back", st.step - 1, st.step === 0),
      nav("Forward ▶", "forward", st.step + 1, st.step === last),
      nav("End »", "last", last, st.step === last),
      h(
        "button",
        { type: "button", dataset: { key: "autoplay" }, "aria-pressed": String(Boolean(st.playing)), class: "toggle", onclick: () => (st.playing ? (stop(st), render(st, root)) : play(st, root)) },
        st.playing ? "Pause" : "Play",
      ),
      h(
        "label",
        {},
        " Speed ",
        h(
          "select",
          {
            id: "replay-speed",
            dataset: { key: "replay-speed" },
            onchange: (e) => {
              st.speed = e.target.value;
              if (st.playing) play(st, root);
            },
          },
          Object.keys(SPEEDS).map((speed) => h("option", { value: speed, selected: st.speed === speed }, `${speed} (${SPEEDS[speed] / 1000} s an event)`)),
        ),
      ),
      h(
        "label",
        {},
        " Round ",
        h(
          "select",
          { id: "round-jump", dataset: { key: "round-jump" }, onchange: (e) => go(st, root, Number(e.target.value) + 1) },
          h("option", { value: -1, selected: s.round === null }, "—"),
          rounds.map(([e, i]) => h("option", { value: i, selected: s.round === e.data.round }, `${e.data.round}: ${e.data.contract.text}`)),
        ),
      ),
      h("span", { class: "step", id: "step", "aria-live": "polite" }, `Step ${st.step} of ${last}`),
    ),
    s.places ? winnerLine(r, s) : null,
    h("p", { class: "event-text", id: "event-text" }, event ? describeEvent(event, r.names, r.variant) : "Before the first deal. Use Forward (or the right arrow key)."),
    s.round !== null ? h("p", { class: "round" }, `Round ${s.round}: `, h("strong", {}, s.contract)) : null,
    h(
      "section",
      { class: "replay-hands", "aria-label": "Hands" },
      h("h2", {}, "Hands"),
      h(
        "ul",
        { class: "seat-list" },
        r.names.map((name, i) =>
          h(
            "li",
            { class: "seat" + (event && event.seat === i ? " on-turn" : ""), dataset: { seat: i } },
            h("span", { class: "name" }, seatName(r.names, i)),
            h("span", { class: "total" }, plural(s.totals[i], "point")),
            s.down[i] ? h("span", { class: "badge down" }, "down") : null,
            h("span", { class: "cards" }, C.sortCards(s.hands[i], st.sortBy).map((c) => C.cardFace(c))),
          ),
        ),
      ),
    ),
    h(
      "section",
      { class: "table", "aria-label": "Table" },
      h("h2", {}, "Table"),
      h("div", { class: "piles" }, h("div", { class: "pile discard" }, s.pile.length ? C.cardFace(s.pile[s.pile.length - 1]) : h("span", { class: "card empty" }, ""), h("span", { class: "pile-label" }, `Discards: ${s.pile.length}`))),
      s.melds.length
        ? h(
            "ul",
            { class: "melds" },
            s.melds.map((m) => {
              const stands = new Map(m.jokers.map((j) => [j.index, j.stands_for]));
              return h("li", { class: "meld" }, h("span", { class: "meld-label" }, `${m.id}: ${seatName(r.names, m.owner)}'s ${m.type}`), h("span", { class: "cards" }, m.cards.map((c, i) => C.cardFace(c, { standsFor: stands.get(i) || null }))));
            }),
          )
        : h("p", { class: "muted" }, "No melds."),
    ),
    s.results.length ? scoresSection(r.names, s.results, s.totals) : null,
  );
}
