//! Engine workers in a real lab (`interface.workers`, docs/gateway.md "Engine workers"): two
//! nc gateways with two workers and a two-queue TUN each (`interface.tun_queues`, "Multi-queue
//! TUN") carry four TCP flows at full speed (`tcpnc lab speed`, gateways joined directly)
//! intact, with no gateway drops, and say they ran sharded and read both queues' readers.
//!
//! If a connection's frames went to different shards (say, NC-ACKs hashed apart from their
//! DATA), its sender would never hear its ACKs and the transfer would stall: the run fails.
//!
//! Needs root (network namespaces, TUN) and `ip`; elsewhere it prints why it skips and passes.

mod common;

use common::lab::{json_of, lab_capable, tcpnc};

#[test]
fn four_flows_through_sharded_gateways_arrive_intact() {
    if !lab_capable("four_flows_through_sharded_gateways_arrive_intact") {
        return;
    }
    let out = tcpnc(&[
        "lab",
        "--workers",
        "2",
        "--tun-queues",
        "2",
        "speed",
        "--no-off",
        "--flows",
        "4",
        "--bytes",
        "10MB",
        "--timeout-s",
        "120",
        "--json",
    ]);
    let v = json_of(&out);
    let results = v["results"].as_array().expect("results");
    assert_eq!(results.len(), 1, "nc W12 R1.0: {v}");
    let r = &results[0];
    assert_eq!(r["integrity_ok"], true, "{r}");
    assert_eq!(r["workers"], serde_json::json!([2, 2]), "{r}");
    assert_eq!(r["tun_queues"], serde_json::json!([2, 2]), "{r}");
    for (k, drops) in r["drops"].as_object().expect("drops") {
        assert_eq!(drops, 0, "gateway drop `{k}`: {}", r["drops"]);
    }
    for side in ["client", "server"] {
        let g = &r["gateways"][side];
        let items = g["worker_items"].as_array().expect("worker_items");
        assert_eq!(items.len(), 2, "{side}: {g}");
        let total: u64 = items.iter().filter_map(|n| n.as_u64()).sum();
        assert!(
            total > 10_000,
            "{side}: packets and frames handed to workers: {items:?}"
        );
        // Four connections over two queues may all hash to one (1 in 8): the count per
        // queue is there, and the client's queues read every packet its TUN gave.
        let queues = g["tun_queue_packets"]
            .as_array()
            .expect("tun_queue_packets");
        assert_eq!(queues.len(), 2, "{side}: {g}");
        let read: u64 = queues.iter().filter_map(|n| n.as_u64()).sum();
        assert_eq!(read, g["gateway"]["tun_rx_packets"].as_u64().unwrap_or(0));
    }
    // The data was coded: the client gateway's engines sent DATA frames.
    let data_sent = r["gateways"]["client"]["peers"][0]["engine"]["totals"]["data_sent"]
        .as_u64()
        .unwrap_or(0);
    assert!(data_sent > 5_000, "coded DATA frames sent: {data_sent}");
}
