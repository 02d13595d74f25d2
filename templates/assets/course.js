// Page runtime: theme toggle, offline service worker, answers opened for print, copy buttons on code, tabs,
// a deep link's target kept in view, the section being read and the headings' permalinks (sections.js).
// Widgets and reviews load their own modules where the page has them. The stored theme is applied
// once, before first paint, by the inline partials/theme-init.js; this script only changes it.
import { THEME_KEY } from "coursegen/constants.js";
import { h } from "coursegen/dom.js";
import { t } from "coursegen/messages.js";
import { addPermalinks, followSections, keepTarget } from "coursegen/sections.js";

const root = document.documentElement;

function setupThemeToggle(button) {
  const isDark = () => root.dataset.theme === "dark" ||
    (!root.dataset.theme && matchMedia("(prefers-color-scheme: dark)").matches);
  const sync = () => button.setAttribute("aria-pressed", String(isDark()));
  button.hidden = false;
  sync();
  matchMedia("(prefers-color-scheme: dark)").addEventListener("change", sync);  // the system switched
  button.addEventListener("click", () => {
    const next = isDark() ? "light" : "dark";
    root.dataset.theme = next;
    try { localStorage.setItem(THEME_KEY, next); } catch { /* private mode: theme lasts this page */ }
    sync();
  });
}

function registerServiceWorker(url) {
  // Offline reading after one visit (sw.js at the site root); failure only means no offline copy.
  if (!url || !("serviceWorker" in navigator)) return;
  navigator.serviceWorker.register(new URL(url, document.baseURI)).catch(() => {});
}

function expandForPrint() {
  // Paper shows every answer: open closed <details> for printing, then close them again.
  let opened = [];
  addEventListener("beforeprint", () => {
    opened = [...document.querySelectorAll("details:not([open])")];
    opened.forEach((d) => { d.open = true; });
  });
  addEventListener("afterprint", () => opened.forEach((d) => { d.open = false; }));
}

/** Give each code block of the text a Copy button, in the strip style.css keeps above its first line once it has one. */
function addCopyButtons() {
  if (!navigator.clipboard) {  // insecure contexts have no clipboard API: no button, so no strip kept for one
    document.documentElement.classList.add("no-copy");
    return;
  }
  // A code cell's output is what the code printed, not code to copy; a line with gaps to fill is not code yet.
  for (const pre of document.querySelectorAll(".unit-body pre:not(.diagram):not(.blanks-code):not(.code-cell-output pre), .widget-code pre")) {
    const button = h("button", { type: "button", class: "code-copy", "aria-label": t("code.copy_label") }, t("code.copy"));
    const box = h("div", { class: "code-block" });
    // A widget's code box is read as the Python it runs live: the button goes beside that box, not in it.
    const target = pre.closest("[data-widget-code]") ?? pre;
    target.before(box);
    box.append(target, button);
    button.addEventListener("click", async () => {
      try {
        await navigator.clipboard.writeText(pre.textContent.replace(/\n$/, ""));
        button.textContent = t("code.copied");
      } catch {
        button.textContent = t("code.copy_refused");  // the browser refused: the learner can still select the text
      }
      setTimeout(() => { button.textContent = t("code.copy"); }, 2000);
    });
  }
}

/** A table of the text wider than its column scrolls sideways: make it a tab stop with a name that says so,
 * so a keyboard can scroll it (a table with a caption or a tab stop of its own already has both). */
function labelWideTables() {
  for (const table of document.querySelectorAll(".unit-body table:not([tabindex])")) {
    if (table.scrollWidth <= table.clientWidth || table.querySelector("caption")) continue;
    table.tabIndex = 0;
    table.setAttribute("aria-label", t("scroll.table"));
  }
}

/** The header menu (narrow screens) closes once a link in what it opens is followed, and on Escape, back on its
 * button; opened, its unit list shows the current unit (a long list scrolls inside the menu). What it opens is
 * the page's unit list and the panel after it (partials/site_menu.html), not inside the <details>. */
function closeMenuOnUse(menu) {
  const summary = menu.querySelector("summary");
  const opened = [menu, ...document.querySelectorAll(".page-columns > .course-units, .site-menu-panel")];
  for (const part of opened) {
    part.addEventListener("click", (event) => { if (menu.open && event.target.closest("a")) menu.open = false; });
    part.addEventListener("keydown", (event) => {
      if (event.key !== "Escape" || !menu.open) return;
      menu.open = false;
      summary.focus();
    });
  }
  const list = opened[1]?.matches(".course-units") ? opened[1] : null;
  menu.addEventListener("toggle", () => {
    const current = list?.querySelector("[aria-current=page]");
    if (!menu.open || !current || list.scrollHeight <= list.clientHeight) return;
    const offset = current.getBoundingClientRect().top - list.getBoundingClientRect().top;
    list.scrollTop += offset - (list.clientHeight - current.offsetHeight) / 2;
  });
}

const toggle = document.querySelector("[data-theme-toggle]");
if (toggle) setupThemeToggle(toggle);
registerServiceWorker(root.dataset.serviceWorker);
expandForPrint();
addCopyButtons();
// Tabs ({tab-set}) load only on pages that have them.
if (document.querySelector("[data-tab-set]")) import("coursegen/tabs.js");
keepTarget();
const body = document.querySelector(".unit-body");
if (body) addPermalinks(body);
const toc = document.querySelector(".toc");
if (toc) followSections(toc);
labelWideTables();
const menu = document.querySelector(".site-menu");
if (menu) closeMenuOnUse(menu);
