//! Reading `/metrics` back as Prometheus reads it (the text format, parsed by `prometheus-parse`).

use prometheus_parse::{Scrape, Value as Sample};

/// `text` parsed as the Prometheus text format; panics when it does not parse.
pub fn parse(text: &str) -> Scrape {
    Scrape::parse(text.lines().map(|l| Ok(l.to_owned()))).expect("Prometheus text")
}

/// The value of the counter or gauge `metric` whose labels include `labels` (summed over its series); 0 when no
/// such series exists yet.
pub fn value(scrape: &Scrape, metric: &str, labels: &[(&str, &str)]) -> f64 {
    let matching = scrape.samples.iter().filter(|s| s.metric == metric).filter(|s| {
        labels.iter().all(|(k, v)| s.labels.get(k) == Some(*v))
    });
    matching
        .map(|s| match s.value {
            Sample::Counter(v) | Sample::Gauge(v) | Sample::Untyped(v) => v,
            _ => panic!("{metric} is neither a counter nor a gauge"),
        })
        .sum()
}
