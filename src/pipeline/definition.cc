#include "pipeline/definition.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>
#include <variant>

#include "common/strings.h"
#include "delta/checkpoint_writer.h"
#include "engine/table_refs.h"
#include "sql/grammar/parse.h"

namespace basin::pipeline {

namespace {

constexpr char kSettingsKey[] = "pipeline.json";

Status BadSettings(const std::string& why) {
  return Status::InvalidArgument(std::string(kSettingsKey) + ": " + why);
}

Result<PipelineSettings> ParseSettings(const std::string& text, const std::string& folder_name) {
  PipelineSettings settings;
  settings.name = folder_name;
  const nlohmann::json json = nlohmann::json::parse(text, /*cb=*/nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) return BadSettings("expected a JSON object");
  for (const auto& [field, value] : json.items()) {
    if (field == "name" || field == "schema") {
      if (!value.is_string() || value.get<std::string>().empty())
        return BadSettings("\"" + field + "\" must be a non-empty string");
      (field == "name" ? settings.name : settings.schema) = value.get<std::string>();
    } else if (field == "configuration") {
      if (!value.is_object()) return BadSettings("\"configuration\" must map names to strings");
      for (const auto& [name, setting] : value.items()) {
        if (!setting.is_string())
          return BadSettings("configuration value \"" + name + "\" must be a string, got " + setting.dump());
        settings.configuration[name] = setting.get<std::string>();
      }
    } else if (field == "trigger_interval") {
      if (!value.is_string()) return BadSettings("\"trigger_interval\" must be a duration: \"10 seconds\"");
      delta::Metadata holder;
      holder.configuration["trigger_interval"] = value.get<std::string>();
      Result<int64_t> interval =
          delta::DurationPropertyMs(holder, "trigger_interval", settings.trigger_interval_ms);
      if (!interval.ok()) return BadSettings(interval.status().message());
      settings.trigger_interval_ms = *interval;
    } else if (field == "parallelism") {
      if (!value.is_number_integer() || value.get<int64_t>() < 1 || value.get<int64_t>() > 64)
        return BadSettings("\"parallelism\" must be a whole number from 1 to 64");
      settings.parallelism = static_cast<int>(value.get<int64_t>());
    } else {
      return BadSettings("unknown field \"" + field +
                         "\" (the fields are name, schema, configuration, trigger_interval and parallelism)");
    }
  }
  return settings;
}

// `text` with each ${name} replaced by its configuration value.
Result<std::string> Substitute(const std::string& text, const std::string& file,
                               const std::map<std::string, std::string>& configuration) {
  std::string out;
  size_t from = 0;
  // Each pass consumes one ${...} or the rest of the text.
  while (true) {
    const size_t open = text.find("${", from);
    if (open == std::string::npos) break;
    const size_t close = text.find('}', open + 2);
    const std::string where = file + ":" + std::to_string(engine::PositionInText(text, open).line);
    if (close == std::string::npos) return Status::InvalidArgument(where + ": \"${\" without its \"}\"");
    const std::string name = text.substr(open + 2, close - open - 2);
    auto it = configuration.find(name);
    if (it == configuration.end()) {
      return Status::InvalidArgument(where + ": ${" + name + "} has no value in " + kSettingsKey +
                                     "'s \"configuration\"");
    }
    out.append(text, from, open - from);
    out += it->second;
    from = close + 1;
  }
  out.append(text, from, std::string::npos);
  return out;
}

// The dataset name a statement gives: its last part, when any schema it names is the
// pipeline's.
Result<std::string> DatasetName(const sql::grammar::QualifiedName& name, const PipelineSettings& settings,
                                const std::string& where) {
  if (name.empty()) return Status::InvalidArgument(where + ": a dataset needs a name");
  if (name.size() > 2 || (name.size() == 2 && !EqualsIgnoreCase(name[0], settings.schema))) {
    return Status::InvalidArgument(where + ": " + sql::grammar::JoinName(name) +
                                   " is outside the pipeline's schema " + settings.schema +
                                   " (pipeline.json \"schema\")");
  }
  return name.back();
}

class Loader {
 public:
  explicit Loader(PipelineSettings settings) { pipeline_.settings = std::move(settings); }

