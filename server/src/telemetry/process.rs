//! The standard `process_*` metrics of a Linux process, read from `/proc/self` at scrape time
//! (prometheus-client has no process collector). A value that cannot be read is left out of
//! the scrape rather than failing it.

use std::fs;

use prometheus_client::{
    collector::Collector,
    encoding::{DescriptorEncoder, EncodeMetric},
    metrics::{counter::ConstCounter, gauge::ConstGauge, MetricType},
};

/// The fields of `/proc/self/stat` we use, in their own units.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcStat {
    /// User-mode CPU time, in clock ticks.
    pub utime_ticks: u64,
    /// Kernel-mode CPU time, in clock ticks.
    pub stime_ticks: u64,
    /// Start time after boot, in clock ticks.
    pub start_ticks: u64,
    /// Resident set size, in pages.
    pub rss_pages: u64,
}

impl ProcStat {
    /// Parses a `/proc/PID/stat` line. The command name (field 2) is in parentheses and may
    /// itself hold spaces and parentheses, so fields are counted after its last `)`.
    pub fn parse(line: &str) -> Option<Self> {
        let (_, rest) = line.rsplit_once(')')?;
        // rest starts at field 3 (state): field n is at index n - 3.
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let field = |n: usize| fields.get(n - 3)?.parse::<u64>().ok();
        Some(Self {
            utime_ticks: field(14)?,
            stime_ticks: field(15)?,
            start_ticks: field(22)?,
            rss_pages: field(24)?,
        })
    }
}

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
        let stat = fs::read_to_string("/proc/self/stat")
            .ok()
            .and_then(|l| ProcStat::parse(&l));
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
            let page = u64::try_from(rustix::param::page_size()).unwrap_or(4096);
            ConstGauge::new(stat.rss_pages.saturating_mul(page)).encode(
                encoder.encode_descriptor(
                    "process_resident_memory_bytes",
                    "Resident memory size in bytes.",
                    None,
                    MetricType::Gauge,
                )?,
            )?;
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
    fn stat_fields_are_counted_after_the_last_parenthesis() {
        // A command name with a space and a parenthesis, as a process may name itself.
        let line = "4242 (my (odd) node) S 1 4242 4242 0 -1 4194560 1000 0 0 0 \
                    250 75 0 0 20 0 9 0 123456 104857600 2560 18446744073709551615 \
                    1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0";
        let stat = ProcStat::parse(line).expect("parses");
        assert_eq!(
            stat,
            ProcStat {
                utime_ticks: 250,
                stime_ticks: 75,
                start_ticks: 123_456,
                rss_pages: 2560,
            }
        );
        assert_eq!(ProcStat::parse("12 (cut short) S 1 2"), None);
        assert_eq!(ProcStat::parse(""), None);
    }

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
