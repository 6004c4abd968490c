//! Every record, request, response and reply decodes back to itself from its bytes, with
//! nothing left over; and every code converts back to itself.

mod support;

use jute::codes::{CreateMode, ErrorCode, EventType, KeeperState, OpCode};
use jute::data::{Acl, Id, Stat};
use jute::multi::{MultiHeader, MultiRequest, MultiResponse, MultiResult};
use jute::requests::*;
use jute::responses::*;
use jute::session::*;
use jute::{Record, Reply, ReplyBody, Request, RequestMessage, Response};
use support::{acl, stat};

/// `record` decodes back from its bytes, and from its frame's body.
fn round_trip<R: Record + PartialEq + std::fmt::Debug>(record: R) {
    let bytes = record.to_bytes();
    assert_eq!(R::from_bytes(&bytes).as_ref(), Ok(&record), "{bytes:?}");
    assert_eq!(&record.to_frame()[4..], &bytes[..]);
}

#[test]
fn records_round_trip() {
    round_trip(Id::default());
    round_trip(acl().remove(0));
    round_trip(stat());
    round_trip(Stat::default());
    for read_only in [None, Some(false), Some(true)] {
        round_trip(ConnectRequest {
            protocol_version: 0,
            last_zxid_seen: -1,
            time_out: 30_000,
            session_id: 0x1234,
            passwd: vec![0; 16],
            read_only,
        });
        round_trip(ConnectResponse {
            protocol_version: 0,
            time_out: 4_000,
            session_id: -2,
            passwd: (0..16).collect(),
            read_only,
        });
    }
    round_trip(RequestHeader { xid: -8, op: 105 });
    round_trip(ReplyHeader {
        xid: -1,
        zxid: -1,
        err: -101,
    });
    round_trip(WatcherEvent {
        event_type: EventType::NodeChildrenChanged.into(),
        state: KeeperState::SyncConnected.into(),
        path: "/ü/ñ".to_owned(),
    });
    round_trip(MultiHeader {
        op_type: 13,
        done: false,
        err: -1,
    });
    round_trip(ClientInfo {
        auth_scheme: "ip".to_owned(),
        user: "127.0.0.1".to_owned(),
    });
}

/// Every request variant, with edge values (null and empty data, empty vectors).
fn requests() -> Vec<Request> {
    let create = CreateRequest {
        path: "/a/b-".to_owned(),
        data: Some(b"data".to_vec()),
        acl: acl(),
        flags: CreateMode::EphemeralSequential.into(),
    };
    let null = CreateRequest {
        data: None,
        acl: Vec::new(),
        ..create.clone()
    };
    let path = || "/p".to_owned();
    let watches = vec!["/x".to_owned(), String::new()];
    vec![
        Request::Ping,
        Request::CloseSession,
        Request::WhoAmI,
        Request::Create(create.clone()),
        Request::Create2(null.clone()),
        Request::CreateContainer(create.clone()),
        Request::CreateTtl(CreateTtlRequest {
            path: path(),
            data: Some(Vec::new()),
            acl: acl(),
            flags: CreateMode::PersistentWithTtl.into(),
            ttl: 60_000,
        }),
        Request::Delete(DeleteRequest {
            path: path(),
            version: -1,
        }),
        Request::Exists(ExistsRequest {
            path: path(),
            watch: true,
        }),
        Request::GetData(GetDataRequest {
            path: path(),
            watch: false,
        }),
        Request::SetData(SetDataRequest {
            path: path(),
            data: None,
            version: 3,
        }),
        Request::GetAcl(GetAclRequest { path: path() }),
        Request::SetAcl(SetAclRequest {
            path: path(),
            acl: acl(),
            version: 0,
        }),
        Request::GetChildren(GetChildrenRequest {
            path: path(),
            watch: true,
        }),
        Request::Sync(SyncRequest { path: path() }),
        Request::GetChildren2(GetChildren2Request {
            path: path(),
            watch: false,
        }),
        Request::Check(CheckVersionRequest {
            path: path(),
            version: 7,
        }),
        Request::Multi(MultiRequest {
            ops: vec![
                Request::Create(create),
                Request::Create2(null),
                Request::Delete(DeleteRequest {
                    path: path(),
                    version: 1,
                }),
                Request::Check(CheckVersionRequest {
                    path: path(),
                    version: 2,
                }),
            ],
        }),
        Request::Multi(MultiRequest::default()),
        Request::MultiRead(MultiRequest {
            ops: vec![
                Request::GetChildren(GetChildrenRequest {
                    path: path(),
                    watch: false,
                }),
                Request::GetData(GetDataRequest {
                    path: path(),
                    watch: false,
                }),
            ],
        }),
        Request::CheckWatches(CheckWatchesRequest {
            path: path(),
            watcher_type: 3,
        }),
        Request::RemoveWatches(RemoveWatchesRequest {
            path: path(),
            watcher_type: 2,
        }),
        Request::AddWatch(AddWatchRequest {
            path: path(),
            mode: 1,
        }),
        Request::SetWatches(SetWatches {
            relative_zxid: 42,
            data_watches: watches.clone(),
            exist_watches: Vec::new(),
            child_watches: watches.clone(),
        }),
        Request::SetWatches2(SetWatches2 {
            relative_zxid: 43,
            data_watches: Vec::new(),
            exist_watches: watches.clone(),
            child_watches: Vec::new(),
            persistent_watches: watches.clone(),
            persistent_recursive_watches: watches,
        }),
        Request::GetEphemerals(GetEphemeralsRequest {
            prefix_path: "/".to_owned(),
        }),
        Request::GetAllChildrenNumber(GetAllChildrenNumberRequest { path: path() }),
        Request::Auth(AuthPacket {
            auth_type: 0,
            scheme: "digest".to_owned(),
            auth: b"user:pass".to_vec(),
        }),
        Request::Unknown {
            op: OpCode::Reconfig.into(),
            body: vec![1, 2, 3],
        },
        Request::Unknown {
            op: 999,
            body: Vec::new(),
        },
    ]
}

