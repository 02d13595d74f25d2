// Page runtime: theme toggle, offline service worker, answers opened for print.
// Widgets and reviews load their own modules where the page has them. The stored theme is applied
// once, before first paint, by the inline partials/theme-init.js; this script only changes it.
import { THEME_KEY } from "coursegen/constants.js";

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

const toggle = document.querySelector("[data-theme-toggle]");
if (toggle) setupThemeToggle(toggle);
registerServiceWorker(root.dataset.serviceWorker);
expandForPrint();
