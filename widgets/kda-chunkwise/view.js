// Chunkwise KDA view: agreement and timing sentences by data-out, the chunk timeline redrawn.
function fillChunk(item, chunk) {
  const field = (name) => item.querySelector(`[data-field=${name}]`);
  field("number").textContent = String(chunk.index + 1);
  field("tokens").textContent = `${chunk.start + 1}–${chunk.end}`;
  field("max_log10_reciprocal").textContent = String(chunk.max_log10_reciprocal);
  field("bf16").textContent = chunk.bf16_dense_finite ? "finite" : "inf or NaN";
  field("state_norm").textContent = String(chunk.state_norm);
  item.className = chunk.bf16_dense_finite ? "is-finite" : "is-overflow";
}

function drawTimeline(list, chunks) {
  const model = list.firstElementChild;
  while (list.children.length > chunks.length) list.lastElementChild.remove();
  while (list.children.length < chunks.length) list.append(model.cloneNode(true));
  chunks.forEach((chunk, i) => fillChunk(list.children[i], chunk));
}

export function mount(element, params, runtime) {
  const list = element.querySelector("[data-chunks]");
  runtime.start((result) => {
    runtime.fill(result);
    drawTimeline(list, result.chunks);
  });
}
