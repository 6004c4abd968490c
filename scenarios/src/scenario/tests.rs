//! Scenario parsing, validation and fault-schedule resolution.

use serde_json::{Value, json};

use super::*;
use crate::catalog::Catalog;
use crate::fault::{Fault, RequestOp, ServerGroups, ServerSelector};

fn base() -> Value {
    json!({
        "name": "unit-test",
        "description": "A scenario for unit tests",
        "recipe": "mutex",
        "lock_path": "/locks/unit",
        "clients": 3,
        "workload": {
            "acquisitions": 2,
            "hold_ms": {"min": 100, "max": 200},
            "think_ms": 10,
            "acquire_timeout_ms": 5000,
            "fenced": true
        },
        "server": {"tick_ms": 100, "session_timeout_ms": 1000, "container_sweep_ms": 500},
        "horizon_ms": 20000,
        "faults": [{"at_ms": 500, "fault": {"kind": "pause", "client": 0, "for_ms": 1500}}],
        "random_faults": [{
            "count": {"min": 1, "max": 3},
            "at_ms": {"min": 0, "max": 9000},
            "pick": [
                {"kind": "pause", "client": "any", "for_ms": {"min": 100, "max": 2000}},
                {"kind": "partition", "a": "any_client", "b": "server", "for_ms": 700}
            ]
        }],
        "seeds": "0..50",
        "properties": {"mutual_exclusion_fenced": "holds", "mutual_exclusion_belief": "violated"}
    })
}

fn parse(value: &Value) -> Result<Scenario, ScenarioError> {
    Scenario::from_json("unit.json", &value.to_string())
}

/// Applies `edit` to the base scenario at `pointer` and returns the error line.
fn error_after(pointer: &str, edit: impl FnOnce(&mut Value)) -> String {
    let mut value = base();
    edit(
        value
            .pointer_mut(pointer)
            .unwrap_or_else(|| panic!("no {pointer}")),
    );
    parse(&value).expect_err("must be rejected").to_string()
}

fn set(pointer: &str, new: Value) -> String {
    error_after(pointer, |v| *v = new)
}

fn remove(object: &str, field: &str) -> String {
    error_after(object, |v| {
        v.as_object_mut().unwrap().remove(field);
    })
}

fn insert(object: &str, field: &str, new: Value) -> String {
    error_after(object, |v| {
        v.as_object_mut().unwrap().insert(field.to_owned(), new);
    })
}

#[test]
fn the_base_scenario_parses_and_round_trips() {
    let scenario = parse(&base()).unwrap();
    assert_eq!(scenario.recipe, RecipeKind::Mutex);
    assert_eq!(scenario.workload.hold_ms, Span { min: 100, max: 200 });
    assert_eq!(scenario.seeds, SeedRange { start: 0, end: 50 });
    assert_eq!(
        scenario.expectation(Property::HerdFree),
        Expectation::Unchecked
    );
    assert_eq!(
        scenario.expectation(Property::MutualExclusionBelief),
        Expectation::Violated
    );
    let again = serde_json::to_string(&scenario).unwrap();
    assert_eq!(Scenario::from_json("again", &again).unwrap(), scenario);
}

#[test]
fn optional_sections_take_their_defaults() {
    let mut value = base();
    for field in ["server", "faults", "random_faults", "seeds", "properties"] {
        value.as_object_mut().unwrap().remove(field);
    }
    let scenario = parse(&value).unwrap();
    assert_eq!(scenario.server, ServerSettings::default());
    assert_eq!(scenario.seeds, SeedRange::DEFAULT);
    assert!(scenario.fault_schedule(1).is_empty());
}

