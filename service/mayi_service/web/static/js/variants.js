// The variants the service plays, as `GET /v1/variants` serves them (title, players, rounds and
// their contracts, card points, joker limit, the claim's name): read once a page load, before
// the first page is drawn, so that every page (lobby, table, replay, ladder) names a variant,
// its claim and its rules as the service does, and a variant the service adds shows by itself.

let loaded = null; // the promise of the list
let list = []; // the variants read, in the service's order
let byName = new Map();

/** Read `/v1/variants` (once; a failed read is tried again on the next call). */
export function loadVariants() {
  if (!loaded) {
    loaded = fetch("/v1/variants", { headers: { Accept: "application/json" } })
      .then((r) => (r.ok ? r.json() : Promise.reject(new Error(`GET /v1/variants answered ${r.status}`))))
      .then((found) => {
        list = found.variants;
        byName = new Map(list.map((v) => [v.name, v]));
        return list;
      })
      .catch(() => {
        loaded = null; // the server is not answering: the names stand in for the titles
        return list;
      });
  }
  return loaded;
}

/** Every variant read, in the service's order. */
export function variants() {
  return list;
}

/** The variant `name` as served, or null (not read, or not served). */
export function variant(name) {
  return byName.get(name) || null;
}

/** The game's name as people write it ("May I", "Shanghai"); the variant's name until read. */
export function title(name) {
  const v = variant(name);
  return v ? v.title : name;
}

/** The claim's name at the table ("May I", "Buy"). */
export function claimName(name) {
  const v = variant(name);
  return v ? v.claim.name : "Claim";
}

/** The words of a claim (a one-word name is a verb: "Buy" → "buys 7♠", "Buy! (7♠)"; a longer
 * one is called: "May I" → "calls May I on 7♠", "May I! (7♠)"). */
export function claimWords(name) {
  const noun = claimName(name);
  const verb = /^\p{L}+$/u.test(noun) ? noun.toLowerCase() : null;
  return {
    noun,
    /** "Buy! (7♠)", the button. */
    button: (card) => `${noun}! (${card})`,
    /** "buy 7♠" / "call May I on 7♠", after "You may". */
    act: (card) => (verb ? `${verb} ${card}` : `call ${noun} on ${card}`),
    /** "buys 7♠" / "calls May I on 7♠", after a seat's name. */
    acts: (card) => (verb ? `${verb}s ${card}` : `calls ${noun} on ${card}`),
    /** "1 buy left", "2 buys left" / "1 May I left". */
    left: (n) => (verb ? `${n} ${n === 1 ? verb : verb + "s"} left` : `${n} ${noun} left`),
  };
}
