// The review session's order: the questions due, interleaved across the units they come from.

/** Return the due items (progress.js's store.due(): oldest due first) in the session's order: one
 * from each unit in turn, units in the order of their first due question, each unit's own in due
 * order. The same due list always gives the same order. */
export function interleaved(due) {
  const units = new Map();
  for (const item of due) {
    const unit = item.id.slice(0, item.id.indexOf("/"));
    if (!units.has(unit)) units.set(unit, []);
    units.get(unit).push(item);
  }
  const queues = [...units.values()];
  const order = [];
  for (let round = 0; order.length < due.length; round++) {
    for (const queue of queues) if (round < queue.length) order.push(queue[round]);
  }
  return order;
}
