// Memory per sequence view: texts by data-out, the three growth lines and the length marker redrawn.
export function mount(element, params, runtime) {
  const lines = element.querySelectorAll("[data-line]");
  const marker = element.querySelector("[data-marker]");
  runtime.start((result) => {
    runtime.fill(result);
    lines.forEach((line) => line.setAttribute("points", result[line.dataset.line]));
    marker.setAttribute("x1", String(result.marker_x));
    marker.setAttribute("x2", String(result.marker_x));
  });
}
