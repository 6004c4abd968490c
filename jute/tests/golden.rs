//! Records against bytes written out by hand from their jute definitions: big-endian ints
//! and longs, one byte per boolean, a 4-byte length before each string, buffer and vector.

use jute::codes::OpCode;
use jute::data::Stat;
use jute::multi::{MultiResponse, MultiResult};
use jute::requests::GetDataRequest;
use jute::responses::{ErrorResponse, ExistsResponse};
use jute::session::{ConnectRequest, ReplyHeader, WatcherEvent};
use jute::{Record, Reply, ReplyBody, Request, RequestMessage, Response};

/// The bytes of `text`: hexadecimal pairs; spaces are ignored, and on each line what
/// follows a `|` (a comment naming the field).
fn hex(text: &str) -> Vec<u8> {
    let digits: Vec<u8> = text
        .lines()
        .flat_map(|line| line.split('|').next().unwrap_or_default().bytes())
        .filter(u8::is_ascii_hexdigit)
        .collect();
    let digit = |d: u8| (d as char).to_digit(16).unwrap() as u8;
    digits
        .chunks(2)
        .map(|pair| digit(pair[0]) << 4 | digit(pair[1]))
        .collect()
}

/// `record` encodes to `bytes` and decodes from them.
fn golden<R: Record + PartialEq + std::fmt::Debug>(record: R, bytes: &str) {
    let bytes = hex(bytes);
    assert_eq!(record.to_bytes(), bytes);
    assert_eq!(R::from_bytes(&bytes), Ok(record));
}

#[test]
fn a_new_session_s_connect_request() {
    let connect = ConnectRequest {
        protocol_version: 0,
        last_zxid_seen: 0,
        time_out: 30_000,
        session_id: 0,
        passwd: vec![0; 16],
        read_only: Some(false),
    };
    golden(
        connect.clone(),
        "00000000 |               protocolVersion: int 0
         00000000 00000000 |      lastZxidSeen: long 0
         00007530 |               timeOut: int 30000
         00000000 00000000 |      sessionId: long 0
         00000010 |               passwd: buffer of 16 bytes
         00000000 00000000 00000000 00000000 |
         00",
    );
    let frame = connect.to_frame();
    assert_eq!(frame[..4], hex("0000002d"), "a length of 45");
}

#[test]
fn a_get_data_request_with_a_watch() {
    let message = RequestMessage {
        xid: 1,
        request: Request::GetData(GetDataRequest {
            path: "/a".to_owned(),
            watch: true,
        }),
    };
    golden(
        message,
        "00000001 |  header xid: int 1
         00000004 |  header type: int 4 (getData)
         00000002 |  path: ustring of 2 bytes
         2f61 |      \"/a\"
         01",
    );
}

#[test]
fn an_exists_response_s_stat_in_field_order() {
    let stat = Stat {
        czxid: 1,
        mzxid: 2,
        ctime: 3,
        mtime: 4,
        version: 5,
        cversion: 6,
        aversion: 7,
        ephemeral_owner: 8,
        data_length: 9,
        num_children: 10,
        pzxid: 11,
    };
    golden(
        ExistsResponse { stat },
        "00000000 00000001 | czxid: long
         00000000 00000002 | mzxid: long
         00000000 00000003 | ctime: long
         00000000 00000004 | mtime: long
         00000005 |          version: int
         00000006 |          cversion: int
         00000007 |          aversion: int
         00000000 00000008 | ephemeralOwner: long
         00000009 |          dataLength: int
         0000000a |          numChildren: int
         00000000 0000000b | pzxid: long",
    );
}

#[test]
fn a_no_node_reply_is_its_header_alone() {
    let bytes = hex("00000002 |          xid: int 2
         00000000 00000010 | zxid: long 16
         ffffff9b |          err: int -101 (NoNode)");
    let reply = Reply::from_bytes(&bytes, Some(OpCode::Exists)).unwrap();
    let header = ReplyHeader {
        xid: 2,
        zxid: 16,
        err: -101,
    };
    assert_eq!(reply.header, header);
    assert_eq!(reply.body, ReplyBody::Response(Response::Empty));
}

#[test]
fn a_notification() {
    let bytes = hex("ffffffff |          xid: int -1
         ffffffff ffffffff | zxid: long -1
         00000000 |          err: int 0
         00000003 |          type: int 3 (NodeDataChanged)
         00000003 |          state: int 3 (SyncConnected)
         00000002 2f61 |     path: \"/a\"");
    let event = WatcherEvent {
        event_type: 3,
        state: 3,
        path: "/a".to_owned(),
    };
    let reply = Reply::from_bytes(&bytes, None).unwrap();
    assert_eq!(reply.body, ReplyBody::Notification(event));
    assert_eq!(&reply.to_frame()[4..], &bytes[..]);
}

#[test]
fn a_failed_multi_s_error_results() {
    let error = |err| MultiResult::Error(ErrorResponse { err });
    golden(
        MultiResponse {
            results: vec![error(0), error(-101)],
        },
        "ffffffff 00 00000000 | header: type -1 (error), done false, err 0
         00000000 |            ErrorResponse err 0 (rolled back)
         ffffffff 00 ffffff9b | header: type -1, done false, err -101
         ffffff9b |            ErrorResponse err -101 (NoNode)
         ffffffff 01 ffffffff | the end: type -1, done true, err -1",
    );
}
