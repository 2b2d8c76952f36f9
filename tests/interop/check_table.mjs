// Interop checker: reads a Delta table with code that shares none with Basin and checks
// that its log and its data files agree.
//
//   BASIN_NODE_MODULES=<folder> node check_table.mjs TABLE_DIR [--expected-live-rows N] [--require-stats]
//
// BASIN_NODE_MODULES is the node_modules folder holding hyparquet, hyparquet-compressors and
// @duckdb/node-api (`scripts/setup.sh --print-node-modules` prints it).
//
// What it does, following PROTOCOL.md and nothing of Basin's:
//   1. Replays _delta_log: the newest complete checkpoint (classic, multi-part or V2 with
//      sidecars, read with hyparquet) plus the JSON commits after it, reconciling add and
//      remove actions by path + deletion-vector id. When every commit since version 0 is
//      present, the JSON-only replay must give the same active files as the checkpoint.
//   2. For every active file: its partitionValues name exactly the partition columns; it
//      exists with the logged size; hyparquet reads it; its row count equals
//      stats.numRecords; every minValues / maxValues / nullCount entry matches the values in
//      the file (string bounds may be truncated: a minimum to a prefix, a maximum to a prefix
//      plus a tie-breaker that keeps it an upper bound; timestamps are compared at millisecond
//      precision, floats at their stored precision; with tightBounds false, min/max need only
//      be bounds; stats use physical column names, as the files do).
//   3. DuckDB's read_parquet counts the rows of every active file (and of every change-data
//      file the commits name); the counts must equal the footers'.
//   4. Live rows are sum(numRecords - deletionVector.cardinality); --expected-live-rows
//      checks them.
// Prints one JSON line (the summary) to stdout. Exit status: 0 when everything matches;
// 1 on a mismatch, each named on stderr with its file and column, or when the log cannot be
// replayed (a missing commit, an unreadable checkpoint); 2 on a bad command line or when
// the checker's own modules cannot be loaded.

import { promises as fs } from 'fs'
import { createRequire } from 'module'
import path from 'path'
import { fileURLToPath, pathToFileURL } from 'url'

class UsageError extends Error {}

// ---- arguments and modules ----

function parseArgs(argv) {
  const args = { table: null, expectedLiveRows: null, requireStats: false }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    if (arg === '--expected-live-rows') {
      const value = argv[++i]
      if (!/^\d+$/.test(value ?? '')) throw new UsageError(`--expected-live-rows needs a count, got '${value}'`)
      args.expectedLiveRows = BigInt(value)
    } else if (arg === '--require-stats') {
      args.requireStats = true
    } else if (arg.startsWith('--')) {
      throw new UsageError(`unknown option ${arg}`)
    } else if (args.table === null) {
      args.table = path.resolve(arg)
    } else {
      throw new UsageError(`unexpected argument ${arg}`)
    }
  }
  if (args.table === null) {
    throw new UsageError('usage: check_table.mjs TABLE_DIR [--expected-live-rows N] [--require-stats]')
  }
  return args
}

async function loadModules() {
  const dir = process.env.BASIN_NODE_MODULES
  if (!dir) {
    throw new UsageError('BASIN_NODE_MODULES is not set; run scripts/setup.sh --print-node-modules for its value')
  }
  const require = createRequire(path.join(path.resolve(dir), 'noop.js'))
  try {
    const load = name => import(pathToFileURL(require.resolve(name)).href)
    const hyparquet = await load('hyparquet')
    const { compressors } = await load('hyparquet-compressors')
    const duckdb = require('@duckdb/node-api')
    return { hyparquet, compressors, duckdb }
  } catch (e) {
    throw new UsageError(`cannot load hyparquet, hyparquet-compressors and @duckdb/node-api from ${dir}: ${e.message}`)
  }
}

// ---- typed values ----

// Parquet timestamps and dates become these instead of JS Dates, so that the comparison
// knows the logical type and floors sub-millisecond parts the way Delta's stats do.
class Timestamp {
  constructor(ms) { this.ms = ms }
}
class Day {
  constructor(days) { this.days = days }
}

