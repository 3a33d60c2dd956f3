// A whole game of each variant played through the May I HTTP API, typed only by the types
// that openapi-typescript generates from openapi/openapi.json (src/api.d.ts, by the command
// docs/api.md gives). Several seats each read their view and choose one of its `legal`
// moves, which is sent as it is (a legal entry is the body of its endpoint); meanwhile one
// follower reads the events by long-poll and another by the Server-Sent Events stream, and
// both must have seen the same events, ending with `game_ended`.
//
//   node dist/play.js http://127.0.0.1:8000
//
// No casts, no `any`, no non-null assertions: everything is narrowed from the document's
// unions (the view on `status`, legal moves and events on `type`, problems by `code`).

import assert from "node:assert/strict";
import createClient from "openapi-fetch";
import type { components, paths } from "./api.js";

type Schemas = components["schemas"];
type GameView = Schemas["GameView"];
type PlayingView = Schemas["PlayingView"];
type LegalMove = Schemas["LegalMove"];
type Event = Schemas["Event"];
type Problem = Schemas["Problem"];
type Variant = Schemas["GameCreate"]["variant"];

const base = process.argv[2] ?? process.env["MAYI_URL"] ?? "http://127.0.0.1:8000";
const client = createClient<paths>({ baseUrl: base });

/** The players. (Each round is short: `max_turns` 16 in the table options, so the game ends soon.) */
const NAMES = ["Ann", "Bob", "Cy"];
const MAX_MOVES = 20_000;

const sleep = (seconds: number): Promise<void> => new Promise((done) => setTimeout(done, seconds * 1000));

const auth = (token: string): { Authorization: string } => ({ Authorization: `Bearer ${token}` });

/** A problem the client does not handle: its code and the server's words. */
class ProblemError extends Error {
  constructor(readonly problem: Problem) {
    super(`${problem.status} ${problem.code}: ${problem.detail}`);
  }
}

/** Seconds to wait before asking again, from a problem the game answers "not now" with; else none. */
function waitFor(problem: Problem, response: Response): number | null {
  if (problem.code === "claims_open") return problem.retry_after ?? 0.2;
  if (problem.code === "rate_limited" || problem.code === "busy" || problem.code === "server_busy") {
    return Number(response.headers.get("Retry-After") ?? "1");
  }
  return null;
}

/** The seat that must act now: one the claim window waits for, else the actor. */
function actingSeat(view: PlayingView): number {
  const pending = view.claim_window?.pending ?? [];
  const first = pending[0];
  return view.phase === "draw" && first !== undefined ? first : view.actor;
}

const rank = (card: string): string => card.slice(0, -1);

/** How many cards of ``hand`` share the rank of ``card``. */
const mates = (hand: readonly string[], card: string): number => hand.filter((c) => rank(c) === rank(card)).length;

/**
 * A choice among the legal moves: go down, then lay off; claim or take an upcard that
 * pairs with the hand (while not down); else draw from the stock or pass; discard the
 * card with the fewest mates of its rank (never the joker).
 */
function choose(view: PlayingView, legal: readonly LegalMove[]): LegalMove {
  const hand = view.hand ?? [];
  const me = view.seat === undefined ? undefined : view.seats[view.seat];
  const down = me?.down ?? false;
  const goDown = legal.find((move) => move.type === "go_down");
  if (goDown) return goDown;
  const layOff = legal.find((move) => move.type === "lay_off");
  if (layOff) return layOff;
  const upcard = view.upcard ?? view.discard_top;
  const wanted = upcard !== null && !down && mates(hand, upcard) >= 2;
  let best: LegalMove | undefined;
  let bestScore = Number.POSITIVE_INFINITY;
  for (const move of legal) {
    switch (move.type) {
      case "claim":
        if (move.claim === wanted) return move;
        break;
      case "draw":
        if ((move.source === "discard") === wanted) return move;
        break;
      case "discard": {
        const score = move.card.toUpperCase() === "JK" ? 99 : mates(hand, move.card) * 10 - hand.indexOf(move.card);
        if (score < bestScore) [best, bestScore] = [move, score];
        break;
      }
      case "go_down":
      case "lay_off":
        break;
    }
  }
  const chosen = best ?? legal[0];
  if (chosen === undefined) throw new Error("choose: no legal move");
  return chosen;
}

/** Send ``move``, a legal entry, as the body of its endpoint; the mover's view, or a problem. */
async function send(gameId: string, token: string, move: LegalMove) {
  const options = { params: { path: { game_id: gameId } }, headers: auth(token) };
  switch (move.type) {
    case "draw":
      return client.POST("/v1/games/{game_id}/turn/draw", { ...options, body: move });
    case "discard":
      return client.POST("/v1/games/{game_id}/turn/discard", { ...options, body: move });
    case "claim":
      return client.POST("/v1/games/{game_id}/claims", { ...options, body: move });
    case "go_down":
      return client.POST("/v1/games/{game_id}/melds", { ...options, body: move });
    case "lay_off":
      return client.POST("/v1/games/{game_id}/lay-offs", { ...options, body: move });
  }
}

/** The view of ``gameId`` as the seat of ``token`` sees it. */
async function seatView(gameId: string, token: string): Promise<GameView> {
  for (;;) {
    const { data, error, response } = await client.GET("/v1/games/{game_id}", {
      params: { path: { game_id: gameId } },
      headers: auth(token),
    });
    if (data) return data;
    const wait = waitFor(error, response);
    if (wait === null) throw new ProblemError(error);
    await sleep(wait);
  }
}

