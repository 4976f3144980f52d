//! What `mqtt-swarm` reports: per-subscriber observations folded into delivery counts and
//! the latency from each probe's 201 to its delivery (see [`crate::swarm`]).

use std::{collections::HashMap, time::Instant};

use hdrhistogram::Histogram;
use serde::Serialize;

use crate::{probe::Probes, Latency};

/// Largest latency the histogram holds, in microseconds (larger ones are recorded as this).
const MAX_LATENCY_US: u64 = 600_000_000;

/// What one subscriber saw while measuring.
#[derive(Debug, Default)]
pub(crate) struct Seen {
    /// PUBLISH packets received.
    pub(crate) messages: u64,
    /// Probe deliveries: sequence number and time of receipt.
    pub(crate) probes: Vec<(u64, Instant)>,
    /// Why the connection ended before the end of the run, if it did.
    pub(crate) lost: Option<String>,
}

impl Seen {
    /// Counts one PUBLISH with `payload`; a `blocks` subscriber (`timed`) notes a probe's arrival.
    pub(crate) fn saw(&mut self, timed: bool, payload: &[u8]) {
        self.messages += 1;
        if timed {
            if let Some(seq) = crate::probe::probe_seq(payload) {
                self.probes.push((seq, Instant::now()));
            }
        }
    }
}

/// The result of a swarm run.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SwarmReport {
    /// Connections opened and subscribed.
    pub subscribers: usize,
    /// Of them, on `blocks`.
    pub blocks_subscribers: usize,
    /// Seconds of probing.
    pub seconds: f64,
    /// Probes posted.
    pub probes_sent: u64,
    /// Probes answered 201.
    pub probes_created: u64,
    /// Created probes times `blocks` subscribers still connected at the end: the deliveries
    /// expected.
    pub expected_deliveries: u64,
    /// Deliveries of created probes to `blocks` subscribers.
    pub deliveries: u64,
    /// Of them, received before the probe's 201 (counted as 0 ms).
    pub before_201: u64,
    /// Delivery latency from the 201, in milliseconds.
    pub latency_ms: Latency,
    /// PUBLISH packets received by all subscribers.
    pub messages: u64,
    /// Connections the node closed (or that failed) during the run.
    pub dropped: u64,
    /// Why, for the first dropped one.
    pub first_drop: Option<String>,
}

impl std::fmt::Display for SwarmReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "subscribers {} ({} on blocks), {:.1} s",
            self.subscribers, self.blocks_subscribers, self.seconds
        )?;
        writeln!(
            f,
            "probes      {} posted, {} created",
            self.probes_sent, self.probes_created
        )?;
        writeln!(
            f,
            "deliveries  {} of {} expected, {} before the 201",
            self.deliveries, self.expected_deliveries, self.before_201
        )?;
        writeln!(f, "latency     {}", self.latency_ms)?;
        writeln!(f, "messages    {}", self.messages)?;
        write!(f, "dropped     {}", self.dropped)?;
        if let Some(why) = &self.first_drop {
            write!(f, " (first: {why})")?;
        }
        Ok(())
    }
}

/// The report over what every subscriber saw (`timed`: on `blocks`) and the probes.
pub(crate) fn report(
    total: usize,
    blocks_subscribers: usize,
    seconds: f64,
    probes: &Probes,
    seen: &[(bool, Seen)],
) -> SwarmReport {
    let mut hist: Histogram<u64> =
        Histogram::new_with_bounds(1, MAX_LATENCY_US, 3).expect("valid histogram bounds");
    let (mut deliveries, mut before_201, mut messages, mut dropped) = (0, 0, 0, 0);
    let mut timed_alive = 0u64;
    let mut first_drop = None;
    for (timed, s) in seen {
        messages += s.messages;
        match &s.lost {
            Some(why) => {
                dropped += 1;
                first_drop.get_or_insert_with(|| why.clone());
            }
            None if *timed => timed_alive += 1,
            None => {}
        }
        // A subscriber's deliveries of one probe are counted once (a duplicate would be a
        // node bug, not a second delivery).
        let mut once: HashMap<u64, Instant> = HashMap::new();
        for &(seq, at) in &s.probes {
            once.entry(seq).or_insert(at);
        }
        for (seq, at) in once {
            let Some(&created) = probes.created.get(&seq) else {
                continue;
            };
            deliveries += 1;
            let us = match at.checked_duration_since(created) {
                Some(d) => u64::try_from(d.as_micros()).unwrap_or(u64::MAX),
                None => {
                    before_201 += 1;
                    0
                }
            };
            // The histogram's lowest value is 1 µs: 0 is recorded as its own bucket.
            hist.saturating_record(us);
        }
    }
    let probes_created = probes.created.len() as u64;
    SwarmReport {
        subscribers: total,
        blocks_subscribers,
        seconds,
        probes_sent: probes.sent,
        probes_created,
        expected_deliveries: probes_created * timed_alive,
        deliveries,
        before_201,
        latency_ms: Latency::of(&hist, 1000.0),
        messages,
        dropped,
        first_drop,
    }
}
