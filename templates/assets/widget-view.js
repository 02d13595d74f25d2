// The view of every widget without one of its own (a folder with spec.yaml and widget.py only): the
// controls come from the spec (partials/widget.html), and each result is drawn as the build drew it
// (partials/widget_result.html) from the record present.py makes of what run() returned.
import { h } from "coursegen/dom.js";

/** A table's rows as the build writes them: the first cell of each row is its header. */
function table({ head, rows }) {
  const body = rows.map(([first, ...cells]) => h("tr", {}, h("th", { scope: "row" }, first), ...cells.map((cell) => h("td", {}, cell))));
  const header = head.length ? [h("thead", {}, h("tr", {}, ...head.map((cell) => h("th", { scope: "col" }, cell))))] : [];
  return h("table", { class: "widget-table", tabindex: "0" }, ...header, h("tbody", {}, ...body));  // it scrolls on a phone
}

/** HTML or SVG the widget's Python made (present.py checked it closes what it opens and holds no script):
 * parsed apart from the page, never run, and moved in. */
function fragment(kind, html) {
  const parsed = new DOMParser().parseFromString(html, "text/html");
  return h("div", { class: `widget-${kind}` }, ...parsed.body.childNodes);
}

function shown(result) {
  if (result.kind === "text") return h("p", { class: "widget-text" }, result.value);
  if (result.kind === "table") return table(result.value);
  return fragment(result.kind, result.value);
}

export function mount(figure, params, runtime) {
  const box = figure.querySelector("[data-widget-result]");
  runtime.start((result) => box.replaceChildren(shown(result)));
}