const floorDiv = (a, b) => (a >= 0n ? a / b : -((-a + b - 1n) / b))

const PARSERS = {
  timestampFromMilliseconds: v => new Timestamp(Number(v)),
  timestampFromMicroseconds: v => new Timestamp(Number(floorDiv(BigInt(v), 1000n))),
  timestampFromNanoseconds: v => new Timestamp(Number(floorDiv(BigInt(v), 1000000n))),
  dateFromDays: v => new Day(Number(v)),
}

const show = v => {
  if (v instanceof Timestamp) return new Date(v.ms).toISOString()
  if (v instanceof Day) return new Date(v.days * 86400000).toISOString().slice(0, 10)
  if (typeof v === 'bigint') return v.toString()
  return JSON.stringify(v)
}

// A stats timestamp ("2024-01-02T03:04:05.678Z", "...+01:00", or without a zone for
// timestamp_ntz) in milliseconds since the epoch, sub-milliseconds floored; NaN when unparsable.
function statTimestampMs(stat) {
  if (stat instanceof Timestamp) return stat.ms
  if (typeof stat !== 'string') return NaN
  const m = /^([+-]?\d{4,})-(\d\d)-(\d\d)(?:[T ](\d\d):(\d\d)(?::(\d\d)(?:\.(\d+))?)?)?\s*(Z|[+-]\d\d(?::?\d\d)?)?$/.exec(stat)
  if (!m) return NaN
  const ms = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4] ?? 0), Number(m[5] ?? 0),
    Number(m[6] ?? 0), Number((m[7] ?? '').padEnd(3, '0').slice(0, 3)))
  let offsetMs = 0
  if (m[8] && m[8] !== 'Z') {
    const sign = m[8][0] === '-' ? -1 : 1
    const digits = m[8].slice(1).replace(':', '')
    offsetMs = sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2) || 0)) * 60000
  }
  return ms - offsetMs
}

function statDays(stat) {
  if (stat instanceof Day) return stat.days
  if (typeof stat !== 'string') return NaN
  const m = /^([+-]?\d{4,})-(\d\d)-(\d\d)$/.exec(stat)
  return m ? Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])) / 86400000 : NaN
}

const HIGH_CHARS = /[\uD800-\uFFFF]/
// Delta orders strings by their UTF-8 bytes; UTF-16 order differs only above U+D7FF.
function compareStrings(a, b) {
  if (!HIGH_CHARS.test(a) && !HIGH_CHARS.test(b)) return a < b ? -1 : a > b ? 1 : 0
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'))
}

// How a leaf column's values compare, from its Parquet schema element.
function leafKind(element) {
  const ctype = element.converted_type
  const ltype = element.logical_type?.type
  if (ctype === 'DECIMAL' || ltype === 'DECIMAL') return 'decimal'
  if (element.type === 'FLOAT') return 'float'
  if (element.type === 'DOUBLE') return 'double'
  if (element.type === 'BOOLEAN') return 'boolean'
  if (element.type === 'INT96' || ctype === 'TIMESTAMP_MILLIS' || ctype === 'TIMESTAMP_MICROS' || ltype === 'TIMESTAMP') {
    return 'timestamp'
  }
  if (ctype === 'DATE' || ltype === 'DATE') return 'date'
  if (element.type === 'INT32' || element.type === 'INT64') return 'integer'
  if (element.type === 'BYTE_ARRAY' || element.type === 'FIXED_LEN_BYTE_ARRAY') return 'string'
  return 'other'
}

