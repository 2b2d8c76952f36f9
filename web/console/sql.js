// The SQL editor: runs one statement through POST /api/v1/statements without waiting, polls
// it until it is done (Cancel interrupts it with DELETE), shows its rows a page at a time
// (following the answer's `next`) and charts a numeric column of the rows read so far.

import {call} from './api.js';
import {ChartPanel} from './chart.js';
import {dataTable, el, errorElement, rowElement} from './dom.js';

const PAGE_SIZE = 100;
const POLL_MS = 100;

let editorText = 'SELECT 1 AS one';
// The statement this page runs or reads pages of ({id, next, cancelled}): it holds a place
// on the server until it is read to its end, cancelled or closed.
let current = null;

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// Frees the server's cursor of a statement still running or with pages unread.
export function closeStatement() {
  const statement = current;
  current = null;
  if (!statement || !statement.id) return;
  statement.cancelled = true;
  call(`/api/v1/statements/${statement.id}`, {method: 'DELETE'}).catch(() => {});
}

// Draws the editor into `view`.
export function renderSql(view) {
  const text = el('textarea', {id: 'sql-text', rows: 8, spellcheck: 'false', 'aria-label': 'SQL statement'}, editorText);
  const run = el('button', {id: 'run', type: 'button'}, 'Run');
  const cancel = el('button', {id: 'cancel', type: 'button', disabled: true}, 'Cancel');
  const status = el('p', {id: 'sql-status', role: 'status'});
  const output = el('div', {id: 'sql-output'});
  const chart = new ChartPanel(el('div', {id: 'chart'}));

  const setRunning = (running) => {
    run.disabled = running;
    cancel.disabled = !running;
  };

  // Shows page 0 of `answer` and reads further pages on demand, appending their rows.
  const showResult = (statement, answer) => {
    const columns = answer.columns;
    const rows = [];
    const table = dataTable(columns.map((column) => column.name), [], 'results');
    const more = el('button', {id: 'next-page', type: 'button'}, 'Next page');
    const notices = el('ul', {id: 'notices'});
    const append = (page) => {
      for (const row of page.rows) {
        rows.push(row);
        table.tBodies[0].append(rowElement(row));
      }
      for (const notice of page.notices || []) notices.append(el('li', {}, notice));
      statement.next = page.next || null;
      if (!statement.next && current === statement) current = null;
      more.hidden = !statement.next;
      status.textContent = `${answer.command}: ${rows.length} rows${statement.next ? ' so far; more on the server' : ''}.`;
      chart.show(columns, rows);
    };
    more.addEventListener('click', async () => {
      more.disabled = true;
      try {
        append(await call(statement.next));
      } catch (error) {
        current = null;
        more.replaceWith(errorElement(error, 'sql-error'));
      } finally {
        more.disabled = false;
      }
    });
    output.replaceChildren(notices, el('div', {class: 'scroll'}, table), more);
    append(answer);
  };

  const execute = async () => {
    closeStatement();
    editorText = text.value;
    const statement = {id: null, next: null, cancelled: false};
    current = statement;
    output.replaceChildren();
    chart.container.replaceChildren();
    status.textContent = 'Running...';
    run.disabled = true;
    try {
      let answer = await call('/api/v1/statements', {method: 'POST',
                                                     body: {statement: text.value, wait: false, page_size: PAGE_SIZE}});
      statement.id = answer.statement_id;
      setRunning(true);
      while (answer.status === 'RUNNING' && !statement.cancelled) {
        await sleep(POLL_MS);
        if (!statement.cancelled) answer = await call(answer.next);
      }
      if (!statement.cancelled) showResult(statement, answer);
    } catch (error) {
      // A cancelled statement's last poll may find it gone; Cancel says what happened.
      if (statement.cancelled) return;
      if (current === statement) current = null;
      status.textContent = 'The statement failed.';
      output.replaceChildren(errorElement(error, 'sql-error'));
    } finally {
      if (current === statement || current === null) setRunning(false);
    }
  };

  cancel.addEventListener('click', async () => {
    const statement = current;
    if (!statement || !statement.id) return;
    statement.cancelled = true;
    current = null;
    setRunning(false);
    try {
      const answer = await call(`/api/v1/statements/${statement.id}`, {method: 'DELETE'});
      status.textContent = answer.status === 'CANCELLED'
          ? 'Cancelled: the statement was interrupted and committed nothing.' : 'Closed.';
    } catch (error) {
      output.replaceChildren(errorElement(error, 'sql-error'));
    }
  });
  run.addEventListener('click', execute);
  // Ctrl+Enter (or Cmd+Enter) runs, as in most SQL editors.
  text.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && (event.ctrlKey || event.metaKey) && !run.disabled) execute();
  });

  view.replaceChildren(el('div', {class: 'sql'},
    text, el('div', {class: 'buttons'}, run, cancel), status, output, chart.container));
  text.focus();
}
