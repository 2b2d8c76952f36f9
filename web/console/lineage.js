// The lineage page: a table's upstream and downstream tables from
// GET /api/v1/tables/{name}/lineage, drawn as an SVG graph with a column per distance
// (upstream to the left, downstream to the right) and listed as a table of edges. The route
// leaves out the tables the user may not read. Clicking a table shows its own lineage.

import {call, segment} from './api.js';
import {dataTable, el, errorElement, svg} from './dom.js';

const NODE_WIDTH = 180;
const NODE_HEIGHT = 30;
const COLUMN_STEP = 260;  // from one column's left edge to the next's
const ROW_STEP = 48;
const MARGIN = 24;
const MAX_SCHEMAS = 50;  // listed in the table picker

function shorten(text) {
  return text.length > 24 ? `${text.slice(0, 23)}…` : text;
}

// Where each node is: {table: {x, y}} (its top left corner), and the drawing's size.
function layout(nodes) {
  const columns = new Map();
  for (const node of nodes) {
    if (!columns.has(node.distance)) columns.set(node.distance, []);
    columns.get(node.distance).push(node.table);
  }
  const distances = [...columns.keys()].sort((a, b) => a - b);
  const tallest = Math.max(...[...columns.values()].map((column) => column.length));
  const height = 2 * MARGIN + tallest * ROW_STEP - (ROW_STEP - NODE_HEIGHT);
  const places = new Map();
  distances.forEach((distance, index) => {
    const column = columns.get(distance).sort();
    const top = (height - (column.length * ROW_STEP - (ROW_STEP - NODE_HEIGHT))) / 2;
    column.forEach((table, row) => places.set(table, {x: MARGIN + index * COLUMN_STEP, y: top + row * ROW_STEP}));
  });
  const width = 2 * MARGIN + (distances.length - 1) * COLUMN_STEP + NODE_WIDTH;
  return {places, width, height};
}

// An edge's path: from the source's right side to the target's left when the target is
// further right; otherwise (a cycle, or two tables at one distance) a loop out to the right.
function edgePath(from, to) {
  const y1 = from.y + NODE_HEIGHT / 2;
  const y2 = to.y + NODE_HEIGHT / 2;
  const x1 = from.x + NODE_WIDTH;
  if (to.x > from.x) {
    const bend = (to.x - x1) / 2;
    return `M${x1},${y1} C${x1 + bend},${y1} ${to.x - bend},${y2} ${to.x},${y2}`;
  }
  const x2 = to.x + NODE_WIDTH;
  const out = Math.max(x1, x2) + 48;
  return `M${x1},${y1} C${out},${y1} ${out},${y2} ${x2},${y2}`;
}

// The graph of `answer` (the route's JSON); a node's click shows that table's lineage.
function graph(answer) {
  const {places, width, height} = layout(answer.nodes);
  const drawing = svg('svg', {id: 'lineage-svg', class: 'lineage', viewBox: `0 0 ${width} ${height}`,
                              width, height, role: 'img', 'aria-label': `lineage of ${answer.table}`});
  drawing.append(svg('defs', {},
    svg('marker', {id: 'lineage-arrow', viewBox: '0 0 10 10', refX: 10, refY: 5, markerWidth: 8, markerHeight: 8,
                   orient: 'auto'}, svg('path', {d: 'M0,0 L10,5 L0,10 z', class: 'arrow'}))));
  for (const edge of answer.edges) {
    drawing.append(svg('path', {class: 'edge', d: edgePath(places.get(edge.source), places.get(edge.target)),
                                'marker-end': 'url(#lineage-arrow)', 'data-source': edge.source,
                                'data-target': edge.target},
                       svg('title', {}, `${edge.source} → ${edge.target} (${edge.operation})`)));
  }
  for (const node of answer.nodes) {
    const {x, y} = places.get(node.table);
    const chosen = node.table === answer.table;
    const show = () => { location.hash = `#/lineage/${segment(node.table)}`; };
    drawing.append(svg('g', {class: chosen ? 'node chosen' : 'node', 'data-table': node.table, tabindex: 0,
                             role: 'link', onclick: show,
                             onkeydown: (event) => { if (event.key === 'Enter') show(); }},
      svg('title', {}, node.table),
      svg('rect', {x, y, width: NODE_WIDTH, height: NODE_HEIGHT, rx: 4}),
      svg('text', {x: x + NODE_WIDTH / 2, y: y + NODE_HEIGHT / 2 + 4, 'text-anchor': 'middle'}, shorten(node.table))));
  }
  return drawing;
}

function edgesTable(edges) {
  return dataTable(['source', 'target', 'operation', 'first seen'],
                   edges.map((edge) => [edge.source, edge.target, edge.operation, edge.first_seen]), 'lineage-edges');
}

// The tables of the first schemas, for the picker's suggestions; none if they cannot be read.
async function fillSuggestions(list) {
  try {
    const {schemas} = await call('/api/v1/schemas');
    for (const schema of schemas.slice(0, MAX_SCHEMAS)) {
      const {tables} = await call(`/api/v1/schemas/${segment(schema)}/tables`);
      list.append(...tables.map((table) => el('option', {value: `${schema}.${table}`})));
    }
  } catch {
    // The picker still takes a typed name; the graph's own request shows errors.
  }
}

// Draws #/lineage[/table] into `view`.
export function renderLineage(view, table) {
  const suggestions = el('datalist', {id: 'lineage-tables'});
  const input = el('input', {id: 'lineage-table', list: 'lineage-tables', placeholder: 'schema.table',
                             spellcheck: 'false', value: table || '', 'aria-label': 'table'});
  const form = el('form', {id: 'lineage-form', class: 'buttons'}, input,
                  el('button', {id: 'lineage-show', type: 'submit'}, 'Show lineage'), suggestions);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    if (input.value.trim()) location.hash = `#/lineage/${segment(input.value.trim())}`;
  });
  const body = el('div', {id: 'lineage-body'});
  view.replaceChildren(el('div', {class: 'lineage-page'}, el('h1', {}, 'Lineage'), form, body));
  fillSuggestions(suggestions);
  if (!table) {
    body.append(el('p', {class: 'empty'}, 'Choose a table to see what feeds it and what it feeds.'));
    return;
  }
  body.append(el('p', {class: 'loading'}, 'Loading...'));
  call(`/api/v1/tables/${segment(table)}/lineage`).then((answer) => {
    const note = answer.edges.length === 0
        ? `No lineage is recorded for ${answer.table}, or none you may read.`
        : `${answer.table}: upstream to the left, downstream to the right, up to ${answer.max_hops} hops ` +
          'each way. Tables you may not read are left out. Click a table to see its lineage.';
    body.replaceChildren(el('p', {id: 'lineage-note'}, note), el('div', {class: 'scroll-x'}, graph(answer)),
                         el('h2', {}, 'Edges'), edgesTable(answer.edges));
  }, (error) => body.replaceChildren(errorElement(error, 'lineage-error')));
}