// Compares `a` (from the file or stats) with `b` in the column's order: <0, 0, >0, or NaN
// when the stat cannot be interpreted as a value of the column's type.
function compareValues(kind, a, b) {
  switch (kind) {
    case 'timestamp': {
      const x = a instanceof Timestamp ? a.ms : statTimestampMs(a)
      const y = b instanceof Timestamp ? b.ms : statTimestampMs(b)
      return x - y
    }
    case 'date': {
      const x = a instanceof Day ? a.days : statDays(a)
      const y = b instanceof Day ? b.days : statDays(b)
      return x - y
    }
    case 'integer': {
      if (typeof a !== 'number' && typeof a !== 'bigint') return NaN
      if (typeof b !== 'number' && typeof b !== 'bigint') return NaN
      const exact = v => typeof v === 'bigint' || Number.isSafeInteger(v)
      if (exact(a) && exact(b)) {
        const x = BigInt(a), y = BigInt(b)
        return x < y ? -1 : x > y ? 1 : 0
      }
      return Number(a) - Number(b)  // JSON gave a double for a value past 2^53: compare at that precision
    }
    case 'float':
      if (typeof a !== 'number' || typeof b !== 'number') return NaN
      return Math.fround(a) - Math.fround(b)
    case 'double':
      if (typeof a !== 'number' || typeof b !== 'number') return NaN
      return a - b
    case 'decimal': {
      const x = Number(a), y = Number(b)
      if (typeof a === 'string' || typeof b === 'string' || Number.isNaN(x) || Number.isNaN(y)) return NaN
      // Both sides went through a double; decimals wider than 15 digits are not exact in one.
      return Math.abs(x - y) <= 1e-12 * Math.max(1, Math.abs(x), Math.abs(y)) ? 0 : x - y
    }
    case 'boolean':
      if (typeof a !== 'boolean' || typeof b !== 'boolean') return NaN
      return Number(a) - Number(b)
    case 'string': {
      const text = v => (v instanceof Uint8Array ? Buffer.from(v).toString('utf8') : v)
      const x = text(a), y = text(b)
      if (typeof x !== 'string' || typeof y !== 'string') return NaN
      return compareStrings(x, y)
    }
    default:
      return NaN
  }
}

const codePoints = s => Array.from(s)

// ---- the log ----

const COMMIT = /^(\d{20})\.json$/
const CLASSIC_CHECKPOINT = /^(\d{20})\.checkpoint\.parquet$/
const MULTIPART_CHECKPOINT = /^(\d{20})\.checkpoint\.(\d{10})\.(\d{10})\.parquet$/
const V2_CHECKPOINT = /^(\d{20})\.checkpoint\.[0-9A-Za-z-]+\.(json|parquet)$/

function dvId(dv) {
  if (!dv) return ''
  return `${dv.storageType}${dv.pathOrInlineDv}${dv.offset === null || dv.offset === undefined ? '' : '@' + dv.offset}`
}
const replayKey = action => `${action.path}\u0000${dvId(action.deletionVector)}`

// The active files after applying `actions` in order to `state` (a Map keyed by replayKey).
function applyActions(state, actions) {
  for (const a of actions) {
    if (a.add) state.files.set(replayKey(a.add), a.add)
    else if (a.remove) state.files.delete(replayKey(a.remove))
    else if (a.metaData) state.metadata = a.metaData
    else if (a.protocol) state.protocol = a.protocol
  }
}

async function readJsonLines(file) {
  const text = await fs.readFile(file, 'utf8')
  const actions = []
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '') return
    try {
      actions.push(JSON.parse(line))
    } catch (e) {
      throw new Error(`${file} line ${i + 1} is not JSON: ${e.message}`)
    }
  })
  return actions
}

class Table {
  constructor(root, modules) {
    this.root = root
    this.log = path.join(root, '_delta_log')
    this.hyparquet = modules.hyparquet
    this.compressors = modules.compressors
  }

  async readParquetRows(file, columns) {
    const buffer = await this.hyparquet.asyncBufferFromFile(file)
    const metadata = await this.hyparquet.parquetMetadataAsync(buffer)
    const present = new Set(metadata.schema.slice(1).map(e => e.name))
    const wanted = columns.filter(c => present.has(c))
    if (wanted.length === 0) return []
    return this.hyparquet.parquetReadObjects({
      file: buffer, metadata, columns: wanted, parsers: PARSERS, compressors: this.compressors,
    })
  }

