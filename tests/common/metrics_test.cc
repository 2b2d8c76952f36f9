// The metrics registry (common/metrics.h): the text it renders (Prometheus's exposition
// format 0.0.4, label values escaped), histograms' cumulative buckets, and increments from
// many threads.
#include "common/metrics.h"

#include <gtest/gtest.h>

#include <limits>
#include <thread>
#include <vector>

namespace basin::metrics {
namespace {

TEST(MetricsTest, RendersCountersAndGaugesWithHelpTypeAndLabels) {
  Registry registry;
  Family<Counter>& queries =
      registry.AddCounter("basin_queries_total", "Statements run.", {"protocol", "outcome"});
  queries.With({"pg", "ok"}).Increment(3);
  queries.With({"http", "error"}).Increment();
  registry.AddGauge("basin_up", "Whether the server runs.").With().Set(1);
  EXPECT_EQ(RenderText(registry.Collect()),
            "# HELP basin_queries_total Statements run.\n"
            "# TYPE basin_queries_total counter\n"
            "basin_queries_total{protocol=\"http\",outcome=\"error\"} 1\n"
            "basin_queries_total{protocol=\"pg\",outcome=\"ok\"} 3\n"
            "# HELP basin_up Whether the server runs.\n"
            "# TYPE basin_up gauge\n"
            "basin_up 1\n");
}

TEST(MetricsTest, EscapesLabelValuesAndHelp) {
  Registry registry;
  registry.AddGauge("g", "a \\ back\nslash \"quoted\"", {"table"}).With({"we\"ird\\na\nme"}).Set(2.5);
  EXPECT_EQ(RenderText(registry.Collect()),
            "# HELP g a \\\\ back\\nslash \"quoted\"\n"
            "# TYPE g gauge\n"
            "g{table=\"we\\\"ird\\\\na\\nme\"} 2.5\n");
}

TEST(MetricsTest, WritesSpecialFloatsAsTheFormatSpellsThem) {
  std::vector<FamilySamples> families = {{"f",
                                          "h",
                                          MetricType::kGauge,
                                          {{"", {{"v", "inf"}}, std::numeric_limits<double>::infinity()},
                                           {"", {{"v", "-inf"}}, -std::numeric_limits<double>::infinity()},
                                           {"", {{"v", "nan"}}, std::numeric_limits<double>::quiet_NaN()},
                                           {"", {{"v", "big"}}, 1e20},
                                           {"", {{"v", "small"}}, 0.001}}}};
  EXPECT_EQ(
      RenderText(families),
      "# HELP f h\n# TYPE f gauge\n"
      "f{v=\"inf\"} +Inf\nf{v=\"-inf\"} -Inf\nf{v=\"nan\"} NaN\nf{v=\"big\"} 1e+20\nf{v=\"small\"} 0.001\n");
}

TEST(MetricsTest, HistogramBucketsAreCumulativeWithSumAndCount) {
  Registry registry;
  Family<Histogram>& latency =
      registry.AddHistogram("basin_query_duration_seconds", "Latency.", {0.25, 1}, {"protocol"});
  Histogram& pg = latency.With({"pg"});
  pg.Observe(0.125);
  pg.Observe(0.25);  // "less than or equal": in the 0.25 bucket
  pg.Observe(0.5);
  pg.Observe(7);
  EXPECT_EQ(RenderText(registry.Collect()),
            "# HELP basin_query_duration_seconds Latency.\n"
            "# TYPE basin_query_duration_seconds histogram\n"
            "basin_query_duration_seconds_bucket{protocol=\"pg\",le=\"0.25\"} 2\n"
            "basin_query_duration_seconds_bucket{protocol=\"pg\",le=\"1\"} 3\n"
            "basin_query_duration_seconds_bucket{protocol=\"pg\",le=\"+Inf\"} 4\n"
            "basin_query_duration_seconds_sum{protocol=\"pg\"} 7.875\n"
            "basin_query_duration_seconds_count{protocol=\"pg\"} 4\n");
}

TEST(MetricsTest, AddingANameAgainGivesItsFamily) {
  Registry registry;
  Family<Counter>& first = registry.AddCounter("c_total", "h");
  first.With().Increment(2);
  EXPECT_EQ(&registry.AddCounter("c_total", "h"), &first);
  EXPECT_EQ(registry.AddCounter("c_total", "h").With().value(), 2);
  EXPECT_EQ(registry.Collect().size(), 1u);
}

TEST(MetricsTest, CollectorsAddSeriesWhenScraped) {
  Registry registry;
  int scrapes = 0;
  registry.AddCollector([&scrapes] {
    ++scrapes;
    return std::vector<FamilySamples>{
        {"basin_table_files", "Files.", MetricType::kGauge, {{"", {{"table", "t"}}, double(scrapes)}}}};
  });
  EXPECT_EQ(
      RenderText(registry.Collect()),
      "# HELP basin_table_files Files.\n# TYPE basin_table_files gauge\nbasin_table_files{table=\"t\"} 1\n");
  EXPECT_NE(RenderText(registry.Collect()).find("basin_table_files{table=\"t\"} 2\n"), std::string::npos);
}

TEST(MetricsTest, IncrementsFromManyThreadsAreAllCounted) {
  Registry registry;
  Counter& counter = registry.AddCounter("c_total", "h").With();
  Gauge& gauge = registry.AddGauge("g", "h").With();
  Histogram& histogram = registry.AddHistogram("h_seconds", "h", {1}).With();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; t++) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10000; i++) {
        counter.Increment();
        gauge.Add(1);
        gauge.Add(-1);
        histogram.Observe(0.5);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(counter.value(), 40000);
  EXPECT_EQ(gauge.value(), 0);
  EXPECT_EQ(histogram.bucket_counts(), (std::vector<uint64_t>{40000, 0}));
  EXPECT_EQ(histogram.sum(), 20000);
}

}  // namespace
}  // namespace basin::metrics
