//! `#[derive(Relabel)]`: every shape of struct and enum relabels field by field, type
//! parameters included, skipped fields cloned as they are.

use coordination::ids::{ClientSlot, OpId, Owner, TimerId};
use coordination::relabel::{ClientMap, Relabel};
use coordination::zk::SessionId;

/// A map that moves session 1 to 2 and client slot 1 to 0.
fn moving() -> ClientMap {
    let mut map = ClientMap::new();
    map.map_session(SessionId(1), SessionId(2));
    map.map_slot(ClientSlot(1), ClientSlot(0));
    map
}

#[derive(Clone, Debug, PartialEq, Relabel)]
struct Named {
    session: SessionId,
    slots: Vec<ClientSlot>,
    /// Not a client's: kept.
    #[relabel(skip)]
    origin: SessionId,
}

#[derive(Clone, Debug, PartialEq, Relabel)]
struct Tuple(SessionId, #[relabel(skip)] SessionId, Option<ClientSlot>);

#[derive(Clone, Debug, PartialEq, Relabel)]
struct Unit;

#[derive(Clone, Debug, PartialEq, Relabel)]
enum Shapes {
    Unit,
    Tuple(SessionId, Owner),
    Named {
        op: OpId,
        #[relabel(skip)]
        timer: TimerId,
        r#type: ClientSlot,
    },
}

#[derive(Clone, Debug, PartialEq, Relabel)]
struct Generic<S, T: Clone = Unit>
where
    S: Clone,
{
    inner: S,
    #[relabel(skip)]
    kept: T,
    list: Vec<S>,
}

#[derive(Clone, Debug, PartialEq, Relabel)]
enum Empty {}

mod elsewhere {
    pub use coordination as reexported;
}

#[derive(Clone, Debug, PartialEq, Relabel)]
#[relabel(crate = "elsewhere::reexported")]
struct ByAnotherPath(SessionId);

#[test]
fn named_fields_relabel_but_the_skipped_one() {
    let named = Named {
        session: SessionId(1),
        slots: vec![ClientSlot(1), ClientSlot(3)],
        origin: SessionId(1),
    };
    let image = Named {
        session: SessionId(2),
        slots: vec![ClientSlot(0), ClientSlot(3)],
        origin: SessionId(1),
    };
    assert_eq!(named.relabel(&moving()), image);
}

#[test]
fn tuple_and_unit_structs() {
    let tuple = Tuple(SessionId(1), SessionId(1), Some(ClientSlot(1)));
    let image = Tuple(SessionId(2), SessionId(1), Some(ClientSlot(0)));
    assert_eq!(tuple.relabel(&moving()), image);
    assert_eq!(Unit.relabel(&moving()), Unit);
}

#[test]
fn every_variant_shape() {
    let map = moving();
    assert_eq!(Shapes::Unit.relabel(&map), Shapes::Unit);
    assert_eq!(
        Shapes::Tuple(SessionId(1), Owner(1)).relabel(&map),
        Shapes::Tuple(SessionId(2), Owner(1)),
        "owners tell no clients apart"
    );
    let named = Shapes::Named {
        op: OpId(3),
        timer: TimerId(5),
        r#type: ClientSlot(1),
    };
    let image = Shapes::Named {
        op: OpId(3),
        timer: TimerId(5),
        r#type: ClientSlot(0),
    };
    assert_eq!(named.relabel(&map), image);
}

#[test]
fn ids_in_skipped_fields_are_not_met() {
    let recording = ClientMap::recording();
    let named = Shapes::Named {
        op: OpId(3),
        timer: TimerId(5),
        r#type: ClientSlot(1),
    };
    named.relabel(&recording);
    let met = recording.recorded();
    assert_eq!(met.ops().collect::<Vec<_>>(), [3]);
    assert_eq!(met.timers().count(), 0, "the timer is skipped");
}

#[test]
fn type_parameters_relabel() {
    let generic: Generic<SessionId, SessionId> = Generic {
        inner: SessionId(1),
        kept: SessionId(1),
        list: vec![SessionId(1), SessionId(4)],
    };
    let image = Generic {
        inner: SessionId(2),
        kept: SessionId(1),
        list: vec![SessionId(2), SessionId(4)],
    };
    assert_eq!(generic.relabel(&moving()), image);
}

#[test]
fn the_crate_may_be_named_by_another_path() {
    assert_eq!(
        ByAnotherPath(SessionId(1)).relabel(&moving()),
        ByAnotherPath(SessionId(2))
    );
    let _: fn(&Empty, &ClientMap) -> Empty = Relabel::relabel;
}
