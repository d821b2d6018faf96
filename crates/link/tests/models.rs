//! Behavioural tests of the link models (fixed seeds, wide tolerances).

use std::time::Duration;

use tcpnc_link::{Link, LinkConfig, LossModel, LossPosition, QueueLimit};

const MS: Duration = Duration::from_millis(1);

/// Sends one packet of `size` every `gap`, `n` times, polling deliveries as time goes;
/// returns (delivery time, packet) in delivery order.
fn drive(link: &mut Link, n: usize, size: usize, gap: Duration) -> Vec<(Duration, Vec<u8>)> {
    let mut out = Vec::new();
    let mut now = Duration::ZERO;
    for i in 0..n {
        let mut p = vec![0u8; size.max(8)];
        p[..8].copy_from_slice(&(i as u64).to_be_bytes());
        link.send(now, p);
        now += gap;
        while let Some(t) = link.poll_timeout() {
            if t > now {
                break;
            }
            out.push((t, link.poll_deliver(t).unwrap()));
        }
    }
    while let Some(t) = link.poll_timeout() {
        out.push((t, link.poll_deliver(t).unwrap()));
    }
    out
}

fn id(p: &[u8]) -> u64 {
    u64::from_be_bytes(p[..8].try_into().unwrap())
}

#[test]
fn fixed_delay_only() {
    let mut l = Link::new(LinkConfig::new().with_delay(20 * MS), 1).unwrap();
    let out = drive(&mut l, 10, 100, MS);
    assert_eq!(out.len(), 10);
    for (i, (t, p)) in out.iter().enumerate() {
        assert_eq!(id(p), i as u64);
        assert_eq!(*t, MS * i as u32 + 20 * MS);
    }
}

#[test]
fn bernoulli_link_loss_rate() {
    let cfg = LinkConfig::new().with_loss(LossModel::bernoulli(0.1));
    let mut l = Link::new(cfg, 7).unwrap();
    let out = drive(&mut l, 50_000, 64, Duration::from_micros(10));
    let s = l.stats();
    let rate = s.dropped_loss as f64 / s.sent as f64;
    assert!((rate - 0.1).abs() < 0.01, "rate {rate}");
    assert_eq!(out.len() as u64, s.delivered);
    assert_eq!(s.delivered + s.dropped_loss, s.sent);
}

#[test]
fn rate_limiter_throughput_matches_config() {
    // Offer 20 Mbit/s to a 10 Mbit/s serializer with an unlimited queue.
    let cfg = LinkConfig::new().with_rate(10_000_000, 0);
    let mut l = Link::new(cfg, 1).unwrap();
    let size = 1500;
    let out = drive(&mut l, 2000, size, Duration::from_micros(600));
    assert_eq!(out.len(), 2000);
    let last = out.last().unwrap().0.as_secs_f64();
    let mbit = (2000 * size * 8) as f64 / last / 1e6;
    assert!((mbit - 10.0).abs() < 0.05, "{mbit} Mbit/s");
    // Consecutive departures are exactly one serialization time apart.
    assert_eq!(out[1].0 - out[0].0, Duration::from_micros(1200));
}

#[test]
fn token_bucket_allows_a_burst_then_paces() {
    // 8 Mbit/s, 3000-byte bucket: two 1500 B packets leave at once, the third waits 1.5 ms.
    let cfg = LinkConfig::new().with_rate(8_000_000, 3000);
    let mut l = Link::new(cfg, 1).unwrap();
    for _ in 0..3 {
        l.send(Duration::ZERO, vec![0; 1500]);
    }
    let times: Vec<Duration> = std::iter::from_fn(|| {
        let t = l.poll_timeout()?;
        l.poll_deliver(t).map(|_| t)
    })
    .collect();
    assert_eq!(
        times,
        vec![Duration::ZERO, Duration::ZERO, Duration::from_micros(1500)]
    );
}

