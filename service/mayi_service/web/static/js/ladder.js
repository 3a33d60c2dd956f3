// The bot ladder (docs/ladder.md): the leaderboard of a variant, its recent matches, and a
// bot's rating history. Read-only: bots enter through the API with their own tokens.
import { api, errorText } from "./api.js";
import { h, replace, labelCells } from "./dom.js";
import { plural } from "./events.js";
import * as V from "./variants.js";


const ladder = {
  board: (variant) => api("GET", `/v1/ladder?variant=${variant}`),
  matches: (variant, status) => api("GET", `/v1/ladder/matches?variant=${variant}&status=${status}&limit=20`),
  bot: (variant, botId) => api("GET", `/v1/ladder/bots/${encodeURIComponent(botId)}?variant=${variant}`),
  history: (variant, botId) => api("GET", `/v1/ladder/bots/${encodeURIComponent(botId)}/history?variant=${variant}&limit=100`),
};

const fixed = (x, digits = 1) => (x === null || x === undefined ? "—" : Number(x).toFixed(digits));
const when = (seconds) => (seconds ? new Date(seconds * 1000).toLocaleString() : "—");

/** `#/ladder[/VARIANT[/bot/BOT_ID]]`. */
export function mountLadder(root, variant, botId) {
  if (!V.variant(variant) && V.variants().length) variant = V.variants()[0].name;
  const st = { closed: false };
  const load = () => (botId ? showBot(root, st, variant, botId) : showBoard(root, st, variant));
  replace(root, h("h1", {}, "Ladder"), h("p", { class: "muted" }, "Loading…"));
  load();
  const timer = setInterval(load, 10000);
  return () => {
    st.closed = true;
    clearInterval(timer);
  };
}

function tabs(variant, botId) {
  return h(
    "nav",
    { class: "tabs", "aria-label": "Variant" },
    V.variants().map(({ name: key, title: label }) =>
      h("a", { href: botId ? `#/ladder/${key}/bot/${encodeURIComponent(botId)}` : `#/ladder/${key}`, class: "button toggle", "aria-current": key === variant ? "page" : false }, label),
    ),
  );
}

function problem(root, title, error) {
  replace(root, h("h1", {}, title), h("p", { class: "problem", role: "alert", text: errorText(error) }));
}

async function showBoard(root, st, variant) {
  let board;
  let finished;
  let playing;
  try {
    [board, finished, playing] = await Promise.all([ladder.board(variant), ladder.matches(variant, "finished"), ladder.matches(variant, "playing")]);
  } catch (error) {
    return problem(root, "Ladder", error);
  }
  if (st.closed) return;
  const names = new Map(board.standings.map((s) => [s.bot_id, s.name]));
  replace(
    root,
    h("h1", {}, `Ladder · ${V.title(variant)}`),
    tabs(variant, null),
    h(
      "p",
      { class: "muted" },
      "Bots play each other around the clock; the board orders them by a conservative rating (mu − 3 sigma). Bots enter with their token: ",
      h("a", { href: "/docs/" }, "POST /v1/ladder/entries"),
      ".",
    ),
    h(
      "section",
      { "aria-label": "Leaderboard" },
      h("h2", {}, "Leaderboard"),
      board.standings.length
        ? labelCells(h(
            "table",
            { class: "game-list leaderboard" },
            h("thead", {}, h("tr", {}, ["#", "Bot", "Rating", "mu ± sigma", "Games", "Wins", "Mean score"].map((c) => h("th", { scope: "col" }, c)))),
            h(
              "tbody",
              {},
              board.standings.map((s) =>
                h(
                  "tr",
                  { dataset: { bot: s.bot_id } },
                  h("td", {}, String(s.rank)),
                  h("td", { class: "names" }, h("a", { href: `#/ladder/${variant}/bot/${encodeURIComponent(s.bot_id)}` }, s.name), s.house ? h("span", { class: "badge" }, "house") : null, s.provisional ? h("span", { class: "badge", title: "fewer than 10 games" }, "provisional") : null),
                  h("td", { class: "rating" }, fixed(s.rating, 2)),
                  h("td", {}, `${fixed(s.mu, 1)} ± ${fixed(s.sigma, 1)}`),
                  h("td", {}, String(s.games)),
                  h("td", {}, String(s.wins)),
                  h("td", {}, fixed(s.mean_score, 1)),
                ),
              ),
            ),
          ))
        : h("p", { class: "muted" }, "Nobody has entered this ladder yet."),
    ),
    matchesSection("Playing now", playing.matches, names, variant),
    matchesSection("Recent matches", finished.matches, names, variant),
  );
}

function matchesSection(title, matches, names, variant) {
  return h(
    "section",
    { "aria-label": title, class: "matches" },
    h("h2", {}, title),
    matches.length
      ? labelCells(h(
          "table",
          { class: "game-list" },
          h("thead", {}, h("tr", {}, ["Match", "Players", ""].map((c) => h("th", { scope: "col" }, c)))),
          h(
            "tbody",
            {},
            matches.map((m) => {
              const seats = m.standings || m.seats;
              const order = [...seats].sort((a, b) => (a.place || 0) - (b.place || 0));
              return h(
                "tr",
                { dataset: { match: m.match_id, game: m.game_id } },
                h("td", {}, when(m.finished_at || m.created_at)),
                h(
                  "td",
                  { class: "names" },
                  order.map((s, i) => [
                    i ? ", " : "",
                    h("a", { href: `#/ladder/${variant}/bot/${encodeURIComponent(s.bot_id)}` }, s.name || names.get(s.bot_id) || s.bot_id),
                    s.place ? ` (${ordinal(s.place)}, ${s.score} pts, ${signed(s.rating_after - s.rating_before)})` : "",
                  ]),
                ),
                h(
                  "td",
                  { class: "links" },
                  m.status === "finished"
                    ? h("a", { href: `#/replay/${encodeURIComponent(m.game_id)}`, class: "button" }, "Replay")
                    : h("a", { href: `#/watch/${encodeURIComponent(m.game_id)}`, class: "button" }, "Watch"),
                ),
              );
            }),
          ),
        ))
      : h("p", { class: "muted" }, "None."),
  );
}

