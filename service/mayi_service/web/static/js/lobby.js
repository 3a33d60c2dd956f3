// The lobby: create a table, fill it with house bots, join an open seat, list tables to watch.
import { errorText, games, houseBotNames, seats as seatStore } from "./api.js";
import { h, replace, labelCells } from "./dom.js";
import * as V from "./variants.js";

const PAGE_SIZE = 20;

export function mountLobby(root) {
  const st = { status: "waiting", closed: false, page: 1 };
  replace(root, h("h1", {}, "Lobby"), createForm(), h("section", { class: "tables", "aria-label": "Tables", id: "tables" }));
  listTables(st);
  const timer = setInterval(() => listTables(st), 5000);
  return () => {
    st.closed = true;
    clearInterval(timer);
  };
}

function field(label, input, hint) {
  return h("div", { class: "field" }, h("label", { class: "label", for: input.id }, label), input, hint ? h("span", { class: "hint" }, hint) : null);
}

/** The options of a house-bot select, from the service's names (greedy first choice if offered). */
export function fillBotOptions(select, names, before = "", after = "") {
  // The names may arrive after the person chose: their choice stands.
  const preferred = select.dataset.chosen ? null : names.includes("greedy") ? "greedy" : names[0];
  for (const name of names) select.appendChild(h("option", { value: name, selected: name === preferred }, before + name + after));
}

function createForm() {
  const served = V.variants();
  const variant = h("select", { name: "variant", id: "variant" }, served.map((v) => h("option", { value: v.name }, `${v.title} (${v.min_players}–${v.max_players} players)`)));
  const fewest = Math.min(...served.map((v) => v.min_players), 2);
  const most = Math.max(...served.map((v) => v.max_players), 2);
  const seatsIn = h("input", { name: "seats", id: "seats", type: "number", min: fewest, max: most, value: 4, required: true });
  const nameIn = h("input", { name: "name", id: "name", maxlength: 40, required: true, autocomplete: "nickname", placeholder: "Your name" });
  const claimIn = h("input", { name: "claim_seconds", id: "claim-seconds", type: "number", min: 1, max: 86400, step: "any", value: 15 });
  const turnIn = h("input", { name: "turn_seconds", id: "turn-seconds", type: "number", min: 1, max: 86400, step: "any", value: 60 });
  const bots = h("select", { name: "bots", id: "bots", onchange: (e) => (e.target.dataset.chosen = "true") }, h("option", { value: "" }, "no: wait for people"));
  houseBotNames().then((names) => fillBotOptions(bots, names, "yes: ", " bots"));
  const seed = h("input", { name: "seed", id: "seed", pattern: "[0-9a-fA-F]{32,128}", placeholder: "32 to 128 hex digits" });
  const startRound = h("input", { name: "start_round", id: "start-round", type: "number", min: 1, max: 8 });
  const stacked = h("textarea", { name: "stacked_decks", id: "stacked-decks", rows: 3, placeholder: '[["7C", "9D", ...], null]' });
  const problem = h("p", { class: "error here", role: "alert", id: "create-error", hidden: true });
  const showError = (message) => {
    problem.textContent = message || "";
    problem.hidden = !message;
    if (message) problem.scrollIntoView({ block: "nearest" });
  };
  const form = h(
    "form",
    {
      class: "create",
      "aria-labelledby": "create-title",
      onsubmit: async (event) => {
        event.preventDefault();
        showError(null);
        const body = {
          variant: variant.value,
          seats: Number(seatsIn.value),
          options: { claim_seconds: Number(claimIn.value), turn_seconds: Number(turnIn.value) },
          players: [{ name: nameIn.value }],
        };
        const test = {};
        if (seed.value.trim()) test.seed = seed.value.trim();
        if (startRound.value) test.start_round = Number(startRound.value);
        if (stacked.value.trim()) {
          try {
            test.stacked_decks = JSON.parse(stacked.value);
          } catch (_) {
            showError("stacked_decks: not JSON (a list per round of card codes, or null)");
            return;
          }
        }
        if (Object.keys(test).length) body.test = test;
        submit.disabled = true;
        try {
          const created = await games.create(body);
          const mine = created.seats[0];
          seatStore.set(created.game_id, { token: mine.token, seat: mine.seat, name: mine.name });
          if (bots.value) {
            for (let i = 1; i < body.seats; i++) await games.takeSeat(created.game_id, { house_bot: bots.value });
          }
          location.hash = `#/game/${encodeURIComponent(created.game_id)}`;
        } catch (error) {
          showError(errorText(error));
        } finally {
          submit.disabled = false;
        }
      },
    },
    h("h2", { id: "create-title" }, "New table"),
    h("div", { class: "fields" }, field("Your name", nameIn), field("Game", variant), field("Seats", seatsIn), field("Fill the other seats with house bots", bots), field("Claim window (s)", claimIn), field("Turn clock (s)", turnIn)),
    h(
      "details",
      { class: "test-setup" },
      h("summary", {}, "Test set-up (makes the table unrated and reproducible)"),
      h("div", { class: "fields" }, field("Seed", seed), field("Start at round", startRound), field("Stacked decks (JSON)", stacked, "per round, the top of the pack, top first")),
    ),
    h("div", { class: "buttons" }, h("button", { type: "submit", class: "primary", id: "create" }, "Create the table")),
    problem,
  );
  const submit = form.querySelector("#create");
  return form;
}

