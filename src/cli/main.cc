// `basin`: the command line. This file maps arguments onto the subcommands in commands.h;
// CLI11's exceptions stop here.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>
#include <map>

#include "basin/malloc_tuning.h"
#include "basin/version.h"
#include "cli/commands.h"
#include "cli/output_format.h"

namespace {

using basin::cli::DescribeCommandOptions;
using basin::cli::KafkaDevCommandOptions;
using basin::cli::PipelineGraphCommandOptions;
using basin::cli::PipelineRunCommandOptions;
using basin::cli::ServeCommandOptions;
using basin::cli::SqlCommandOptions;
using basin::cli::StreamCommandOptions;
using basin::cli::StreamStatusCommandOptions;

constexpr const char* kDescription =
    "Basin: SQL over Delta Lake tables, executed by embedded DuckDB.\n"
    "Run 'basin help COMMAND' for a command's options.";

std::string VersionText() {
  return std::string("basin ") + basin::kVersion + " (DuckDB " + basin::DuckDbVersion() + ")";
}

CLI::App* AddSqlCommand(CLI::App& app, SqlCommandOptions& options) {
  CLI::App* sql =
      app.add_subcommand("sql", "Run SQL statements (-c, -f, stdin) or open the interactive shell");
  sql->add_option("-w,--warehouse", options.warehouse_dir,
                  "Folder that relative delta_scan paths resolve against")
      ->envname("BASIN_WAREHOUSE");
  sql->add_option("--format", options.format, "Result format: table, csv or json")
      ->check(CLI::IsMember({"table", "csv", "json"}));
  CLI::Option* command = sql->add_option("-c,--command", options.command, "SQL text to run");
  sql->add_option("-f,--file", options.file, "File of SQL statements to run")->excludes(command);
  sql->add_flag("--stats", options.show_stats,
                "Print on stderr how many data files each scan read (data skipping)");
  sql->add_flag("--timer", options.show_timing, "Print each statement's run time on stderr");
  sql->add_flag("!--no-data-skipping", options.data_skipping, "Read every file of each snapshot");
  sql->add_option("-u,--user", options.user,
                  "Run as this warehouse user, under its grants (no password: the warehouse folder's "
                  "reader owns it)");
  return sql;
}

CLI::App* AddDescribeCommand(CLI::App& app, DescribeCommandOptions& options) {
  CLI::App* describe =
      app.add_subcommand("describe", "Show a Delta table's schema, protocol, files, size and properties");
  describe->add_option("path", options.table_path, "The table's folder")->required();
  describe
      ->add_option("-w,--warehouse", options.warehouse_dir, "Folder that a relative path resolves against")
      ->envname("BASIN_WAREHOUSE");
  describe->add_option("--at-version", options.version, "Describe this older version instead of the latest");
  return describe;
}

CLI::App* AddServeCommand(CLI::App& app, ServeCommandOptions& options) {
  CLI::App* serve = app.add_subcommand(
      "serve", "Serve the warehouse to PostgreSQL clients (psql, drivers, BI tools) until Ctrl-C");
  serve->add_option("-w,--warehouse", options.warehouse_dir, "The warehouse folder")
      ->envname("BASIN_WAREHOUSE");
  serve->add_option("--bind", options.bind_address, "Address to listen on");
  serve->add_option("--pg-port", options.pg_port, "Port of the PostgreSQL protocol (0: any free port)")
      ->check(CLI::Range(0, 65535));
  serve->add_option("--database", options.database, "The database name clients connect to");
  serve->add_option("--max-connections", options.max_connections, "Clients served at once")
      ->check(CLI::Range(1, 100000));
  serve
      ->add_option("--http-port", options.http_port,
                   "Port of the HTTP API (0: any free port; off by default)")
      ->check(CLI::Range(0, 65535));
  serve->add_option("--http-threads", options.http.threads, "HTTP requests served at once")
      ->check(CLI::Range(1, 1024));
  serve->add_option("--http-max-body-bytes", options.http.max_body_bytes, "Largest HTTP request body")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
  serve
      ->add_option("--http-timeout-ms", options.http.read_timeout_ms,
                   "Drop an HTTP client that sends or reads nothing for this long")
      ->check(CLI::Range(1, 3'600'000));
  serve->add_option("--http-page-size", options.http.page_size, "Rows per page of an HTTP result")
      ->check(CLI::Range(int64_t{1}, int64_t{10'000'000}));
  serve
      ->add_option("--http-max-page-size", options.http.max_page_size, "Most rows a request may ask per page")
      ->check(CLI::Range(int64_t{1}, int64_t{10'000'000}));
  serve
      ->add_option("--http-result-idle-ms", options.http.cursor_idle_timeout_ms,
                   "Drop an HTTP result nobody read for this long")
      ->check(CLI::Range(int64_t{1}, int64_t{86'400'000}));
  serve->add_option("--stream", options.streams,
                    "Run a stream continuously: NAME=FILE, FILE holding its INSERT or MERGE (repeatable)");
  serve->add_option("--checkpoint-root", options.checkpoint_root,
                    "Folder of the streams' checkpoints, one folder per stream name");
  serve->add_option("--stream-interval", options.stream_interval,
                    "The least time between two batch starts of a stream (500ms, 2s, 1m); default 1s");
  serve->add_option("--pipeline", options.pipelines,
                    "Run the pipeline in this folder continuously (repeatable)");
  serve
      ->add_option("--flow-owner", options.flow_owner,
                   "The warehouse user the streams and pipelines run as, under its grants")
      ->capture_default_str();
  serve->add_option("--tls-cert", options.tls_cert_file, "PEM certificate (chain) for TLS on the pg port");
  serve->add_option("--tls-key", options.tls_key_file, "PEM private key of --tls-cert");
  serve->add_flag("--tls-required", options.tls_required, "Refuse connections without TLS");
  serve->add_option("--statement-timeout", options.statement_timeout,
                    "Cancel statements running longer: 5000 (ms), 5s, 2min; 0: never (the default)");
  return serve;
}

CLI::App* AddKafkaDevCommand(CLI::App& app, KafkaDevCommandOptions& options) {
  CLI::App* dev = app.add_subcommand(
      "kafka-dev",
      "Run a Kafka cluster on 127.0.0.1 for development (prints its bootstrap address; Ctrl-C stops it)");
  dev->add_option("--topics", options.topics, "Topics to create, as name[:partitions],...")
      ->capture_default_str();
  dev->add_option("--brokers", options.brokers, "Number of brokers")->capture_default_str();
  CLI::Option* produce = dev->add_option("--produce", options.produce_topic,
                                         "Produce seed-story payment events into this topic");
  dev->add_option("--count", options.count, "Events to produce")->capture_default_str()->needs(produce);
  dev->add_option("--rate", options.events_per_second, "Events per second (0: as fast as possible)")
      ->capture_default_str()
      ->needs(produce);
  dev->add_option("--malformed", options.malformed_fraction, "Fraction of malformed records")->needs(produce);
  dev->add_option("--duplicates", options.duplicate_fraction, "Fraction of records sent twice")
      ->needs(produce);
  dev->add_option("--late", options.late_fraction, "Fraction of records with a late event time")
      ->needs(produce);
  dev->add_option("--seed", options.seed, "Seed of the generated events")
      ->capture_default_str()
      ->needs(produce);
  return dev;
}

CLI::App* AddStreamCommand(CLI::App& app, StreamCommandOptions& options,
                           StreamStatusCommandOptions& status_options) {
  CLI::App* stream =
      app.add_subcommand("stream", "Run streams: INSERT ... FROM STREAM read_kafka(...), exactly once");
  stream->require_subcommand(1);
  CLI::App* run =
      stream->add_subcommand("run", "Run a stream's micro-batches (Ctrl-C stops after the batch in flight)");
  run->add_option("-w,--warehouse", options.warehouse_dir, "The warehouse folder")
      ->envname("BASIN_WAREHOUSE");
  run->add_option("--checkpoint", options.checkpoint, "The stream's checkpoint folder")->required();
  run->add_option("--trigger", options.trigger, "available-now, once or continuous")
      ->check(CLI::IsMember({"available-now", "once", "continuous"}))
      ->capture_default_str();
  run->add_option("--interval", options.interval,
                  "Continuous: the least time between batches (500ms, 2s, 1m)");
  CLI::Option* command = run->add_option("-c,--command", options.command, "The stream's INSERT statement");
  run->add_option("-u,--user", options.user,
                  "Run as this warehouse user, under its grants (as basin sql --user)");
  run->add_option("-f,--file", options.file, "A file holding the stream's INSERT statement")
      ->excludes(command);
  CLI::App* status = stream->add_subcommand("status", "Show what a stream's checkpoint folder says of it");
  status->add_option("--checkpoint", status_options.checkpoint, "The stream's checkpoint folder")->required();
  status->add_flag("--json", status_options.json, "One JSON object instead of lines of text");
  return stream;
}

CLI::App* AddPipelineCommand(CLI::App& app, PipelineGraphCommandOptions& graph_options,
                             PipelineRunCommandOptions& run_options, std::string& full_refresh) {
  CLI::App* pipeline = app.add_subcommand(
      "pipeline", "Declarative pipelines: streaming tables and materialized views in SQL files");
  pipeline->require_subcommand(1);
  CLI::App* validate =
      pipeline->add_subcommand("validate", "Check a pipeline folder: statements, names, cycles");
  validate->add_option("folder", graph_options.folder, "The pipeline's folder of .sql files")->required();
  validate->add_option("-w,--warehouse", graph_options.warehouse_dir,
                       "Also check that the tables it reads from outside exist in this warehouse");
  CLI::App* graph =
      pipeline->add_subcommand("graph", "Print a pipeline's datasets in run order with what they read");
  graph->add_option("folder", graph_options.folder, "The pipeline's folder of .sql files")->required();
  graph->add_option("--format", graph_options.format, "text, dot or json")
      ->check(CLI::IsMember({"text", "dot", "json"}))
      ->capture_default_str();
  CLI::App* run = pipeline->add_subcommand(
      "run", "Run every flow of a pipeline once, or continuously (Ctrl-C stops after the batch in flight)");
  run->add_option("folder", run_options.folder, "The pipeline's folder of .sql files")->required();
  run->add_option("-w,--warehouse", run_options.warehouse_dir, "The warehouse folder")
      ->envname("BASIN_WAREHOUSE")
      ->required();
  run->add_option("--full-refresh", full_refresh,
                  "Recompute datasets from their sources: a comma-separated list, or 'all'");
  run->add_option("-u,--user", run_options.user,
                  "Run as this warehouse user, under its grants (as basin sql --user)");
  run->add_flag("--continuous", run_options.continuous,
                "Keep running the flows, a pass at most every trigger interval, until Ctrl-C or SIGTERM");
  run->add_option("--interval", run_options.interval,
                  "With --continuous: the trigger interval (500ms, 2s, 1m); default pipeline.json's "
                  "trigger_interval, else 1s");
  return pipeline;
}

// CLI11's App::help() describes the parsed subcommand; help needs the one asked for.
std::string HelpText(const CLI::App& command, const std::string& usage_name) {
  return command.get_formatter()->make_help(&command, usage_name, CLI::AppFormatMode::Normal);
}

// Usage errors are reported like every other error: "Error: InvalidArgument: ...", status 1.
int ReportParseError(const CLI::App& app, const CLI::ParseError& error) {
  if (error.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(error);
  basin::cli::WriteError(basin::Status::InvalidArgument(error.what()), std::cerr);
  std::cerr << "Run 'basin help' for usage.\n";
  return 1;
}

int PrintHelp(const std::map<std::string, CLI::App*>& commands, const CLI::App& app,
              const std::string& topic) {
  if (topic.empty()) {
    std::cout << HelpText(app, "basin");
    return 0;
  }
  auto command = commands.find(topic);
  if (command == commands.end()) {
    basin::cli::WriteError(basin::Status::InvalidArgument("no command '" + topic + "'"), std::cerr);
    return 1;
  }
  std::cout << HelpText(*command->second, "basin " + topic);
  return 0;
}

int Run(int argc, char** argv) {
  CLI::App app(kDescription, "basin");
  app.set_version_flag("--version", VersionText());
  // At most one command, so that "help sql" reads "sql" as help's argument.
  app.require_subcommand(0, 1);

  SqlCommandOptions sql_options;
  DescribeCommandOptions describe_options;
  KafkaDevCommandOptions kafka_dev_options;
  ServeCommandOptions serve_options;
  StreamCommandOptions stream_options;
  StreamStatusCommandOptions stream_status_options;
  PipelineGraphCommandOptions pipeline_graph_options;
  PipelineRunCommandOptions pipeline_run_options;
  std::string full_refresh;
  std::string help_topic;
  std::map<std::string, CLI::App*> commands = {
      {"pipeline", AddPipelineCommand(app, pipeline_graph_options, pipeline_run_options, full_refresh)},
      {"sql", AddSqlCommand(app, sql_options)},
      {"describe", AddDescribeCommand(app, describe_options)},
      {"kafka-dev", AddKafkaDevCommand(app, kafka_dev_options)},
      {"serve", AddServeCommand(app, serve_options)},
      {"stream", AddStreamCommand(app, stream_options, stream_status_options)},
  };
  CLI::App* help = app.add_subcommand("help", "Show this help, or a command's help");
  help->add_option("command", help_topic, "The command to explain");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return ReportParseError(app, error);
  }

  if (commands["sql"]->parsed()) return basin::cli::RunSqlCommand(sql_options);
  if (commands["describe"]->parsed()) return basin::cli::RunDescribeCommand(describe_options);
  if (commands["kafka-dev"]->parsed()) return basin::cli::RunKafkaDevCommand(kafka_dev_options);
  if (commands["serve"]->parsed()) return basin::cli::RunServeCommand(serve_options);
  if (commands["stream"]->parsed()) {
    if (commands["stream"]->get_subcommand("status")->parsed()) {
      return basin::cli::RunStreamStatusCommand(stream_status_options);
    }
    return basin::cli::RunStreamCommand(stream_options);
  }
  if (commands["pipeline"]->parsed()) {
    CLI::App& pipeline = *commands["pipeline"];
    if (pipeline.get_subcommand("run")->parsed()) {
      if (pipeline.get_subcommand("run")->count("--full-refresh") > 0) {
        std::vector<std::string> names;
        // Each pass takes one comma-separated name.
        for (size_t from = 0; from <= full_refresh.size();) {
          const size_t comma = std::min(full_refresh.find(',', from), full_refresh.size());
          if (comma > from) names.push_back(full_refresh.substr(from, comma - from));
          from = comma + 1;
        }
        if (names.size() == 1 && names[0] == "all") names.clear();
        pipeline_run_options.full_refresh = names;
      }
      return basin::cli::RunPipelineRunCommand(pipeline_run_options);
    }
    pipeline_graph_options.validate_only = pipeline.get_subcommand("validate")->parsed();
    return basin::cli::RunPipelineGraphCommand(pipeline_graph_options);
  }
  if (help->parsed()) return PrintHelp(commands, app, help_topic);
  std::cerr << HelpText(app, "basin");
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  basin::TuneMalloc();
  // Basin code returns Status; what still throws here (CLI11 setup, std::bad_alloc) is a bug
  // or an exhausted machine, reported like any other error.
  try {
    return Run(argc, argv);
  } catch (const std::exception& error) {
    basin::cli::WriteError(basin::Status::Internal(error.what()), std::cerr);
    return 1;
  }
}