#[test]
fn framework_settings_parse_validate_and_are_left_out_when_default() {
    let mut value = base();
    let framework = json!({"error_policy": "session-based", "on_lost": "release", "session_expiration_percent": 60, "connection_timeout_ms": 5000});
    value["framework"] = framework.clone();
    let scenario = parse(&value).unwrap();
    assert_eq!(
        scenario.framework.error_policy,
        coordination::framework::ErrorPolicy::SessionBased
    );
    assert_eq!(scenario.framework.lost_after_percent, 60);
    assert_eq!(scenario.framework.connection_timeout_ms, 5000);
    assert_eq!(
        serde_json::to_value(&scenario).unwrap()["framework"],
        framework
    );
    let default = parse(&base()).unwrap();
    let json = serde_json::to_value(&default).unwrap();
    assert!(
        json.get("framework").is_none(),
        "Curator's defaults are left out"
    );
    let error = |framework: Value| {
        let mut value = base();
        value["framework"] = framework;
        parse(&value).expect_err("must be rejected").to_string()
    };
    assert_eq!(
        error(json!({"error_policy": "lenient"})),
        "unit.json: /framework/error_policy: expected `standard` or `session-based`, \
         found unknown variant `lenient`"
    );
    assert_eq!(
        error(json!({"session_expiration_percent": 0})),
        "unit.json: /framework/session_expiration_percent: expected a percent of the session \
         timeout within 1..=100 (Curator's bounds), found 0"
    );
    assert_eq!(
        error(json!({"connection_timeout_ms": 0})),
        "unit.json: /framework/connection_timeout_ms: expected a connection timeout within \
         1..=600000 ms, found 0"
    );
    assert_eq!(
        error(json!({"retries": 3})),
        "unit.json: /framework/retries: expected one of `error_policy`, `on_lost`, \
         `session_expiration_percent`, `retry`, `connection_timeout_ms`, found unknown field \
         `retries`"
    );
}

#[test]
fn retry_policies_parse_validate_and_are_left_out_when_default() {
    let mut value = base();
    let retry = json!({"policy": "forever", "sleep_ms": 250});
    value["framework"] = json!({ "retry": retry });
    let scenario = parse(&value).unwrap();
    assert_eq!(
        scenario.framework.retry,
        coordination::retry::RetryPolicy::Forever { sleep_ms: 250 }
    );
    assert_eq!(
        serde_json::to_value(&scenario).unwrap()["framework"]["retry"],
        retry
    );
    let mut value = base();
    value["framework"] = json!({"retry": {"policy": "exponential-backoff", "base_sleep_ms": 1000, "max_retries": 3}});
    let json = serde_json::to_value(parse(&value).unwrap()).unwrap();
    assert!(json.get("framework").is_none(), "the default is left out");
    let error = |retry: Value| {
        let mut value = base();
        value["framework"] = json!({ "retry": retry });
        parse(&value).expect_err("must be rejected").to_string()
    };
    assert_eq!(
        error(json!({"policy": "exponential-backoff", "base_sleep_ms": 10, "max_retries": 30})),
        "unit.json: /framework/retry/max_retries: expected at most 29 retries (Curator's limit \
         for exponential-backoff), found 30"
    );
    let unknown = error(json!({"policy": "sometimes"}));
    assert!(
        unknown.starts_with("unit.json: /framework/retry") && unknown.contains("n-times"),
        "{unknown}"
    );
    assert!(!unknown.contains('\n'), "{unknown}");
}

