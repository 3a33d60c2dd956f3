// A table: play (with this browser's seat token) or watch (no token: the public view).
import { ApiError, act, games, houseBotNames, seats as seatStore } from "./api.js";
import * as C from "./cards.js";
import { h, replace, showError } from "./dom.js";
import { EVENT_TYPES, describeEvent, seatName } from "./events.js";
import { fillBotOptions } from "./lobby.js";

const LOG_SIZE = 60;

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
  };
  const clock = setInterval(() => tick(st), 250);
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
    clearTimeout(st.reopen);
    if (st.stream) st.stream.close();
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
          replace(root, h("h1", {}, "Table"), h("p", { class: "problem", text: error.detail || String(error) }), h("p", {}, h("a", { href: "#/" }, "Back to the lobby")));
          return;
        }
        showError(error.detail || String(error));
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
}

async function preloadLog(st) {
  const after = Math.max(0, st.view.last_event - 20);
  try {
    const page = await games.events(st.id, after);
    for (const event of page.events) addLog(st, event);
  } catch (_) {
    /* the log is a nicety */
  }
}

function openStream(st, root) {
  preloadLog(st).then(() => render(st, root));
  listen(st, root);
}

/** Follow the game by SSE from the view's last event. The browser reconnects by itself
 * (with Last-Event-ID) when a stream ends; a stream refused outright (429: too many open
 * streams, 503) closes the EventSource, so the page opens a new one later, backing off. */
function listen(st, root) {
  if (st.closed || st.view.status === "finished") return;
  const source = new EventSource(games.streamUrl(st.id, st.view.last_event));
  st.stream = source;
  const onEvent = (message) => {
    let event;
    try {
      event = JSON.parse(message.data);
    } catch (_) {
      return;
    }
    addLog(st, event);
    refresh(st, root).then(() => {
      if (event.type === "game_ended") source.close();
    });
  };
  for (const type of EVENT_TYPES) source.addEventListener(type, onEvent);
  source.addEventListener("open", () => {
    st.backoff = 0;
    setLive(root, true);
  });
  source.addEventListener("error", () => {
    if (source.readyState !== EventSource.CLOSED) {
      setLive(root, "reconnecting");
      refresh(st, root); // it resumes after the last event it had (Last-Event-ID)
      return;
    }
    setLive(root, false);
    if (st.closed) return;
    st.backoff = Math.min((st.backoff || 1000) * 2, 30000);
    st.reopen = setTimeout(() => refresh(st, root).then(() => st.stream === source && listen(st, root)), st.backoff);
  });
}

function setLive(root, state) {
  const badge = root.querySelector("#live");
  if (!badge) return;
  badge.textContent = state === true ? "live" : state === "reconnecting" ? "reconnecting…" : "not live";
  badge.dataset.state = String(state);
}

function addLog(st, event) {
  if (st.log.some((e) => e.seq === event.seq)) return;
  st.log.push(event);
  st.log.sort((a, b) => a.seq - b.seq);
  if (st.log.length > LOG_SIZE) st.log.splice(0, st.log.length - LOG_SIZE);
}

function names(view) {
  return view.seats.map((s) => s.name);
}

// --- actions ----------------------------------------------------------------

async function send(st, root, move) {
  if (st.busy) return;
  st.busy = true;
  root.setAttribute("aria-busy", "true");
  showError(null);
  root.querySelectorAll(".actions button").forEach((b) => (b.disabled = true));
  try {
    const view = await act(st.id, st.token, move);
    if (view) setView(st, view);
  } catch (error) {
    showError(error.detail || String(error));
  } finally {
    st.busy = false;
    render(st, root);
    root.removeAttribute("aria-busy");
  }
}

async function takeSeat(st, root, body) {
  showError(null);
  try {
    const taken = await games.takeSeat(st.id, body);
    seatStore.set(st.id, { token: taken.token, seat: taken.seat, name: body.name || null });
    st.token = taken.token;
    setView(st, taken.game);
    await refresh(st, root);
  } catch (error) {
    showError(error.detail || String(error));
  }
}

