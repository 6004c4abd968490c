//! Where lanes and their rows sit. A client lane has four rows — its session as it believes
//! it, its lock (waiting / holding), its resource accesses and the faults on it; the
//! server lane stacks its ephemeral nodes, its session expiries and its faults.

use crate::analysis::{Lane, NodeLife, Run};

/// The SVG's width in user units.
pub(crate) const WIDTH: f64 = 1200.0;
/// Where the plot begins (lane labels are to its left).
pub(crate) const PLOT_X: f64 = 96.0;
/// The plot's width.
pub(crate) const PLOT_W: f64 = WIDTH - PLOT_X - 16.0;
/// The height above the first lane: two rows of violation flags, then the axis.
pub(crate) const TOP: f64 = 64.0;
/// The tops of the violation flag rows.
pub(crate) const FLAG_ROWS: [f64; 2] = [2.0, 21.0];
/// The most rows the server lane stacks nodes in.
const MAX_NODE_ROWS: usize = 6;
/// A row's pitch.
const ROW: f64 = 19.0;

/// A row: its top and height.
pub(crate) type Row = (f64, f64);

/// One lane's place.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct LaneBox {
    /// Which lane.
    pub lane: Lane,
    /// Its top.
    pub y: f64,
    /// Its height.
    pub height: f64,
}

impl LaneBox {
    /// Client lanes: the session as the client believes it.
    pub(crate) fn session_row(&self) -> Row {
        (self.y + 8.0, 15.0)
    }

    /// Client lanes: waiting and holding.
    pub(crate) fn lock_row(&self) -> Row {
        (self.y + 8.0 + ROW, 20.0)
    }

    /// Client lanes: reads and writes of the protected resource.
    pub(crate) fn access_row(&self) -> Row {
        (self.y + 8.0 + 2.0 * ROW + 4.0, 14.0)
    }

    /// Server lane: node row `i`.
    pub(crate) fn node_row(&self, i: usize) -> Row {
        (self.y + 8.0 + ROW * i as f64, 15.0)
    }

    /// Faults, the bottom row of every lane.
    pub(crate) fn fault_row(&self) -> Row {
        (self.y + self.height - 21.0, 14.0)
    }

    /// Server lane: session expiries, just above the fault row.
    pub(crate) fn mark_row(&self) -> Row {
        (self.y + self.height - 21.0 - ROW, 15.0)
    }
}

/// The whole timeline's geometry.
pub(crate) struct Layout {
    /// The lanes, top to bottom.
    pub lanes: Vec<LaneBox>,
    /// Each ephemeral node's row in the server lane (indexed like `Run::nodes`).
    pub node_rows: Vec<usize>,
    /// The total height.
    pub height: f64,
}

impl Layout {
    /// Lays out `run`'s lanes.
    pub(crate) fn new(run: &Run) -> Layout {
        let (node_rows, rows) = pack(&run.nodes);
        let mut y = TOP;
        let mut lanes = Vec::with_capacity(run.lanes.len());
        for &lane in &run.lanes {
            let height = match lane {
                Lane::Client(_) => 8.0 + 3.0 * ROW + 4.0 + 24.0,
                Lane::Server => 8.0 + ROW * (rows.max(1) as f64) + ROW + 24.0,
            };
            lanes.push(LaneBox { lane, y, height });
            y += height;
        }
        Layout {
            lanes,
            node_rows,
            height: y + 6.0,
        }
    }

    /// The box of `lane`.
    pub(crate) fn lane(&self, lane: Lane) -> Option<&LaneBox> {
        self.lanes.iter().find(|b| b.lane == lane)
    }

    /// The top and bottom of the lanes.
    pub(crate) fn span_y(&self) -> (f64, f64) {
        (TOP, self.height - 6.0)
    }
}

/// Stacks nodes into rows so that none overlaps another in its row (beyond
/// [`MAX_NODE_ROWS`], into the row that frees up first). Returns each node's row and the
/// number of rows.
fn pack(nodes: &[NodeLife]) -> (Vec<usize>, usize) {
    let mut ends: Vec<u64> = Vec::new();
    let rows = nodes
        .iter()
        .map(|node| {
            let row = match ends.iter().position(|&end| end <= node.start) {
                Some(row) => row,
                None if ends.len() < MAX_NODE_ROWS => {
                    ends.push(0);
                    ends.len() - 1
                }
                None => (0..ends.len()).min_by_key(|&r| ends[r]).unwrap_or(0),
            };
            ends[row] = ends[row].max(node.end);
            row
        })
        .collect();
    let count = ends.len();
    (rows, count)
}