  // Checkpoint rows as log actions (null columns dropped, stats_parsed as stats).
  async readCheckpointParquet(file) {
    const rows = await this.readParquetRows(file, ['add', 'remove', 'metaData', 'protocol', 'sidecar'])
    const actions = []
    for (const row of rows) {
      for (const [name, value] of Object.entries(row)) {
        if (value === null || value === undefined) continue
        if (name === 'add' && value.stats == null && value.stats_parsed != null) value.stats = value.stats_parsed
        actions.push({ [name]: value })
      }
    }
    return actions
  }

  async readCheckpoint(checkpoint) {
    let actions = []
    for (const file of checkpoint.files) {
      const full = path.join(this.log, file)
      actions.push(...(file.endsWith('.json') ? await readJsonLines(full) : await this.readCheckpointParquet(full)))
    }
    const sidecars = actions.filter(a => a.sidecar).map(a => a.sidecar.path)
    actions = actions.filter(a => !a.sidecar)
    for (const sidecar of sidecars) {
      actions.push(...(await this.readCheckpointParquet(path.join(this.log, '_sidecars', sidecar))))
    }
    return actions
  }

  // Replays the log to its newest version. Returns the state and what was compared.
  async replay(errors) {
    let entries
    try {
      entries = await fs.readdir(this.log)
    } catch (e) {
      throw new Error(`${this.root} is not a Delta table: cannot list _delta_log: ${e.message}`)
    }
    const commits = new Map()
    const checkpoints = new Map()  // version -> {files, parts}
    for (const name of entries) {
      let m
      if ((m = COMMIT.exec(name))) {
        commits.set(Number(m[1]), name)
      } else if ((m = CLASSIC_CHECKPOINT.exec(name)) || (m = V2_CHECKPOINT.exec(name))) {
        const version = Number(m[1])
        if (!checkpoints.has(version)) checkpoints.set(version, { version, files: [name], parts: 1 })
      } else if ((m = MULTIPART_CHECKPOINT.exec(name))) {
        const version = Number(m[1])
        const parts = Number(m[3])
        const key = -version - 1  // multi-part sets are collected apart, then replace a missing single file
        if (!checkpoints.has(key)) checkpoints.set(key, { version, files: [], parts })
        checkpoints.get(key).files.push(name)
      }
    }
    for (const [key, cp] of [...checkpoints]) {
      if (key >= 0) continue
      checkpoints.delete(key)
      if (cp.files.length === cp.parts && !checkpoints.has(cp.version)) {
        cp.files.sort()
        checkpoints.set(cp.version, cp)
      }
    }
    const versions = [...commits.keys(), ...checkpoints.keys()]
    if (versions.length === 0) throw new Error(`${this.log} holds no commits or checkpoints`)
    const latest = Math.max(...versions)

    // The newest checkpoint with every later commit present.
    let checkpoint = null
    for (const version of [...checkpoints.keys()].sort((a, b) => b - a)) {
      let contiguous = true
      for (let v = version + 1; v <= latest; v++) if (!commits.has(v)) contiguous = false
      if (contiguous) { checkpoint = checkpoints.get(version); break }
    }
    const first = checkpoint ? checkpoint.version + 1 : 0
    for (let v = first; v <= latest; v++) {
      if (!commits.has(v)) throw new Error(`commit ${v} is missing from ${this.log}, and no checkpoint covers it`)
    }

    const state = { files: new Map(), metadata: null, protocol: null }
    if (checkpoint) applyActions(state, await this.readCheckpoint(checkpoint))
    const jsonOnly = { files: new Map(), metadata: null, protocol: null }
    let replayedFromZero = true
    const cdcFiles = []
    for (let v = 0; v <= latest; v++) {
      if (!commits.has(v)) { replayedFromZero = false; continue }
      const actions = await readJsonLines(path.join(this.log, commits.get(v)))
      for (const a of actions) if (a.cdc) cdcFiles.push({ ...a.cdc, version: v })
      if (replayedFromZero) applyActions(jsonOnly, actions)
      if (v >= first) applyActions(state, actions)
    }

    if (checkpoint && replayedFromZero) compareReplays(state, jsonOnly, checkpoint, errors)
    await checkLastCheckpoint(this.log, checkpoints, errors)
    return { state, latest, checkpoint, cdcFiles, checkpointComparedWithJson: Boolean(checkpoint && replayedFromZero) }
  }

