// A pipeline folder and a warehouse in a temporary folder, for tests that write a pipeline's
// files, run it through the public API and query its tables.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "basin/pipeline.h"
#include "basin/session.h"
#include "testing/test_util.h"

namespace basin::pipeline {

class PipelineHarness : public ::testing::Test {
 protected:
  PipelineHarness() {
    folder_ = dir_.path() / "pipeline";
    warehouse_ = (dir_.path() / "warehouse").string();
    std::filesystem::create_directories(folder_);
  }

  void Write(const std::string& name, const std::string& text) { std::ofstream(folder_ / name) << text; }

  // The last statement's rows.
  std::vector<std::vector<std::optional<std::string>>> Sql(const std::string& text) {
    auto session = Session::Open({.warehouse = warehouse_});
    EXPECT_TRUE(session.ok()) << session.status().ToString();
    auto results = (*session)->Execute(text);
    EXPECT_TRUE(results.ok()) << results.status().ToString();
    if (!results.ok() || results->empty()) return {};
    return results->back().result.rows;
  }

  // Runs the pipeline once, recomputing the datasets named in `full_refresh` ({"all"}: every one).
  Result<std::vector<PipelineFlowRun>> Run(const std::vector<std::string>& full_refresh = {}) {
    PipelineOptions options;
    options.folder = folder_.string();
    options.warehouse = warehouse_;
    options.full_refresh_all = full_refresh == std::vector<std::string>{"all"};
    if (!options.full_refresh_all) options.full_refresh = full_refresh;
    ASSIGN_OR_RETURN(auto pipeline, Pipeline::Open(options));
    return pipeline->Run();
  }

  testing::TempDir dir_;
  std::filesystem::path folder_;
  std::string warehouse_;
};

}  // namespace basin::pipeline
