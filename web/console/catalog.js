// The catalog browser: schemas, a schema's tables, and a table's columns, history and data
// files, each from a catalog route of the API. The user's grants decide what the routes
// list, so the browser shows only what the user may see.

import {call, segment} from './api.js';
import {dataTable, el, errorElement, rowElement} from './dom.js';

// A list of links, one per name, the chosen one marked.
function linkList(id, names, href, chosen) {
  if (names.length === 0) return el('p', {id, class: 'empty'}, 'None.');
  return el('ul', {id, class: 'links'}, names.map((name) =>
    el('li', {}, el('a', {href: href(name), class: name === chosen ? 'chosen' : null}, name))));
}

// A section whose body is filled once `load` resolves, or shows its error.
function section(title, load) {
  const body = el('div', {}, el('p', {class: 'loading'}, 'Loading...'));
  load().then((content) => body.replaceChildren(content),
              (error) => body.replaceChildren(errorElement(error)));
  return el('section', {}, el('h2', {}, title), body);
}

// DESCRIBE HISTORY's rows (objects) as a table of their keys, version, time and operation first.
function historyTable(history) {
  if (history.length === 0) return el('p', {class: 'empty'}, 'No commits.');
  const first = ['version', 'timestamp', 'operation'];
  const columns = [...first, ...Object.keys(history[0]).filter((key) => !first.includes(key))];
  return el('div', {class: 'scroll'},
            dataTable(columns, history.map((entry) => columns.map((name) => entry[name])), 'history'));
}

// The files of the latest snapshot, a page at a time: "More files" follows the route's `next`.
async function filesTable(table) {
  const first = await call(`/api/v1/tables/${segment(table)}/files`);
  const body = dataTable(['path', 'size_bytes', 'rows'], [], 'files');
  const more = el('button', {type: 'button', id: 'more-files'}, 'More files');
  const summary = el('p', {}, `Version ${first.version}: ${first.num_files} data files.`);
  const show = (page) => {
    for (const file of page.files) body.tBodies[0].append(rowElement([file.path, file.size_bytes, file.rows]));
    more.hidden = !page.next;
    more.onclick = page.next ? () => call(page.next).then(show, (error) => more.replaceWith(errorElement(error))) : null;
  };
  show(first);
  return el('div', {}, summary, el('div', {class: 'scroll'}, body), more);
}

async function columnsTable(table) {
  const described = await call(`/api/v1/tables/${segment(table)}`);
  return dataTable(['name', 'type', 'nullable'],
                   described.columns.map((column) => [column.name, column.type, column.nullable]), 'columns');
}

// Draws #/catalog[/schema[/table]] into `view`.
export function renderCatalog(view, schema, table) {
  const qualified = schema && table ? `${schema}.${table}` : null;
  const schemas = section('Schemas', async () => {
    const answer = await call('/api/v1/schemas');
    return linkList('schemas', answer.schemas, (name) => `#/catalog/${segment(name)}`, schema);
  });
  const tables = schema && section(`Tables of ${schema}`, async () => {
    const answer = await call(`/api/v1/schemas/${segment(schema)}/tables`);
    return linkList('tables', answer.tables, (name) => `#/catalog/${segment(schema)}/${segment(name)}`, table);
  });
  const detail = qualified && el('div', {id: 'table-detail'},
    el('h1', {}, qualified),
    el('p', {}, el('a', {id: 'table-lineage', href: `#/lineage/${segment(qualified)}`}, 'Lineage of this table')),
    section('Columns', () => columnsTable(qualified)),
    section('History', async () => historyTable((await call(`/api/v1/tables/${segment(qualified)}/history`)).history)),
    section('Files', () => filesTable(qualified)));
  view.replaceChildren(el('div', {class: 'catalog'}, el('div', {class: 'lists'}, schemas, tables), detail));
}
