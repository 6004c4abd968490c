//! Frames split across reads, and malformed input: every error is a value that says where
//! and what, never a panic.

use jute::codes::OpCode;
use jute::frame::{MAX_FRAME, Splitter, body, framed};
use jute::multi::MultiRequest;
use jute::requests::{CreateRequest, GetChildrenRequest, peek_path};
use jute::responses::GetChildrenResponse;
use jute::session::{ConnectRequest, RequestHeader};
use jute::{FrameError, Record, Reply, Request, RequestMessage};

/// Bytes from 4-byte big-endian ints and raw pieces.
fn bytes(pieces: &[&[u8]]) -> Vec<u8> {
    pieces.concat()
}

fn int(value: i32) -> [u8; 4] {
    value.to_be_bytes()
}

/// The error `RequestMessage::from_bytes` gives for `body`, as text.
fn request_error(body: &[u8]) -> String {
    RequestMessage::from_bytes(body).unwrap_err().to_string()
}

#[test]
fn frames_come_whole_from_reads_of_every_size() {
    let frames: Vec<Vec<u8>> = [&b""[..], b"a", b"a longer body of bytes", &[0; 300]]
        .iter()
        .map(|b| framed(|out| out.extend_from_slice(b)))
        .collect();
    let stream = frames.concat();
    for size in 1..=stream.len() {
        let mut splitter = Splitter::default();
        let mut out = Vec::new();
        for chunk in stream.chunks(size) {
            splitter.push(chunk);
            while let Some(frame) = splitter.next_frame().unwrap() {
                out.push(frame);
            }
        }
        assert_eq!(out, frames, "reads of {size} bytes");
        assert_eq!(splitter.take_rest(), Vec::<u8>::new());
    }
    assert_eq!(body(&frames[1]), b"a");
}

#[test]
fn a_length_out_of_bounds_is_refused_and_the_bytes_kept() {
    for length in [-1, i32::MIN, MAX_FRAME as i32 + 1] {
        let mut splitter = Splitter::default();
        let stream = bytes(&[&int(length), b"more"]);
        splitter.push(&stream);
        assert_eq!(splitter.next_frame(), Err(FrameError { length }));
        assert_eq!(
            splitter.next_frame(),
            Err(FrameError { length }),
            "stays refused"
        );
        assert_eq!(splitter.take_rest(), stream);
    }
    let mut splitter = Splitter::default();
    splitter.push(&int(MAX_FRAME as i32));
    assert_eq!(
        splitter.next_frame(),
        Ok(None),
        "the largest length waits for its body"
    );
    assert_eq!(
        FrameError { length: -1 }.to_string(),
        format!("a frame length of -1, not between 0 and {MAX_FRAME}")
    );
}

#[test]
fn a_truncated_body_names_the_record_the_field_and_what_was_expected() {
    let create = bytes(&[&int(1), &int(1), &int(13), b"/a/b"]);
    assert_eq!(
        request_error(&create),
        "create request: path: expected a string of 13 bytes, found 4 bytes left"
    );
    assert_eq!(
        request_error(&[0, 0, 0, 1, 0, 0]),
        "request header: op: expected an int (4 bytes), found 2 bytes left"
    );
    let get_children = GetChildrenResponse {
        children: vec!["a".to_owned(), "b".to_owned()],
    };
    let mut cut = get_children.to_bytes();
    cut.truncate(cut.len() - 1);
    assert_eq!(
        GetChildrenResponse::from_bytes(&cut)
            .unwrap_err()
            .to_string(),
        "getChildren response: children: [1]: expected a string of 1 bytes, found 0 bytes left"
    );
}

#[test]
fn bytes_after_a_record_are_refused() {
    let message = RequestMessage {
        xid: 3,
        request: Request::GetChildren(GetChildrenRequest {
            path: "/p".to_owned(),
            watch: false,
        }),
    };
    let trailing = [message.to_bytes(), vec![0, 0]].concat();
    assert_eq!(
        request_error(&trailing),
        "request: expected the end of the body, found 2 bytes more"
    );
    // A reply with an error has no body: bytes after its header are refused.
    let error_with_body = bytes(&[&int(4), &[0; 8], &int(-101), &int(0)]);
    assert_eq!(
        Reply::from_bytes(&error_with_body, Some(OpCode::Exists))
            .unwrap_err()
            .to_string(),
        "reply: expected the end of the body, found 4 bytes more"
    );
}