function ordinal(n) {
  return n + (n === 1 ? "st" : n === 2 ? "nd" : n === 3 ? "rd" : "th");
}


function signed(x) {
  return (x >= 0 ? "+" : "−") + Math.abs(x).toFixed(2);
}

async function showBot(root, st, variant, botId) {
  let history;
  let bot;
  try {
    [history, bot] = await Promise.all([ladder.history(variant, botId), ladder.bot(variant, botId)]);
  } catch (error) {
    return problem(root, "Ladder", error);
  }
  if (st.closed) return;
  const name = bot.name || botId;
  const record = `rating ${fixed(bot.rating, 2)} · ${plural(bot.games, "game")}, ${plural(bot.wins, "win")}`;
  const points = history.history;
  replace(
    root,
    h("h1", {}, `${name} · ${V.title(variant)} ladder`),
    tabs(variant, botId),
    h("p", {}, h("a", { href: `#/ladder/${variant}` }, "The leaderboard")),
    bot.entered
      ? h("p", { class: "meta" }, `Rank ${bot.rank} · ${record}`)
      : h("p", { class: "meta" }, `Left this ladder · ${record} (kept: entering again resumes them)`),
    points.length ? sparkline(points.map((p) => p.rating)) : null,
    h(
      "section",
      { "aria-label": "Rating history" },
      h("h2", {}, "Rating history"),
      points.length
        ? labelCells(h(
            "table",
            { class: "game-list history" },
            h("thead", {}, h("tr", {}, ["When", "Place", "Score", "Rating", "mu ± sigma", ""].map((c) => h("th", { scope: "col" }, c)))),
            h(
              "tbody",
              {},
              [...points].reverse().map((p) =>
                h(
                  "tr",
                  { dataset: { match: p.match_id } },
                  h("td", {}, when(p.at)),
                  h("td", {}, `${ordinal(p.place)} of ${p.players}`),
                  h("td", {}, String(p.score)),
                  h("td", {}, fixed(p.rating, 2)),
                  h("td", {}, `${fixed(p.mu, 1)} ± ${fixed(p.sigma, 1)}`),
                  h("td", {}, h("a", { href: `#/replay/${encodeURIComponent(p.game_id)}`, class: "button" }, "Replay")),
                ),
              ),
            ),
          ))
        : h("p", { class: "muted" }, "No rated match yet."),
    ),
  );
}

/** The rating after each match, as a line chart with its axes: the rating (its lowest and
 * highest values marked) up, the matches (first to last) across (SVG built in the DOM: no
 * inline style). */
function sparkline(values) {
  const NS = "http://www.w3.org/2000/svg";
  const width = 340;
  const height = 110;
  const left = 46; // room for the rating's labels
  const bottom = 28; // room for the matches' labels
  const top = 8;
  const right = 8;
  const low = Math.min(...values);
  const high = Math.max(...values);
  const span = high - low || 1;
  const x = (i) => (values.length === 1 ? (left + width - right) / 2 : left + (i * (width - left - right)) / (values.length - 1));
  const y = (v) => height - bottom - ((v - low) * (height - bottom - top)) / span;
  const el = (tag, attrs, text) => {
    const node = document.createElementNS(NS, tag);
    for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
    if (text !== undefined) node.textContent = text;
    return node;
  };
  const svg = el("svg", { viewBox: `0 0 ${width} ${height}`, class: "sparkline", role: "img", "aria-label": `Rating after each match: from ${fixed(values[0], 2)} to ${fixed(values[values.length - 1], 2)} over ${plural(values.length, "match", "matches")} (lowest ${fixed(low, 2)}, highest ${fixed(high, 2)})` });
  const axes = el("g", { class: "axes", "aria-hidden": "true" });
  axes.append(
    el("line", { x1: left, y1: top, x2: left, y2: height - bottom }),
    el("line", { x1: left, y1: height - bottom, x2: width - right, y2: height - bottom }),
    el("text", { x: left - 4, y: y(high) + 4, "text-anchor": "end", class: "tick" }, fixed(high, 1)),
    el("text", { x: left - 4, y: y(low) + 4, "text-anchor": "end", class: "tick" }, fixed(low, 1)),
    el("text", { x: left, y: height - bottom + 12, "text-anchor": "start", class: "tick" }, "1"),
    el("text", { x: width - right, y: height - bottom + 12, "text-anchor": "end", class: "tick" }, String(values.length)),
    el("text", { x: (left + width) / 2, y: height - 4, "text-anchor": "middle", class: "axis-label" }, "match"),
    el("text", { x: 10, y: (top + height - bottom) / 2, "text-anchor": "middle", class: "axis-label", transform: `rotate(-90 10 ${(top + height - bottom) / 2})` }, "rating"),
  );
  svg.append(axes, el("polyline", { points: values.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(" ") }));
  return svg;
}