  Status File(const std::string& file, const std::string& raw) {
    ASSIGN_OR_RETURN(std::string text, Substitute(raw, file, pipeline_.settings.configuration));
    for (const engine::ScriptStatement& statement : engine::SplitSqlScript(text)) {
      const SourcePlace place{file,
                              static_cast<int64_t>(engine::PositionInText(text, statement.offset).line)};
      Result<sql::grammar::ParsedStatement> parsed = sql::grammar::ParsePipelineStatement(text, statement);
      if (!parsed.ok()) return parsed.status().WithContext(file);
      RETURN_IF_ERROR(Statement(*parsed, place));
    }
    return Status::OK();
  }

  Result<PipelineDefinition> Finish() {
    for (const Flow& flow : pipeline_.flows) {
      const Dataset* target = FindDataset(pipeline_, flow.target);
      const std::string where = flow.place.Describe() + ": flow " + flow.name;
      if (target == nullptr) {
        return Status::InvalidArgument(where + " writes " + flow.target +
                                       ", which no CREATE STREAMING TABLE of the pipeline declares");
      }
      if (target->kind == DatasetKind::kMaterializedView && flow.kind != FlowKind::kRecompute) {
        return Status::InvalidArgument(where + " writes the materialized view " + target->name +
                                       ", which only its own query fills");
      }
      if (target->kind == DatasetKind::kTemporaryView && flow.kind != FlowKind::kView) {
        return Status::InvalidArgument(where + " writes the temporary view " + target->name +
                                       ", which only its own query defines");
      }
      if (flow.kind != FlowKind::kAutoCdc) continue;
      for (const Flow& other : pipeline_.flows) {
        if (&other != &flow && EqualsIgnoreCase(other.target, flow.target)) {
          return Status::InvalidArgument(where + " applies changes to " + target->name + ", which flow " +
                                         other.name + " writes too: an AUTO CDC target has one flow");
        }
      }
      if (!target->table.expectations.empty()) {
        return Status::InvalidArgument(where + " applies changes to " + target->name +
                                       ", which declares expectations: AUTO CDC applies changes rather than "
                                       "appending rows; put the expectations on its source table");
      }
    }
    for (const Dataset& dataset : pipeline_.datasets) {
      const bool fed = std::any_of(pipeline_.flows.begin(), pipeline_.flows.end(), [&](const Flow& flow) {
        return EqualsIgnoreCase(flow.target, dataset.name);
      });
      if (!fed) {
        return Status::InvalidArgument(
            dataset.place.Describe() + ": streaming table " + dataset.name +
            " has no query and no flow writes it (CREATE FLOW ... AS INSERT INTO " + dataset.name +
            " BY NAME SELECT ... FROM STREAM(...))");
      }
    }
    return std::move(pipeline_);
  }

