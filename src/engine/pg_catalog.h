// PostgreSQL's catalog as clients read it (psql's \l \dn \dt \d \dv, JDBC's DatabaseMetaData),
// over DuckDB's own pg_catalog views. Installed in DuckDB's system catalog, so every
// connection of the database (`basin sql` and `basin serve` alike) sees it:
//
// - pg_type lists PostgreSQL's types with their real OIDs (engine/pg_types.h), and
//   pg_attribute gives each column the OID and typmod of the type the server sends its
//   values as; format_type writes PostgreSQL's names ("bigint", "numeric(12,2)").
// - pg_database shows the warehouse's catalog; pg_collation and pg_inherits are empty.
// - Functions PostgreSQL clients call qualified that DuckDB lacks or keeps elsewhere
//   (pg_get_userbyid, pg_encoding_to_char, array_to_string...) are macros of pg_catalog,
//   and regclass, regtype and oid are types (BIGINT) there.
//
// This header is free of DuckDB's C++ API, so engine/duckdb.cc can call it.
//
// Thread safety: call once per database, before it runs queries.
#pragma once

#include "basin/status.h"

struct _duckdb_database;  // NOLINT(bugprone-reserved-identifier): DuckDB's C handle type

namespace basin::engine {

// The owner every catalog object is shown with (pg_get_userbyid): the warehouse has no
// owners yet.
inline constexpr char kPgCatalogOwner[] = "basin";

// basin_regclass(name): the OID of the relation `name` (pg_class.relname), or the number a
// numeric string holds; what sql/grammar/desugar.h makes of `'name'::regclass`.
inline constexpr char kRegclassFunction[] = "pg_catalog.basin_regclass";

// Creates the functions and views above in `database`'s pg_catalog schema, replacing
// DuckDB's where they exist. Internal when DuckDB refuses one, naming it.
Status InstallPgCatalog(_duckdb_database* database);

}  // namespace basin::engine
