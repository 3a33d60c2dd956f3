// The table's settings, kept in this browser: the answer to upcards, the pace of the others'
// moves, the sound on the person's turn (and the list of keyboard shortcuts).
import { h } from "./dom.js";
import { SHORTCUTS } from "./keys.js";
import { PACES } from "./pacing.js";
import { redraw } from "./state.js";

/** The person's answer to an upcard offered before another seat's turn ("mayi.claims"):
 * "ask" (every time), "useful" (only for a card that could join the hand's melds or the table's;
 * the others are passed at once), "pass" (pass every one at once). */
export const CLAIM_CHOICES = { ask: "Ask me every time", useful: "Ask me only for cards I can use", pass: "Pass automatically" };
const PACE_CHOICES = { slow: "Slow", normal: "Normal", fast: "Fast", instant: "At once" };
/** A sound when the move becomes the person's ("mayi.sound"; off unless they choose it). */
const SOUND_CHOICES = { off: "Off", on: "On" };

let audio = null;

/** A short tone (made by the Web Audio API: no file to load), if the person chose sounds. */
export function turnSound(always = false) {
  if (!always && localStorage.getItem("mayi.sound") !== "on") return;
  try {
    audio = audio || new AudioContext();
    if (audio.state === "suspended") audio.resume();
    const tone = audio.createOscillator();
    const gain = audio.createGain();
    const now = audio.currentTime;
    tone.frequency.value = 660;
    gain.gain.setValueAtTime(0.2, now);
    gain.gain.exponentialRampToValueAtTime(0.001, now + 0.3);
    tone.connect(gain).connect(audio.destination);
    tone.start(now);
    tone.stop(now + 0.3);
  } catch (_) {
    /* no sound in this browser: the tab's title still says it */
  }
}

export function claimChoice() {
  const chosen = localStorage.getItem("mayi.claims");
  return chosen in CLAIM_CHOICES ? chosen : "ask";
}

export function settingsPanel(st, root) {
  const choice = (label, key, store, choices, current, then = null) =>
    h(
      "div",
      { class: "field" },
      h("label", { class: "label", for: key }, label),
      h(
        "select",
        {
          id: key,
          dataset: { key },
          onchange: (e) => {
            localStorage.setItem(store, e.target.value);
            if (then) then(e.target.value); // (a sound chosen: heard once now, within the person's gesture)
            redraw(st, root);
          },
        },
        Object.entries(choices).map(([value, words]) => h("option", { value, selected: value === current }, words)),
      ),
    );
  return h(
    "section",
    { class: "settings", "aria-label": "Table settings" },
    h("h2", {}, "Settings"),
    h(
      "div",
      { class: "fields" },
      st.token ? choice("Upcards others discard", "claims-choice", "mayi.claims", CLAIM_CHOICES, claimChoice()) : null,
      choice("Others' moves", "pace-choice", "mayi.pace", PACE_CHOICES, localStorage.getItem("mayi.pace") in PACES ? localStorage.getItem("mayi.pace") : "normal"),
      st.token ? choice("Sound on your turn", "sound-choice", "mayi.sound", SOUND_CHOICES, localStorage.getItem("mayi.sound") === "on" ? "on" : "off", (value) => value === "on" && turnSound(true)) : null,
    ),
    st.token
      ? h(
          "details",
          { class: "shortcuts" },
          h("summary", {}, "Keyboard shortcuts"),
          h(
            "ul",
            {},
            SHORTCUTS.map(([key, , words]) => h("li", {}, h("kbd", {}, key.toUpperCase()), ` ${words}`)),
            h("li", {}, h("kbd", {}, "←"), " ", h("kbd", {}, "→"), " the previous, the next card of the hand; ", h("kbd", {}, "Space"), " selects it"),
          ),
        )
      : null,
  );
}