#[test]
fn the_connect_request_s_read_only_is_optional_and_nothing_follows_it() {
    let connect = ConnectRequest {
        passwd: vec![0; 16],
        read_only: None,
        ..ConnectRequest::default()
    };
    let old_client = connect.to_bytes();
    assert_eq!(old_client.len(), 44);
    assert_eq!(ConnectRequest::from_bytes(&old_client), Ok(connect.clone()));
    let read_only = [old_client.clone(), vec![2]].concat();
    assert_eq!(
        ConnectRequest::from_bytes(&read_only).map(|c| c.read_only),
        Ok(Some(true)),
        "any byte but 0 is true, as Java reads a boolean"
    );
    let more = [old_client, vec![1, 0]].concat();
    assert_eq!(
        ConnectRequest::from_bytes(&more).unwrap_err().to_string(),
        "connect request: expected the end of the body, found 1 bytes more"
    );
}

#[test]
fn nulls_and_negative_lengths_are_refused_where_zookeeper_never_writes_them() {
    let exists = |length: i32| bytes(&[&int(1), &int(3), &int(length), &[1]]);
    assert_eq!(
        request_error(&exists(-1)),
        "exists request: path: expected a string, found null (length -1)"
    );
    assert_eq!(
        request_error(&exists(-2)),
        "exists request: path: expected the length of a string (-1 for null, or 0 and more), found -2"
    );
    // A node's data may be null.
    let create = bytes(&[&int(2), &int(1), &int(2), b"/n", &int(-1), &int(0), &int(0)]);
    let Ok(RequestMessage {
        request: Request::Create(CreateRequest { data: None, .. }),
        ..
    }) = RequestMessage::from_bytes(&create)
    else {
        panic!("a create with null data")
    };
}

#[test]
fn a_vector_s_count_past_the_bytes_left_fails_without_allocating_it() {
    let huge = bytes(&[&int(i32::MAX), &int(1), b"a"]);
    assert_eq!(
        GetChildrenResponse::from_bytes(&huge)
            .unwrap_err()
            .to_string(),
        "getChildren response: children: [1]: expected an int (4 bytes), found 0 bytes left"
    );
}

#[test]
fn a_multi_holds_only_multi_ops_and_ends_with_done() {
    let ping_inside = bytes(&[&int(5), &int(14), &int(11), &[0], &int(-1)]);
    assert_eq!(
        request_error(&ping_inside),
        "multi request: [0]: expected a multi's op (create, delete, setData, check, getChildren or getData), found op code 11"
    );
    let unended = MultiRequest { ops: Vec::new() }.to_bytes();
    let unended = &unended[..unended.len() - 9];
    assert_eq!(
        MultiRequest::from_bytes(unended).unwrap_err().to_string(),
        "multi request: [0]: multi header: op_type: expected an int (4 bytes), found 0 bytes left"
    );
}

#[test]
fn an_unknown_op_is_passed_on_as_it_is() {
    let body = bytes(&[&int(6), &int(555), b"whatever"]);
    let message = RequestMessage::from_bytes(&body).unwrap();
    let unknown = Request::Unknown {
        op: 555,
        body: b"whatever".to_vec(),
    };
    assert_eq!(message.request, unknown);
    assert_eq!(message.to_bytes(), body);
}

#[test]
fn a_peek_reads_the_header_and_the_path_alone() {
    let create = bytes(&[&int(7), &int(15), &int(4), b"/l/x", b"the rest is not read"]);
    let header = RequestHeader { xid: 7, op: 15 };
    assert_eq!(peek_path(&create), Ok((header, Some("/l/x".to_owned()))));
    let ping = bytes(&[&int(-2), &int(11)]);
    let header = RequestHeader { xid: -2, op: 11 };
    assert_eq!(peek_path(&ping), Ok((header, None)));
    assert!(peek_path(&bytes(&[&int(7), &int(1), &int(9), b"/l"])).is_err());
}
