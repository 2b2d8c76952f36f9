// InstallPgCatalog (engine/pg_catalog.h): Basin's pg_catalog functions and views, created
// in DuckDB's system catalog through its C++ API.
#include "engine/pg_catalog.h"

#include <string>

#include "common/strings.h"
#include "duckdb/catalog/catalog.hpp"
#include "duckdb/catalog/catalog_entry/schema_catalog_entry.hpp"
#include "duckdb/common/vector_operations/binary_executor.hpp"
#include "duckdb/common/vector_operations/unary_executor.hpp"
#include "duckdb/main/capi/capi_internal.hpp"
#include "duckdb/main/config.hpp"
#include "duckdb/main/connection.hpp"
#include "duckdb/parser/parsed_data/create_macro_info.hpp"
#include "duckdb/parser/parsed_data/create_scalar_function_info.hpp"
#include "duckdb/parser/parsed_data/create_type_info.hpp"
#include "duckdb/parser/parsed_data/create_view_info.hpp"
#include "duckdb/parser/parser.hpp"
#include "duckdb/parser/statement/create_statement.hpp"
#include "engine/pg_types.h"

namespace basin::engine {
namespace {

constexpr char kPgCatalog[] = "pg_catalog";

std::string_view View(const duckdb::string_t& s) { return {s.GetData(), s.GetSize()}; }

// basin_pg_type_oid(duckdb_type): the OID of the PostgreSQL type a column of that DuckDB
// type is sent as.
void PgTypeOidFunction(duckdb::DataChunk& args, duckdb::ExpressionState&, duckdb::Vector& result) {
  duckdb::UnaryExecutor::Execute<duckdb::string_t, int32_t>(
      args.data[0], result, args.size(),
      [](duckdb::string_t type) { return static_cast<int32_t>(PgColumnTypeOf(View(type)).oid); });
}

// basin_pg_typmod(duckdb_type): its typmod (numeric's precision and scale, else -1).
void PgTypmodFunction(duckdb::DataChunk& args, duckdb::ExpressionState&, duckdb::Vector& result) {
  duckdb::UnaryExecutor::Execute<duckdb::string_t, int32_t>(
      args.data[0], result, args.size(),
      [](duckdb::string_t type) { return PgColumnTypeOf(View(type)).typmod; });
}

// basin_format_type(oid, typmod): PostgreSQL's format_type.
void FormatTypeFunction(duckdb::DataChunk& args, duckdb::ExpressionState&, duckdb::Vector& result) {
  duckdb::BinaryExecutor::Execute<int64_t, int32_t, duckdb::string_t>(
      args.data[0], args.data[1], result, args.size(), [&](int64_t oid, int32_t typmod) {
        return duckdb::StringVector::AddString(result, FormatPgType(oid, typmod));
      });
}

// PostgreSQL's functions that clients call qualified by pg_catalog, which DuckDB lacks or
// keeps in its main schema (a qualified call does not look there).
const char* const kMacros[] = {
    // Identifiers of catalog rows, which PostgreSQL clients cast to: numbers here.
    "CREATE TYPE pg_catalog.oid AS BIGINT",
    "CREATE TYPE pg_catalog.regclass AS BIGINT",
    "CREATE TYPE pg_catalog.regtype AS BIGINT",
    "CREATE TYPE pg_catalog.regproc AS BIGINT",
    "CREATE TYPE pg_catalog.regnamespace AS BIGINT",
    "CREATE MACRO pg_catalog.format_type(type_oid, typemod) AS basin_format_type(type_oid, typemod)",
    "CREATE MACRO pg_catalog.pg_encoding_to_char(encoding) AS 'UTF8'",
    "CREATE MACRO pg_catalog.pg_get_expr(expression, relation) AS expression, "
    "(expression, relation, pretty) AS expression",
    "CREATE MACRO pg_catalog.basin_regclass(name) AS coalesce(TRY_CAST(name AS BIGINT), "
    "(SELECT min(oid) FROM pg_catalog.pg_class WHERE relname = CAST(name AS VARCHAR)))",
    "CREATE MACRO pg_catalog.array_upper(list, dimension) AS CASE WHEN dimension = 1 THEN len(list) END",
    "CREATE MACRO pg_catalog.pg_relation_is_publishable(relation) AS false",
    "CREATE MACRO pg_catalog.pg_get_statisticsobjdef_columns(statistics) AS CAST(NULL AS VARCHAR)",
    // The elements of an array with their positions: what JDBC's getPrimaryKeys reads
    // pg_index.indkey with (no table has a primary key yet).
    "CREATE MACRO information_schema._pg_expandarray(list) AS "
    "unnest(list_transform(list, (element, position) -> {'x': element, 'n': position}))",
    "CREATE MACRO pg_catalog.array_to_string(list, separator) AS "
    "\"system\".main.array_to_string(list, separator)",
};

// pg_type: PostgreSQL's rows for the types of engine/pg_types.h.
std::string PgTypeView() {
  std::string rows;
  for (const PgTypeInfo& type : PgTypes()) {
    if (!rows.empty()) rows += ", ";
    rows += "(" + std::to_string(static_cast<int32_t>(type.oid)) + ", " + QuoteLiteral(type.name) + ", " +
            std::to_string(type.length) + ", " + QuoteLiteral(std::string(1, type.category)) + ", " +
            std::to_string(type.element) + ", " + std::to_string(type.array) + ")";
  }
  return "CREATE VIEW pg_catalog.pg_type AS SELECT oid, typname, "
         "(SELECT oid FROM duckdb_schemas() WHERE database_name = 'system' AND schema_name = 'pg_catalog') "
         "AS typnamespace, 10 AS typowner, typlen, typlen IN (1, 2, 4, 8) AS typbyval, 'b' AS typtype, "
         "typcategory, false AS typispreferred, true AS typisdefined, ',' AS typdelim, 0 AS typrelid, "
         "NULL AS typsubscript, typelem, typarray, NULL AS typinput, NULL AS typoutput, NULL AS typreceive, "
         "NULL AS typsend, NULL AS typmodin, NULL AS typmodout, NULL AS typanalyze, "
         "CASE WHEN typlen = 8 THEN 'd' WHEN typlen = 2 THEN 's' WHEN typlen = 1 THEN 'c' ELSE 'i' END "
         "AS typalign, CASE WHEN typlen = -1 THEN 'x' ELSE 'p' END AS typstorage, false AS typnotnull, "
         "0 AS typbasetype, -1 AS typtypmod, 0 AS typndims, 0 AS typcollation, NULL AS typdefaultbin, "
         "NULL AS typdefault, NULL AS typacl FROM (VALUES " +
         rows + ") AS t(oid, typname, typlen, typcategory, typelem, typarray)";
}

// Views replacing DuckDB's (pg_attribute with PostgreSQL's type OIDs, pg_database with the
// columns psql reads) and adding what psql's \d reads.
const char* const kViews[] = {
    "CREATE VIEW pg_catalog.pg_class AS SELECT oid, relname, relnamespace, 0 AS reltype, 0 AS reloftype, "
    "10 AS relowner, 0 AS relam, 0 AS relfilenode, 0 AS reltablespace, 0 AS relpages, "
    "CAST(reltuples AS FLOAT) AS reltuples, 0 AS relallvisible, 0 AS reltoastrelid, relhasindex, "
    "false AS relisshared, CASE WHEN is_temporary THEN 't' ELSE 'p' END AS relpersistence, relkind, "
    "CAST(relnatts AS SMALLINT) AS relnatts, CAST(relchecks AS SMALLINT) AS relchecks, false AS relhasrules, "
    "false AS relhastriggers, false AS relhassubclass, false AS relrowsecurity, false AS "
    "relforcerowsecurity, "
    "true AS relispopulated, 'd' AS relreplident, false AS relispartition, 0 AS relrewrite, "
    "0 AS relfrozenxid, 0 AS relminmxid, CAST(NULL AS VARCHAR[]) AS relacl, "
    "CAST(NULL AS VARCHAR[]) AS reloptions, CAST(NULL AS VARCHAR) AS relpartbound FROM ("
    "SELECT table_oid AS oid, table_name AS relname, schema_oid AS relnamespace, estimated_size AS "
    "reltuples, "
    "index_count > 0 AS relhasindex, \"temporary\" AS is_temporary, 'r' AS relkind, column_count AS "
    "relnatts, "
    "check_constraint_count AS relchecks FROM duckdb_tables() "
    "UNION ALL SELECT view_oid, view_name, schema_oid, 0, false, \"temporary\", 'v', column_count, 0 "
    "FROM duckdb_views() "
    "UNION ALL SELECT sequence_oid, sequence_name, schema_oid, 0, false, \"temporary\", 'S', 0, 0 "
    "FROM duckdb_sequences())",
    "CREATE VIEW pg_catalog.pg_attribute AS SELECT c.table_oid AS attrelid, c.column_name AS attname, "
    "basin_pg_type_oid(c.data_type) AS atttypid, 0 AS attstattarget, t.typlen AS attlen, "
    "c.column_index AS attnum, 0 AS attndims, -1 AS attcacheoff, basin_pg_typmod(c.data_type) AS atttypmod, "
    "t.typbyval AS attbyval, t.typstorage AS attstorage, t.typalign AS attalign, "
    "NOT c.is_nullable AS attnotnull, c.column_default IS NOT NULL AS atthasdef, false AS atthasmissing, "
    "'' AS attidentity, '' AS attgenerated, false AS attisdropped, true AS attislocal, 0 AS attinhcount, "
    "0 AS attcollation, NULL AS attcompression, NULL AS attacl, NULL AS attoptions, NULL AS attfdwoptions, "
    "NULL AS attmissingval FROM duckdb_columns() AS c "
    "LEFT JOIN pg_catalog.pg_type AS t ON t.oid = basin_pg_type_oid(c.data_type)",
    "CREATE VIEW pg_catalog.pg_database AS SELECT database_oid AS oid, database_name AS datname, "
    "10 AS datdba, 6 AS encoding, 'c' AS datlocprovider, false AS datistemplate, true AS datallowconn, "
    "-1 AS datconnlimit, 0 AS dattablespace, 'C' AS datcollate, 'C' AS datctype, "
    "CAST(NULL AS VARCHAR) AS daticulocale, CAST(NULL AS VARCHAR) AS datcollversion, "
    "CAST(NULL AS VARCHAR[]) AS datacl FROM duckdb_databases() WHERE database_name = current_database()",
    "CREATE VIEW pg_catalog.pg_collation AS SELECT CAST(NULL AS BIGINT) AS oid, "
    "CAST(NULL AS VARCHAR) AS collname, CAST(NULL AS BIGINT) AS collnamespace WHERE false",
    "CREATE VIEW pg_catalog.pg_roles AS SELECT 10 AS oid, 'basin' AS rolname, true AS rolsuper, "
    "true AS rolinherit, true AS rolcreaterole, true AS rolcreatedb, true AS rolcanlogin, "
    "false AS rolreplication, -1 AS rolconnlimit, '********' AS rolpassword, "
    "CAST(NULL AS TIMESTAMP WITH TIME ZONE) AS rolvaliduntil, false AS rolbypassrls, "
    "CAST(NULL AS VARCHAR[]) AS rolconfig",
    "CREATE VIEW pg_catalog.pg_policy AS SELECT CAST(NULL AS BIGINT) AS oid, CAST(NULL AS VARCHAR) AS "
    "polname, "
    "CAST(NULL AS BIGINT) AS polrelid, CAST(NULL AS VARCHAR) AS polcmd, CAST(NULL AS BOOLEAN) AS "
    "polpermissive, "
    "CAST(NULL AS BIGINT[]) AS polroles, CAST(NULL AS VARCHAR) AS polqual, "
    "CAST(NULL AS VARCHAR) AS polwithcheck WHERE false",
    "CREATE VIEW pg_catalog.pg_statistic_ext AS SELECT CAST(NULL AS BIGINT) AS oid, "
    "CAST(NULL AS BIGINT) AS stxrelid, CAST(NULL AS VARCHAR) AS stxname, CAST(NULL AS BIGINT) AS "
    "stxnamespace, "
    "CAST(NULL AS BIGINT) AS stxowner, CAST(NULL AS INTEGER) AS stxstattarget, "
    "CAST(NULL AS SMALLINT[]) AS stxkeys, CAST(NULL AS VARCHAR[]) AS stxkind WHERE false",
    "CREATE VIEW pg_catalog.pg_publication AS SELECT CAST(NULL AS BIGINT) AS oid, "
    "CAST(NULL AS VARCHAR) AS pubname, CAST(NULL AS BIGINT) AS pubowner, CAST(NULL AS BOOLEAN) AS "
    "puballtables "
    "WHERE false",
    "CREATE VIEW pg_catalog.pg_publication_namespace AS SELECT CAST(NULL AS BIGINT) AS oid, "
    "CAST(NULL AS BIGINT) AS pnpubid, CAST(NULL AS BIGINT) AS pnnspid WHERE false",
    "CREATE VIEW pg_catalog.pg_publication_rel AS SELECT CAST(NULL AS BIGINT) AS oid, "
    "CAST(NULL AS BIGINT) AS prpubid, CAST(NULL AS BIGINT) AS prrelid, CAST(NULL AS VARCHAR) AS prqual, "
    "CAST(NULL AS SMALLINT[]) AS prattrs WHERE false",
    "CREATE VIEW pg_catalog.pg_inherits AS SELECT CAST(NULL AS BIGINT) AS inhrelid, "
    "CAST(NULL AS BIGINT) AS inhparent, CAST(NULL AS INTEGER) AS inhseqno, "
    "CAST(NULL AS BOOLEAN) AS inhdetachpending WHERE false",
};

// `info` (a function, macro or type) in the system catalog, replacing what is there.
void CreateInSystemCatalog(duckdb::DatabaseInstance& db, duckdb::CreateInfo& info) {
  info.catalog = SYSTEM_CATALOG;
  info.internal = true;
  info.on_conflict = duckdb::OnCreateConflict::REPLACE_ON_CONFLICT;
  auto& catalog = duckdb::Catalog::GetSystemCatalog(db);
  auto transaction = duckdb::CatalogTransaction::GetSystemTransaction(db);
  if (info.type == duckdb::CatalogType::TYPE_ENTRY) {
    catalog.CreateType(transaction, info.Cast<duckdb::CreateTypeInfo>());
  } else {
    catalog.CreateFunction(transaction, info.Cast<duckdb::CreateFunctionInfo>());
  }
}

void CreateFunction(duckdb::DatabaseInstance& db, duckdb::ScalarFunction function) {
  duckdb::CreateScalarFunctionInfo info(std::move(function));
  info.schema = kPgCatalog;
  CreateInSystemCatalog(db, info);
}

// A CREATE MACRO or CREATE TYPE statement.
void CreateParsed(duckdb::DatabaseInstance& db, const std::string& sql) {
  duckdb::Parser parser;
  parser.ParseQuery(sql);
  CreateInSystemCatalog(db, *parser.statements.at(0)->Cast<duckdb::CreateStatement>().info);
}

void CreateView(duckdb::ClientContext& context, const std::string& sql) {
  auto& catalog = duckdb::Catalog::GetSystemCatalog(context);
  auto& schema = catalog.GetSchema(context, kPgCatalog);
  auto info = duckdb::CreateViewInfo::FromCreateView(context, schema, sql);
  info->catalog = SYSTEM_CATALOG;
  info->internal = true;
  info->on_conflict = duckdb::OnCreateConflict::REPLACE_ON_CONFLICT;
  catalog.CreateView(context, *info);
}

}  // namespace

Status InstallPgCatalog(_duckdb_database* database) {
  if (database == nullptr) return Status::Internal("no DuckDB database to install pg_catalog in");
  // duckdb_database is a DatabaseWrapper (main/capi/capi_internal.hpp) holding the DuckDB.
  auto* wrapper = reinterpret_cast<duckdb::DatabaseWrapper*>(database);
  std::string step = "its functions";
  try {
    duckdb::DatabaseInstance& db = *wrapper->database->instance;
    using duckdb::LogicalType;
    CreateFunction(db, duckdb::ScalarFunction("basin_pg_type_oid", {LogicalType::VARCHAR},
                                              LogicalType::INTEGER, PgTypeOidFunction));
    CreateFunction(db, duckdb::ScalarFunction("basin_pg_typmod", {LogicalType::VARCHAR}, LogicalType::INTEGER,
                                              PgTypmodFunction));
    CreateFunction(db,
                   duckdb::ScalarFunction("basin_format_type", {LogicalType::BIGINT, LogicalType::INTEGER},
                                          LogicalType::VARCHAR, FormatTypeFunction));
    step = "pg_get_userbyid";
    CreateParsed(db, std::string("CREATE MACRO pg_catalog.pg_get_userbyid(role_oid) AS ") +
                         QuoteLiteral(kPgCatalogOwner));
    for (const char* sql : kMacros) {
      step = sql;
      CreateParsed(db, sql);
    }
    // Settings PostgreSQL drivers SET on connecting (JDBC's extra_float_digits), kept and
    // shown by current_setting but with no effect.
    step = "its settings";
    auto& config = duckdb::DBConfig::GetConfig(db);
    config.AddExtensionOption("extra_float_digits", "PostgreSQL's float output precision (no effect)",
                              LogicalType::INTEGER, duckdb::Value::INTEGER(1));
    config.AddExtensionOption("application_name", "the client's name, as PostgreSQL keeps it",
                              LogicalType::VARCHAR, duckdb::Value(""));
    duckdb::Connection connection(*wrapper->database);
    step = "pg_type";
    connection.context->RunFunctionInTransaction([&] { CreateView(*connection.context, PgTypeView()); });
    for (const char* sql : kViews) {
      step = sql;
      connection.context->RunFunctionInTransaction([&] { CreateView(*connection.context, sql); });
    }
  } catch (const std::exception& e) {
    duckdb::ErrorData error(e);
    return Status::Internal("cannot create pg_catalog's " + step + ": " + error.Message());
  }
  return Status::OK();
}

}  // namespace basin::engine