async function listTables(st) {
  const box = document.getElementById("tables");
  if (!box || st.closed) return;
  const asked = `${st.status}/${st.page}`;
  if (st.listing === asked) return; // still being read (a server slow to answer is retried)
  st.listing = asked;
  let list;
  try {
    list = await games.list({ status: st.status, page: st.page, page_size: PAGE_SIZE });
  } catch (error) {
    st.listing = null;
    replace(box, h("h2", {}, "Tables"), h("p", { class: "problem", role: "status", text: errorText(error) }));
    return;
  }
  st.listing = null;
  if (st.closed || asked !== `${st.status}/${st.page}`) return; // another tab or page was asked for meanwhile
  const tab = (status, label) =>
    h(
      "button",
      {
        type: "button",
        class: "toggle",
        "aria-pressed": String(st.status === status),
        dataset: { key: "tab-" + status },
        onclick: () => {
          st.status = status;
          st.page = 1;
          listTables(st);
        },
      },
      label,
    );
  const mine = seatStore.all();
  const pages = Math.max(1, Math.ceil(list.total / PAGE_SIZE));
  replace(
    box,
    h("h2", {}, "Tables"),
    h("div", { class: "tabs", role: "group", "aria-label": "Which tables" }, tab("waiting", "Waiting for players"), tab("playing", "Playing"), tab("finished", "Finished")),
    list.games.length
      ? labelCells(h(
          "table",
          { class: "game-list" },
          h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Table"), h("th", { scope: "col" }, "Game"), h("th", { scope: "col" }, "Players"), h("th", { scope: "col" }, h("span", { class: "visually-hidden" }, "Open")))),
          h(
            "tbody",
            {},
            list.games.map((g) => {
              const id = encodeURIComponent(g.id);
              const open = g.names.filter((n) => n === null).length;
              const links = [];
              if (mine[g.id] && g.status !== "finished") links.push(h("a", { href: `#/game/${id}`, class: "button", dataset: { key: `mine-${g.id}` } }, "Your seat"));
              else if (g.status === "waiting" && open) links.push(h("a", { href: `#/game/${id}`, class: "button", dataset: { key: `join-${g.id}` } }, "Join"));
              if (g.status !== "waiting") links.push(h("a", { href: `#/watch/${id}`, class: "button", dataset: { key: `watch-${g.id}` } }, "Watch"));
              if (g.status === "finished") links.push(h("a", { href: `#/replay/${id}`, class: "button", dataset: { key: `replay-${g.id}` } }, "Replay"));
              return h(
                "tr",
                { dataset: { game: g.id } },
                h("td", {}, h("code", {}, g.id.slice(0, 8))),
                h("td", {}, V.title(g.variant), g.rated ? "" : " (test)"),
                h("td", { class: "names" }, g.names.map((n, i) => [i ? ", " : "", n === null ? h("em", {}, "open") : n])),
                h("td", { class: "links" }, links),
              );
            }),
          ),
        ))
      : h("p", { class: "muted" }, "No tables here."),
    pages > 1
      ? h(
          "div",
          { class: "pager" },
          h("button", { type: "button", dataset: { key: "newer" }, disabled: st.page <= 1, onclick: () => ((st.page -= 1), listTables(st)) }, "Newer"),
          ` page ${st.page} of ${pages} `,
          h("button", { type: "button", dataset: { key: "older" }, disabled: st.page >= pages, onclick: () => ((st.page += 1), listTables(st)) }, "Older"),
        )
      : null,
  );
}