/// Each kind of mistake gives exactly one line naming the file, the pointer and what was
/// expected instead of what was found.
#[test]
fn malformed_files_give_one_line_errors() {
    let cases = [
        (
            set("/clients", json!("three")),
            r#"unit.json: /clients: expected u16, found string "three""#,
        ),
        (
            insert("/workload", "colour", json!(1)),
            "unit.json: /workload/colour: expected one of `acquisitions`, `hold_ms`, `think_ms`, \
             `acquire_timeout_ms`, `fenced`, `stagger_ms`, `reentrant`, found unknown field `colour`",
        ),
        (
            remove("", "horizon_ms"),
            "unit.json: /: expected field `horizon_ms`, found nothing",
        ),
        (
            set("/recipe", json!("spin-lock")),
            "unit.json: /recipe: expected one of `mutex`, `naive-herd-mutex`, `trusting-wakeup-mutex`, \
             `state-blind-mutex`, `semaphore-mutex`, `multi-lock`, `semaphore`, `leader-latch`, `leader-selector`, `read-write-lock`, \
             `read-write-lock-first-writer-watch` (or a recipe of your own as {\"name\", \
             \"family\"}), found `spin-lock`",
        ),
        (
            set(
                "/recipe",
                json!({"name": "spin-lock", "family": "spinning"}),
            ),
            "unit.json: /recipe/family: expected one of `lock`, `read-write`, `semaphore`, \
             `latch`, `selector`, found unknown variant `spinning`",
        ),
        (
            set("/recipe", json!({"name": "mutex", "family": "lock"})),
            "unit.json: /recipe: expected a name that is not a recipe of splitbrain's table, \
             found `mutex` (write a built-in recipe as its name alone)",
        ),
        (
            set("/faults/0/fault/kind", json!("explode")),
            "unit.json: /faults/0/fault/kind: expected one of `pause`, `partition`, `isolate`, \
             `isolate_from_peers`, `lag_server`, `split_servers`, `slow_server_links`, \
             `cut_from_server`, `crash_server`, `pause_server`, `heal`, `expire_session`, \
             `crash`, `restart_server`, `delay`, `drop`, found unknown variant `explode`",
        ),
        (
            set(
                "/faults/0/fault",
                json!({"kind": "cut_from_server", "client": 0}),
            ),
            "unit.json: /faults/0/fault/server: expected a fault on one client's link to one \
             server in an ensemble (server.ensemble at least 2), found ServerOf(0) with 1 \
             server(s)",
        ),
        (
            set(
                "/faults/0/fault",
                json!({"kind": "cut_from_server", "client": 9, "server": "leader"}),
            ),
            "unit.json: /faults/0/fault/client: expected a client index below 3, found 9",
        ),
        (
            set(
                "/faults/0/fault",
                json!({"kind": "isolate_from_peers", "server": {"follower": 0}}),
            ),
            "unit.json: /faults/0/fault/server: expected a fault on a server's peers only in an \
             ensemble (server.ensemble at least 2), found Follower(0) with 1 server(s)",
        ),
        (
            set(
                "/faults/0/fault",
                json!({"kind": "lag_server", "server": "leader", "lag_ms": 100}),
            ),
            "unit.json: /faults/0/fault/server: expected a fault on one server's links from its \
             peers in an ensemble (server.ensemble at least 2), found Leader with 1 server(s)",
        ),
        (
            set(
                "/faults/0/fault",
                json!({"kind": "crash_server", "server": "leader"}),
            ),
            "unit.json: /faults/0/fault/server: expected a fault on one server in an ensemble \
             (server.ensemble at least 2), found Leader with 1 server(s)",
        ),
        (
            set(
                "/faults/0/fault",
                json!({"kind": "pause_server", "server": {"server": 0}, "pause_ms": 500}),
            ),
            "unit.json: /faults/0/fault/server: expected a fault on one server in an ensemble \
             (server.ensemble at least 2), found Server(0) with 1 server(s)",
        ),
        (
            error_after("/server", |v| v["ensemble"] = json!(12)),
            "unit.json: /server/ensemble: expected 1 (a standalone server) to 9 servers, found 12",
        ),
        (
            set("/faults/0/fault/for_ms", json!(-5)),
            "unit.json: /faults/0/fault: expected u64, found integer `-5`",
        ),
        (
            set("/faults/0/fault/for_ms", json!(0)),
            "unit.json: /faults/0/fault/for_ms: expected a positive number of milliseconds, \
             found 0",
        ),
        (
            set(
                "/faults/0/fault",
                json!({"kind": "restart_server", "down_ms": 0}),
            ),
            "unit.json: /faults/0/fault/down_ms: expected a positive number of milliseconds, \
             found 0",
        ),
        (
            set("/faults/0/fault/client", json!(7)),
            "unit.json: /faults/0/fault/client: expected a client index below 3, found 7",
        ),
        (
            insert("/properties", "liveness", json!("holds")),
            "unit.json: /properties/liveness: expected one of `mutual_exclusion_belief`, \
             `mutual_exclusion_fenced`, `herd_free`, `progress`, `answered`, `no_orphans`, \
             `leader_unique_belief`, `leader_unique_fenced`, `rw_exclusion`, `lease_bound`, \
             `live_session_exclusion`, `answered_by_deadline`, `revocation_answered`, \
             `no_time_travel`, found unknown variant `liveness`",
        ),
        (
            insert("/properties", "herd_free", json!("sometimes")),
            "unit.json: /properties/herd_free: expected one of `holds`, `violated`, \
             `unchecked`, found unknown variant `sometimes`",
        ),
        (
            set("/seeds", json!("10..10")),
            r#"unit.json: /seeds: expected a non-empty seed range like "0..200", found string "10..10""#,
        ),
        (
            set("/workload/hold_ms", json!({"min": 300, "max": 100})),
            "unit.json: /workload/hold_ms: expected min <= max, found min 300 above max 100",
        ),
        (
            set("/faults/0/at_ms", json!(20000)),
            "unit.json: /faults/0/at_ms: expected an instant before the horizon (20000 ms), \
             found 20000",
        ),
        (
            set("/server/session_timeout_ms", json!(50)),
            "unit.json: /server/session_timeout_ms: expected a session timeout within 2 to 20 \
             ticks (200..=2000 ms), found 50",
        ),
        (
            set("/lock_path", json!("locks/unit")),
            r#"unit.json: /lock_path: expected a ZooKeeper path like "/locks/name" (must start with '/'), found string "locks/unit""#,
        ),
        (
            set("/random_faults/0/pick/1/a", json!({"client": 9})),
            "unit.json: /random_faults/0/pick/1/client: expected a client index below 3, \
             found 9",
        ),
        (
            set("/random_faults/0/pick", json!([])),
            "unit.json: /random_faults/0/pick: expected at least one fault template, found an \
             empty list",
        ),
        (
            set("/name", json!("Split Brain")),
            r#"unit.json: /name: expected a kebab-case name, found "Split Brain""#,
        ),
        (
            insert("/properties", "lease_bound", json!("holds")),
            "unit.json: /properties/lease_bound: expected a property of recipe `mutex` \
             (mutual_exclusion_belief, live_session_exclusion, mutual_exclusion_fenced, \
             herd_free, progress, answered, answered_by_deadline, revocation_answered, \
             no_orphans, no_time_travel), found `lease_bound`",
        ),
        (
            error_after("", |v| {
                v["recipe"] = json!("semaphore-mutex");
                v["recipe_settings"] = json!({"revocable": true});
            }),
            "unit.json: /recipe_settings/revocable: expected revocable only with the recipe \
             mutex or trusting-wakeup-mutex or state-blind-mutex, found revocable with \
             semaphore-mutex",
        ),
        (
            error_after("", |v| v["recipe_settings"] = json!({"awaits": true})),
            "unit.json: /recipe_settings/awaits: expected awaits only with the recipe \
             leader-latch, found awaits with mutex",
        ),
        (
            error_after("", |v| {
                v["recipe_settings"] = json!({"timeout_scope": "whole"})
            }),
            "unit.json: /recipe_settings/timeout_scope: expected timeout_scope only with the \
             recipe multi-lock, found timeout_scope with mutex",
        ),
        (
            error_after("", |v| {
                v["recipe"] = json!("multi-lock");
                v["recipe_settings"] = json!({"timeout_scope": "each_lock"});
            }),
            "unit.json: /recipe_settings/timeout_scope: expected `each-lock` or `whole`, found \
             unknown variant `each_lock`",
        ),
        (
            set("/clients", json!(65535)),
            "unit.json: /clients: expected at most 64 clients, found 65535",
        ),
        (
            set("/workload/acquisitions", json!(1001)),
            "unit.json: /workload/acquisitions: expected at most 1000 acquisitions per client, \
             found 1001",
        ),
        (
            set("/horizon_ms", json!(3_600_001)),
            "unit.json: /horizon_ms: expected a horizon of at most 3600000 ms (one simulated \
             hour), found 3600001",
        ),
        (
            set("/random_faults/0/count", json!({"min": 1, "max": 256})),
            "unit.json: /random_faults/0/count/max: expected at most 256 faults per seed, \
             found up to 257 with this generator's 256",
        ),
        (
            error_after("/faults", |v| {
                let fault = v[0].clone();
                *v = Value::Array(vec![fault; 257]);
            }),
            "unit.json: /faults: expected at most 256 faults per seed, found 257 faults",
        ),
        (
            set("/workload/acquire_timeout_ms", json!(0)),
            "unit.json: /workload/acquire_timeout_ms: expected a positive number of \
             milliseconds, found 0",
        ),
    ];
    let wrong: Vec<String> = cases
        .iter()
        .filter(|(got, wanted)| got != wanted || got.contains('\n'))
        .map(|(got, wanted)| format!("got    {got}\nwanted {wanted}"))
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_size_bounds_admit_scenarios_at_the_bounds() {
    let mut value = base();
    value["clients"] = json!(MAX_CLIENTS);
    value["workload"]["acquisitions"] = json!(MAX_ACQUISITIONS);
    value["horizon_ms"] = json!(MAX_HORIZON_MS);
    value["random_faults"][0]["count"] = json!({"min": 0, "max": MAX_FAULTS - 1});
    parse(&value).unwrap();
}

#[test]
fn broken_json_names_the_line_and_column() {
    let error = Scenario::from_json("bad.json", "{\n  \"name\": \"x\",\n}").unwrap_err();
    assert_eq!(
        error.to_string(),
        "bad.json: /: expected valid JSON, found trailing comma (line 3 column 1)"
    );
    let error = Scenario::from_json("bad.json", &format!("{} 1", base())).unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("bad.json: /: expected valid JSON, found trailing characters")
    );
}

