//! Property tests: conservation and queue bounds under arbitrary configurations.

use std::time::Duration;

use proptest::prelude::*;
use tcpnc_link::{Link, LinkConfig, LossModel, LossPosition, QueueLimit};

fn loss_strategy() -> impl Strategy<Value = LossModel> {
    prop_oneof![
        Just(LossModel::None),
        (0.0f64..=1.0).prop_map(LossModel::bernoulli),
        (0.0f64..0.9, 1.0f64..10.0)
            .prop_map(|(l, b)| LossModel::gilbert_elliott_from_mean(l, b).unwrap()),
        proptest::collection::vec(any::<bool>(), 1..20)
            .prop_map(|drops| LossModel::Trace { drops }),
    ]
}

prop_compose! {
    fn config_strategy()(
        loss in loss_strategy(),
        before in any::<bool>(),
        delay_us in 0u64..50_000,
        jitter_us in 0u64..20_000,
        reorder in any::<bool>(),
        rate in proptest::option::of((100_000u64..50_000_000, 0u64..10_000)),
        queue in prop_oneof![
            Just(QueueLimit::Unlimited),
            (1usize..50).prop_map(QueueLimit::Packets),
            (1500usize..50_000).prop_map(QueueLimit::Bytes),
        ],
        dup in 0.0f64..0.5,
        corrupt in 0.0f64..0.5,
    ) -> LinkConfig {
        let mut c = LinkConfig::new()
            .with_loss(loss)
            .with_loss_position(if before { LossPosition::BeforeQueue } else { LossPosition::AfterQueue })
            .with_delay(Duration::from_micros(delay_us))
            .with_jitter(Duration::from_micros(jitter_us), reorder)
            .with_queue(queue)
            .with_duplicate_prob(dup)
            .with_corrupt_prob(corrupt);
        if let Some((r, b)) = rate {
            c = c.with_rate(r, b);
        }
        c
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn conservation_and_bounds(
        cfg in config_strategy(),
        seed in any::<u64>(),
        sends in proptest::collection::vec((0u64..5_000, 1usize..1500), 1..300),
    ) {
        let mut link = Link::new(cfg.clone(), seed).unwrap();
        let mut now = Duration::ZERO;
        let mut delivered = 0u64;
        let mut last = Duration::ZERO;
        for (gap_us, size) in sends {
            now += Duration::from_micros(gap_us);
            link.send(now, vec![0xA5; size]);
            if let QueueLimit::Packets(n) = cfg.queue && cfg.rate.is_some() {
                prop_assert!(link.queue_len(now) <= n);
            }
            while let Some(p) = link.poll_deliver(now) {
                prop_assert!(!p.is_empty());
                delivered += 1;
            }
            if let Some(t) = link.poll_timeout() {
                prop_assert!(t > now);
            }
        }
        while let Some(t) = link.poll_timeout() {
            prop_assert!(t >= last);
            last = t;
            prop_assert!(link.poll_deliver(t).is_some());
            delivered += 1;
        }
        let s = link.stats();
        prop_assert_eq!(s.delivered, delivered);
        prop_assert_eq!(s.delivered + s.dropped_loss + s.dropped_queue, s.sent + s.duplicated);
        match cfg.queue {
            QueueLimit::Packets(n) => prop_assert!(s.max_queue_packets <= n as u64),
            QueueLimit::Bytes(b) => prop_assert!(s.max_queue_bytes <= b as u64),
            QueueLimit::Unlimited => {}
        }
    }
}
