// Pages that refresh what they show while they are open (flows, metrics): one at a time,
// stopped when the view changes (app.js) so that no request outlives its page.

let job = null;

export function stopRefreshing() {
  if (!job) return;
  job.stopped = true;
  clearTimeout(job.timer);
  job = null;
}

// Runs `load` (an async function that shows its own errors) now, then `everyMs` after each
// run ends, until stopRefreshing().
export function refreshEvery(everyMs, load) {
  stopRefreshing();
  const mine = {stopped: false, timer: null};
  job = mine;
  const tick = async () => {
    await load();
    if (!mine.stopped) mine.timer = setTimeout(tick, everyMs);
  };
  tick();
}
