// The `basin` subcommands, as plain options and a function that runs each. main.cc maps
// the command line onto these (CLI11 stays there); each returns the process exit status:
// 0 on success, 1 after printing "Error: <code name>: <message>" to stderr.
//
// Thread safety: called once, from the main thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "basin/server.h"

namespace basin::cli {

struct SqlCommandOptions {
  std::string warehouse_dir;  // relative delta_scan paths resolve against it
  std::string format = "table";
  std::string command;      // -c: SQL text to run
  std::string file;         // -f: a file of SQL statements
  bool show_stats = false;  // files read vs files in the snapshot, per scan
  bool show_timing = false;
  bool data_skipping = true;
  std::string user;  // --user: run as this warehouse user, under its grants; empty: as the owner
};

// Runs -c text, else the -f file, else the interactive shell when stdin is a terminal,
// else the statements read from stdin.
int RunSqlCommand(const SqlCommandOptions& options);

struct DescribeCommandOptions {
  std::string table_path;
  std::string warehouse_dir;       // a relative table_path resolves against it
  std::optional<int64_t> version;  // an older version instead of the latest
};

// Prints a Delta table's schema, protocol, partitioning, files, size, rows, version and
// properties.
int RunDescribeCommand(const DescribeCommandOptions& options);

struct KafkaDevCommandOptions {
  std::string topics = "payments:4";  // "name[:partitions],..."
  int brokers = 1;
  std::string produce_topic;  // "": produce nothing
  int64_t count = 1000;
  double events_per_second = 0;  // 0: as fast as the cluster takes them
  double malformed_fraction = 0;
  double duplicate_fraction = 0;
  double late_fraction = 0;
  uint64_t seed = 1;
};

// Runs a Kafka dev cluster on 127.0.0.1 (basin/kafka_dev.h), prints its bootstrap address as
// the first line of stdout, optionally produces payment events into it, and runs until
// SIGINT or SIGTERM, then stops cleanly (status 0).
int RunKafkaDevCommand(const KafkaDevCommandOptions& options);

struct ServeCommandOptions {
  std::string warehouse_dir;
  std::string bind_address = "127.0.0.1";
  int pg_port = 5433;
  std::string database = "basin";
  int max_connections = 64;
  int http_port = -1;  // -1: no HTTP API
  HttpLimits http = {};
  std::vector<std::string> streams;    // --stream NAME=FILE.sql
  std::string checkpoint_root;         // --checkpoint-root: the streams' checkpoints, DIR/NAME
  std::string stream_interval;         // "500ms", "2s"; empty: the default (1 s)
  std::vector<std::string> pipelines;  // --pipeline DIR
  std::string flow_owner = "admin";    // --flow-owner: the user the streams and pipelines run as
  std::string tls_cert_file;           // with tls_key_file: TLS on the pg port
  std::string tls_key_file;
  bool tls_required = false;
  std::string statement_timeout = "0";  // PostgreSQL's spelling: "5s", "5000" (ms); 0: none
};

// Serves the warehouse over the PostgreSQL protocol (basin/server.h), and runs the streams
// and pipelines named, until SIGINT or SIGTERM; prints the connection URL as the first line
// of stdout. The first start creates the admin
// user, with the password in BASIN_ADMIN_PASSWORD or a generated one printed on stderr.
int RunServeCommand(const ServeCommandOptions& options);

struct StreamCommandOptions {
  std::string warehouse_dir;
  std::string checkpoint;
  std::string trigger = "continuous";
  std::string interval;  // "500ms", "2s", "1m"; empty: the default (1 s)
  std::string command;   // -c: the stream's INSERT
  std::string file;      // -f: a file holding it
  std::string user;      // --user: run as this warehouse user, under its grants; empty: as the owner
};

struct StreamStatusCommandOptions {
  std::string checkpoint;
  bool json = false;
};

// Prints what a stream's checkpoint folder says: its id, statement, sink, the newest
// planned and committed batches and the last batch's figures (one JSON object with --json).
int RunStreamStatusCommand(const StreamStatusCommandOptions& options);

// Runs a stream (basin/stream.h) until its trigger says it is done, or SIGINT/SIGTERM stops
// it after the batch in flight; prints a line per batch on stderr.
int RunStreamCommand(const StreamCommandOptions& options);

struct PipelineGraphCommandOptions {
  std::string folder;
  std::string warehouse_dir;    // when given, the tables read from outside are checked too
  std::string format = "text";  // text, dot or json
  bool validate_only = false;   // basin pipeline validate: one line saying it is valid
};

// basin pipeline validate / graph: reads the pipeline in `folder`, prints its graph (or that
// it is valid); status 1 naming the file and line of what is wrong.
int RunPipelineGraphCommand(const PipelineGraphCommandOptions& options);

struct PipelineRunCommandOptions {
  std::string folder;
  std::string warehouse_dir;
  // --full-refresh: set and empty for every dataset, or the datasets named.
  std::optional<std::vector<std::string>> full_refresh;
  bool continuous = false;
  std::string interval;  // --interval; empty: the pipeline's trigger interval
  std::string user;      // --user: run as this warehouse user, under its grants; empty: as the owner
};

// basin pipeline run: every flow once (triggered), a line per flow on stderr and a summary
// on stdout; SIGINT or SIGTERM stops it after the batch in flight.
int RunPipelineRunCommand(const PipelineRunCommandOptions& options);

}  // namespace basin::cli
