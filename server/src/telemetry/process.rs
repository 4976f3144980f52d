//! The standard `process_*` metrics of a Linux process, read from `/proc/self` at scrape time
//! (prometheus-client has no process collector). A value that cannot be read is left out of
//! the scrape rather than failing it. `/proc/self/stat` is parsed by
//! [`ledger_api::process::ProcStat`], which the dashboard's stats read too.

use std::fs;

use prometheus_client::{
    collector::Collector,
    encoding::{DescriptorEncoder, EncodeMetric},
    metrics::{counter::ConstCounter, gauge::ConstGauge, MetricType},
};

use ledger_api::process::ProcStat;

/// The boot time in seconds since the epoch (`btime` of `/proc/stat`).
fn boot_time_secs(proc_stat: &str) -> Option<u64> {
    proc_stat
        .lines()
        .find_map(|l| l.strip_prefix("btime "))
        .and_then(|v| v.trim().parse().ok())
}

/// Open file descriptors (entries of `/proc/self/fd`, the one reading it included, as
/// Prometheus' own process collectors count).
fn open_fds() -> Option<u64> {
    let count = fs::read_dir("/proc/self/fd").ok()?.count();
    u64::try_from(count).ok()
}

/// `process_cpu_seconds_total`, `process_resident_memory_bytes`, `process_open_fds`,
/// `process_max_fds` and `process_start_time_seconds`.
#[derive(Debug, Clone, Copy, Default)]
pub struct ProcessCollector;

impl Collector for ProcessCollector {
    fn encode(&self, mut encoder: DescriptorEncoder<'_>) -> Result<(), std::fmt::Error> {
        let stat = ProcStat::of_self();
        let ticks = rustix::param::clock_ticks_per_second().max(1);
        // Tick and page counts stay far below 2^52: the conversions are exact.
        let secs = |t: u64| t as f64 / ticks as f64;
        if let Some(stat) = stat {
            let cpu = secs(stat.utime_ticks.saturating_add(stat.stime_ticks));
            ConstCounter::new(cpu).encode(encoder.encode_descriptor(
                "process_cpu_seconds",
                "Total user and system CPU time spent in seconds.",
                None,
                MetricType::Counter,
            )?)?;
            ConstGauge::new(stat.resident_bytes()).encode(encoder.encode_descriptor(
                "process_resident_memory_bytes",
                "Resident memory size in bytes.",
                None,
                MetricType::Gauge,
            )?)?;
            let boot = fs::read_to_string("/proc/stat")
                .ok()
                .and_then(|s| boot_time_secs(&s));
            if let Some(boot) = boot {
                let start = boot as f64 + secs(stat.start_ticks);
                ConstGauge::new(start).encode(encoder.encode_descriptor(
                    "process_start_time_seconds",
                    "Start time of the process since unix epoch in seconds.",
                    None,
                    MetricType::Gauge,
                )?)?;
            }
        }
        if let Some(fds) = open_fds() {
            ConstGauge::new(fds).encode(encoder.encode_descriptor(
                "process_open_fds",
                "Number of open file descriptors.",
                None,
                MetricType::Gauge,
            )?)?;
        }
        let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile).current;
        if let Some(max) = limit {
            ConstGauge::new(max).encode(encoder.encode_descriptor(
                "process_max_fds",
                "Maximum number of open file descriptors.",
                None,
                MetricType::Gauge,
            )?)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boot_time_is_read_from_proc_stat() {
        let text = "cpu  1 2 3\nintr 5\nbtime 1700000000\nprocesses 9\n";
        assert_eq!(boot_time_secs(text), Some(1_700_000_000));
        assert_eq!(boot_time_secs("cpu 1\n"), None);
    }

    #[test]
    fn this_process_reports_every_family() {
        let mut registry = prometheus_client::registry::Registry::default();
        registry.register_collector(Box::new(ProcessCollector));
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).expect("encode");
        for family in [
            "# TYPE process_cpu_seconds counter",
            "# TYPE process_resident_memory_bytes gauge",
            "# TYPE process_open_fds gauge",
            "# TYPE process_start_time_seconds gauge",
        ] {
            assert!(text.contains(family), "{family} missing in\n{text}");
        }
    }
}
