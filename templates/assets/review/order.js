// Ordering and Parsons questions: the page lists steps or code lines in a shuffled order fixed at build time.
// Each line is a button: Space picks it up, the Up and Down arrow keys move it, Right and Left indent a code
// line, Space or Escape puts it down; a pointer (mouse, pen, finger) drags it, sideways to indent; the
// toolbar's buttons move the picked line too. Moves are announced. "Check the order" is the commit: each
// line is marked in place or not, the right order unlocks, and the check scores it (all = yes, some = partly,
// none = no), which the learner may change.
import { h } from "coursegen/dom.js";
import { t } from "coursegen/messages.js";
import { scoreGroup } from "coursegen/review/recall.js";
import { dueText } from "coursegen/review/schedule.js";

const MAX_LEVEL = 6;
const DRAG_START_PX = 6;

/** Return, per position, whether the line there is the right one at the right indent (lines of equal text
 * and indent are interchangeable). `placed` and `right` are lists of { text, level }. */
export function placesRight(placed, right, checkLevels) {
  return placed.map((line, i) => line.text === right[i].text && (!checkLevels || line.level === right[i].level));
}

/** Return the score of a set of marks: all right = yes, some = partly, none = no. */
export function scoreOf(results) {
  const right = results.filter(Boolean).length;
  return right === results.length ? "yes" : right > 0 ? "partly" : "no";
}

/** Enhance one ordering question; return { restore, reset } for the tally's buttons. */
export function enhance(question, ctx) {
  const { store } = ctx;
  const key = ctx.keyOf(question);
  const list = question.querySelector("[data-order-items]");
  const code = list.classList.contains("order-code");
  const answer = question.querySelector("[data-answer]");
  answer.querySelector(".question-answer-body").tabIndex = -1;
  const items = [...list.children];
  const initial = items.map((item) => Number(item.dataset.line));
  const byLine = new Map(items.map((item) => [Number(item.dataset.line), item]));
  const textOf = (item) => item.querySelector(".order-text").textContent.trim();
  const keysId = `${question.id}-order-keys`;
  for (const item of items) {
    const grab = h("button", { type: "button", class: "order-grab", "aria-pressed": "false", "aria-describedby": keysId },
      h("span", { class: "order-text" }, ...item.childNodes));
    item.replaceChildren(grab, h("span", { class: "order-mark" }));
  }
  const right = [...byLine.keys()].sort((a, b) => a - b).map((line) => ({
    text: textOf(byLine.get(line)), level: Number(byLine.get(line).dataset.indent ?? 0) }));
  const tools = toolbar(code);
  const check = h("button", { type: "button", class: "order-check" }, t("order.check"));
  list.before(h("p", { class: "order-keys", id: keysId }, code ? t("order.keys_code") : t("order.keys")));
  list.after(h("div", { class: "question-commit order-commit" }, tools.node, check));
  const scores = scoreGroup(question, ctx, {
    label: t("check.scored_label"),
    again() { store.update(key, { order: undefined, levels: undefined, revealed: false, score: undefined }); arrange(); },
  });
  answer.after(scores.node);

  let picked = null;
  const current = () => [...list.children];
  const levelOf = (item) => Number(item.dataset.level ?? 0);
  const setLevel = (item, level) => { item.dataset.level = String(Math.max(0, Math.min(MAX_LEVEL, level))); };
  const grabOf = (item) => item.querySelector(".order-grab");
  const save = () => store.update(key, { order: current().map((item) => Number(item.dataset.line)),
    levels: current().map(levelOf) });
  const position = (item) => current().indexOf(item) + 1;
  const say = (item, text) => ctx.announce(code ? `${text} ${t("order.indented", { level: levelOf(item) })}` : text);

  const pick = (item) => {
    if (picked && picked !== item) drop(false);
    picked = item;
    item.classList.add("is-picked");
    grabOf(item).setAttribute("aria-pressed", "true");
    tools.enable(true);
    say(item, t("order.picked", { position: position(item), total: items.length, line: textOf(item) }));
  };
  const drop = (announce = true) => {
    if (!picked) return;
    const item = picked;
    picked = null;
    item.classList.remove("is-picked");
    grabOf(item).setAttribute("aria-pressed", "false");
    tools.enable(false);
    if (announce) ctx.announce(t("order.dropped", { position: position(item), total: items.length }));
  };
  const move = (item, step) => {
    const rows = current();
    const to = rows.indexOf(item) + step;
    if (to < 0 || to >= rows.length) return;
    list.insertBefore(item, step < 0 ? rows[to] : rows[to].nextSibling);
    grabOf(item).focus();  // moving the element took the focus from it
    save();
    say(item, t("order.moved", { position: position(item), total: items.length }));
  };
  const indent = (item, step) => {
    if (!code) return;
    setLevel(item, levelOf(item) + step);
    save();
    ctx.announce(t("order.indented", { level: levelOf(item) }));
  };
  const locked = () => store.record(key).revealed === true;

  for (const item of items) {
    const grab = grabOf(item);
    grab.addEventListener("click", () => {
      if (grab.dataset.dragged === "true") { delete grab.dataset.dragged; return; }  // the end of a drag
      if (!locked()) (picked === item ? drop() : pick(item));
    });
    grab.addEventListener("keydown", (event) => {
      if (locked()) return;
      const steps = { ArrowUp: -1, ArrowDown: 1 };
      if (event.key in steps) {
        event.preventDefault();
        if (picked === item) move(item, steps[event.key]);
        else grabOf(current()[Math.max(0, Math.min(items.length - 1, position(item) - 1 + steps[event.key]))]).focus();
      } else if (picked === item && code && (event.key === "ArrowRight" || event.key === "ArrowLeft")) {
        event.preventDefault();
        indent(item, event.key === "ArrowRight" ? 1 : -1);
      } else if (event.key === "Escape" && picked === item) {
        event.preventDefault();
        drop();
      }
    });
    dragWith(item, grab, { locked, list, code, setLevel, levelOf, done: () => save() });
  }
  tools.on({ up: () => picked && move(picked, -1), down: () => picked && move(picked, 1),
    indent: () => picked && indent(picked, 1), outdent: () => picked && indent(picked, -1) });

  const sync = () => {
    const record = store.record(key);
    const checked = record.revealed === true;
    const results = checked ? results_() : [];
    current().forEach((item, i) => {
      grabOf(item).disabled = checked;
      item.classList.toggle("is-right", checked && results[i]);
      item.classList.toggle("is-wrong", checked && !results[i]);
      item.querySelector(".order-mark").textContent = checked
        ? `${results[i] ? "✓" : "✗"} ${results[i] ? t("order.in_place") : t("order.out_of_place")}` : "";
    });
    check.hidden = tools.node.hidden = checked;
    answer.hidden = !checked;
    answer.open = checked;
    scores.show(record);
  };
  const results_ = () => placesRight(current().map((item) => ({ text: textOf(item), level: levelOf(item) })), right, code);
  check.addEventListener("click", async () => {
    drop(false);
    save();
    const results = results_();
    store.update(key, { revealed: true });
    const scheduled = ctx.score(question, scoreOf(results));
    sync();
    answer.querySelector(".question-answer-body").focus();
    const card = await scheduled;
    sync();
    ctx.announce(t("order.checked", { right: results.filter(Boolean).length, total: results.length,
      when: dueText(card.due, new Date()) }));
  });
  scores.onScore = sync;
  /** Lay the lines out as stored, or as the page shipped them. */
  const arrange = () => {
    drop(false);
    const { order, levels } = store.record(key);
    const valid = Array.isArray(order) && order.length === items.length && order.every((line) => byLine.has(line))
      && new Set(order).size === items.length;
    (valid ? order : initial).forEach((line, i) => {
      const item = byLine.get(line);
      list.append(item);
      setLevel(item, valid && code && Array.isArray(levels) ? Number(levels[i]) || 0 : 0);
    });
    sync();
  };
  arrange();
  return { restore: arrange, reset() { store.clear(key); arrange(); } };
}