async function fillWithBots(st, root, kind) {
  showError(null);
  try {
    const open = st.view.seats.filter((s) => !s.taken).map((s) => s.seat);
    for (const seat of open) await games.takeSeat(st.id, { house_bot: kind, seat });
  } catch (error) {
    showError(error.detail || String(error));
  }
  await refresh(st, root);
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
  const v = st.view;
  const playing = v.status !== "waiting";
  replace(
    root,
    header(st),
    playing ? seatsPanel(st) : waitingPanel(st, root),
    playing ? tablePanel(st) : null,
    playing && st.token ? handPanel(st, root) : null,
    playing && st.token ? actionsPanel(st, root) : null,
    playing ? scoresPanel(st) : null,
    logPanel(st),
  );
  tick(st);
  setLive(root, st.stream && st.stream.readyState === EventSource.OPEN ? true : v.status === "finished" ? false : "reconnecting");
}

function header(st) {
  const v = st.view;
  const variant = v.variant === "shanghai" ? "Shanghai" : "May I";
  const you = typeof v.seat === "number" ? v.seat : null;
  const role = st.token && you !== null ? `You are ${seatName(names(v), you)} (seat ${you + 1})` : "Watching as a spectator";
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
  const mine = st.token && typeof v.seat === "number" && v.legal && v.legal.length > 0;
  return h(
    "div",
    { class: "status" },
    h("p", { class: "round" }, `Round ${v.round.number} of ${v.round.of}: `, h("strong", {}, v.round.contract.text)),
    h("p", { class: "turn" + (mine ? " yours" : ""), "aria-live": "polite", id: "turn" }, mine ? "Your move. " : "", text),
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
  let nameInput;
  let botSelect;
  return h(
    "section",
    { class: "waiting", "aria-label": "Seats" },
    h("h2", {}, `Waiting for players (${v.seats.length - open.length} of ${v.seats.length} seated)`),
    h("ol", { class: "seat-list" }, v.seats.map((s) => h("li", { class: s.taken ? "taken" : "open" }, s.taken ? s.name || "taken" : "open seat", v.seat === s.seat ? " (you)" : ""))),
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
    open.length && (st.botNames || []).length
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
    h("p", { class: "muted" }, "Share this page's address: others join from it, or watch."),
  );
}

function seatsPanel(st) {
  const v = st.view;
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
        if (v.claim_window && v.claim_window.claims.includes(s.seat)) flags.push(h("span", { class: "badge claim" }, v.variant === "shanghai" ? "buys" : "May I"));
        return h(
          "li",
          { class: "seat" + (s.seat === v.seat ? " me" : "") + (s.seat === v.turn ? " on-turn" : ""), dataset: { seat: s.seat } },
          h("span", { class: "name" }, s.name || `Seat ${s.seat + 1}`, s.seat === v.seat ? " (you)" : ""),
          h("span", { class: "count", dataset: { handCount: s.hand_count } }, `${s.hand_count} card${s.hand_count === 1 ? "" : "s"}`),
          h("span", { class: "total" }, `${s.total} pts`),
          s.claims_left !== null ? h("span", { class: "claims" }, `${s.claims_left} buys left`) : null,
          flags,
        );
      }),
    ),
  );
}

