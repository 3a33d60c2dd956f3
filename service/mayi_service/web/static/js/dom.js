// A tiny DOM builder. Text always goes in as text nodes (never as HTML), so names
// and anything else the API sends are escaped by construction.

/**
 * h("button", {class: "x", onclick: fn, disabled: true}, "text", child, ...)
 * Props: class, text, dataset (object), on<event> (a listener), anything else an attribute
 * (false/null/undefined: left out; true: present, empty).
 */
export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (value === false || value === null || value === undefined) continue;
    if (key === "class") el.className = value;
    else if (key === "text") el.textContent = String(value);
    else if (key === "dataset") Object.assign(el.dataset, value);
    else if (key.startsWith("on") && typeof value === "function") el.addEventListener(key.slice(2), value);
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else if (child instanceof Node) el.appendChild(child);
    else el.appendChild(document.createTextNode(String(child)));
  }
}

/** Replace the children of `el`, keeping the focus on the element with the same data-key. */
export function replace(el, ...children) {
  const active = document.activeElement;
  const key = active && el.contains(active) ? active.dataset.key : undefined;
  el.replaceChildren();
  append(el, children);
  if (key) {
    const again = el.querySelector(`[data-key="${CSS.escape(key)}"]`);
    if (again) again.focus();
  }
}

/** Show an error (an API problem's detail) in the page's alert region; null hides it. */
export function showError(message) {
  const box = document.getElementById("error");
  if (!box) return;
  if (!message) {
    box.hidden = true;
    box.replaceChildren();
    return;
  }
  box.replaceChildren(
    h("span", { class: "error-text", text: message }),
    h("button", { type: "button", class: "link", "aria-label": "Dismiss the error", onclick: () => showError(null) }, "×"),
  );
  box.hidden = false;
}

/** `table` with each body cell labelled by its column's heading (`data-label`): on a phone's
 * width the rows are shown as cards, each value with its label. */
export function labelCells(table) {
  const heads = [...table.querySelectorAll("thead th")].map((th) => th.textContent.trim());
  for (const row of table.querySelectorAll("tbody tr")) {
    [...row.children].forEach((cell, i) => {
      if (heads[i]) cell.dataset.label = heads[i];
    });
  }
  return table;
}