#[test]
fn a_seed_resolves_to_the_same_schedule_every_time() {
    let scenario = parse(&base()).unwrap();
    let schedules: Vec<_> = (0..20).map(|seed| scenario.fault_schedule(seed)).collect();
    for (seed, schedule) in schedules.iter().enumerate() {
        assert_eq!(*schedule, scenario.fault_schedule(seed as u64));
        assert!(schedule.windows(2).all(|w| w[0].at_ms <= w[1].at_ms));
        assert!(schedule.contains(&scenario.faults[0]), "fixed faults stay");
        assert!((2..=4).contains(&schedule.len()));
        for fault in schedule {
            match fault.fault {
                Fault::Pause { client, for_ms } => {
                    assert!(client < 3 && for_ms > 0)
                }
                Fault::Partition { b, for_ms, .. } => {
                    assert_eq!((b, for_ms), (crate::fault::Node::Server, Some(700)))
                }
                ref other => panic!("not in the template list: {other:?}"),
            }
        }
    }
    assert!(
        schedules.windows(2).any(|w| w[0] != w[1]),
        "different seeds draw different schedules"
    );
}

#[test]
fn seed_ranges_parse_like_the_command_line() {
    assert_eq!("3..9".parse(), Ok(SeedRange { start: 3, end: 9 }));
    assert!("9..3".parse::<SeedRange>().is_err());
    assert!("3-9".parse::<SeedRange>().is_err());
    assert_eq!(SeedRange { start: 3, end: 9 }.iter().count(), 6);
}

