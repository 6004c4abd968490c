//! Requests by what they ask, for a client or a test that writes them by hand:
//! `Request::delete("/a", -1)` or `CreateRequest::open(…)` instead of the record spelled out.

use crate::codes::CreateMode;
use crate::data::Acl;
use crate::requests::{
    CheckVersionRequest, CreateRequest, DeleteRequest, ExistsRequest, GetChildren2Request,
    GetChildrenRequest, GetDataRequest, Request, SetDataRequest,
};

impl CreateRequest {
    /// A create of `path` (a sequential node's prefix) with `data` in `mode`, open to
    /// everyone (`OPEN_ACL_UNSAFE`): the body of `create`, `create2` or `createContainer`.
    pub fn open(path: &str, data: Option<&[u8]>, mode: CreateMode) -> CreateRequest {
        CreateRequest {
            path: path.to_owned(),
            data: data.map(<[u8]>::to_vec),
            acl: Acl::open_unsafe(),
            flags: mode.into(),
        }
    }
}

impl Request {
    /// `delete` of `path` at `version` (-1: any).
    pub fn delete(path: &str, version: i32) -> Request {
        let path = path.to_owned();
        Request::Delete(DeleteRequest { path, version })
    }

    /// `setData` of `data` on `path` at `version` (-1: any).
    pub fn set_data(path: &str, data: &[u8], version: i32) -> Request {
        let (path, data) = (path.to_owned(), Some(data.to_vec()));
        Request::SetData(SetDataRequest {
            path,
            data,
            version,
        })
    }

    /// `getData` of `path`, leaving a data watch if `watch`.
    pub fn get_data(path: &str, watch: bool) -> Request {
        let path = path.to_owned();
        Request::GetData(GetDataRequest { path, watch })
    }

    /// `exists` of `path`, leaving an exist watch if `watch`.
    pub fn exists(path: &str, watch: bool) -> Request {
        let path = path.to_owned();
        Request::Exists(ExistsRequest { path, watch })
    }

    /// `getChildren` of `path`, leaving a child watch if `watch`.
    pub fn get_children(path: &str, watch: bool) -> Request {
        let path = path.to_owned();
        Request::GetChildren(GetChildrenRequest { path, watch })
    }

    /// `getChildren2` of `path` (the children and the parent's stat), leaving a child watch
    /// if `watch`.
    pub fn get_children2(path: &str, watch: bool) -> Request {
        let path = path.to_owned();
        Request::GetChildren2(GetChildren2Request { path, watch })
    }

    /// `check` that `path` is at `version` (-1: exists), in a multi.
    pub fn check(path: &str, version: i32) -> Request {
        let path = path.to_owned();
        Request::Check(CheckVersionRequest { path, version })
    }
}
