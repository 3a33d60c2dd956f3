// The scores of a game so far: a row a round played, each seat's points (the seat that went
// out marked), the totals below. The table and the replay show the same table.
import { h } from "./dom.js";
import { seatName } from "./events.js";

/** The scores section: ``names`` (distinct, by seat), ``results`` (``{round, out, scores}``
 * a round), ``totals`` by seat, and ``after`` (nodes shown below the table, if any). */
export function scoresSection(names, results, totals, ...after) {
  return h(
    "section",
    { class: "scores", "aria-label": "Scores" },
    h("h2", {}, "Scores"),
    h(
      "div",
      { class: "wide", tabindex: "0", role: "region", "aria-label": "Scores by round" },
      h(
        "table",
        { class: "score-table" },
        h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Round"), names.map((_, i) => h("th", { scope: "col" }, seatName(names, i))))),
        h(
          "tbody",
          {},
          results.map((r) =>
            h(
              "tr",
              { dataset: { round: r.round } },
              h("th", { scope: "row" }, String(r.round)),
              r.scores.map((s, i) => h("td", { class: r.out === i ? "out" : "" }, String(s), r.out === i ? " (out)" : "")),
            ),
          ),
        ),
        h("tfoot", {}, h("tr", {}, h("th", { scope: "row" }, "Total"), totals.map((t) => h("td", { class: "total" }, String(t))))),
      ),
    ),
    ...after,
  );
}
