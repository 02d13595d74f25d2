// Overflow slider view: numbers and verdict by data-out, bars of log10(1/Γ) per position.
import { svg } from "coursegen/dom.js";

function drawBars(group, result) {
  while (group.children.length > result.log10.length) group.lastElementChild.remove();
  while (group.children.length < result.log10.length) {
    group.append(svg("rect", { x: `${group.children.length}.1`, y: "0", width: "0.8" }));
  }
  result.log10.forEach((value, i) => {
    group.children[i].setAttribute("height", String(value));
    group.children[i].setAttribute("class", result.finite[i] === "1" ? "is-finite" : "is-overflow");
  });
}

export function mount(element, params, runtime) {
  const verdict = element.querySelector("[data-out=verdict]");
  const bars = element.querySelector("[data-bars]");
  runtime.start((result) => {
    runtime.fill(result);
    verdict.dataset.fits = result.fits ? "yes" : "no";
    drawBars(bars, result);
  });
}
