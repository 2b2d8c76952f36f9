// A chart of one numeric column of a result against its first column: bars or a line with a
// point per row, drawn as plain SVG (the metrics page draws its bars with drawChart too).

import {cellText, el, svg} from './dom.js';

// The API's numeric column types. Their values arrive as JSON numbers, or as text for
// DECIMAL and the 128-bit integers, which Number() reads (losing digits past a double's).
const NUMERIC_TYPE = /^(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT|UTINYINT|USMALLINT|UINTEGER|UBIGINT|UHUGEINT|FLOAT|DOUBLE|DECIMAL)\b/;
const MAX_ROWS = 1000;  // a wider chart is no longer readable
const MAX_LABELS = 12;  // labels under the x axis
const WIDTH = 640;
const HEIGHT = 260;
const MARGIN = {top: 12, right: 12, bottom: 36, left: 64};

function formatNumber(value) {
  if (value !== 0 && (Math.abs(value) >= 1e7 || Math.abs(value) < 1e-3)) return value.toExponential(2);
  return String(Number(value.toPrecision(6)));
}

function shorten(text) {
  return text.length > 14 ? `${text.slice(0, 13)}…` : text;
}

// The SVG of `values` (numbers, or null for a row left out) against `labels`, as `kind`
// ('bars' or 'line'): one rect.bar or circle.point per row with a value. `id` and `title`
// name the drawing.
export function drawChart(labels, values, kind, {id = 'chart-svg', title = 'chart of the result'} = {}) {
  const plotWidth = WIDTH - MARGIN.left - MARGIN.right;
  const plotHeight = HEIGHT - MARGIN.top - MARGIN.bottom;
  const known = values.filter((value) => value !== null);
  const low = Math.min(0, ...known);
  const high = Math.max(0, ...known) === low ? low + 1 : Math.max(0, ...known);
  const y = (value) => MARGIN.top + (plotHeight * (high - value)) / (high - low);
  const band = plotWidth / values.length;
  const x = (index) => MARGIN.left + band * (index + 0.5);

  const chart = svg('svg', {id, class: `chart ${kind}`, viewBox: `0 0 ${WIDTH} ${HEIGHT}`, role: 'img',
                            'aria-label': title});
  chart.append(svg('line', {class: 'axis', x1: MARGIN.left, x2: MARGIN.left, y1: MARGIN.top, y2: MARGIN.top + plotHeight}),
               svg('line', {class: 'axis', x1: MARGIN.left, x2: WIDTH - MARGIN.right, y1: y(0), y2: y(0)}));
  for (const tick of new Set([low, 0, high])) {
    chart.append(svg('text', {class: 'tick', x: MARGIN.left - 6, y: y(tick) + 4, 'text-anchor': 'end'}, formatNumber(tick)));
  }
  const labelEvery = Math.ceil(values.length / MAX_LABELS);
  labels.forEach((label, index) => {
    if (index % labelEvery !== 0) return;
    chart.append(svg('text', {class: 'tick', x: x(index), y: HEIGHT - MARGIN.bottom + 16, 'text-anchor': 'middle'},
                     shorten(label)));
  });

  const points = [];
  values.forEach((value, index) => {
    if (value === null) return;
    const title = svg('title', {}, `${labels[index]}: ${formatNumber(value)}`);
    if (kind === 'bars') {
      chart.append(svg('rect', {class: 'bar', x: x(index) - band * 0.4, width: band * 0.8, y: Math.min(y(value), y(0)),
                                height: Math.abs(y(value) - y(0))}, title));
    } else {
      points.push(svg('circle', {class: 'point', cx: x(index), cy: y(value), r: 3}, title));
    }
  });
  if (kind === 'line') {
    const path = points.map((point) => `${point.getAttribute('cx')},${point.getAttribute('cy')}`).join(' ');
    chart.append(svg('polyline', {class: 'line', points: path}), ...points);
  }
  return chart;
}

// The chart under the SQL editor. It keeps the chosen column and kind while more pages of
// the same result arrive.
export class ChartPanel {
  constructor(container) {
    this.container = container;
    this.column = null;
    this.kind = 'bars';
  }

  // Draws `rows` (the rows read so far) of a result with `columns` ([{name, type}]).
  show(columns, rows) {
    // Charted against the first column, so that one is not a choice unless it is alone.
    const choices = columns.map((_, index) => index)
        .filter((index) => (index > 0 || columns.length === 1) && NUMERIC_TYPE.test(columns[index].type));
    if (choices.length === 0 || rows.length === 0) {
      this.container.replaceChildren(el('p', {id: 'chart-none', class: 'empty'}, 'No numeric column to chart.'));
      return;
    }
    if (!choices.includes(this.column)) this.column = choices[0];
    const redraw = () => this.show(columns, rows);
    const columnSelect = el('select', {id: 'chart-column', onchange: (event) => { this.column = Number(event.target.value); redraw(); }},
      choices.map((index) => el('option', {value: index, selected: index === this.column}, columns[index].name)));
    const kindSelect = el('select', {id: 'chart-kind', onchange: (event) => { this.kind = event.target.value; redraw(); }},
      [['bars', 'bars'], ['line', 'a line']].map(([value, text]) => el('option', {value, selected: value === this.kind}, text)));
    const shown = rows.slice(0, MAX_ROWS);
    const values = shown.map((row) => {
      const value = row[this.column] === null ? NaN : Number(row[this.column]);
      return Number.isFinite(value) ? value : null;
    });
    const labels = shown.map((row) => cellText(row[0]));
    const notes = [rows.length > MAX_ROWS && `The first ${MAX_ROWS} of ${rows.length} rows.`,
                   values.includes(null) && 'Rows whose value is NULL or not finite are left out.'].filter(Boolean);
    this.container.replaceChildren(
      el('div', {class: 'chart-controls'},
         el('label', {}, 'Chart ', columnSelect), el('label', {}, ' as ', kindSelect), ` against ${columns[0].name}. `,
         notes.join(' ')),
      drawChart(labels, values, this.kind));
  }
}
