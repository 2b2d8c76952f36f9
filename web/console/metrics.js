// The metrics page: GET /metrics (Prometheus's text format, docs/server.md "Metrics") read
// every few seconds while the page is open, shown as per-table figures with bar charts and
// the server's connections and statements by outcome.

import {call} from './api.js';
import {drawChart} from './chart.js';
import {dataTable, el, errorElement} from './dom.js';
import {refreshEvery} from './refresh.js';

const REFRESH_MS = 5000;
const OUTCOMES = ['ok', 'error', 'cancelled', 'denied'];
const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*/;
const ESCAPES = {'\\': '\\', '"': '"', n: '\n'};

// A sample value: a float, or NaN, +Inf, -Inf.
function sampleValue(text, where) {
  if (text === '+Inf' || text === 'Inf') return Infinity;
  if (text === '-Inf') return -Infinity;
  if (text === 'NaN') return NaN;
  const value = Number(text);
  if (text === '' || Number.isNaN(value)) throw new Error(`${where}: "${text}" is not a sample value`);
  return value;
}

// One sample line, `name{label="value",...} value [timestamp]`, as {name, labels, value}.
function parseSample(line, where) {
  const name = NAME.exec(line);
  if (!name) throw new Error(`${where}: no metric name`);
  const labels = {};
  let at = name[0].length;
  if (line[at] === '{') {
    at += 1;
    for (;;) {
      while (line[at] === ' ' || line[at] === ',') at += 1;
      if (line[at] === '}') break;
      const label = LABEL_NAME.exec(line.slice(at));
      if (!label || line.slice(at + label[0].length, at + label[0].length + 2) !== '="') {
        throw new Error(`${where}: a label must be name="value"`);
      }
      at += label[0].length + 2;
      let value = '';
      while (line[at] !== '"') {
        if (at >= line.length) throw new Error(`${where}: the value of label ${label[0]} is not closed`);
        if (line[at] === '\\' && line[at + 1] in ESCAPES) {
          value += ESCAPES[line[at + 1]];
          at += 2;
        } else {
          value += line[at];
          at += 1;
        }
      }
      labels[label[0]] = value;
      at += 1;
    }
    at += 1;
  }
  return {name: name[0], labels, value: sampleValue(line.slice(at).trim().split(/\s+/)[0], where)};
}

// The samples of an exposition in Prometheus's text format 0.0.4: comments and blank lines
// skipped. Throws an Error naming the line of a sample it cannot read.
export function parsePrometheus(text) {
  const samples = [];
  text.split('\n').forEach((line, index) => {
    if (line.trim() === '' || line.startsWith('#')) return;
    samples.push(parseSample(line, `line ${index + 1} of /metrics`));
  });
  return samples;
}

function formatBytes(bytes) {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(1)} ${units[unit]}`;
}

function formatAge(seconds) {
  if (!Number.isFinite(seconds)) return '–';
  if (seconds < 120) return `${Math.round(seconds)} s ago`;
  if (seconds < 7200) return `${Math.round(seconds / 60)} min ago`;
  if (seconds < 172800) return `${Math.round(seconds / 3600)} h ago`;
  return `${Math.round(seconds / 86400)} days ago`;
}

// Per table ("schema.table"): {version, files, small_files, bytes, age_seconds}, by name.
function tableFigures(samples) {
  const figures = new Map();
  const keys = {basin_table_version: 'version', basin_table_files: 'files', basin_table_small_files: 'small_files',
                basin_table_bytes: 'bytes', basin_table_last_commit_age_seconds: 'age_seconds'};
  for (const sample of samples) {
    const key = keys[sample.name];
    if (!key) continue;
    const table = `${sample.labels.schema}.${sample.labels.table}`;
    if (!figures.has(table)) figures.set(table, {});
    figures.get(table)[key] = sample.value;
  }
  return new Map([...figures.entries()].sort(([a], [b]) => a.localeCompare(b)));
}

function tablesSection(samples) {
  const figures = tableFigures(samples);
  const errors = samples.find((sample) => sample.name === 'basin_table_scrape_errors');
  const note = errors && errors.value > 0 &&
      el('p', {class: 'error'}, `${errors.value} tables could not be read and are left out.`);
  if (figures.size === 0) return [note, el('p', {id: 'metrics-no-tables', class: 'empty'}, 'No tables.')];
  const names = [...figures.keys()];
  const rows = names.map((name) => {
    const f = figures.get(name);
    return [name, f.version ?? '–', f.files ?? '–', f.small_files ?? '–',
            f.bytes === undefined ? '–' : formatBytes(f.bytes), formatAge(f.age_seconds)];
  });
  const chart = (key, id, title) =>
    el('figure', {}, el('figcaption', {}, title),
       drawChart(names, names.map((name) => figures.get(name)[key] ?? null), 'bars', {id, title}));
  return [note,
          el('div', {class: 'scroll'},
             dataTable(['table', 'version', 'files', 'small files', 'bytes', 'last commit'], rows, 'metrics-tables')),
          el('div', {class: 'charts'},
             chart('files', 'chart-files', 'Data files per table'),
             chart('small_files', 'chart-small-files', 'Small files per table'),
             chart('bytes', 'chart-bytes', 'Bytes per table'))];
}

function serverSection(samples) {
  const protocols = new Map();
  const of = (protocol) => {
    if (!protocols.has(protocol)) protocols.set(protocol, {connections: 0, queries: {}});
    return protocols.get(protocol);
  };
  for (const sample of samples) {
    if (sample.name === 'basin_connections') of(sample.labels.protocol).connections = sample.value;
    if (sample.name === 'basin_queries_total') of(sample.labels.protocol).queries[sample.labels.outcome] = sample.value;
  }
  const rows = [...protocols.entries()].map(([protocol, figures]) =>
    [protocol, figures.connections, ...OUTCOMES.map((outcome) => figures.queries[outcome] ?? 0)]);
  const totals = OUTCOMES.map((outcome) =>
    [...protocols.values()].reduce((sum, figures) => sum + (figures.queries[outcome] ?? 0), 0));
  return [dataTable(['protocol', 'connections open', ...OUTCOMES.map((outcome) => `statements ${outcome}`)], rows,
                    'metrics-server'),
          el('figure', {}, el('figcaption', {}, 'Statements by outcome'),
             drawChart(OUTCOMES, totals, 'bars', {id: 'chart-queries', title: 'Statements by outcome'}))];
}

// Draws #/metrics into `view`, read again every few seconds while it is shown.
export function renderMetrics(view) {
  const status = el('p', {id: 'metrics-status', role: 'status'}, 'Loading...');
  const problem = el('div', {id: 'metrics-problem'});
  const tables = el('section', {id: 'metrics-table-figures'});
  const server = el('section', {id: 'metrics-server-figures'});
  view.replaceChildren(el('div', {class: 'metrics'}, el('h1', {}, 'Metrics'), status, problem,
                          el('h2', {}, 'Tables'), tables, el('h2', {}, 'Server'), server));
  refreshEvery(REFRESH_MS, async () => {
    try {
      const samples = parsePrometheus(await call('/metrics', {text: true}));
      tables.replaceChildren(...tablesSection(samples).filter(Boolean));
      server.replaceChildren(...serverSection(samples));
      problem.replaceChildren();
      status.textContent = `Updated at ${new Date().toLocaleTimeString()}; read again every ${REFRESH_MS / 1000} s.`;
    } catch (error) {
      // The last figures stay; the error says why they are not fresh.
      problem.replaceChildren(errorElement(error, 'metrics-error'));
    }
  });
}
