// Live reload for `coursegen serve` only: the development server injects this script; built sites never contain it.
// After a good build the page reloads when it (or any asset) changed; after a failed build the problems show
// in an overlay, announced to screen readers, until the next good build reloads the page.
import { h } from "./dom.js";  // the theme's DOM helper, served beside this script (livereload.py)

const tag = document.querySelector("script[data-coursegen-build]");
const servedAt = Number(tag ? tag.dataset.coursegenBuild : 0);
const here = decodeURIComponent(location.pathname.split("/").pop() || "index.html");
let overlay = null;

// The search index (written a moment after the pages it indexes) and the service worker (never
// registered under serve) change nothing an open page shows.
const UNSEEN = /^(search\/|sw\.js$)/;

function affectsThisPage(changed) {
  return changed.some((path) => path === here || (!path.endsWith(".html") && !UNSEEN.test(path)));
}

function styled(element, style) {
  Object.assign(element.style, style); // CSSOM, which the pages' Content-Security-Policy allows
  return element;
}

function showProblems(problems) {
  overlay?.remove();
  const title = styled(h("h2", { id: "coursegen-problems-title" },
    `The build failed: ${problems.length} problem${problems.length === 1 ? "" : "s"}`),
  { margin: "0 0 .5rem", fontSize: "1.1rem" });
  const note = styled(h("p", {},
    "Fix the source and save; this page reloads by itself. The site shows the last good build."), { margin: "0 0 .5rem" });
  const list = styled(h("pre", {}, problems.join("\n")),
    { margin: "0", whiteSpace: "pre-wrap", font: "14px/1.4 monospace" });
  const hide = styled(h("button", { type: "button" }, "Hide"), {
    marginTop: ".75rem", font: "inherit", padding: ".25rem .75rem", outlineOffset: "2px",
  });
  hide.addEventListener("focus", () => { hide.style.outline = "3px solid #b3261e"; });
  hide.addEventListener("blur", () => { hide.style.outline = ""; });
  hide.addEventListener("click", () => { overlay.hidden = true; });
  overlay = styled(h("section", { role: "alert", "aria-labelledby": title.id, "data-coursegen-overlay": "" },
    title, note, list, hide), {
    position: "fixed", inset: "auto 1rem 1rem 1rem", zIndex: "2147483647", maxHeight: "60vh", overflow: "auto",
    background: "#fff4f4", color: "#3b0a0a", border: "3px solid #b3261e", borderRadius: "8px",
    padding: "1rem 1.25rem", font: "15px/1.45 system-ui, sans-serif", boxShadow: "0 6px 24px rgba(0,0,0,.3)",
  });
  document.body.append(overlay);
}

// The stream sends every file changed since the build this page was served from, so a build made
// while the page reloaded (a second quick save) is never missed.
const events = new EventSource(`${tag.dataset.coursegenEvents}?after=${servedAt}`);
events.addEventListener("message", (message) => {
  const event = JSON.parse(message.data);
  if (event.type === "error") {
    showProblems(event.problems);
  } else if (overlay || (event.serial > servedAt && affectsThisPage(event.changed))) {
    location.reload();
  }
});
