// A table waiting for players: its seats, a seat to take, the open seats filled with house bots.
import { h } from "./dom.js";
import { fillBotOptions } from "./lobby.js";
import { errorBox, fillWithBots, takeSeat } from "./moves.js";
import { names } from "./state.js";

function botChoice(st) {
  const select = h("select", { name: "bot", dataset: { key: "bot-kind" }, onchange: (e) => (st.botKind = e.target.value) });
  fillBotOptions(select, st.botNames || []);
  if (st.botKind) select.value = st.botKind;
  return select;
}

export function waitingPanel(st, root) {
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
