// The flows page: the streams and pipelines the server runs, from GET /api/v1/flows, with
// Stop and Start (POST /api/v1/flows/{name}/stop and /start). The server lets only admin
// users stop and start flows; anyone else's click is answered with its 403, shown here.

import {call, segment} from './api.js';
import {el, errorElement, rowElement} from './dom.js';
import {refreshEvery} from './refresh.js';

const REFRESH_MS = 5000;

function lastBatch(batch) {
  if (!batch) return null;
  const parts = [batch.batch_id !== null && `batch ${batch.batch_id}`,
                 batch.table_version !== null && `version ${batch.table_version}`,
                 `${batch.rows_out} rows out`, `${batch.duration_ms} ms`];
  return parts.filter(Boolean).join(', ');
}

// The flow's row: its figures, then its buttons; `act(name, action)` stops or starts it.
function flowRow(flow, act) {
  const error = flow.error && `SQLSTATE ${flow.error.sqlstate} ${flow.error.code}: ${flow.error.message}`;
  // What a flow does not have (a pipeline's sink, a lag the source cannot tell) shows as a dash.
  const row = rowElement([flow.name, flow.kind, flow.state, flow.sink, flow.totals.batches, flow.totals.rows_in,
                          flow.totals.rows_out, flow.totals.dead_letters, flow.lag, lastBatch(flow.last_batch),
                          error].map((value) => value ?? '–'));
  row.dataset.flow = flow.name;
  const running = flow.state === 'RUNNING';
  row.append(el('td', {class: 'actions'},
    el('button', {type: 'button', class: 'stop', disabled: !running, onclick: () => act(flow.name, 'stop')}, 'Stop'),
    el('button', {type: 'button', class: 'start', disabled: running, onclick: () => act(flow.name, 'start')}, 'Start')));
  return row;
}

function flowsTable(flows, act) {
  if (flows.length === 0) {
    return el('p', {id: 'flows-none', class: 'empty'},
              'This server runs no streams or pipelines (basin serve --stream, --pipeline).');
  }
  const headings = ['name', 'kind', 'state', 'sink', 'batches', 'rows in', 'rows out', 'dead letters', 'lag',
                    'last batch', 'error', ''];
  return el('div', {class: 'scroll'}, el('table', {id: 'flows', class: 'data'},
    el('thead', {}, el('tr', {}, headings.map((name) => el('th', {}, name)))),
    el('tbody', {}, flows.map((flow) => flowRow(flow, act)))));
}

// Draws #/flows into `view`, refreshed every few seconds while it is shown.
export function renderFlows(view) {
  const status = el('p', {id: 'flows-status', role: 'status'}, 'Loading...');
  const problem = el('div', {id: 'flows-problem'});
  const body = el('div', {id: 'flows-body'});
  view.replaceChildren(el('div', {class: 'flows'}, el('h1', {}, 'Streams and pipelines'), status, problem, body));

  let load = null;
  let shown = null;  // the answer drawn on the page, as JSON text
  const act = async (name, action) => {
    problem.replaceChildren(el('p', {class: 'loading'}, `${action === 'stop' ? 'Stopping' : 'Starting'} ${name}...`));
    try {
      await call(`/api/v1/flows/${segment(name)}/${action}`, {method: 'POST'});
      problem.replaceChildren();
    } catch (error) {
      problem.replaceChildren(errorElement(error, 'flows-action-error'));
    }
    await load();
  };
  load = async () => {
    try {
      const answer = JSON.stringify(await call('/api/v1/flows'));
      // Drawn again only when it changed, so that a button is not replaced under the pointer.
      if (answer !== shown) body.replaceChildren(flowsTable(JSON.parse(answer).flows, act));
      shown = answer;
      status.textContent = `Updated at ${new Date().toLocaleTimeString()}; refreshed every ${REFRESH_MS / 1000} s.`;
    } catch (error) {
      shown = null;
      status.textContent = 'The flows could not be read.';
      body.replaceChildren(errorElement(error, 'flows-error'));
    }
  };
  refreshEvery(REFRESH_MS, load);
}