#[test]
fn every_request_round_trips_in_a_message() {
    for (xid, request) in (1..).zip(requests()) {
        round_trip(RequestMessage { xid, request });
    }
}

#[test]
fn every_op_code_with_a_record_has_a_request_sample() {
    let sampled: Vec<i32> = requests().iter().map(Request::op).collect();
    for &op in OpCode::ALL {
        let unread = [
            OpCode::Notification,
            OpCode::Reconfig,
            OpCode::DeleteContainer,
            OpCode::Sasl,
            OpCode::CreateSession,
            OpCode::Error,
        ];
        assert!(
            unread.contains(&op) || sampled.contains(&op.into()),
            "{op:?}"
        );
    }
}

/// A response of each kind, with the op of a request it answers.
fn responses() -> Vec<(OpCode, Response)> {
    let create2 = Create2Response {
        path: "/a/b-0000000001".to_owned(),
        stat: stat(),
    };
    let get_data = GetDataResponse {
        data: None,
        stat: stat(),
    };
    let children = vec!["a".to_owned(), "b".to_owned()];
    let results = vec![
        MultiResult::Create(CreateResponse {
            path: "/c".to_owned(),
        }),
        MultiResult::Create2(create2.clone()),
        MultiResult::Delete,
        MultiResult::SetData(SetDataResponse { stat: stat() }),
        MultiResult::Check,
        MultiResult::GetChildren(GetChildrenResponse {
            children: children.clone(),
        }),
        MultiResult::GetData(GetDataResponse {
            data: Some(b"x".to_vec()),
            stat: stat(),
        }),
        MultiResult::Error(ErrorResponse { err: -101 }),
    ];
    vec![
        (OpCode::Delete, Response::Empty),
        (OpCode::Ping, Response::Empty),
        (
            OpCode::Create,
            Response::Create(CreateResponse {
                path: "/c".to_owned(),
            }),
        ),
        (OpCode::Create2, Response::Create2(create2.clone())),
        (OpCode::CreateTtl, Response::Create2(create2.clone())),
        (OpCode::CreateContainer, Response::Create2(create2)),
        (
            OpCode::Exists,
            Response::Exists(ExistsResponse { stat: stat() }),
        ),
        (OpCode::GetData, Response::GetData(get_data)),
        (
            OpCode::SetData,
            Response::SetData(SetDataResponse { stat: stat() }),
        ),
        (
            OpCode::GetAcl,
            Response::GetAcl(GetAclResponse {
                acl: acl(),
                stat: stat(),
            }),
        ),
        (
            OpCode::SetAcl,
            Response::SetAcl(SetAclResponse { stat: stat() }),
        ),
        (
            OpCode::GetChildren,
            Response::GetChildren(GetChildrenResponse {
                children: children.clone(),
            }),
        ),
        (
            OpCode::GetChildren2,
            Response::GetChildren2(GetChildren2Response {
                children: Vec::new(),
                stat: stat(),
            }),
        ),
        (
            OpCode::Sync,
            Response::Sync(SyncResponse {
                path: "/s".to_owned(),
            }),
        ),
        (
            OpCode::Check,
            Response::Check(SetDataResponse { stat: stat() }),
        ),
        (OpCode::Multi, Response::Multi(MultiResponse { results })),
        (OpCode::MultiRead, Response::Multi(MultiResponse::default())),
        (
            OpCode::AddWatch,
            Response::AddWatch(ErrorResponse { err: 0 }),
        ),
        (
            OpCode::GetEphemerals,
            Response::GetEphemerals(GetEphemeralsResponse {
                ephemerals: children,
            }),
        ),
        (
            OpCode::GetAllChildrenNumber,
            Response::GetAllChildrenNumber(GetAllChildrenNumberResponse { total_number: 3 }),
        ),
        (
            OpCode::WhoAmI,
            Response::WhoAmI(WhoAmIResponse {
                client_info: Vec::new(),
            }),
        ),
        (OpCode::Sasl, Response::Unknown(vec![0, 0, 0, 1, 9])),
    ]
}