#[test]
fn a_cut_or_a_server_s_crash_can_start_at_a_request_and_nothing_else_can() {
    let mut value = base();
    value["faults"] = json!([{
        "at_ms": 0,
        "fault": {"kind": "partition", "a": {"client": 1}, "b": "server", "oneway": false, "for_ms": 1135},
        "on_request": {"op": "create", "path_contains": "/leases/"}
    }]);
    let scenario = parse(&value).expect("a cut at a request parses");
    let trigger = scenario.faults[0].on_request.clone().expect("kept");
    assert!(trigger.matches(RequestOp::Create, "/locks/unit/leases/_c_1-lease-"));
    assert!(!trigger.matches(RequestOp::Create, "/locks/unit/locks/_c_1-lock-"));
    assert!(!trigger.matches(RequestOp::Delete, "/locks/unit/leases/_c_1-lease-"));
    assert_eq!(scenario.faults[0].fault.requesting_client(), Some(1));
    let written = serde_json::to_value(&scenario).expect("serializes");
    assert_eq!(written["faults"], value["faults"], "written back as read");
    let timed = serde_json::to_value(&base()["faults"][0]).expect("a value");
    let read: ScheduledFault = serde_json::from_value(timed.clone()).expect("parses");
    assert_eq!(
        serde_json::to_value(read).expect("serializes"),
        timed,
        "no on_request written"
    );

    let crash_at_proposal = (Catalog::builtin().expect("the embedded catalog parses"))
        .get("mutex-create-survives-election")
        .expect("in the catalog")
        .faults[0]
        .clone();
    assert!(crash_at_proposal.on_request.is_some());
    assert!(crash_at_proposal.fault.starts_at_proposal());
    assert_eq!(crash_at_proposal.fault.requesting_client(), None);

    let on_pause = error_after("/faults/0", |fault| {
        fault["on_request"] = json!({"op": "create"});
    });
    assert_eq!(
        on_pause,
        "unit.json: /faults/0/on_request: expected on_request only on a partition between one \
         client and the server, an isolation of one client or a crash_server, found on_request \
         on pause"
    );
    let unknown_op = error_after("/faults/0", |fault| {
        fault["fault"] = json!({"kind": "isolate", "node": {"client": 0}});
        fault["on_request"] = json!({"op": "sync"});
    });
    assert!(
        unknown_op.starts_with("unit.json: /faults/0/on_request/op: expected one of `create`"),
        "{unknown_op}"
    );
}