/** Every event of ``gameId``, read by long-poll (``wait``) until the game ends. */
async function followByLongPoll(gameId: string): Promise<Event[]> {
  const seen: Event[] = [];
  let after = 0;
  for (;;) {
    const { data, error, response } = await client.GET("/v1/games/{game_id}/events", {
      params: { path: { game_id: gameId }, query: { after, wait: 20 } },
    });
    if (error) {
      const wait = waitFor(error, response);
      if (wait === null) throw new ProblemError(error);
      await sleep(wait);
      continue;
    }
    seen.push(...data.events);
    after = data.last;
    if (data.events.some((event) => event.type === "game_ended")) return seen;
  }
}

/** One Server-Sent Event: its id, its type, and its data (the event, as JSON text). */
interface StreamedEvent {
  id: string;
  event: string;
  data: string;
}

/** Every event of ``gameId`` from its Server-Sent Events stream, reconnecting with
 * ``Last-Event-ID`` if the server closes it early, until the game ends (204, or game_ended). */
async function followByStream(gameId: string): Promise<StreamedEvent[]> {
  const seen: StreamedEvent[] = [];
  for (;;) {
    const last = seen.at(-1);
    const { data, error, response } = await client.GET("/v1/games/{game_id}/events/stream", {
      params: { path: { game_id: gameId }, header: last ? { "Last-Event-ID": last.id } : {} },
      parseAs: "stream",
    });
    if (error) {
      const wait = waitFor(error, response);
      if (wait === null) throw new ProblemError(error);
      await sleep(wait);
      continue;
    }
    if (response.status === 204 || data === null) return seen;
    const decoder = new TextDecoder();
    let text = "";
    for await (const chunk of data) {
      text += decoder.decode(chunk, { stream: true });
      let end = text.indexOf("\n\n");
      while (end >= 0) {
        const block = text.slice(0, end);
        text = text.slice(end + 2);
        end = text.indexOf("\n\n");
        const fields = new Map<string, string>();
        for (const line of block.split("\n")) {
          if (line.startsWith(":")) continue; // a keep-alive comment
          const colon = line.indexOf(":");
          if (colon > 0) fields.set(line.slice(0, colon), line.slice(colon + 1).trimStart());
        }
        const id = fields.get("id");
        const event = fields.get("event");
        const body = fields.get("data");
        if (id !== undefined && event !== undefined && body !== undefined) seen.push({ id, event, data: body });
      }
    }
    if (seen.some((streamed) => streamed.event === "game_ended")) return seen;
  }
}

/** Create a table of ``variant`` for three people and play it to its end; check the followers. */
async function playGame(variant: Variant): Promise<void> {
  const created = await client.POST("/v1/games", {
    body: {
      variant,
      seats: NAMES.length,
      players: NAMES.map((name) => ({ name })),
      options: { max_turns: 16, max_reshuffles: 1 },
    },
  });
  if (created.error) throw new ProblemError(created.error);
  const { game_id: gameId, seats } = created.data;
  const tokens = new Map(seats.map((seat) => [seat.seat, seat.token]));
  const longPoll = followByLongPoll(gameId);
  const stream = followByStream(gameId);

  let view: GameView = created.data.game;
  let moves = 0;
  const counts = new Map<LegalMove["type"], number>();
  while (view.status !== "finished") {
    if (view.status === "waiting") throw new Error(`game ${gameId} is waiting with every seat taken`);
    const seat = actingSeat(view);
    const token = tokens.get(seat);
    if (token === undefined) throw new Error(`no token for seat ${seat}`);
    const mine = await seatView(gameId, token);
    if (mine.status !== "playing") {
      view = mine;
      continue;
    }
    const legal = mine.legal ?? [];
    if (legal.length === 0) {
      view = mine; // nothing to do yet (say a claim window just closed): look again
      continue;
    }
    const move = choose(mine, legal);
    const { data, error, response } = await send(gameId, token, move);
    if (error) {
      const wait = waitFor(error, response);
      if (wait === null && error.code !== "version_conflict" && error.code !== "claim_not_allowed") {
        throw new ProblemError(error);
      }
      await sleep(wait ?? 0);
      view = mine;
      continue;
    }
    view = data;
    counts.set(move.type, (counts.get(move.type) ?? 0) + 1);
    if (++moves > MAX_MOVES) throw new Error(`game ${gameId}: no end after ${MAX_MOVES} moves`);
  }

  const [polled, streamed] = await Promise.all([longPoll, stream]);
  assert.equal(polled.at(-1)?.type, "game_ended");
  assert.equal(streamed.length, polled.length, "the stream and the long-poll saw as many events");
  polled.forEach((event, i) => {
    const same = streamed[i];
    assert.ok(same, `event ${event.seq} is missing from the stream`);
    assert.equal(same.id, String(event.seq));
    assert.equal(same.event, event.type);
    const parsed: unknown = JSON.parse(same.data);
    assert.deepEqual(parsed, event, `event ${event.seq}: the stream's data is the event`);
  });
  const rounds = polled.filter((event) => event.type === "round_ended").length;
  const ended = polled.at(-1);
  const totals = ended?.type === "game_ended" ? ended.data.totals : [];
  assert.equal(rounds, view.round.of, "every round was played");
  assert.deepEqual(view.places.length, NAMES.length);
  const kinds = [...counts].map(([type, count]) => `${type} ${count}`).join(", ");
  console.log(`${variant}: game ${gameId} over after ${moves} moves (${kinds}); ${rounds} rounds; totals ${totals.join(" ")}`);
  console.log(`${variant}: ${polled.length} events, the same by long-poll and by the stream`);
}

const variants: Variant[] = ["may_i", "shanghai"];
for (const variant of variants) await playGame(variant);
console.log(`played ${variants.length} games`);
