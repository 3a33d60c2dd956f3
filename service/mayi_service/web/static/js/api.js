// The public HTTP API (openapi/openapi.json), and the seat tokens this browser holds.

/** An error answer: `detail` is the problem's words for people, `code` its stable code. */
export class ApiError extends Error {
  constructor(status, problem) {
    const detail = (problem && problem.detail) || `The service answered ${status}`;
    super(detail);
    this.status = status;
    this.code = (problem && problem.code) || "http_" + status;
    this.detail = detail;
    this.problem = problem || {};
  }
}

function randomKey() {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * One request. `token`: the seat token (Authorization: Bearer); `body`: sent as JSON.
 * Actions (POST with a token) carry an Idempotency-Key, and are retried once with the
 * same key on a 503 (docs/api.md: a 503 may have been applied; the same key makes the
 * retry safe). Returns the parsed JSON (null for 204/304); throws ApiError.
 */
export async function api(method, path, { token = null, body = undefined } = {}) {
  const headers = { Accept: "application/json" };
  if (token) headers.Authorization = "Bearer " + token;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (method === "POST" && token) headers["Idempotency-Key"] = randomKey();
  const init = { method, headers, cache: "no-store", body: body === undefined ? undefined : JSON.stringify(body) };
  let response = await fetch(path, init);
  if (response.status === 503 && headers["Idempotency-Key"]) response = await fetch(path, init);
  if (response.status === 204 || response.status === 304) return null;
  let data = null;
  try {
    data = await response.json();
  } catch (_) {
    data = null;
  }
  if (!response.ok) throw new ApiError(response.status, data);
  return data;
}

export const games = {
  list: (params) => api("GET", "/v1/games?" + new URLSearchParams(params)),
  create: (body) => api("POST", "/v1/games", { body }),
  view: (id, token) => api("GET", `/v1/games/${encodeURIComponent(id)}`, { token }),
  takeSeat: (id, body, token = null) => api("POST", `/v1/games/${encodeURIComponent(id)}/seats`, { body, token }),
  events: (id, after) => api("GET", `/v1/games/${encodeURIComponent(id)}/events?after=${after}`),
  replay: (id) => api("GET", `/v1/games/${encodeURIComponent(id)}/replay`),
  streamUrl: (id, after) => `/v1/games/${encodeURIComponent(id)}/events/stream?after=${after}`,
};

/** The request of a legal move: `legal[]` entries are the body to send, less their `type`. */
export function moveRequest(move) {
  const { type, ...body } = move;
  const path = {
    draw: "turn/draw",
    claim: "claims",
    go_down: "melds",
    lay_off: "lay-offs",
    discard: "turn/discard",
  }[type];
  if (!path) throw new Error("unknown move type " + type);
  return { path, body };
}

export function act(id, token, move) {
  const { path, body } = moveRequest(move);
  return api("POST", `/v1/games/${encodeURIComponent(id)}/${path}`, { token, body });
}

// Seat tokens, kept in this browser's localStorage so that a reload resumes the seat.
const STORE = "mayi.seats.v1";

function load() {
  try {
    const data = JSON.parse(localStorage.getItem(STORE) || "{}");
    return data && typeof data === "object" ? data : {};
  } catch (_) {
    return {};
  }
}

export const seats = {
  /** {token, seat, name} for this game, or null. */
  get: (gameId) => load()[gameId] || null,
  set(gameId, seat) {
    const data = load();
    data[gameId] = { ...seat, saved: Date.now() };
    localStorage.setItem(STORE, JSON.stringify(data));
  },
  forget(gameId) {
    const data = load();
    delete data[gameId];
    localStorage.setItem(STORE, JSON.stringify(data));
  },
  all: () => load(),
};

let houseBots = null;

/** The house bots this service offers: the enum of `house_bot` in its OpenAPI document. */
export async function houseBotNames() {
  if (!houseBots) {
    houseBots = fetch("/openapi.json", { cache: "no-store" })
      .then((r) => r.json())
      .then((doc) => doc.components.schemas.SeatIn.properties.house_bot.enum.filter((n) => typeof n === "string"))
      .catch(() => []);
  }
  return houseBots;
}
