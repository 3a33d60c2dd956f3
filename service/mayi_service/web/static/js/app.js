// The web table: a lobby, tables to play or watch, and replays, on the public HTTP API.
// Routes live in the address's fragment: #/ (lobby), #/game/ID (your seat, or join),
// #/watch/ID (spectator: no token is ever sent), #/replay/ID, #/ladder[/VARIANT[/bot/BOT]].
import { showError } from "./dom.js";
import { mountLadder } from "./ladder.js";
import { mountLobby } from "./lobby.js";
import { mountReplay } from "./replay.js";
import { mountTable } from "./table.js";
import { loadVariants, variants } from "./variants.js";

let cleanup = null;

function decode(part) {
  try {
    return decodeURIComponent(part);
  } catch (_) {
    return part; // a malformed escape: taken as written
  }
}

function route() {
  if (cleanup) cleanup();
  cleanup = null;
  showError(null);
  const root = document.getElementById("app");
  const parts = location.hash.replace(/^#\/?/, "").split("/").map(decode);
  const [page, id, third, botId] = parts;
  if (page === "game" && id) cleanup = mountTable(root, id, { watch: false });
  else if (page === "watch" && id) cleanup = mountTable(root, id, { watch: true });
  else if (page === "replay" && id) cleanup = mountReplay(root, id);
  else if (page === "ladder") cleanup = mountLadder(root, id || (variants()[0] || {}).name, third === "bot" ? botId : null);
  else cleanup = mountLobby(root);
}

// The skip link: to the page's content, or what the page names (a table: the hand and moves).
// (Its address is the lobby's only for a browser without this script: the fragment routes.)
document.getElementById("skip-link").addEventListener("click", (e) => {
  e.preventDefault();
  const link = e.currentTarget;
  // data-target: selectors, "|" between them, tried in turn.
  const targets = (link.dataset.target || "").split("|").filter(Boolean);
  const target = targets.map((t) => document.querySelector(t)).find(Boolean) || document.getElementById("app");
  const first = target.matches("button, a, input, select") ? target : target.querySelector("button:not(:disabled), a[href], input, select");
  (first || target).focus();
});

// The variants' titles, claims and rules are read before the first page is drawn (once).
window.addEventListener("hashchange", () => loadVariants().then(route));
loadVariants().then(route);
