// Metrics: counters, gauges and histograms with labels, kept in a Registry and rendered in
// Prometheus's text exposition format 0.0.4 (what `GET /metrics` of `basin serve` answers).
//
// A family is one metric name with its help, type and label names; each distinct tuple of
// label values is one child series of it. Adding series (docs/server.md "Metrics"):
//
//   metrics::Family<metrics::Counter>& rows =
//       registry.AddCounter("basin_stream_rows_total", "Rows read by streams.", {"stream"});
//   metrics::Counter& of_orders = rows.With({"orders"});  // look up once, keep the reference
//   of_orders.Increment(batch_rows);                      // lock-free from then on
//
// Series whose values are read from elsewhere when scraped (a table's file count) come
// from a collector (AddCollector) instead of a family.
//
// Thread safety: everything may be called from any thread. Increments, Set and Observe are
// single atomic operations; Family::With takes the family's mutex to find or make a child
// (whose reference then stays valid for the registry's lifetime), and so does Render to
// read the children.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace basin::metrics {

enum class MetricType { kCounter, kGauge, kHistogram };

// Label names paired with their values, in the family's order.
using Labels = std::vector<std::pair<std::string, std::string>>;

// One line of the exposition: `name` is the family's name plus `suffix` (a histogram's
// "_bucket", "_sum", "_count"; empty otherwise).
struct Sample {
  std::string suffix;
  Labels labels;
  double value = 0;
};

// A family's series as a scrape sees them.
struct FamilySamples {
  std::string name;
  std::string help;
  MetricType type = MetricType::kGauge;
  std::vector<Sample> samples;
};

// Only ever goes up (reset by a restart, as Prometheus expects of counters).
class Counter {
 public:
  void Increment(int64_t by = 1) { value_.fetch_add(by, std::memory_order_relaxed); }
  int64_t value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<int64_t> value_{0};
};

// A value that goes up and down (connections open now).
class Gauge {
 public:
  void Set(double value) { value_.store(value, std::memory_order_relaxed); }
  void Add(double by) { value_.fetch_add(by, std::memory_order_relaxed); }
  double value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

// Counts of observations at or below each upper bound, their sum and their count.
class Histogram {
 public:
  // REQUIRES: `upper_bounds` is ascending and finite (+Inf is implied).
  explicit Histogram(std::vector<double> upper_bounds);
  void Observe(double value);

  const std::vector<double>& upper_bounds() const { return upper_bounds_; }
  // Observations per bucket, not cumulative: bucket i holds those in (bound i-1, bound i],
  // the last one those above every bound.
  std::vector<uint64_t> bucket_counts() const;
  double sum() const { return sum_.load(std::memory_order_relaxed); }

 private:
  const std::vector<double> upper_bounds_;
  std::unique_ptr<std::atomic<uint64_t>[]> counts_;  // upper_bounds_.size() + 1
  std::atomic<double> sum_{0};
};

// The bucket `value` falls in: the first of `upper_bounds` at or above it, or
// upper_bounds.size() (+Inf).
size_t BucketOf(const std::vector<double>& upper_bounds, double value);

// Latency buckets in seconds, from 1 ms to 60 s.
std::vector<double> LatencyBucketsSeconds();

// A child's lines, labelled `labels`: one for a counter or gauge, the cumulative buckets,
// sum and count for a histogram.
void AppendSamples(const Counter& counter, const Labels& labels, std::vector<Sample>& out);
void AppendSamples(const Gauge& gauge, const Labels& labels, std::vector<Sample>& out);
void AppendSamples(const Histogram& histogram, const Labels& labels, std::vector<Sample>& out);
// A histogram's lines from its bounds, per-bucket counts (as Histogram::bucket_counts) and sum.
void AppendHistogramSamples(const std::vector<double>& upper_bounds, const std::vector<uint64_t>& counts,
                            double sum, const Labels& labels, std::vector<Sample>& out);

class FamilyBase {
 public:
  FamilyBase(std::string name, std::string help, MetricType type, std::vector<std::string> label_names);
  virtual ~FamilyBase() = default;
  FamilyBase(const FamilyBase&) = delete;
  FamilyBase& operator=(const FamilyBase&) = delete;

  const std::string& name() const { return name_; }
  MetricType type() const { return type_; }
  const std::vector<std::string>& label_names() const { return label_names_; }
  FamilySamples Collect() const;

 protected:
  // Every child's samples.
  virtual void AppendChildren(std::vector<Sample>& out) const = 0;
  // REQUIRES: `values` has one value per label name.
  Labels LabelsOf(const std::vector<std::string>& values) const;

  mutable std::mutex mutex_;

 private:
  const std::string name_;
  const std::string help_;
  const MetricType type_;
  const std::vector<std::string> label_names_;
};

template <typename Metric>
class Family final : public FamilyBase {
 public:
  using Maker = std::function<std::unique_ptr<Metric>()>;
  Family(std::string name, std::string help, MetricType type, std::vector<std::string> label_names,
         Maker make)
      : FamilyBase(std::move(name), std::move(help), type, std::move(label_names)), make_(std::move(make)) {}

  // The child of these label values (one per label name, in order), made on first use.
  // REQUIRES: label_values.size() == label_names().size().
  Metric& With(const std::vector<std::string>& label_values = {}) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::unique_ptr<Metric>& child = children_[label_values];
    if (!child) child = make_();
    return *child;
  }

 private:
  void AppendChildren(std::vector<Sample>& out) const override {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& [values, child] : children_) AppendSamples(*child, LabelsOf(values), out);
  }

  const Maker make_;
  std::map<std::vector<std::string>, std::unique_ptr<Metric>> children_;  // GUARDED_BY(mutex_)
};

class Registry {
 public:
  // The family `name`; adding a name again gives the family it already names.
  // REQUIRES: `name` and the label names are valid Prometheus names; a name added again
  // has the same type and label names (and buckets, for a histogram).
  Family<Counter>& AddCounter(const std::string& name, const std::string& help,
                              const std::vector<std::string>& label_names = {});
  Family<Gauge>& AddGauge(const std::string& name, const std::string& help,
                          const std::vector<std::string>& label_names = {});
  Family<Histogram>& AddHistogram(const std::string& name, const std::string& help,
                                  const std::vector<double>& upper_bounds,
                                  const std::vector<std::string>& label_names = {});

  // Series computed when scraped. `collect` runs on the scraping thread, outside the
  // registry's lock; it must not take locks that statements wait for.
  using Collector = std::function<std::vector<FamilySamples>()>;
  void AddCollector(Collector collect);

  // Every family (in the order added) and then every collector's.
  std::vector<FamilySamples> Collect() const;

 private:
  template <typename Metric>
  Family<Metric>& Add(const std::string& name, const std::string& help, MetricType type,
                      const std::vector<std::string>& label_names, typename Family<Metric>::Maker make);

  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<FamilyBase>> families_;  // GUARDED_BY(mutex_)
  std::vector<Collector> collectors_;                  // GUARDED_BY(mutex_)
};

// The registry of what the whole process counts, for layers that no server object reaches
// (the commit loop's conflicts and retries).
Registry& ProcessRegistry();

// The exposition of `families` in the text format 0.0.4: per family its # HELP and # TYPE
// lines, then one line per sample. Label values and help are escaped as the format says.
std::string RenderText(const std::vector<FamilySamples>& families);

// The Content-Type of RenderText's output.
inline constexpr std::string_view kTextContentType = "text/plain; version=0.0.4; charset=utf-8";

}  // namespace basin::metrics