  // A log path (relative and URL-encoded, or an absolute URI) as a local file name.
  filePath(logPath) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(logPath)) {
      if (!logPath.startsWith('file:')) throw new Error(`file ${logPath} is not on the local file system`)
      return fileURLToPath(logPath)
    }
    return path.join(this.root, decodeURIComponent(logPath))
  }
}

function parseStats(add) {
  if (add.stats === null || add.stats === undefined) return null
  if (typeof add.stats === 'object') return add.stats
  try {
    return JSON.parse(add.stats)
  } catch {
    return undefined
  }
}

function compareReplays(fromCheckpoint, fromJson, checkpoint, errors) {
  const where = `checkpoint ${checkpoint.files.join(', ')}`
  for (const [key, add] of fromJson.files) {
    const other = fromCheckpoint.files.get(key)
    if (!other) {
      errors.push(`${where}: active file ${add.path} (from the JSON commits) is missing from the checkpoint replay`)
      continue
    }
    const a = parseStats(add)?.numRecords, b = parseStats(other)?.numRecords
    if (a != null && b != null && BigInt(a) !== BigInt(b)) {
      errors.push(`${where}: file ${add.path} has numRecords ${b} in the checkpoint but ${a} in its commit`)
    }
  }
  for (const [key, add] of fromCheckpoint.files) {
    if (!fromJson.files.has(key)) {
      errors.push(`${where}: file ${add.path} is active after the checkpoint replay but not after the JSON commits`)
    }
  }
}

async function checkLastCheckpoint(log, checkpoints, errors) {
  let text
  try {
    text = await fs.readFile(path.join(log, '_last_checkpoint'), 'utf8')
  } catch {
    return  // optional
  }
  let last
  try {
    last = JSON.parse(text)
  } catch {
    return  // a corrupt hint only costs readers a listing
  }
  if (typeof last.version === 'number' && !checkpoints.has(last.version)) {
    errors.push(`_last_checkpoint names version ${last.version}, which has no complete checkpoint`)
  }
}

// ---- one data file against its stats ----

// Leaf paths of a stats object: {a: {b: 1}} -> [['a', 'b'], 1].
function statLeaves(obj, prefix = [], out = []) {
  if (obj === null || typeof obj !== 'object' || Array.isArray(obj) ||
      obj instanceof Timestamp || obj instanceof Day) {
    out.push([prefix, obj])
    return out
  }
  for (const [k, v] of Object.entries(obj)) statLeaves(v, [...prefix, k], out)
  return out
}

// The Parquet schema element at a stats path, walking struct groups (null when absent).
function schemaLeaf(schemaTree, columnPath) {
  let node = schemaTree
  for (const name of columnPath) {
    node = node.children.find(c => c.element.name === name)
    if (!node) return null
  }
  return node
}

function valueAt(row, columnPath) {
  let v = row
  for (const name of columnPath) {
    if (v === null || v === undefined) return null
    v = v[name]
  }
  return v === undefined ? null : v
}

function isScalar(v) {
  return v === null || typeof v !== 'object' || v instanceof Timestamp || v instanceof Day || v instanceof Uint8Array
}

function checkStringBound(which, stat, actual, fail) {
  if (stat === actual) return
  const statChars = codePoints(stat)
  if (which === 'min') {
    // A truncated minimum is a prefix of the real one.
    if (!actual.startsWith(stat)) fail(`minValues ${show(stat)} is neither the minimum ${show(actual)} nor a prefix of it`)
    return
  }
  // A truncated maximum is a prefix plus a tie-breaker character, and still an upper bound.
  const prefix = statChars.slice(0, -1).join('')
  if (!actual.startsWith(prefix) || compareStrings(stat, actual) < 0) {
    fail(`maxValues ${show(stat)} is neither the maximum ${show(actual)} nor a truncated upper bound of it`)
  }
}