 private:
  Status Statement(const sql::grammar::ParsedStatement& parsed, const SourcePlace& place) {
    const std::string where = place.Describe();
    if (const auto* table = std::get_if<sql::grammar::CreateStreamingTable>(&parsed.body)) {
      return AddDataset(DatasetKind::kStreamingTable, table->table, place);
    }
    if (const auto* view = std::get_if<sql::grammar::CreateMaterializedView>(&parsed.body)) {
      return AddDataset(DatasetKind::kMaterializedView, view->table, place);
    }
    if (const auto* view = std::get_if<sql::grammar::CreateTemporaryView>(&parsed.body)) {
      sql::grammar::PipelineTable table;
      table.name = view->name;
      table.query = view->query;
      return AddDataset(DatasetKind::kTemporaryView, table, place);
    }
    if (const auto* create = std::get_if<sql::grammar::CreateFlow>(&parsed.body)) {
      Flow flow;
      flow.name = create->name;
      flow.place = place;
      if (const auto* insert = std::get_if<sql::grammar::InsertFlow>(&create->flow)) {
        ASSIGN_OR_RETURN(flow.target, DatasetName(insert->target, pipeline_.settings, where));
        flow.kind = insert->once ? FlowKind::kOnce : FlowKind::kStream;
        flow.query = insert->query;
      } else {
        const auto& cdc = std::get<sql::grammar::AutoCdcFlow>(create->flow);
        ASSIGN_OR_RETURN(flow.target, DatasetName(cdc.target, pipeline_.settings, where));
        if (!cdc.source_is_stream) {
          return Status::InvalidArgument(where + ": flow " + flow.name + " reads its changes FROM STREAM(" +
                                         sql::grammar::JoinName(cdc.source) +
                                         "): AUTO CDC applies each change once, as it arrives");
        }
        flow.kind = FlowKind::kAutoCdc;
        flow.cdc = cdc;
        std::vector<std::string> parts = cdc.source;
        parts.insert(parts.begin(), 3 - std::min<size_t>(parts.size(), 3), "");
        flow.reads.push_back({parts[0], parts[1], parts[2]});
      }
      return AddFlow(std::move(flow));
    }
    return Status::InvalidArgument(
        where +
        ": a pipeline's files declare datasets and flows (CREATE OR REFRESH "
        "STREAMING TABLE, CREATE OR REFRESH MATERIALIZED VIEW, CREATE TEMPORARY VIEW, CREATE FLOW); got: " +
        parsed.text);
  }

  Status AddDataset(DatasetKind kind, const sql::grammar::PipelineTable& table, const SourcePlace& place) {
    const std::string where = place.Describe();
    Dataset dataset;
    ASSIGN_OR_RETURN(dataset.name, DatasetName(table.name, pipeline_.settings, where));
    dataset.kind = kind;
    dataset.table = table;
    dataset.place = place;
    if (const Dataset* earlier = FindDataset(pipeline_, dataset.name)) {
      return Status::InvalidArgument(where + ": " + dataset.name + " is declared twice (first at " +
                                     earlier->place.Describe() + ")");
    }
    RETURN_IF_ERROR(CheckExpectations(dataset));
    pipeline_.datasets.push_back(dataset);
    if (!table.query) return Status::OK();
    Flow flow;
    flow.name = dataset.name;
    flow.target = dataset.name;
    flow.kind = kind == DatasetKind::kStreamingTable     ? FlowKind::kStream
                : kind == DatasetKind::kMaterializedView ? FlowKind::kRecompute
                                                         : FlowKind::kView;
    flow.query = *table.query;
    flow.place = place;
    return AddFlow(std::move(flow));
  }

  // Expectations named once each; QUARANTINE only on streaming tables (a materialized view
  // is recomputed whole, and its quarantine would hold every earlier run's rows again).
  static Status CheckExpectations(const Dataset& dataset) {
    const std::string where =
        dataset.place.Describe() + ": " + DatasetKindName(dataset.kind) + " " + dataset.name;
    const std::vector<sql::grammar::Expectation>& expectations = dataset.table.expectations;
    for (size_t i = 0; i < expectations.size(); i++) {
      const sql::grammar::Expectation& expectation = expectations[i];
      for (size_t j = 0; j < i; j++) {
        if (EqualsIgnoreCase(expectations[j].name, expectation.name))
          return Status::InvalidArgument(where + ": expectation " + expectation.name + " is declared twice");
      }
      if (dataset.kind == DatasetKind::kMaterializedView &&
          expectation.on_violation == sql::grammar::Expectation::OnViolation::kQuarantine) {
        return Status::InvalidArgument(
            where + ": expectation " + expectation.name +
            " is ON VIOLATION QUARANTINE, which streaming tables take (each row "
            "quarantined once); a materialized view is recomputed whole: DROP ROW, "
            "or quarantine in the streaming table it reads");
      }
    }
    return Status::OK();
  }

