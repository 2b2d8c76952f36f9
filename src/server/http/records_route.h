// POST /api/v1/tables/{name}/records: a JSON array of objects, or NDJSON (one object a
// line), appended to the table in one commit, on a session of the token's user.
//
// With an `Idempotency-Key` header the commit carries the Delta txn (appId
// "http-records/<first 32 hex digits of the key's SHA-256>", version 1), so a retry with the
// same key commits nothing and answers "skipped": true. Records that do not fit the table
// (unknown fields, missing NOT NULL fields, values of the wrong JSON kind or that do not
// convert to their column's type) fail the request with 400, listing each (record index,
// field), and nothing is committed. With ?deadLetterTable=name they go to that table
// instead, with the rows the table's constraints refuse, through the streams' dead-letter
// writer (stream/dead_letters.h) and under txns derived from the key, before the records'
// commit.
//
// Thread safety: the handler runs on the server's worker threads and shares nothing.
#pragma once

#include <httplib.h>

#include "server/http/http_context.h"

namespace basin::server::http {

void AddRecordsRoute(httplib::Server& server, const HttpContext& context);

}  // namespace basin::server::http