// The partition columns' names as partitionValues keys them: physical names under column
// mapping (PROTOCOL.md "Column Mapping"), else logical. Both are accepted.
function partitionKeySets(metadata) {
  const columns = metadata?.partitionColumns ?? []
  let fields = []
  try {
    fields = JSON.parse(metadata?.schemaString ?? '{}').fields ?? []
  } catch {
    // an unparsable schema leaves only the logical names to compare with
  }
  const physical = columns.map(name => {
    const field = fields.find(f => f.name === name)
    return field?.metadata?.['delta.columnMapping.physicalName'] ?? name
  })
  return [columns, physical].map(names => [...names].sort().join('\u0000'))
}

async function checkFile(table, add, errors, counters, options) {
  const file = table.filePath(add.path)
  const fail = message => errors.push(`file ${add.path}: ${message}`)
  const keys = Object.keys(add.partitionValues ?? {}).sort().join('\u0000')
  if (!options.partitionKeys.includes(keys)) {
    fail(`partitionValues has keys [${Object.keys(add.partitionValues ?? {}).join(', ')}], ` +
         `not the partition columns [${options.partitionKeys[0].split('\u0000').join(', ')}]`)
  }
  let size
  try {
    size = (await fs.stat(file)).size
  } catch (e) {
    fail(`cannot be read: ${e.message}`)
    return null
  }
  if (add.size !== undefined && add.size !== null && BigInt(add.size) !== BigInt(size)) {
    fail(`the log says size ${add.size} but the file has ${size} bytes`)
  }
  const hp = table.hyparquet
  const buffer = await hp.asyncBufferFromFile(file)
  let metadata
  try {
    metadata = await hp.parquetMetadataAsync(buffer)
  } catch (e) {
    fail(`hyparquet cannot read the footer: ${e.message}`)
    return null
  }
  const footerRows = metadata.row_groups.reduce((n, g) => n + BigInt(g.num_rows), 0n)
  const stats = parseStats(add)
  if (stats === undefined) {
    fail('stats is not valid JSON')
    return footerRows
  }
  if (stats === null || stats.numRecords === undefined || stats.numRecords === null) {
    if (options.requireStats) fail('has no stats (numRecords)')
    counters.filesWithoutStats++
    return footerRows
  }
  if (BigInt(stats.numRecords) !== footerRows) {
    fail(`stats.numRecords is ${stats.numRecords} but the Parquet footer has ${footerRows} rows`)
  }
  const wide = stats.tightBounds === false
  const entries = []
  for (const [kind, key] of [['min', 'minValues'], ['max', 'maxValues'], ['nulls', 'nullCount']]) {
    for (const [columnPath, stat] of statLeaves(stats[key] ?? {})) {
      // Checkpoint stats_parsed holds null for the columns a file has no stats for.
      if (stat !== null) entries.push({ kind, key, columnPath, stat })
    }
  }
  if (entries.length === 0) return footerRows

  const schemaTree = hp.parquetSchema(metadata)
  const topLevel = [...new Set(entries.map(e => e.columnPath[0]))]
  let rows
  try {
    rows = await hp.parquetReadObjects({
      file: buffer, metadata, columns: topLevel.filter(c => schemaLeaf(schemaTree, [c])), parsers: PARSERS,
      compressors: table.compressors,
    })
  } catch (e) {
    fail(`hyparquet cannot read columns ${topLevel.join(', ')}: ${e.message}`)
    return footerRows
  }
  if (BigInt(rows.length) !== footerRows) {
    fail(`hyparquet decoded ${rows.length} rows but the footer has ${footerRows}`)
  }

  const summaries = new Map()  // column path -> {min, max, nulls, nan, nonScalar}
  const summarize = (columnPath, kind) => {
    const name = columnPath.join('.')
    if (summaries.has(name)) return summaries.get(name)
    const s = { min: null, max: null, nulls: 0n, nan: false, nonScalar: false }
    for (const row of rows) {
      const v = valueAt(row, columnPath)
      if (v === null) { s.nulls++; continue }
      if (!isScalar(v)) { s.nonScalar = true; continue }
      if (typeof v === 'number' && Number.isNaN(v)) { s.nan = true; continue }
      if (s.min === null || compareValues(kind, v, s.min) < 0) s.min = v
      if (s.max === null || compareValues(kind, v, s.max) > 0) s.max = v
    }
    summaries.set(name, s)
    return s
  }

  for (const { kind, key, columnPath, stat } of entries) {
    const column = columnPath.join('.')
    const failColumn = message => fail(`column ${column}: ${message}`)
    const node = schemaLeaf(schemaTree, columnPath)
    if (!node) {
      // A column the file lacks (added to the schema later) reads as all nulls.
      if (kind === 'nulls' && BigInt(stat) === BigInt(stats.numRecords)) continue
      failColumn(`${key} has ${show(stat)} but the file has no such column`)
      continue
    }
    if (kind === 'nulls') {
      const s = summarize(columnPath, node.children.length ? 'other' : leafKind(node.element))
      const count = BigInt(stat)
      if (wide ? count > s.nulls : count !== s.nulls) failColumn(`nullCount is ${stat} but the file has ${s.nulls} nulls`)
      counters.statsChecked++
      continue
    }
    if (node.children.length) continue  // Delta keeps min/max for leaves only
    const type = leafKind(node.element)
    const s = summarize(columnPath, type)
    if (s.nan && (type === 'float' || type === 'double')) continue  // NaN makes min/max writer-specific
    const actual = kind === 'min' ? s.min : s.max
    if (actual === null) {
      failColumn(`${key} is ${show(stat)} but the column holds only nulls`)
      continue
    }
    counters.statsChecked++
    if (type === 'string') {
      if (typeof stat !== 'string') {
        failColumn(`${key} is ${show(stat)}, not a string`)
      } else if (wide) {
        const c = compareValues(type, stat, actual)
        if (kind === 'min' ? c > 0 && !actual.startsWith(stat) : c < 0) {
          failColumn(`${key} ${show(stat)} is not a bound of the data's ${kind} ${show(actual)}`)
        }
      } else {
        checkStringBound(kind, stat, typeof actual === 'string' ? actual : Buffer.from(actual).toString('utf8'), failColumn)
      }
      continue
    }
    const c = compareValues(type, stat, actual)
    if (Number.isNaN(c)) {
      failColumn(`${key} ${show(stat)} is not a ${type} value`)
    } else if (wide ? (kind === 'min' ? c > 0 : c < 0) : c !== 0) {
      failColumn(`${key} is ${show(stat)} but the data's ${kind} is ${show(actual)}`)
    }
  }
  return footerRows
}

