// Tabs ({tab-set}): the WAI-ARIA tabs pattern over markup that reads well without JavaScript, where every
// tab's label heads its content. Here each set gains a tablist of buttons (arrow keys, Home and End move
// between them and show their panel); the labels it replaces stay in the page, hidden, for printing.
import { h } from "coursegen/dom.js";

let sets = 0;

function select(tabs, panels, chosen, focus) {
  tabs.forEach((tab, index) => {
    const on = index === chosen;
    tab.setAttribute("aria-selected", String(on));
    tab.tabIndex = on ? 0 : -1;
    panels[index].hidden = !on;
  });
  if (focus) tabs[chosen].focus();
}

const MOVES = {
  ArrowRight: (index, count) => (index + 1) % count,
  ArrowLeft: (index, count) => (index - 1 + count) % count,
  Home: () => 0,
  End: (index, count) => count - 1,
};

/** Turn one `[data-tab-set]` into tabs. */
export function enhance(set) {
  const items = [...set.children].filter((item) => item.matches("[data-tab-item]"));
  if (!items.length || set.hasAttribute("data-tabs-ready")) return;
  const id = `tabs-${++sets}`;
  const panels = items.map((item) => item.querySelector(":scope > [data-tab-panel]"));
  const tabs = items.map((item, index) => {
    const label = item.querySelector(":scope > [data-tab-label]");
    label.hidden = true;
    panels[index].id = `${id}-panel-${index + 1}`;
    panels[index].setAttribute("role", "tabpanel");
    panels[index].setAttribute("aria-labelledby", `${id}-tab-${index + 1}`);
    panels[index].tabIndex = 0;
    return h("button", {
      type: "button", role: "tab", id: `${id}-tab-${index + 1}`, "aria-controls": panels[index].id,
    }, label.textContent);
  });
  const list = h("div", { class: "tab-list", role: "tablist" }, ...tabs);
  set.prepend(list);
  tabs.forEach((tab, index) => tab.addEventListener("click", () => select(tabs, panels, index, false)));
  list.addEventListener("keydown", (event) => {
    const move = MOVES[event.key];
    const index = tabs.indexOf(document.activeElement);
    if (!move || index < 0) return;
    event.preventDefault();
    select(tabs, panels, move(index, tabs.length), true);
  });
  const first = items.findIndex((item) => item.hasAttribute("data-tab-selected"));
  select(tabs, panels, Math.max(first, 0), false);
  set.setAttribute("data-tabs-ready", "");
}

document.querySelectorAll("[data-tab-set]").forEach(enhance);
