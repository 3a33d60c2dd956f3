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

/** The words shown while the server does not answer at all (a network error, not a problem). */
export const UNREACHABLE = "The server is not answering; retrying";

/** How often, and how long apart (ms), a request the server did not answer is sent again. */
const RETRIES = [1000, 2000, 3000, 5000, 5000, 8000, 8000, 10000];

/**
 * One request. `token`: the seat token (Authorization: Bearer); `body`: sent as JSON;
 * `signal`: an AbortSignal; `onRetry(message)`: told (with UNREACHABLE, then null once
 * answered) while a request the server did not answer is sent again.
 * Actions (POST with a token) carry an Idempotency-Key, and are retried with the same key
 * on a 503 or when the server does not answer (docs/api.md: a 503 may have been applied;
 * the same key makes the retry safe); reads are retried too. Returns the parsed JSON
 * (null for 204/304); throws ApiError (status 0, code "unreachable": no answer at all).
 */
export async function api(method, path, { token = null, body = undefined, signal = undefined, onRetry = null } = {}) {
  const headers = { Accept: "application/json" };
  if (token) headers.Authorization = "Bearer " + token;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (method === "POST" && token) headers["Idempotency-Key"] = randomKey();
  const init = { method, headers, cache: "no-store", signal, body: body === undefined ? undefined : JSON.stringify(body) };
  // A POST without a token (a new table, a seat) is not idempotent: it is not sent twice.
  const retries = method === "POST" && !token ? [] : RETRIES;
  let response = null;
  for (let attempt = 0; ; attempt++) {
    try {
      response = await fetch(path, init);
    } catch (error) {
      if (signal && signal.aborted) throw error;
      if (attempt >= retries.length) {
        if (onRetry) onRetry(null);
        throw new ApiError(0, { code: "unreachable", detail: retries.length ? "The server is not answering; try again later" : "The server is not answering; try again" });
      }
      if (onRetry) onRetry(UNREACHABLE);
      await sleep(retries[attempt], signal);
      continue;
    }
    if (response.status === 503 && headers["Idempotency-Key"] && attempt === 0) continue;
    break;
  }
  if (onRetry) onRetry(null);
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

function sleep(ms, signal) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    if (signal) signal.addEventListener("abort", () => (clearTimeout(timer), reject(new DOMException("aborted", "AbortError"))), { once: true });
  });
}

/** An error in words for the person: the problem's detail, or what went wrong in the page. */
export function errorText(error) {
  if (error instanceof ApiError) {
    if (error.code === "seat_taken") return "That seat was just taken: choose another, or reload the table.";
    return error.detail;
  }
  return "Something went wrong in the page: " + ((error && error.message) || String(error));
}

export const games = {
  list: (params) => api("GET", "/v1/games?" + new URLSearchParams(params)),
  create: (body) => api("POST", "/v1/games", { body }),
  view: (id, token, options = {}) => api("GET", `/v1/games/${encodeURIComponent(id)}`, { token, ...options }),
  takeSeat: (id, body, token = null) => api("POST", `/v1/games/${encodeURIComponent(id)}/seats`, { body, token }),
  /** Events after `after`; `wait` > 0: a long-poll (waits up to that many seconds for one). */
  events: (id, after, { token = null, wait = 0, signal = undefined, onRetry = null } = {}) =>
    api("GET", `/v1/games/${encodeURIComponent(id)}/events?after=${after}${wait ? `&wait=${wait}` : ""}`, { token, signal, onRetry }),
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

export function act(id, token, move, onRetry = null) {
  const { path, body } = moveRequest(move);
  return api("POST", `/v1/games/${encodeURIComponent(id)}/${path}`, { token, body, onRetry });
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

/** The house bots this service offers (`GET /v1/house-bots`), weakest first. */
export async function houseBotNames() {
  if (!houseBots) {
    houseBots = fetch("/v1/house-bots")
      .then((r) => r.json())
      .then((found) => found.house_bots)
      .catch(() => []);
  }
  return houseBots;
}
