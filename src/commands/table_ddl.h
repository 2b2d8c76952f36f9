// Creating, replacing and altering Delta tables: version 0 of a new table (optionally with
// the rows of a query, in the same commit, as CREATE TABLE AS SELECT), the replacement of a
// table's definition and rows by CREATE OR REPLACE TABLE, and the metadata changes of ALTER
// TABLE, each one transaction.
//
// Thread safety: functions; the context's Connection is used by one thread at a time.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "basin/object_store.h"
#include "basin/status.h"
#include "commands/command_context.h"
#include "delta/schema.h"
#include "delta/snapshot.h"

namespace basin::commands {

struct CreateTableRequest {
  std::string name;  // metaData.name
  // Fields with nullable=false for NOT NULL and metadata "delta.generationExpression" for
  // GENERATED ALWAYS AS (expr). Empty with `source_sql`: the query's schema is used.
  delta::StructType schema;
  std::vector<std::string> partition_columns;
  std::map<std::string, std::string> properties;  // validated (table_features.h)
  std::optional<std::string> source_sql;          // CTAS; names already resolved
  std::optional<std::string> description;         // metaData.description (COMMENT '...')
  // For commitInfo.operationParameters.isManaged: the catalog owns the folder (DROP
  // TABLE deletes it).
  bool is_managed = false;
};

// Commits version 0 at `store`'s root. AlreadyExists when a Delta table is already
// there. InvalidArgument naming the column or property for a bad schema, partition
// column, generation expression or property.
Result<CommandResult> CreateTable(const CommandContext& ctx, std::shared_ptr<ObjectStore> store,
                                  const std::string& table_root, const CreateTableRequest& request);

// CREATE OR REPLACE TABLE of the existing table `table`, as Delta Lake does it: one commit
// at the same location with the request's metadata (new schema, partitioning, properties
// and description; the table id stays), a protocol upgrade when the request needs one (a
// protocol is never lowered), every live file removed (dataChange=true), and with
// `source_sql` the query's rows added. Earlier versions stay readable by time travel.
// Errors as CreateTable's (but never AlreadyExists), Unsupported when Basin cannot write
// the table, Conflict when another writer changed the table meanwhile.
Result<CommandResult> ReplaceTable(const CommandContext& ctx, std::shared_ptr<const delta::Snapshot> table,
                                   const CreateTableRequest& request);

// One ALTER TABLE change.
struct AlterTableRequest {
  enum class Kind {
    kAddColumns,       // columns (nullable, at the end)
    kSetProperties,    // properties
    kUnsetProperties,  // property_keys
    kAddConstraint,    // constraint_name, constraint_expr: existing rows are checked first
    kDropConstraint,   // constraint_name (if_exists)
    kSetNotNull,       // column: existing rows are checked first
    kDropNotNull,      // column
    kRenameColumn,     // column -> new_name; needs column mapping
    kDropColumn,       // column, and more_columns in the same commit (if_exists); needs column mapping
  };
  Kind kind = Kind::kSetProperties;
  std::vector<delta::StructField> columns;
  std::map<std::string, std::string> properties;
  std::vector<std::string> property_keys;
  std::string constraint_name;
  std::string constraint_expr;
  std::string column;
  std::vector<std::string> more_columns;
  std::string new_name;
  bool if_exists = false;
};

// Errors name the column, constraint or property: NotFound (no such column/constraint),
// AlreadyExists, InvalidArgument (e.g. rename without column mapping, a CHECK or NOT NULL
// existing rows violate, naming how many), Conflict from the transaction.
Result<CommandResult> AlterTable(const CommandContext& ctx, std::shared_ptr<const delta::Snapshot> table,
                                 const AlterTableRequest& request);

}  // namespace basin::commands
