/*
 * The web UI's writes and small conveniences. Loaded by every page under the
 * page's CSP nonce; it is the only thing that writes, and it writes only
 * through the public JSON API (paths under /api/ that openapi.yaml documents).
 *
 * What to call is in the markup, so the pages stay plain HTML:
 *
 * - `data-request="METHOD /api/..."` on a form (sent on submit, its fields
 *   as the JSON body) or on a button (sent on click, `data-body` as the JSON
 *   body if any). `data-confirm` asks first.
 * - Form fields: a field's `name` is the JSON key. `data-list` checkboxes of
 *   one name make an array of the checked values; a lone checkbox a boolean;
 *   `type=number` or `data-type="number"` a number; `data-optional` leaves an
 *   empty field (or an empty list) out; `data-omit-all` leaves a list out when
 *   every box is checked (the API's default then applies). On a form with
 *   `data-changed-only` (an edit), a field still as the page gave it is left
 *   out: saving a new URL does not also re-send `active`, which would reset
 *   the failure count.
 * - `data-done`, after a 2xx: `reload` (the default); `go:/ui/...` (with
 *   `{field}` replaced by that field of the answer); `show:#id` (fills the
 *   element's `[data-field=name]` children with the answer's fields, then
 *   unhides it: a new API key, a test delivery's result).
 * - Refusals show the API's `error`, field details and `hint` in the nearest
 *   `[data-error]` box; a 401 (the session ended) goes to the sign-in page.
 *
 * Also: `data-copy` / `data-copy-from` buttons copy text; `time[data-countdown]`
 * ticks every second; `data-reload` buttons reload.
 *
 * Times are written as src/ui/format.ts writes them on the server.
 */
"use strict";

/** Calls the API; resolves to the status and the parsed JSON answer (null without one). */
async function callApi(method, path, body) {
  // Never anywhere but the API of this origin, whatever the markup says.
  if (!path.startsWith("/api/")) throw new Error(`Not an API path: ${path}`);
  const init = { method, credentials: "same-origin", headers: { accept: "application/json" } };
  if (body !== undefined) {
    init.headers["content-type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  const text = await response.text();
  let json = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = null;
  }
  return { ok: response.ok, status: response.status, json };
}

/** Whether a field is still as the page gave it. */
function unchanged(field) {
  if (field.type === "checkbox") return field.checked === field.defaultChecked;
  if (field.tagName === "SELECT") return [...field.options].every((o) => o.selected === o.defaultSelected);
  return field.value === field.defaultValue;
}

/** The JSON body of a form (see the top of this file). */
function formBody(form) {
  const changedOnly = "changedOnly" in form.dataset;
  const body = {};
  const lists = new Map();
  for (const field of form.elements) {
    const name = field.name;
    if (!name || field.disabled) continue;
    if (field.type === "checkbox" && "list" in field.dataset) {
      const list = lists.get(name) ?? { values: [], total: 0, changed: false, field };
      list.total++;
      list.changed ||= !unchanged(field);
      if (field.checked) list.values.push(field.value);
      lists.set(name, list);
    } else if (changedOnly && unchanged(field)) {
      continue;
    } else if (field.type === "checkbox") {
      body[name] = field.checked;
    } else if (field.value === "" && "optional" in field.dataset) {
      continue;
    } else if (field.type === "number" || field.dataset.type === "number") {
      body[name] = Number(field.value);
    } else {
      body[name] = field.value;
    }
  }
  for (const [name, { values, total, changed, field }] of lists) {
    if (changedOnly && !changed) continue;
    if (values.length === 0 && "optional" in field.dataset) continue;
    if (values.length === total && "omitAll" in field.dataset) continue;
    body[name] = values;
  }
  return body;
}

/** Replaces `{name}` in `template` with the answer's field `name`, escaped as a path segment. */
function fill(template, answer) {
  return template.replace(/\{(\w+)\}/g, (_, name) => encodeURIComponent(String(answer?.[name] ?? "")));
}

/** Writes the answer's fields into `target`'s `[data-field]` elements and shows it. */
function show(target, answer) {
  for (const element of target.querySelectorAll("[data-field]")) {
    const value = answer?.[element.dataset.field];
    if (typeof value === "boolean") {
      element.textContent = value ? (element.dataset.true ?? "yes") : (element.dataset.false ?? "no");
      element.className = value ? "badge ok" : "badge failed";
    } else {
      element.textContent = value === null || value === undefined ? "" : String(value);
    }
  }
  target.hidden = false;
  target.scrollIntoView({ block: "nearest" });
}

/** What to do after a 2xx answer. */
function done(spec, answer) {
  if (!spec || spec === "reload") {
    location.reload();
  } else if (spec.startsWith("go:")) {
    location.assign(fill(spec.slice(3), answer));
  } else if (spec.startsWith("show:")) {
    const target = document.querySelector(spec.slice(5));
    if (target) show(target, answer);
  }
}

/** The box a refusal is written into: the form's or the button's section's own, else the page's. */
function errorBox(origin) {
  return origin.querySelector?.("[data-error]") ??
    origin.closest("section, form, td, .card")?.querySelector("[data-error]") ??
    document.querySelector("main > [data-error]");
}

/** Shows the API's refusal. */
function refusal(origin, status, answer) {
  if (status === 401 && !location.pathname.startsWith("/ui/login")) {
    location.assign(`/ui/login?next=${encodeURIComponent(location.pathname + location.search)}`);
    return;
  }
  const box = errorBox(origin);
  if (!box) return;
  const lines = [answer?.error ?? `The service answered ${status}.`];
  for (const detail of answer?.details ?? []) lines.push(`${detail.path}: ${detail.message}`);
  if (answer?.hint) lines.push(answer.hint);
  box.textContent = lines.join("\n");
  box.hidden = false;
}

/** Sends the request `origin` (a form or a button) describes, then does what it says. */
async function send(origin, body) {
  const [method, path] = origin.dataset.request.split(" ");
  if (origin.dataset.confirm && !confirm(origin.dataset.confirm)) return;
  const box = errorBox(origin);
  if (box) box.hidden = true;
  const controls = origin.tagName === "FORM" ? [...origin.querySelectorAll("button")] : [origin];
  for (const control of controls) control.disabled = true;
  try {
    const { ok, status, json } = await callApi(method, path, body);
    if (ok) done(origin.dataset.done, json);
    else refusal(origin, status, json);
  } catch (error) {
    refusal(origin, 0, { error: `The service could not be reached: ${error.message}` });
  } finally {
    for (const control of controls) control.disabled = false;
  }
}

/** Copies `text` to the clipboard; resolves to whether it worked. */
async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    // No clipboard API (a page served over plain HTTP from another host than localhost): the older way.
    const area = document.createElement("textarea");
    area.value = text;
    area.className = "offscreen";
    document.body.append(area);
    area.select();
    const copied = document.execCommand("copy");
    area.remove();
    return copied;
  }
}