#[test]
fn random_cuts_can_start_at_drawn_requests_and_other_generators_draw_as_before() {
    let mut value = base();
    let before = parse(&value).expect("parses").fault_schedule(7);
    value["random_faults"][0]["pick"] =
        json!([{"kind": "isolate", "node": "any_client", "for_ms": {"min": 800, "max": 1200}}]);
    value["random_faults"][0]["on_request"] =
        json!({"ops": ["create", "get_children"], "path_contains": "lock-"});
    let scenario = parse(&value).expect("random cuts at requests parse");
    let mut kinds = std::collections::BTreeSet::new();
    for seed in 0..50 {
        let schedule = scenario.fault_schedule(seed);
        for scheduled in schedule.iter().filter(|f| f.fault.kind() == "isolate") {
            let trigger = (scheduled.on_request.as_ref()).expect("every drawn cut has one");
            assert_eq!(trigger.path_contains, "lock-");
            kinds.insert(trigger.op);
        }
    }
    assert_eq!(
        kinds.into_iter().collect::<Vec<_>>(),
        [RequestOp::Create, RequestOp::GetChildren]
    );
    assert_eq!(parse(&base()).expect("parses").fault_schedule(7), before);

    let on_pause = error_after("/random_faults/0", |random| {
        random["on_request"] = json!({"ops": ["create"]});
    });
    assert_eq!(
        on_pause,
        "unit.json: /random_faults/0/pick/0: expected with on_request, only partitions between \
         one client and the server or isolations of one client, found pause"
    );
    let no_ops = error_after("/random_faults/0", |random| {
        random["pick"] = json!([{"kind": "isolate", "node": {"client": 0}}]);
        random["on_request"] = json!({"ops": []});
    });
    assert_eq!(
        no_ops,
        "unit.json: /random_faults/0/on_request/ops: expected at least one request kind, found \
         an empty list"
    );
}