/** Return the move (and, for code, indent) buttons acting on the picked line. */
function toolbar(code) {
  const make = (name, label) => h("button", { type: "button", class: `order-tool order-${name}`, disabled: true }, label);
  const buttons = { up: make("up", t("order.up")), down: make("down", t("order.down")) };
  if (code) Object.assign(buttons, { outdent: make("outdent", t("order.outdent")), indent: make("indent", t("order.indent")) });
  const node = h("div", { class: "order-tools", role: "group", "aria-label": t("order.tools") }, ...Object.values(buttons));
  return {
    node,
    enable(on) { for (const button of Object.values(buttons)) button.disabled = !on; },
    on(actions) { for (const [name, button] of Object.entries(buttons)) button.addEventListener("click", actions[name]); },
  };
}

/** Let a pointer drag a line up or down the list, and sideways (code) to change its indent. The moves are
 * followed on the window: moving the line in the page would end a pointer capture on it. */
function dragWith(item, grab, { locked, list, code, setLevel, levelOf, done }) {
  let start = null;
  const follow = (event) => {
    if (!start || event.pointerId !== start.id) return;
    const dx = event.clientX - start.x;
    const dy = event.clientY - start.y;
    if (!start.dragging && Math.hypot(dx, dy) < DRAG_START_PX) return;
    start.dragging = true;
    item.classList.add("is-dragging");
    for (const other of [...list.children]) {  // pass each neighbour whose middle the pointer crossed
      if (other === item) continue;
      const box = other.getBoundingClientRect();
      const middle = box.top + box.height / 2;
      const above = item.compareDocumentPosition(other) & Node.DOCUMENT_POSITION_PRECEDING;
      if (above && event.clientY < middle) { list.insertBefore(item, other); break; }
      if (!above && event.clientY > middle) other.after(item);
    }
    if (code) setLevel(item, start.level + Math.round(dx / indentWidth(list)));
  };
  const end = (event) => {
    if (!start || event.pointerId !== start.id) return;
    window.removeEventListener("pointermove", follow);
    window.removeEventListener("pointerup", end);
    window.removeEventListener("pointercancel", end);
    if (start.dragging) {
      grab.dataset.dragged = "true";  // the click that may follow is the drag's end, not a pick
      item.classList.remove("is-dragging");
      grab.focus();
      done();
    }
    start = null;
  };
  grab.addEventListener("pointerdown", (event) => {
    delete grab.dataset.dragged;
    if (locked() || event.button !== 0) return;
    start = { id: event.pointerId, x: event.clientX, y: event.clientY, level: levelOf(item), dragging: false };
    window.addEventListener("pointermove", follow);
    window.addEventListener("pointerup", end);
    window.addEventListener("pointercancel", end);
  });
}

/** Return the width of one indent level in pixels (review.css sets it in --order-indent, in px). */
function indentWidth(list) {
  return parseFloat(getComputedStyle(list).getPropertyValue("--order-indent")) || 24;
}