#[test]
fn queue_never_exceeds_packet_limit() {
    let cfg = LinkConfig::new()
        .with_rate(1_000_000, 0)
        .with_queue(QueueLimit::Packets(5));
    let mut l = Link::new(cfg, 1).unwrap();
    let mut now = Duration::ZERO;
    for _ in 0..1000 {
        l.send(now, vec![0; 1000]);
        assert!(l.queue_len(now) <= 5);
        now += Duration::from_micros(2000); // offered 4 Mbit/s
        while l.poll_deliver(now).is_some() {}
    }
    let s = l.stats();
    assert_eq!(s.max_queue_packets, 5);
    assert!(s.dropped_queue > 500, "{s:?}");
}

#[test]
fn queue_never_exceeds_byte_limit() {
    let cfg = LinkConfig::new()
        .with_rate(1_000_000, 0)
        .with_queue(QueueLimit::Bytes(4000));
    let mut l = Link::new(cfg, 2).unwrap();
    let _ = drive(&mut l, 500, 1000, Duration::from_micros(1000));
    let s = l.stats();
    assert!(
        s.max_queue_bytes <= 4000 && s.max_queue_bytes >= 3000,
        "{s:?}"
    );
    assert!(s.dropped_queue > 0);
}

#[test]
fn loss_before_queue_frees_queue_space() {
    // With everything lost before the queue, nothing is ever queued.
    let base = LinkConfig::new()
        .with_rate(1_000_000, 0)
        .with_queue(QueueLimit::Packets(5))
        .with_loss(LossModel::bernoulli(1.0));
    let mut before = Link::new(
        base.clone().with_loss_position(LossPosition::BeforeQueue),
        1,
    )
    .unwrap();
    let mut after = Link::new(base.with_loss_position(LossPosition::AfterQueue), 1).unwrap();
    for _ in 0..50 {
        before.send(Duration::ZERO, vec![0; 1000]);
        after.send(Duration::ZERO, vec![0; 1000]);
    }
    assert_eq!(before.stats().dropped_loss, 50);
    assert_eq!(before.stats().max_queue_packets, 0);
    assert_eq!(after.stats().dropped_loss, 5);
    assert_eq!(after.stats().dropped_queue, 45);
    assert_eq!(after.stats().max_queue_packets, 5);
}

#[test]
fn jitter_without_reordering_keeps_order() {
    let cfg = LinkConfig::new()
        .with_delay(10 * MS)
        .with_jitter(5 * MS, false);
    let mut l = Link::new(cfg, 3).unwrap();
    let out = drive(&mut l, 2000, 100, Duration::from_micros(200));
    assert_eq!(out.len(), 2000);
    for w in out.windows(2) {
        assert!(w[1].0 >= w[0].0);
        assert!(id(&w[1].1) > id(&w[0].1));
    }
}

#[test]
fn jitter_with_reordering_reorders_within_bounds() {
    let cfg = LinkConfig::new()
        .with_delay(10 * MS)
        .with_jitter(5 * MS, true);
    let mut l = Link::new(cfg, 3).unwrap();
    let out = drive(&mut l, 2000, 100, Duration::from_micros(200));
    let reordered = out.windows(2).filter(|w| id(&w[1].1) < id(&w[0].1)).count();
    assert!(reordered > 100, "{reordered}");
    for (t, p) in &out {
        let sent = Duration::from_micros(200) * id(p) as u32;
        assert!(*t >= sent + 10 * MS && *t <= sent + 15 * MS);
    }
    for w in out.windows(2) {
        assert!(w[1].0 >= w[0].0, "delivery order follows delivery time");
    }
}

#[test]
fn duplication_and_corruption_rates() {
    let cfg = LinkConfig::new()
        .with_duplicate_prob(0.1)
        .with_corrupt_prob(0.2);
    let mut l = Link::new(cfg, 5).unwrap();
    let n = 20_000u64;
    let mut now = Duration::ZERO;
    let mut popcounts = Vec::new();
    for _ in 0..n {
        l.send(now, vec![0u8; 64]);
        now += Duration::from_micros(10);
        while let Some(p) = l.poll_deliver(now) {
            popcounts.push(p.iter().map(|b| b.count_ones()).sum::<u32>());
        }
    }
    let s = l.stats();
    let dup = s.duplicated as f64 / n as f64;
    assert!((dup - 0.1).abs() < 0.01, "{dup}");
    assert_eq!(popcounts.len() as u64, s.sent + s.duplicated);
    // Each corrupted packet has exactly one flipped bit.
    assert!(popcounts.iter().all(|&c| c <= 1));
    let flipped = popcounts.iter().filter(|&&c| c == 1).count() as u64;
    assert_eq!(flipped, s.corrupted);
    let c = s.corrupted as f64 / popcounts.len() as f64;
    assert!((c - 0.2).abs() < 0.02, "{c}");
}