#[test]
fn random_server_faults_draw_in_an_ensemble_and_are_refused_outside_one() {
    let templates = json!([
        {"kind": "crash_server", "server": "leader", "down_ms": {"min": 500, "max": 3000}},
        {"kind": "pause_server", "server": {"follower": 1}, "pause_ms": {"min": 100, "max": 900}},
        {"kind": "isolate_from_peers", "server": {"server_of": 0}, "for_ms": 700},
        {"kind": "lag_server", "server": {"server_of": 1}, "lag_ms": {"min": 100, "max": 400}}
    ]);
    let mut value = base();
    value["server"]["ensemble"] = json!(3);
    value["random_faults"][0]["pick"] = templates.clone();
    let scenario = parse(&value).expect("server templates parse in an ensemble");
    let mut drawn = std::collections::BTreeSet::new();
    for seed in 0..50 {
        for scheduled in scenario.fault_schedule(seed) {
            match scheduled.fault {
                Fault::CrashServer {
                    server, down_ms, ..
                } => {
                    assert_eq!(server, ServerSelector::Leader);
                    assert!((500..=3000).contains(&down_ms), "{down_ms}");
                }
                Fault::PauseServer {
                    server, pause_ms, ..
                } => {
                    assert_eq!(server, ServerSelector::Follower(1));
                    assert!((100..=900).contains(&pause_ms), "{pause_ms}");
                }
                Fault::IsolateFromPeers { server, for_ms, .. } => {
                    assert_eq!((server, for_ms), (ServerSelector::ServerOf(0), Some(700)));
                }
                Fault::LagServer {
                    server,
                    lag_ms,
                    for_ms,
                    ..
                } => {
                    assert_eq!((server, for_ms), (ServerSelector::ServerOf(1), None));
                    assert!((100..=400).contains(&lag_ms), "{lag_ms}");
                }
                Fault::Pause { .. } => continue,
                other => panic!("{other:?}"),
            }
            drawn.insert(scheduled.fault.kind());
        }
    }
    assert_eq!(drawn.len(), 4, "each template drawn: {drawn:?}");

    let standalone = error_after("/random_faults/0", |random| {
        random["pick"] = templates.clone();
    });
    assert_eq!(
        standalone,
        "unit.json: /random_faults/0/pick/0/server: expected a fault on one server in an \
         ensemble (server.ensemble at least 2), found Leader with 1 server(s)"
    );
    let in_ensemble = |template: Value| {
        let mut value = base();
        value["server"]["ensemble"] = json!(3);
        value["random_faults"][0]["pick"] = json!([template]);
        parse(&value).expect_err("must be rejected").to_string()
    };
    assert_eq!(
        in_ensemble(json!({"kind": "pause_server", "server": {"follower": 2}, "pause_ms": 5})),
        "unit.json: /random_faults/0/pick/0/server/follower: expected a follower index below 2, \
         found 2"
    );
    assert_eq!(
        in_ensemble(json!({"kind": "pause_server", "server": "leader", "pause_ms": 0})),
        "unit.json: /random_faults/0/pick/0/pause_ms: expected a positive number of \
         milliseconds, found 0"
    );
    assert_eq!(
        in_ensemble(
            json!({"kind": "lag_server", "server": "leader", "lag_ms": {"min": 0, "max": 500}})
        ),
        "unit.json: /random_faults/0/pick/0/lag_ms: expected a positive number of \
         milliseconds, found 0"
    );
}

/// The error line of the base scenario in an ensemble of 3 with `fault` as its only fault.
fn ensemble_fault_error(fault: Value) -> String {
    let mut value = base();
    value["server"]["ensemble"] = json!(3);
    value["faults"] = json!([{"at_ms": 500, "fault": fault}]);
    parse(&value).expect_err("must be rejected").to_string()
}