#[test]
fn every_response_round_trips_in_a_reply() {
    for (op, response) in responses() {
        let reply = Reply {
            header: ReplyHeader {
                xid: 3,
                zxid: 0x42,
                err: 0,
            },
            body: ReplyBody::Response(response),
        };
        let frame = reply.to_frame();
        assert_eq!(Reply::from_bytes(&frame[4..], Some(op)), Ok(reply));
    }
}

#[test]
fn errors_and_notifications_round_trip_in_a_reply() {
    let error = Reply {
        header: ReplyHeader {
            xid: 9,
            zxid: 1,
            err: ErrorCode::NodeExists.into(),
        },
        body: ReplyBody::Response(Response::Empty),
    };
    let notification = Reply {
        header: ReplyHeader {
            xid: -1,
            zxid: -1,
            err: 0,
        },
        body: ReplyBody::Notification(WatcherEvent {
            event_type: EventType::NodeDeleted.into(),
            state: KeeperState::SyncConnected.into(),
            path: "/gone".to_owned(),
        }),
    };
    for reply in [error, notification] {
        let frame = reply.to_frame();
        for op in [None, Some(OpCode::Create2)] {
            assert_eq!(Reply::from_bytes(&frame[4..], op).as_ref(), Ok(&reply));
        }
    }
}

#[test]
fn a_reply_to_an_unknown_op_keeps_its_body() {
    let reply = Reply {
        header: ReplyHeader {
            xid: 4,
            zxid: 5,
            err: 0,
        },
        body: ReplyBody::Response(Response::Unknown(vec![7; 9])),
    };
    assert_eq!(Reply::from_bytes(&reply.to_frame()[4..], None), Ok(reply));
}

#[test]
fn codes_convert_both_ways_and_refuse_others() {
    fn both_ways<C>(all: &[C], unknown: i32)
    where
        C: Copy + PartialEq + std::fmt::Debug + Into<i32> + TryFrom<i32>,
        <C as TryFrom<i32>>::Error: std::fmt::Debug,
    {
        for &code in all {
            assert_eq!(C::try_from(code.into()).ok(), Some(code));
        }
        assert!(C::try_from(unknown).is_err());
    }
    both_ways(OpCode::ALL, 10);
    both_ways(ErrorCode::ALL, -126);
    both_ways(CreateMode::ALL, 7);
    both_ways(EventType::ALL, 0);
    both_ways(KeeperState::ALL, 2);
    assert_eq!(
        OpCode::try_from(10).unwrap_err().to_string(),
        "10 is not a known op code"
    );
}

#[test]
fn create_modes_carry_zookeeper_s_flags() {
    let flags: Vec<(i32, bool, bool)> = CreateMode::ALL
        .iter()
        .map(|&m| (m.into(), m.is_ephemeral(), m.is_sequential()))
        .collect();
    let expected = [
        (0, false, false),
        (1, true, false),
        (2, false, true),
        (3, true, true),
        (4, false, false),
        (5, false, false),
        (6, false, true),
    ];
    assert_eq!(flags, expected);
    assert_eq!(Acl::open_unsafe()[0].perms, 31);
}
