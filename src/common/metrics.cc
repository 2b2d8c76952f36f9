#include "common/metrics.h"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <cmath>

namespace basin::metrics {
namespace {

const char* TypeName(MetricType type) {
  switch (type) {
    case MetricType::kCounter:
      return "counter";
    case MetricType::kGauge:
      return "gauge";
    case MetricType::kHistogram:
      return "histogram";
  }
  return "untyped";
}

// A value as the format writes floats: +Inf, -Inf, NaN, else the shortest text that reads
// back as the same double ("3", "0.25", "1e+20").
std::string FormatValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  return fmt::format("{}", value);
}

// `text` with backslash and line feed escaped, and the double quote when `quote` (label
// values escape it; help text does not).
std::string Escape(std::string_view text, bool quote) {
  std::string escaped;
  escaped.reserve(text.size());
  for (char c : text) {
    if (c == '\\') {
      escaped += "\\\\";
    } else if (c == '\n') {
      escaped += "\\n";
    } else if (c == '"' && quote) {
      escaped += "\\\"";
    } else {
      escaped += c;
    }
  }
  return escaped;
}

}  // namespace

Histogram::Histogram(std::vector<double> upper_bounds)
    : upper_bounds_(std::move(upper_bounds)),
      counts_(std::make_unique<std::atomic<uint64_t>[]>(upper_bounds_.size() + 1)) {
  assert(std::is_sorted(upper_bounds_.begin(), upper_bounds_.end()));
}

void Histogram::Observe(double value) {
  counts_[BucketOf(upper_bounds_, value)].fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(value, std::memory_order_relaxed);
}

std::vector<uint64_t> Histogram::bucket_counts() const {
  std::vector<uint64_t> counts(upper_bounds_.size() + 1);
  for (size_t i = 0; i < counts.size(); i++) counts[i] = counts_[i].load(std::memory_order_relaxed);
  return counts;
}

size_t BucketOf(const std::vector<double>& upper_bounds, double value) {
  // Buckets are "less than or equal".
  return static_cast<size_t>(std::lower_bound(upper_bounds.begin(), upper_bounds.end(), value) -
                             upper_bounds.begin());
}

std::vector<double> LatencyBucketsSeconds() {
  return {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60};
}

void AppendSamples(const Counter& counter, const Labels& labels, std::vector<Sample>& out) {
  out.push_back(Sample{"", labels, static_cast<double>(counter.value())});
}

void AppendSamples(const Gauge& gauge, const Labels& labels, std::vector<Sample>& out) {
  out.push_back(Sample{"", labels, gauge.value()});
}

void AppendSamples(const Histogram& histogram, const Labels& labels, std::vector<Sample>& out) {
  AppendHistogramSamples(histogram.upper_bounds(), histogram.bucket_counts(), histogram.sum(), labels, out);
}

void AppendHistogramSamples(const std::vector<double>& upper_bounds, const std::vector<uint64_t>& counts,
                            double sum, const Labels& labels, std::vector<Sample>& out) {
  uint64_t cumulative = 0;
  for (size_t i = 0; i < counts.size(); i++) {
    cumulative += counts[i];
    Labels with_le = labels;
    with_le.emplace_back("le", i < upper_bounds.size() ? FormatValue(upper_bounds[i]) : "+Inf");
    out.push_back(Sample{"_bucket", std::move(with_le), static_cast<double>(cumulative)});
  }
  out.push_back(Sample{"_sum", labels, sum});
  out.push_back(Sample{"_count", labels, static_cast<double>(cumulative)});
}

FamilyBase::FamilyBase(std::string name, std::string help, MetricType type,
                       std::vector<std::string> label_names)
    : name_(std::move(name)), help_(std::move(help)), type_(type), label_names_(std::move(label_names)) {}

Labels FamilyBase::LabelsOf(const std::vector<std::string>& values) const {
  assert(values.size() == label_names_.size());
  Labels labels;
  for (size_t i = 0; i < values.size() && i < label_names_.size(); i++)
    labels.emplace_back(label_names_[i], values[i]);
  return labels;
}

FamilySamples FamilyBase::Collect() const {
  FamilySamples family{name_, help_, type_, {}};
  AppendChildren(family.samples);
  return family;
}

template <typename Metric>
Family<Metric>& Registry::Add(const std::string& name, const std::string& help, MetricType type,
                              const std::vector<std::string>& label_names,
                              typename Family<Metric>::Maker make) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const std::unique_ptr<FamilyBase>& family : families_) {
    if (family->name() != name) continue;
    auto* same = dynamic_cast<Family<Metric>*>(family.get());
    assert(same != nullptr && family->type() == type && family->label_names() == label_names);
    return *same;
  }
  families_.push_back(std::make_unique<Family<Metric>>(name, help, type, label_names, std::move(make)));
  return static_cast<Family<Metric>&>(*families_.back());
}

Family<Counter>& Registry::AddCounter(const std::string& name, const std::string& help,
                                      const std::vector<std::string>& label_names) {
  return Add<Counter>(name, help, MetricType::kCounter, label_names,
                      [] { return std::make_unique<Counter>(); });
}

Family<Gauge>& Registry::AddGauge(const std::string& name, const std::string& help,
                                  const std::vector<std::string>& label_names) {
  return Add<Gauge>(name, help, MetricType::kGauge, label_names, [] { return std::make_unique<Gauge>(); });
}

Family<Histogram>& Registry::AddHistogram(const std::string& name, const std::string& help,
                                          const std::vector<double>& upper_bounds,
                                          const std::vector<std::string>& label_names) {
  return Add<Histogram>(name, help, MetricType::kHistogram, label_names,
                        [upper_bounds] { return std::make_unique<Histogram>(upper_bounds); });
}

void Registry::AddCollector(Collector collect) {
  std::lock_guard<std::mutex> lock(mutex_);
  collectors_.push_back(std::move(collect));
}

std::vector<FamilySamples> Registry::Collect() const {
  std::vector<FamilySamples> collected;
  std::vector<Collector> collectors;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const std::unique_ptr<FamilyBase>& family : families_) collected.push_back(family->Collect());
    collectors = collectors_;
  }
  for (const Collector& collect : collectors) {
    std::vector<FamilySamples> more = collect();
    std::move(more.begin(), more.end(), std::back_inserter(collected));
  }
  return collected;
}

Registry& ProcessRegistry() {
  static Registry* registry = new Registry();  // never destroyed: counted into until exit
  return *registry;
}

std::string RenderText(const std::vector<FamilySamples>& families) {
  std::string text;
  for (const FamilySamples& family : families) {
    text += "# HELP " + family.name + " " + Escape(family.help, /*quote=*/false) + "\n";
    text += "# TYPE " + family.name + " " + TypeName(family.type) + "\n";
    for (const Sample& sample : family.samples) {
      text += family.name + sample.suffix;
      if (!sample.labels.empty()) {
        text += "{";
        for (size_t i = 0; i < sample.labels.size(); i++) {
          if (i > 0) text += ",";
          text += sample.labels[i].first + "=\"" + Escape(sample.labels[i].second, /*quote=*/true) + "\"";
        }
        text += "}";
      }
      text += " " + FormatValue(sample.value) + "\n";
    }
  }
  return text;
}

}  // namespace basin::metrics