// ---- DuckDB ----

const quoteLiteral = s => `'${s.replaceAll("'", "''")}'`

// Rows per file according to DuckDB's read_parquet.
async function duckdbCounts(duckdb, files) {
  const counts = new Map()
  if (files.length === 0) return counts
  const instance = await duckdb.DuckDBInstance.create(':memory:', {
    autoinstall_known_extensions: 'false',
    autoload_known_extensions: 'false',
  })
  const conn = await instance.connect()
  try {
    const list = `[${files.map(quoteLiteral).join(', ')}]`
    const reader = await conn.runAndReadAll(
      `SELECT filename, count(*)::BIGINT FROM read_parquet(${list}, filename = true, union_by_name = true) GROUP BY filename`)
    for (const [name, count] of reader.getRows()) counts.set(name, BigInt(count))
  } finally {
    conn.closeSync?.()
    instance.closeSync?.()
  }
  return counts
}

// ---- main ----

async function main() {
  const started = Date.now()
  const args = parseArgs(process.argv.slice(2))
  const modules = await loadModules()
  const table = new Table(args.table, modules)
  const errors = []
  const { state, latest, checkpoint, cdcFiles, checkpointComparedWithJson } = await table.replay(errors)

  const counters = { statsChecked: 0, filesWithoutStats: 0 }
  const partitionKeys = partitionKeySets(state.metadata)
  const adds = [...state.files.values()]
  let physicalRows = 0n, deletedRows = 0n, filesWithDv = 0
  const footerRows = new Map()  // local file name -> rows
  for (const add of adds) {
    const rows = await checkFile(table, add, errors, counters, { ...args, partitionKeys })
    if (rows === null) continue
    footerRows.set(table.filePath(add.path), rows)
    const stats = parseStats(add)
    const records = stats?.numRecords != null ? BigInt(stats.numRecords) : rows
    physicalRows += records
    if (add.deletionVector) {
      filesWithDv++
      const cardinality = BigInt(add.deletionVector.cardinality)
      if (cardinality > records) errors.push(`file ${add.path}: its deletion vector deletes ${cardinality} of ${records} rows`)
      deletedRows += cardinality
    }
  }

  let cdcRows = 0n
  const cdcLocal = []
  for (const cdc of cdcFiles) {
    const file = table.filePath(cdc.path)
    try {
      const meta = await modules.hyparquet.parquetMetadataAsync(await modules.hyparquet.asyncBufferFromFile(file))
      const rows = meta.row_groups.reduce((n, g) => n + BigInt(g.num_rows), 0n)
      footerRows.set(file, rows)
      cdcLocal.push(file)
      cdcRows += rows
    } catch (e) {
      errors.push(`change-data file ${cdc.path} (commit ${cdc.version}): hyparquet cannot read it: ${e.message}`)
    }
  }

  const dataFiles = [...footerRows.keys()].filter(f => !cdcLocal.includes(f))
  let duckdbRows = 0n
  try {
    const counts = await duckdbCounts(modules.duckdb, [...footerRows.keys()])
    for (const [file, rows] of footerRows) {
      const counted = counts.get(file) ?? 0n
      if (counted !== rows) errors.push(`file ${path.relative(table.root, file)}: DuckDB read_parquet counts ${counted} rows, the footer ${rows}`)
      if (dataFiles.includes(file)) duckdbRows += counted
    }
  } catch (e) {
    errors.push(`DuckDB read_parquet failed on the active files: ${e.message}`)
  }
  if (errors.length === 0 && duckdbRows !== physicalRows) {
    errors.push(`DuckDB counts ${duckdbRows} rows in the active files, the stats ${physicalRows}`)
  }
  const liveRows = physicalRows - deletedRows
  if (args.expectedLiveRows !== null && liveRows !== args.expectedLiveRows) {
    errors.push(`the table has ${liveRows} live rows, expected ${args.expectedLiveRows}`)
  }

  const summary = {
    ok: errors.length === 0,
    table: args.table,
    version: latest,
    checkpoint: checkpoint ? checkpoint.version : null,
    checkpointComparedWithJson,
    files: adds.length,
    filesWithDeletionVectors: filesWithDv,
    filesWithoutStats: counters.filesWithoutStats,
    numRecords: Number(physicalRows),
    deletedByDeletionVectors: Number(deletedRows),
    liveRows: Number(liveRows),
    duckdbRows: Number(duckdbRows),
    statsValuesChecked: counters.statsChecked,
    changeDataFiles: cdcLocal.length,
    changeDataRows: Number(cdcRows),
    errors: errors.length,
    ms: Date.now() - started,
  }
  for (const e of errors.slice(0, 50)) console.error(`interop mismatch: ${e}`)
  if (errors.length > 50) console.error(`interop: ${errors.length - 50} more mismatches`)
  console.log(JSON.stringify(summary))
  return errors.length === 0 ? 0 : 1
}

main().then(code => { process.exitCode = code }, e => {
  if (e instanceof UsageError) {
    console.error(`interop checker: ${e.message}`)
    process.exitCode = 2
  } else {
    // A checker bug shows its stack; a table that cannot be replayed, its message.
    const bug = e instanceof TypeError || e instanceof RangeError || e instanceof ReferenceError
    console.error(`interop mismatch: ${bug ? e.stack : e.message}`)
    process.exitCode = 1
  }
})
