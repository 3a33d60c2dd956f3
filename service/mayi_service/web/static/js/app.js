// The web table: a lobby, tables to play or watch, and replays, on the public HTTP API.
// Routes live in the address's fragment: #/ (lobby), #/game/ID (your seat, or join),
// #/watch/ID (spectator: no token is ever sent), #/replay/ID, #/ladder (a place for it).
import { h, replace, showError } from "./dom.js";
import { mountLobby } from "./lobby.js";
import { mountReplay } from "./replay.js";
import { mountTable } from "./table.js";

let cleanup = null;

function route() {
  if (cleanup) cleanup();
  cleanup = null;
  showError(null);
  const root = document.getElementById("app");
  const parts = location.hash.replace(/^#\/?/, "").split("/").map(decodeURIComponent);
  const [page, id] = parts;
  if (page === "game" && id) cleanup = mountTable(root, id, { watch: false });
  else if (page === "watch" && id) cleanup = mountTable(root, id, { watch: true });
  else if (page === "replay" && id) cleanup = mountReplay(root, id);
  else if (page === "ladder") replace(root, h("h1", {}, "Ladder"), h("p", {}, "The ladder is not part of this service yet."));
  else cleanup = mountLobby(root);
}

window.addEventListener("hashchange", route);
route();
