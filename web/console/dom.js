// Building the page's elements. Text always goes in as text (textContent), never as HTML,
// so a value from a table cannot become markup or script.

const SVG_NS = 'http://www.w3.org/2000/svg';

function build(node, attributes, children) {
  for (const [name, value] of Object.entries(attributes || {})) {
    if (name.startsWith('on')) node.addEventListener(name.slice(2), value);
    else if (value !== false && value !== undefined && value !== null) node.setAttribute(name, value === true ? '' : value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

// An HTML element: el('a', {href: '#/sql', onclick: f}, 'text', otherElement).
export function el(tag, attributes, ...children) {
  return build(document.createElement(tag), attributes, children);
}

// An SVG element, as el().
export function svg(tag, attributes, ...children) {
  return build(document.createElementNS(SVG_NS, tag), attributes, children);
}

// A cell's text: NULL for null, JSON for lists and structs, the value's text otherwise.
export function cellText(value) {
  if (value === null) return 'NULL';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

// A table of `columns` (their names) and `rows` (arrays of values), with `id` if given.
export function dataTable(columns, rows, id) {
  return el('table', {id, class: 'data'},
    el('thead', {}, el('tr', {}, columns.map((name) => el('th', {}, name)))),
    el('tbody', {}, rows.map((row) => rowElement(row))));
}

// One body row of a dataTable; NULL cells are marked so that they differ from the text 'NULL'.
export function rowElement(row) {
  return el('tr', {}, row.map((value) => el('td', {class: value === null ? 'null' : null}, cellText(value))));
}

// An error from the API as one line: its SQLSTATE and code first, then the server's message.
export function errorElement(error, id) {
  const where = [error.sqlstate && `SQLSTATE ${error.sqlstate}`, error.code].filter(Boolean).join(' ');
  return el('p', {id, class: 'error', role: 'alert'}, where ? `${where}: ${error.message}` : error.message);
}
