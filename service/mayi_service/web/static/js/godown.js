// Going down: the melds being made from the hand, checked against the round's contract.
import * as C from "./cards.js";
import { h } from "./dom.js";
import { button } from "./keys.js";
import { errorBox, send, setError } from "./moves.js";
import { redraw } from "./state.js";
import * as V from "./variants.js";

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

export function goDownPanel(st, root, goDowns, chosen) {
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
                redraw(st, root);
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
        redraw(st, root);
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