#[test]
fn a_split_s_groups_hold_every_server_once_in_two_groups_or_more() {
    let groups = |groups: Value| {
        ensemble_fault_error(json!({"kind": "split_servers", "groups": groups, "for_ms": 100}))
    };
    let expected = "unit.json: /faults/0/fault/groups: expected at least two groups holding \
                    each server below 3 exactly once (or \"random_halves\"), found";
    for (wrong, found) in [
        (json!([[0, 1, 2]]), "[[0, 1, 2]]"),
        (json!([[0], [1]]), "[[0], [1]]"),
        (json!([[0, 1], [1, 2]]), "[[0, 1], [1, 2]]"),
        (json!([[0], [1, 2, 3]]), "[[0], [1, 2, 3]]"),
        (json!([[0, 1, 2], []]), "[[0, 1, 2], []]"),
    ] {
        assert_eq!(groups(wrong), format!("{expected} {found}"));
    }
    assert_eq!(
        groups(json!("halves")),
        "unit.json: /faults/0/fault: expected a list of groups of server indices, or \
         \"random_halves\", found string \"halves\""
    );
    let standalone = set(
        "/faults/0/fault",
        json!({"kind": "split_servers", "groups": "random_halves"}),
    );
    assert_eq!(
        standalone,
        "unit.json: /faults/0/fault/groups: expected a split of the servers of an ensemble \
         (server.ensemble at least 2), found 1 server(s)"
    );
    let mut value = base();
    value["server"]["ensemble"] = json!(3);
    value["faults"] = json!([
        {"at_ms": 500, "fault": {"kind": "split_servers", "groups": [[2], [0, 1]]}},
        {"at_ms": 600, "fault": {"kind": "split_servers", "groups": "random_halves", "for_ms": 9}}
    ]);
    let scenario = parse(&value).expect("a split in an ensemble parses");
    let splits: Vec<&ServerGroups> = (scenario.faults.iter())
        .filter_map(|f| match &f.fault {
            Fault::SplitServers { groups, .. } => Some(groups),
            _ => None,
        })
        .collect();
    assert_eq!(
        splits,
        [
            &ServerGroups::Given(vec![vec![2], vec![0, 1]]),
            &ServerGroups::RandomHalves
        ]
    );
}

#[test]
fn slow_server_links_need_an_ensemble_an_ordered_span_and_a_loss_below_100() {
    let slow = |fields: Value| {
        let mut fault = json!({"kind": "slow_server_links", "min_ms": 10, "max_ms": 50});
        for (key, value) in fields.as_object().unwrap() {
            fault[key] = value.clone();
        }
        ensemble_fault_error(fault)
    };
    assert_eq!(
        slow(json!({"min_ms": 60})),
        "unit.json: /faults/0/fault/max_ms: expected max_ms >= min_ms, found min_ms 60 above \
         max_ms 50"
    );
    assert_eq!(
        slow(json!({"loss_percent": 100})),
        "unit.json: /faults/0/fault/loss_percent: expected a percentage 0..=99 (TCP retransmits \
         a lost segment until it arrives), found 100"
    );
    assert_eq!(
        slow(json!({"server": {"server": 3}})),
        "unit.json: /faults/0/fault/server/server: expected a server index below 3, found 3"
    );
    let standalone = set(
        "/faults/0/fault",
        json!({"kind": "slow_server_links", "min_ms": 1, "max_ms": 2}),
    );
    assert_eq!(
        standalone,
        "unit.json: /faults/0/fault/kind: expected slow_server_links in an ensemble \
         (server.ensemble at least 2), found 1 server(s)"
    );
}

#[test]
fn split_and_slow_link_templates_draw_their_faults() {
    let mut value = base();
    value["server"]["ensemble"] = json!(3);
    value["random_faults"][0]["pick"] = json!([
        {"kind": "split_servers", "groups": "random_halves", "for_ms": {"min": 100, "max": 200}},
        {"kind": "slow_server_links", "server": "leader", "min_ms": 5, "max_ms": 9,
         "loss_percent": 3}
    ]);
    let scenario = parse(&value).expect("the templates parse in an ensemble");
    let mut drawn = std::collections::BTreeSet::new();
    for seed in 0..20 {
        for scheduled in scenario.fault_schedule(seed) {
            match &scheduled.fault {
                Fault::SplitServers {
                    groups,
                    resolved: None,
                    for_ms: Some(for_ms),
                } => {
                    assert_eq!(groups, &ServerGroups::RandomHalves);
                    assert!((100..=200).contains(for_ms), "{for_ms}");
                }
                Fault::SlowServerLinks {
                    server: Some(ServerSelector::Leader),
                    resolved: None,
                    min_ms: 5,
                    max_ms: 9,
                    loss_percent: 3,
                    for_ms: None,
                } => {}
                Fault::Pause { .. } => continue,
                other => panic!("{other:?}"),
            }
            drawn.insert(scheduled.fault.kind());
        }
    }
    assert_eq!(drawn.len(), 2, "each template drawn: {drawn:?}");
}