#[test]
fn gilbert_elliott_on_link_is_bursty() {
    let m = LossModel::gilbert_elliott_from_mean(0.1, 4.0).unwrap();
    let mut l = Link::new(LinkConfig::new().with_loss(m), 9).unwrap();
    let out = drive(&mut l, 100_000, 16, Duration::from_micros(5));
    let ids: Vec<u64> = out.iter().map(|(_, p)| id(p)).collect();
    // Gaps in delivered ids are loss bursts.
    let gaps: Vec<u64> = ids
        .windows(2)
        .map(|w| w[1] - w[0] - 1)
        .filter(|&g| g > 0)
        .collect();
    let mean = gaps.iter().sum::<u64>() as f64 / gaps.len() as f64;
    assert!((mean - 4.0).abs() < 0.6, "mean burst {mean}");
}

#[test]
fn same_seed_same_output_different_seed_differs() {
    let cfg = LinkConfig::new()
        .with_loss(LossModel::bernoulli(0.2))
        .with_delay(5 * MS)
        .with_jitter(3 * MS, true)
        .with_rate(5_000_000, 1500)
        .with_queue(QueueLimit::Packets(20))
        .with_duplicate_prob(0.05)
        .with_corrupt_prob(0.05);
    let run = |seed| {
        let mut l = Link::new(cfg.clone(), seed).unwrap();
        let out = drive(&mut l, 3000, 700, Duration::from_micros(900));
        (out, l.stats())
    };
    assert_eq!(run(11), run(11));
    assert_ne!(run(11).0, run(12).0);
}

/// Ha & Tsuru's delay switching (§4.2, τ = 0.5: mean 150 ms, σ 33 ms, δ = 50 ms): every packet
/// of one interval takes the same delay, and a fall in the delay at a switch lets later packets
/// overtake earlier ones; without reordering the same model keeps FIFO order.
#[test]
fn delay_switching_reorders_at_the_switches() {
    let sd = Duration::from_secs_f64(0.1 / 3.0);
    let cfg = LinkConfig::new()
        .with_delay(150 * MS)
        .with_delay_switch(50 * MS, sd)
        .with_jitter(Duration::ZERO, true);
    let gap = Duration::from_millis(2);
    let out = drive(&mut Link::new(cfg.clone(), 9).unwrap(), 5000, 100, gap);
    assert_eq!(out.len(), 5000);
    let delay_of = |(t, p): &(Duration, Vec<u8>)| *t - gap * id(p) as u32;
    for (i, pkt) in out.iter().enumerate() {
        let same_slot = out
            .iter()
            .skip(i + 1)
            .take(3)
            .find(|q| id(&q.1) / 25 == id(&pkt.1) / 25 && id(&q.1) != id(&pkt.1));
        if let Some(q) = same_slot {
            assert_eq!(delay_of(pkt), delay_of(q), "one delay per 50 ms interval");
        }
    }
    let reordered = out.windows(2).filter(|w| id(&w[1].1) < id(&w[0].1)).count();
    assert!(reordered > 20, "{reordered} reorderings in 100 switches");
    let mean = out.iter().map(|x| delay_of(x).as_secs_f64()).sum::<f64>() / 5000.0;
    assert!((mean - 0.15).abs() < 0.015, "mean delay {mean}");

    let fifo = cfg.with_jitter(Duration::ZERO, false);
    let out = drive(&mut Link::new(fifo, 9).unwrap(), 5000, 100, gap);
    assert!(out.windows(2).all(|w| id(&w[1].1) > id(&w[0].1)));
}

#[test]
fn delay_switching_needs_an_interval() {
    let cfg = LinkConfig::new().with_delay_switch(Duration::ZERO, MS);
    assert!(Link::new(cfg, 1).is_err());
}
