//! `force_tier` (the programmatic override used by benchmarks). Its own test binary, because it
//! changes process-wide state.

use tcpnc_field::mul_reference;
use tcpnc_field::region::{Tier, force_tier, selected_tier, tier_selection};

#[test]
fn force_tier_switches_available_tiers_and_refuses_others() {
    let initial = tier_selection().clone();
    let src: Vec<u8> = (0..=255u8).cycle().take(777).collect();
    for t in Tier::ALL {
        let before = selected_tier();
        match force_tier(t) {
            Ok(()) => {
                assert!(t.is_available());
                assert_eq!(selected_tier(), t);
                let mut d = vec![0x33u8; 777];
                tcpnc_field::mul_add(&mut d, &src, 0xc5);
                for (&d, &s) in d.iter().zip(&src) {
                    assert_eq!(d, 0x33 ^ mul_reference(0xc5, s), "tier {t}");
                }
            }
            Err(e) => {
                assert!(!t.is_available());
                assert_eq!(e.tier, t);
                assert_eq!(
                    selected_tier(),
                    before,
                    "a refused force must change nothing"
                );
                eprintln!("refused as expected: {e}");
            }
        }
    }
    // Forcing never rewrites the record of the environment-driven choice.
    assert_eq!(tier_selection(), &initial);
    force_tier(Tier::best_available()).unwrap();
    assert_eq!(selected_tier(), Tier::best_available());
}
