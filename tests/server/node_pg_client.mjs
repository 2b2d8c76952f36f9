// node-postgres (npm `pg`), a driver written independently of Basin, against `basin serve`:
// SCRAM, the extended protocol with parameters, types, errors' SQLSTATEs. (Cancelling is
// tested with psql: this driver version's Client.cancel does nothing for a query it pipelined.)
// Usage: node node_pg_client.mjs PORT PASSWORD. Prints one JSON object of what it saw; exits
// 1 with the error when a step fails unexpectedly.
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(path.join(process.env.BASIN_NODE_MODULES, 'noop.js'));
const pg = require('pg');

const [port, password] = process.argv.slice(2);
const config = { host: '127.0.0.1', port: Number(port), user: 'admin', database: 'basin', password };

async function errorOf(promise) {
  try {
    await promise;
    return null;
  } catch (error) {
    return { code: error.code, message: error.message };
  }
}

// Parse and Describe of the unnamed statement, then Sync, on the client's connection with
// its own handlers set aside (node-postgres has no call for a statement's Describe, which
// pgjdbc and others rely on): the ParameterDescription and RowDescription (or NoData) seen.
async function describeStatement(client, text, types = []) {
  const con = client.connection;
  const events = ['parseComplete', 'parameterDescription', 'rowDescription', 'noData', 'readyForQuery', 'errorMessage'];
  const saved = Object.fromEntries(events.map((e) => [e, con.listeners(e)]));
  events.forEach((e) => con.removeAllListeners(e));
  const described = {};
  await new Promise((resolve) => {
    con.on('parameterDescription', (m) => { described.parameters = m.dataTypeIDs; });
    con.on('rowDescription', (m) => { described.fields = m.fields.map((f) => [f.name, f.dataTypeID]); });
    con.on('noData', () => { described.noData = true; });
    con.on('errorMessage', (m) => { described.error = m.code; });
    con.on('readyForQuery', () => resolve());
    con.parse({ name: '', text, types });
    con.describe({ type: 'S', name: '' });
    con.sync();
  });
  events.forEach((e) => {
    con.removeAllListeners(e);
    saved[e].forEach((listener) => con.on(e, listener));
  });
  return described;
}

const seen = {};
const client = new pg.Client(config);
await client.connect();
await client.query('CREATE TABLE events (id BIGINT, name VARCHAR, score DOUBLE, ok BOOLEAN, day DATE)');
const inserted = await client.query('INSERT INTO events VALUES ($1, $2, $3, $4, $5), ($6, $7, NULL, NULL, NULL)',
                                    [1, "it's", 2.5, true, '2024-06-15', 2, null]);
seen.insertCommand = inserted.command;
seen.insertRowCount = inserted.rowCount;
const selected = await client.query('SELECT id, name, score, ok, day FROM events WHERE id >= $1 ORDER BY id', [1]);
seen.rows = selected.rows.map((r) => ({ ...r, day: r.day === null ? null : r.day.toISOString().slice(0, 10) }));
seen.fields = selected.fields.map((f) => [f.name, f.dataTypeID]);
// A prepared statement reused with other values.
const named = { name: 'by_id', text: 'SELECT name FROM events WHERE id = $1', values: [2] };
seen.named = [(await client.query(named)).rows, (await client.query({ ...named, values: [1] })).rows];
// Parameters are data: a hostile one is a value, never SQL.
seen.hostile = (await client.query('SELECT count(*) AS n FROM events WHERE name = $1', ["x' OR '1'='1"])).rows;
seen.missingTable = await errorOf(client.query('SELECT * FROM nothing_here WHERE id = $1', [1]));
seen.afterError = (await client.query('SELECT $1::INTEGER + 1 AS n', [41])).rows;
// Row-limited reads through a cursor-like portal: node's `rowMode: array` with many rows.
seen.many = (await client.query('SELECT count(*) AS n FROM range(100000) t(i) WHERE i % $1 = 0', [7])).rows;
// Describe of a prepared statement: its result's columns before it runs.
seen.describedQuery = await describeStatement(client, 'SELECT id, name, score > $1 AS high FROM events WHERE day < $2');
seen.describedWrite = await describeStatement(client, 'INSERT INTO events (id) VALUES ($1)');
seen.describedUntypable = await describeStatement(client, 'SELECT id + $1 AS n FROM events');
// ReadyForQuery's transaction status after each statement: idle, in a block, failed block.
const statuses = [];
client.connection.on('readyForQuery', (m) => statuses.push(m.status));
await client.query('BEGIN');
await client.query('SELECT 1');
seen.inFailedBlock = [await errorOf(client.query('SELECT nope')), await errorOf(client.query('SELECT $1::INT', [1]))]
  .map((e) => e && e.code);
seen.commitOfFailedBlock = (await client.query('COMMIT')).command;
await client.query('SELECT 1');
seen.statuses = statuses.join('');
await client.end();
seen.wrongPassword = await errorOf(new pg.Client({ ...config, password: 'wrong' }).connect());
seen.wrongDatabase = await errorOf(new pg.Client({ ...config, database: 'nope' }).connect());
console.log(JSON.stringify(seen));
