// The page's sections, as a reader moves through them: "On this page" marks the section being read
// (aria-current="location"), and each heading of the text gets a "#" permalink to copy, drawn in the
// margin (style.css) so that adding it moves nothing.
import { h } from "coursegen/dom.js";
import { t } from "coursegen/messages.js";

const READING_LINE = 0.3;  // a section is being read once its heading passes 30 % of the window's height

/** Mark the table of contents' link to the section whose heading last passed the reading line. */
export function followSections(toc) {
  const links = new Map();
  for (const link of toc.querySelectorAll('a[href^="#"]')) {
    const heading = document.getElementById(decodeURIComponent(link.hash.slice(1)));
    if (heading) links.set(heading, link);
  }
  if (!links.size || !("IntersectionObserver" in window)) return;
  const headings = [...links.keys()];
  let current = null;
  const mark = () => {
    const line = innerHeight * READING_LINE;
    const passed = headings.filter((heading) => heading.getBoundingClientRect().top <= line);
    const link = links.get(passed.at(-1) ?? headings[0]);
    if (link === current) return;
    current?.removeAttribute("aria-current");
    link.setAttribute("aria-current", "location");
    current = link;
  };
  // The observer says when a heading crosses the band above the reading line; which one is current is then read.
  const observer = new IntersectionObserver(mark, { rootMargin: `0px 0px -${100 - READING_LINE * 100}% 0px` });
  headings.forEach((heading) => observer.observe(heading));
  mark();
}

/** Give each heading of the text that has an anchor a "#" link to it, named for screen readers. */
export function addPermalinks(body) {
  for (const heading of body.querySelectorAll(":is(h2, h3, h4)[id]")) {
    const title = heading.textContent.trim();
    heading.append(h("a", { class: "heading-link", href: `#${heading.id}`,
      "aria-label": t("page.permalink", { title }) }, "#"));
  }
}

/** Hold the address's #target at the top of the window while the page's scripts grow what stands above it
 * (widgets, code cells, questions), in browsers that do not anchor the scroll themselves (Safari): until the
 * reader scrolls, clicks, types or touches, each change of the page's height puts the target back. */
export function keepTarget() {
  const target = location.hash.length > 1 && document.getElementById(decodeURIComponent(location.hash.slice(1)));
  if (!target || !("ResizeObserver" in window)) return;
  const padding = () => parseFloat(getComputedStyle(document.documentElement).scrollPaddingTop) || 0;
  const observer = new ResizeObserver(() => {
    if (Math.abs(target.getBoundingClientRect().top - padding()) > 2) target.scrollIntoView();
  });
  const stop = () => {
    observer.disconnect();
    for (const type of READER_MOVES) removeEventListener(type, stop, true);
  };
  for (const type of READER_MOVES) addEventListener(type, stop, { capture: true, passive: true });
  observer.observe(document.body);
}

const READER_MOVES = ["wheel", "touchstart", "pointerdown", "keydown", "hashchange"];
