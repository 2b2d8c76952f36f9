// The data quality page: for each pipeline the server runs (GET /api/v1/flows), how the rows
// its flows wrote fared against their expectations, summed from the pipeline's event log
// (docs/pipelines.md "Expectations", "Event log"). The log is read with the user's token
// through POST /api/v1/statements, so the user's grants apply to it as to any table.

import {call} from './api.js';
import {drawChart} from './chart.js';
import {dataTable, el, errorElement} from './dom.js';
import {refreshEvery} from './refresh.js';

const REFRESH_MS = 5000;

// `name` as a quoted SQL identifier.
function quoteIdentifier(name) {
  return `"${name.replaceAll('"', '""')}"`;
}

// The event log's name ("schema.table", as the server gives it) as SQL: the schema is the
// part before the first dot, the table the rest (a pipeline's name may hold dots).
function quoteTableName(qualified) {
  const dot = qualified.indexOf('.');
  return `${quoteIdentifier(qualified.slice(0, dot))}.${quoteIdentifier(qualified.slice(dot + 1))}`;
}

// The expectation summary of the event log `table`: rows of [flow, expectation, action,
// passed rows, failed rows], every page of the answer (one row per flow and expectation: a
// few pages at most, each read so that no cursor is left open on the server).
async function expectationRows(table) {
  const statement = 'SELECT flow, expectation, action, CAST(sum(passed_rows) AS BIGINT) AS passed_rows, ' +
                    `CAST(sum(failed_rows) AS BIGINT) AS failed_rows FROM ${quoteTableName(table)} ` +
                    "WHERE event_type = 'expectation' GROUP BY ALL ORDER BY flow, expectation";
  let answer = await call('/api/v1/statements', {method: 'POST', body: {statement}});
  const rows = [...answer.rows];
  while (answer.next) {
    answer = await call(answer.next);
    rows.push(...answer.rows);
  }
  return rows;
}

function failedFraction(passed, failed) {
  return passed + failed === 0 ? null : failed / (passed + failed);
}

function formatFraction(fraction) {
  return fraction === null ? '–' : `${(fraction * 100).toFixed(1)} %`;
}

// The summary of one pipeline as a table and a chart of the failed fraction per expectation.
function summary(rows, index) {
  if (rows.length === 0) {
    return [el('p', {class: 'empty'}, 'No expectation has checked rows yet.')];
  }
  const fractions = rows.map(([, , , passed, failed]) => failedFraction(passed, failed));
  const table = dataTable(['flow', 'expectation', 'action', 'passed rows', 'failed rows', 'failed'],
                          rows.map((row, at) => [...row, formatFraction(fractions[at])]));
  table.classList.add('expectations');
  const labels = rows.map(([flow, expectation]) => `${flow}: ${expectation}`);
  const title = 'Failed rows per expectation, in %';
  return [el('div', {class: 'scroll'}, table),
          el('figure', {}, el('figcaption', {}, title),
             drawChart(labels, fractions.map((fraction) => (fraction === null ? null : fraction * 100)), 'bars',
                       {id: `quality-chart-${index}`, title}))];
}

// One pipeline's section: its event log's summary, or the error reading it.
async function pipelineSection(flow, index) {
  const section = el('section', {class: 'pipeline-quality', 'data-pipeline': flow.name},
                     el('h2', {}, `${flow.name} `, el('span', {class: 'muted'}, `(event log ${flow.event_log})`)));
  try {
    section.append(...summary(await expectationRows(flow.event_log), index));
  } catch (error) {
    section.append(errorElement(error, `quality-error-${index}`));
  }
  return section;
}

// Draws #/quality into `view`, read again every few seconds while it is shown.
export function renderQuality(view) {
  const status = el('p', {id: 'quality-status', role: 'status'}, 'Loading...');
  const body = el('div', {id: 'quality-body'});
  view.replaceChildren(el('div', {class: 'quality'}, el('h1', {}, 'Data quality'), status, body));
  refreshEvery(REFRESH_MS, async () => {
    try {
      const pipelines = (await call('/api/v1/flows')).flows.filter((flow) => flow.event_log);
      if (pipelines.length === 0) {
        body.replaceChildren(el('p', {id: 'quality-none', class: 'empty'},
                                'This server runs no pipelines (basin serve --pipeline).'));
      } else {
        body.replaceChildren(...await Promise.all(pipelines.map(pipelineSection)));
      }
      status.textContent = `Updated at ${new Date().toLocaleTimeString()}; read again every ${REFRESH_MS / 1000} s.`;
    } catch (error) {
      status.textContent = 'The flows could not be read.';
      body.replaceChildren(errorElement(error, 'quality-flows-error'));
    }
  });
}