function tablePanel(st) {
  const v = st.view;
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
        v.discard_top ? C.cardFace(v.discard_top, { props: { id: "discard-top" } }) : h("span", { class: "card empty", "aria-label": "no discard" }, ""),
        h("span", { class: "pile-label" }, "Discards: ", h("strong", { id: "discard-count" }, String(v.discard_count))),
      ),
      window
        ? h(
            "div",
            { class: "claim-window" },
            h("span", {}, "Upcard on offer: "),
            C.cardFace(window.card),
            window.discarder !== null ? h("span", {}, ` discarded by ${seatName(n, window.discarder)}.`) : null,
            window.claims.length ? h("span", {}, ` ${v.variant === "shanghai" ? "Buying" : "May I"}: ${window.claims.map((s) => seatName(n, s)).join(", ")}.`) : null,
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
  return h(
    "section",
    { class: "hand", "aria-label": "Your hand" },
    h("h2", {}, `Your hand (${(v.hand || []).length})`, h("span", { class: "sort" }, " Sort: ", sortButton("suit", "by suit"), sortButton("rank", "by rank"))),
    v.held ? h("p", { class: "muted" }, `Taken this turn: ${C.cardText(v.held)} (it may not be laid off this turn).`) : null,
    h(
      "div",
      { class: "hand-cards", role: "group", "aria-label": "Cards: press to select" },
      hand.map((card, i) =>
        C.cardFace(card, {
          tag: "button",
          props: {
            type: "button",
            class: st.selected.includes(i) ? "selected" : "",
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

function button(label, key, onclick, extra = {}) {
  return h("button", { type: "button", dataset: { key }, onclick, ...extra }, label);
}

function actionsPanel(st, root) {
  const v = st.view;
  const legal = v.legal || [];
  const chosen = selectedCards(st);
  const parts = [];
  const claimWord = v.variant === "shanghai" ? "Buy" : "May I";

  for (const move of legal.filter((m) => m.type === "draw")) {
    if (move.source === "stock") parts.push(button("Draw from the stock", "draw-stock", () => send(st, root, move)));
    else parts.push(button(`Take the upcard ${C.cardText(v.discard_top)}`, "draw-discard", () => send(st, root, move)));
  }
  for (const move of legal.filter((m) => m.type === "claim")) {
    const card = v.upcard ? C.cardText(v.upcard) : "";
    const label = move.claim ? (v.phase === "first_offer" ? `Take ${card}` : `${claimWord}! (${card})`) : `Pass on ${card}`;
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
  return h("section", { class: "actions", "aria-label": "Your moves" }, h("h2", {}, "Your moves"), parts);
}

function contractCount(melds) {
  let books = 0;
  let runs = 0;
  for (const m of melds) {
    if (C.guessMeldType(m) === "book") books++;
    else runs++;
  }
  return { books, runs };
}

function matchingGoDown(st, goDowns) {
  const key = (melds) => melds.map((m) => [...m].sort().join(",")).sort().join("|");
  const mine = key(st.staged);
  return goDowns.find((m) => key(m.melds) === mine) || null;
}

function goDownPanel(st, root, goDowns, chosen) {
  const v = st.view;
  const contract = v.round.contract;
  const staged = contractCount(st.staged);
  const can = goDowns.length > 0;
  const exact = matchingGoDown(st, goDowns);
  const status = can
    ? "Your hand meets the contract: you may go down now."
    : "Your hand does not meet the contract yet (no way to go down is among your legal moves).";
  return h(
    "div",
    { class: "go-down" },
    h("h3", {}, "Go down"),
    h("p", { class: "contract-status", dataset: { met: String(can) } }, `Contract: ${contract.text}. `, status),
    st.staged.length
      ? h(
          "ol",
          { class: "staged" },
          st.staged.map((meld, i) =>
            h(
              "li",
              {},
              h("span", { class: "cards" }, meld.map((c) => C.cardFace(c))),
              ` ${C.guessMeldType(meld)} `,
              button("Take back", `unstage-${i}`, () => {
                st.staged.splice(i, 1);
                st.selected = [];
                render(st, root);
              }),
            ),
          ),
        )
      : null,
    h("p", { class: "muted", id: "staged-count" }, `Melds made: ${staged.books} of ${contract.books} books, ${staged.runs} of ${contract.runs} runs.`),
    h(
      "div",
      { class: "buttons" },
      button("Make a meld of the selected cards", "stage", () => {
        if (!chosen.length) return showError("Select the cards of a meld first.");
        const meld = C.guessMeldType(chosen) === "run" ? C.orderRun(chosen) : chosen;
        st.staged.push(meld);
        st.selected = [];
        showError(null);
        render(st, root);
      }, { disabled: !chosen.length }),
      can ? button("Use the suggested melds", "suggest", () => {
        st.staged = goDowns[0].melds.map((m) => [...m]);
        st.selected = [];
        render(st, root);
      }) : null,
      button("Go down", "go-down", () => {
        const move = exact || { type: "go_down", melds: st.staged };
        send(st, root, move);
      }, { disabled: !st.staged.length, class: "primary" }),
    ),
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
    h("ul", { class: "events", "aria-live": "polite" }, st.log.slice().reverse().map((e) => h("li", { dataset: { seq: e.seq, type: e.type } }, describeEvent(e, names(v), v.variant)))),
  );
}