/** Copies what a copy button names and says so for a moment. */
async function copy(button) {
  const text = button.dataset.copy ?? document.querySelector(button.dataset.copyFrom)?.textContent ?? "";
  const label = button.dataset.label ?? button.textContent;
  button.dataset.label = label;
  button.textContent = (await copyText(text)) ? "Copied" : "Copy failed";
  setTimeout(() => button.textContent = label, 1500);
}

/** `in 59m 12s`, `in 2h 03m`, `in 6d 23h` or `expired` (as `remaining` in src/ui/format.ts). */
function remaining(ms) {
  if (ms <= 0) return "expired";
  const s = Math.floor(ms / 1000);
  const pad = (n) => String(n).padStart(2, "0");
  if (s < 3600) return `in ${Math.floor(s / 60)}m ${pad(s % 60)}s`;
  if (s < 86400) return `in ${Math.floor(s / 3600)}h ${pad(Math.floor(s / 60) % 60)}m`;
  return `in ${Math.floor(s / 86400)}d ${pad(Math.floor(s / 3600) % 24)}h`;
}

function tick() {
  for (const time of document.querySelectorAll("time[data-countdown]")) {
    const text = remaining(Date.parse(time.dateTime) - Date.now());
    if (time.textContent !== text) time.textContent = text;
    time.classList.toggle("expired", text === "expired");
  }
}

document.addEventListener("submit", (event) => {
  const form = event.target.closest("form[data-request]");
  if (!form) return;
  event.preventDefault();
  send(form, formBody(form));
});

document.addEventListener("click", (event) => {
  const button = event.target.closest("button");
  if (!button) return;
  if (button.dataset.request && button.type === "button") {
    send(button, button.dataset.body === undefined ? undefined : JSON.parse(button.dataset.body));
  } else if ("copy" in button.dataset || "copyFrom" in button.dataset) {
    copy(button);
  } else if ("reload" in button.dataset) {
    location.reload();
  }
});

tick();
setInterval(tick, 1000);