  Status AddFlow(Flow flow) {
    const std::string where = flow.place.Describe() + ": flow " + flow.name;
    for (const Flow& earlier : pipeline_.flows) {
      if (EqualsIgnoreCase(earlier.name, flow.name)) {
        return Status::InvalidArgument(where + " is declared twice (first at " + earlier.place.Describe() +
                                       ")");
      }
    }
    if (flow.kind != FlowKind::kAutoCdc) {
      Result<std::vector<engine::SqlTableName>> reads = engine::TablesReadBy(flow.query.sql);
      if (!reads.ok()) return reads.status().WithContext(where);
      flow.reads = std::move(*reads);
    }
    const bool streams = !flow.query.streams.empty();
    if (flow.kind == FlowKind::kStream && !streams) {
      return Status::InvalidArgument(where +
                                     " reads no STREAM source: a streaming table's query reads "
                                     "STREAM(table), STREAM read_kafka(...) or STREAM read_files(...) "
                                     "(a materialized view recomputes a query that reads whole tables)");
    }
    if ((flow.kind == FlowKind::kRecompute || flow.kind == FlowKind::kOnce || flow.kind == FlowKind::kView) &&
        streams) {
      return Status::InvalidArgument(where +
                                     " reads a STREAM source, which only a streaming table's flows read");
    }
    pipeline_.flows.push_back(std::move(flow));
    return Status::OK();
  }

  PipelineDefinition pipeline_;
};

}  // namespace

const char* DatasetKindName(DatasetKind kind) {
  switch (kind) {
    case DatasetKind::kStreamingTable:
      return "streaming table";
    case DatasetKind::kMaterializedView:
      return "materialized view";
    case DatasetKind::kTemporaryView:
      return "temporary view";
  }
  return "?";
}

const char* FlowKindName(FlowKind kind) {
  switch (kind) {
    case FlowKind::kStream:
      return "stream";
    case FlowKind::kRecompute:
      return "recompute";
    case FlowKind::kOnce:
      return "once";
    case FlowKind::kAutoCdc:
      return "auto cdc";
    case FlowKind::kView:
      return "view";
  }
  return "?";
}

const char* ExpectationActionName(sql::grammar::Expectation::OnViolation action) {
  using OnViolation = sql::grammar::Expectation::OnViolation;
  switch (action) {
    case OnViolation::kDropRow:
      return "drop row";
    case OnViolation::kFailUpdate:
      return "fail update";
    case OnViolation::kQuarantine:
      return "quarantine";
    case OnViolation::kKeep:
      break;
  }
  return "warn";
}

const Dataset* FindDataset(const PipelineDefinition& pipeline, const std::string& name) {
  for (const Dataset& dataset : pipeline.datasets) {
    if (EqualsIgnoreCase(dataset.name, name)) return &dataset;
  }
  return nullptr;
}

const Dataset* DatasetRead(const PipelineDefinition& pipeline, const engine::SqlTableName& name) {
  if (!name.catalog.empty()) return nullptr;
  if (!name.schema.empty() && !EqualsIgnoreCase(name.schema, pipeline.settings.schema)) return nullptr;
  return FindDataset(pipeline, name.table);
}

Result<PipelineDefinition> LoadPipeline(ObjectStore& folder, const std::string& folder_name) {
  PipelineSettings settings;
  settings.name = folder_name;
  Result<std::string> settings_text = folder.Get(kSettingsKey);
  if (settings_text.ok()) {
    ASSIGN_OR_RETURN(settings, ParseSettings(*settings_text, folder_name));
  } else if (!settings_text.status().IsNotFound()) {
    return settings_text.status();
  }
  ASSIGN_OR_RETURN(std::vector<ObjectInfo> objects, folder.List(""));
  Loader loader(std::move(settings));
  int64_t files = 0;
  for (const ObjectInfo& object : objects) {
    if (object.key.size() < 4 || object.key.compare(object.key.size() - 4, 4, ".sql") != 0) continue;
    ASSIGN_OR_RETURN(std::string text, folder.Get(object.key));
    RETURN_IF_ERROR(loader.File(object.key, text));
    files++;
  }
  if (files == 0) return Status::NotFound("no .sql file in the pipeline folder " + folder.Describe());
  return loader.Finish();
}

}  // namespace basin::pipeline
