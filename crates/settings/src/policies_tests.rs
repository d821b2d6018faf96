//! Tests of [`Policies`](super::Policies) and [`PolicyOverrides`](super::PolicyOverrides): base sets, overrides, validation, keys.

use super::*;

#[test]
fn base_sets() {
    assert_eq!(Policies::default().window, PRODUCT_WINDOW);
    assert!(Policies::product().validate().is_ok());
    let s = Policies::simulator(0.1);
    assert_eq!(s.window, SIMULATOR_WINDOW);
    assert_eq!(
        s.redundancy,
        RedundancyPolicy::Fixed(RedundancyPolicy::for_known_loss(0.1))
    );
    assert_eq!(Policies::paper_experiment(0.0).window, PAPER_WINDOW);
    assert_eq!(
        Policies::engine_test().redundancy,
        RedundancyPolicy::Fixed(1.25)
    );
}

#[test]
fn overrides_replace_only_given_keys() {
    let o = PolicyOverrides {
        window: Some(8),
        repair: Some(RepairPolicy::Off),
        ..PolicyOverrides::default()
    };
    let p = Policies::product().with(&o);
    assert_eq!(p.window, 8);
    assert_eq!(p.repair, RepairPolicy::Off);
    assert_eq!(p.scheme, Policies::product().scheme);
    assert_eq!(
        Policies::product().with(&PolicyOverrides::default()),
        Policies::product()
    );
}

#[test]
fn profiles_name_the_base_sets() {
    assert_eq!(Profile::Default.policies(0.3), Policies::product());
    assert_eq!(Profile::Simulator.policies(0.1), Policies::simulator(0.1));
    assert_eq!(
        Profile::Experiment.policies(0.1),
        Policies::paper_experiment(0.1)
    );
    assert_eq!("simulator".parse(), Ok(Profile::Simulator));
    assert_eq!("karafillis-pb".parse(), Ok(Profile::KarafillisPb));
    for p in Profile::ALL {
        assert!(p.policies(0.1).validate().is_ok(), "{p}");
    }
}

#[test]
fn validation() {
    let mut p = Policies::product();
    p.window = 0;
    assert_eq!(p.validate(), Err(PolicyError::Window(0)));
    p.window = 256;
    assert!(p.validate().is_err());
    p.window = 3;
    p.redundancy = RedundancyPolicy::Fixed(0.5);
    assert_eq!(p.validate(), Err(PolicyError::Redundancy(0.5)));
    p.redundancy = RedundancyPolicy::Fixed(1.5);
    p.pb_block = 0;
    assert_eq!(p.validate(), Err(PolicyError::PbBlock));
}

#[test]
fn overrides_read_toml_and_json() {
    let o: PolicyOverrides =
        toml::from_str("window = 8\nredundancy = \"auto\"\nack_rule = \"every\"").unwrap();
    assert_eq!(o.window, Some(8));
    assert_eq!(o.redundancy, Some(RedundancyPolicy::adaptive()));
    assert_eq!(o.ack_rule, Some(AckPolicy::EveryCombination));
    let o: PolicyOverrides = toml::from_str("redundancy = 1.2").unwrap();
    assert_eq!(o.redundancy, Some(RedundancyPolicy::Fixed(1.2)));
    let json = serde_json::to_value(Policies::product()).unwrap();
    assert_eq!(json["redundancy"], "auto");
    assert_eq!(json["ack_rule"], "mitsuzumi");
    assert_eq!(json["window"], 12);
    let keys: Vec<String> = json.as_object().unwrap().keys().cloned().collect();
    let mut expected: Vec<String> = PolicyOverrides::KEYS
        .iter()
        .map(|k| k.to_string())
        .collect();
    let mut got = keys.clone();
    got.sort();
    expected.sort();
    assert_eq!(got, expected);
}
