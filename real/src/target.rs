//! Where a real run's ZooKeeper is: one the user runs (`--connect`), or one [`crate::local`]
//! started for the run, which the run can crash and restart (`restart_server`) and which is
//! stopped when the target is dropped (or [`Target::stop`]ped), on error too.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use crate::local::{
    ENSEMBLE_START, Ensemble, HarnessError, ServerMode, Settings, Standalone, in_quorum, mode,
    poll_serving,
};
use crate::peers::PeerCuts;
use crate::server_stops::ServerStops;

/// A ZooKeeper to run against.
#[derive(Debug)]
pub struct Target {
    connect_string: String,
    local: Option<Arc<Mutex<Local>>>,
}

/// A ZooKeeper the harness started.
#[derive(Debug)]
enum Local {
    Standalone(Standalone),
    Ensemble(Ensemble),
}

impl Target {
    /// A ZooKeeper the user runs, at `connect_string` (`host:port[,host:port…]`).
    pub fn connect(connect_string: impl Into<String>) -> Target {
        Target {
            connect_string: connect_string.into(),
            local: None,
        }
    }

    /// Starts a local standalone server (`servers == 1`) or an ensemble of `servers`, and
    /// waits until it serves.
    pub fn start_local(servers: u32, settings: Settings) -> Result<Target, HarnessError> {
        let local = if servers == 1 {
            Local::Standalone(Standalone::start_with(settings)?)
        } else {
            Local::Ensemble(Ensemble::start_with(servers, settings)?)
        };
        let connect_string = match &local {
            Local::Standalone(server) => server.connect_string(),
            Local::Ensemble(ensemble) => ensemble.connect_string(),
        };
        Ok(Target {
            connect_string,
            local: Some(Arc::new(Mutex::new(local))),
        })
    }

    /// The client connect string.
    pub fn connect_string(&self) -> &str {
        &self.connect_string
    }

    /// Whether the harness started the server (so that the run can crash and restart it).
    pub fn is_local(&self) -> bool {
        self.local.is_some()
    }

    /// How many servers the harness started (`None` for `--connect`).
    pub fn local_servers(&self) -> Option<u16> {
        let local = self.local.as_ref()?.lock().expect("local server");
        Some(match &*local {
            Local::Standalone(_) => 1,
            Local::Ensemble(ensemble) => u16::try_from(ensemble.len()).unwrap_or(u16::MAX),
        })
    }

    /// The servers of the local ensemble, as faults addressed to one of them see them.
    pub(crate) fn members(&self) -> Option<Members> {
        let local = self.local.as_ref()?.lock().expect("local server");
        match &*local {
            Local::Standalone(_) => None,
            Local::Ensemble(ensemble) => Some(Members {
                client_addrs: ensemble.client_addrs(),
                cuts: ensemble.peer_cuts(),
                stops: ensemble.server_stops(),
            }),
        }
    }

    /// What the target is, for a trace's settings: `connect`, `standalone` or `ensemble-N`.
    pub fn kind(&self) -> String {
        match self.local.as_ref().map(|l| l.lock().expect("local server")) {
            None => "connect".into(),
            Some(local) => match &*local {
                Local::Standalone(_) => "standalone".into(),
                Local::Ensemble(ensemble) => format!("ensemble-{}", ensemble.len()),
            },
        }
    }

    /// The logs of the servers the harness started (none for `--connect`).
    pub fn server_logs(&self) -> Vec<PathBuf> {
        match self.local.as_ref().map(|l| l.lock().expect("local server")) {
            None => Vec::new(),
            Some(local) => match &*local {
                Local::Standalone(server) => vec![server.log_path()],
                Local::Ensemble(ensemble) => ensemble.log_paths(),
            },
        }
    }

    /// A handle that crashes and restarts the local server (`None` for `--connect`).
    pub(crate) fn restarter(&self) -> Option<Restarter> {
        self.local.clone().map(Restarter)
    }

    /// Stops the servers the harness started. Idempotent; also done on drop.
    pub fn stop(&self) {
        if let Some(local) = &self.local {
            match &mut *local.lock().expect("local server") {
                Local::Standalone(server) => server.stop(),
                Local::Ensemble(ensemble) => ensemble.stop(),
            }
        }
    }
}

/// Crashes and restarts a local ZooKeeper: the one of a [`Target`].
#[derive(Clone, Debug)]
pub(crate) struct Restarter(Arc<Mutex<Local>>);

impl Restarter {
    /// SIGKILLs server `server` (`None`: in an ensemble, the leader `srvr` names; a
    /// standalone server is server 0, whatever `server` says), calls `killed`, and starts
    /// the server again on its data directory after `down`; returns once it serves again.
    /// Blocks the calling thread. A standalone server's restart holds the target throughout;
    /// an ensemble's takes it only to kill, to start and to check on its server, so that
    /// the restarts of distinct servers overlap (a server started again while another is
    /// down rejoins once a quorum of them runs).
    pub fn crash_and_restart(
        &self,
        server: Option<usize>,
        down: Duration,
        killed: impl FnOnce(),
    ) -> Result<(), HarnessError> {
        let server = match &mut *self.local() {
            Local::Standalone(standalone) => {
                standalone.kill();
                killed();
                // `restart` kills the server first: it is dead already.
                return standalone.restart(down);
            }
            Local::Ensemble(ensemble) => {
                let server = match server {
                    Some(server) => server,
                    None => ensemble.leader().ok_or_else(|| {
                        HarnessError("restart_server: no server of the ensemble leads".into())
                    })?,
                };
                ensemble.kill(server)?;
                server
            }
        };
        killed();
        std::thread::sleep(down);
        self.on_ensemble(|ensemble| ensemble.spawn(server))?;
        let probe = || {
            self.on_ensemble(|ensemble| ensemble.alive(server))
                .map(mode)
        };
        match poll_serving(ENSEMBLE_START, in_quorum, probe)? {
            Some(_) => Ok(()),
            None => self.on_ensemble(|e| Err(e.not_rejoined(server, ENSEMBLE_START))),
        }
    }

    fn local(&self) -> MutexGuard<'_, Local> {
        self.0.lock().expect("local server")
    }

    /// `act` on the local ensemble, with the target held meanwhile.
    fn on_ensemble<T>(
        &self,
        act: impl FnOnce(&mut Ensemble) -> Result<T, HarnessError>,
    ) -> Result<T, HarnessError> {
        match &mut *self.local() {
            Local::Ensemble(ensemble) => act(ensemble),
            Local::Standalone(_) => Err(HarnessError("the local server is standalone".into())),
        }
    }
}

/// The servers of a local ensemble as a fault addressed to one of them sees them: where to
/// ask each for its mode, the cuts between them and their processes' pauses; read without the
/// target's lock, which a restart of a server takes.
#[derive(Clone, Debug)]
pub(crate) struct Members {
    client_addrs: Vec<SocketAddr>,
    cuts: PeerCuts,
    stops: ServerStops,
}

impl Members {
    /// Each server's mode now (`srvr` on its client port), `None` for one that does not
    /// serve. Blocks for up to a second per server that does not answer.
    pub fn modes(&self) -> Vec<Option<ServerMode>> {
        (self.client_addrs.iter())
            .map(|&addr| crate::local::mode(addr))
            .collect()
    }

    /// How many servers there are.
    pub fn count(&self) -> usize {
        self.client_addrs.len()
    }

    /// What cuts the servers off from their peers.
    pub fn cuts(&self) -> &PeerCuts {
        &self.cuts
    }

    /// What stops and continues the servers' processes.
    pub fn stops(&self) -> &ServerStops {
        &self.stops
    }
}
