//! This process's own figures from `/proc/self` (Linux): the `/proc/PID/stat` fields both the
//! Prometheus `process_*` metrics (`server/src/telemetry/process.rs`) and the dashboard's stats
//! read, parsed in one place.

use std::fs;

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

    /// This process's fields now; `None` where `/proc/self/stat` cannot be read.
    pub fn of_self() -> Option<Self> {
        fs::read_to_string("/proc/self/stat")
            .ok()
            .and_then(|l| Self::parse(&l))
    }

    /// The resident set in bytes.
    pub fn resident_bytes(&self) -> u64 {
        let page = u64::try_from(rustix::param::page_size()).unwrap_or(4096);
        self.rss_pages.saturating_mul(page)
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
    fn this_process_has_a_resident_set() {
        let stat = ProcStat::of_self().expect("/proc/self/stat");
        assert!(stat.resident_bytes() > 0);
        assert_eq!(
            stat.resident_bytes() % u64::try_from(rustix::param::page_size()).expect("fits"),
            0
        );
    }
}
