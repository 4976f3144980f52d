//! "201 means the block is in the log and survives a process kill": concurrent clients
//! submit v2 blocks (JSON and binary, parents filled in by the node), the node is killed
//! with SIGKILL while they are still sending, and after a restart on the same data dir every
//! acknowledged block reads back byte for byte.

use crate::common;
use crate::v2_support;

use std::{
    sync::{
        atomic::{AtomicBool, Ordering},
        Arc,
    },
    time::Duration,
};

use common::TestNode;
use serde_json::json;
use v2_support::*;

use ledger_codec::stardust::Payload;

/// Block JSON and a binary block with zero parents (the node fills them in).
fn submission(client: u32, i: u32) -> (&'static str, Vec<u8>) {
    let tag = format!("kill-{client}-{i}");
    let payload = tagged_data(tag.as_bytes(), b"durable");
    if i.is_multiple_of(2) {
        let block = json!({"protocolVersion": 2, "payload": payload});
        (JSON_CT, block.to_string().into_bytes())
    } else {
        let payload: Payload<'static> = serde_json::from_value(payload).expect("payload");
        let mut bytes = block_bytes(&[[0; 32]], Some(payload), 0);
        // One parent of 32 bytes → zero parents.
        bytes.splice(1..34, [0u8]);
        (BINARY, bytes)
    }
}

#[test]
fn every_acknowledged_block_survives_sigkill() {
    // Each round with another group-commit spacing: the default, none, and a wide one.
    for (round, sync) in [(0, None), (1, Some("0")), (2, Some("20"))] {
        let sync_flag = sync.map(|ms| format!("--log-sync-interval-ms={ms}"));
        let mut args = vec!["--coordinator-interval=1"];
        args.extend(sync_flag.as_deref());
        let node = Arc::new(TestNode::start_with(&args, &[]));
        let stop = Arc::new(AtomicBool::new(false));
        let clients: Vec<_> = (0..6u32)
            .map(|c| {
                let node = Arc::clone(&node);
                let stop = Arc::clone(&stop);
                std::thread::spawn(move || {
                    let mut acked = Vec::new();
                    let mut i = 0;
                    while !stop.load(Ordering::Relaxed) {
                        let (media, body) = submission(c, i);
                        i += 1;
                        match node.try_post(BLOCKS, &[("content-type", media)], &body) {
                            Some(reply) if reply.status == 201 => acked.push(reply.created_id()),
                            Some(reply) => panic!(
                                "status {}: {}",
                                reply.status,
                                String::from_utf8_lossy(&reply.body)
                            ),
                            // The node is gone.
                            None => break,
                        }
                    }
                    acked
                })
            })
            .collect();
        std::thread::sleep(Duration::from_millis(400 + 300 * round));
        node.send_kill_9();
        stop.store(true, Ordering::Relaxed);
        let acked: Vec<String> = clients
            .into_iter()
            .flat_map(|c| c.join().expect("client thread"))
            .collect();
        assert!(
            acked.len() > 20,
            "round {round}: only {} acked",
            acked.len()
        );
        let node = Arc::try_unwrap(node).unwrap_or_else(|_| panic!("clients finished"));
        let dir = node.kill_9();

        let node = TestNode::start_in(dir, &args, &[]);
        for id in &acked {
            let raw = node.get_with(&format!("{BLOCKS}/{id}"), &[("accept", BINARY)]);
            assert_eq!(raw.status, 200, "round {round}: acknowledged {id} lost");
            assert_eq!(
                &hex0x(&ledger_codec::stardust::Block::id_of(&raw.body)),
                id,
                "round {round}: {id} bytes differ"
            );
        }
    }
}
