// Growth step by step: every output is text, filled in by data-out.
export function mount(element, params, runtime) {
  runtime.start((result) => runtime.fill(result));
}
