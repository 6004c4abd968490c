//! A local ZooKeeper from Debian's `zookeeper` 3.8 package: a standalone server or an
//! ensemble, on 127.0.0.1 only, free ports, a temporary directory, stopped by PID.
//!
//! Each server is `java -cp <zookeeper.jar>[:slf4j-jdk14.jar] QuorumPeerMain <cfg>` launched
//! directly (not through `zkServer.sh`, which reads `/etc/zookeeper`), in its own process
//! group, with stdout and stderr in `server-N/server.log` under the temporary directory. The
//! configuration avoids the package's traps: the admin server is off (it would bind
//! 0.0.0.0:8080), the client, quorum and election ports are on 127.0.0.1, and every
//! four-letter word is allowed. An ensemble's servers reach one another through proxies of
//! the harness (`real::peers`), so that one can be cut off from its peers. A server counts as serving when `srvr` answers with a `Mode:`
//! line (`ruok` answers `imok` before the server serves). Every four-letter-word exchange has
//! a connect and a read timeout.
//!
//! Servers are killed (SIGKILL to the process group) by [`Standalone::stop`] /
//! [`Ensemble::stop`], which are idempotent, and by `Drop`, also during a panic; and by the
//! kernel when the process that started them dies without running `Drop` (Ctrl-C, SIGKILL):
//! each server gets a parent-death signal (see `spawn_bound_to_this_process`). The
//! temporary directory is removed on a normal drop and kept when the thread is panicking, so
//! the logs named in a failure message can still be read.

use std::fmt;
use std::fs;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

pub use trace::ServerMode;

use scenarios::scenario::ServerSettings;

use crate::peers::{PeerCuts, PeerPorts, PeerProxies};
use crate::server_stops::ServerStops;

/// The jar Debian's `zookeeper` package installs (its manifest carries the class path).
pub const ZOOKEEPER_JAR: &str = "/usr/share/java/zookeeper.jar";
/// The servers' log format (java.util.logging, the backend slf4j logs to): the record's
/// time in milliseconds since the epoch, its level, its message — so a run can place the
/// server's session expiries on its clock (`real::server_log`).
const SERVER_LOG_FORMAT: &str = "-Djava.util.logging.SimpleFormatter.format=%1$tQ %4$s %5$s%6$s%n";

/// A logging backend for slf4j that Debian ships (`libslf4j-java`): logs go to stderr.
pub const SLF4J_BACKEND_JAR: &str = "/usr/share/java/slf4j-jdk14.jar";
/// What to tell a user whose machine lacks the package.
pub const NOT_INSTALLED: &str =
    "ZooKeeper is not installed: run scripts/test or apt-get install zookeeper";

/// How long a standalone server may take to serve.
const STANDALONE_START: Duration = Duration::from_secs(20);
/// How long an ensemble may take to elect a leader and serve on every server.
pub(crate) const ENSEMBLE_START: Duration = Duration::from_secs(40);
/// How many times a start is tried when a chosen port was taken before the server bound it.
pub const START_ATTEMPTS: u32 = 3;
/// Connect and read timeout of one four-letter-word exchange.
pub const FOUR_LETTER_TIMEOUT: Duration = Duration::from_millis(1000);

/// A harness failure, with a message that names what failed (and the log to read).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HarnessError(pub String);

impl fmt::Display for HarnessError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for HarnessError {}

pub(crate) fn io_error(what: String, error: std::io::Error) -> HarnessError {
    HarnessError(format!("{what}: {error}"))
}

/// Settings shared by every server of a local ZooKeeper.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Settings {
    /// ZooKeeper's tick. Sessions negotiate 2–20 ticks unless the bounds below are set, and
    /// expiry runs in tick buckets.
    pub tick_time: Duration,
    /// `maxSessionTimeout`, when the 20-tick default is too short.
    pub max_session_timeout: Option<Duration>,
    /// An ensemble's `syncLimit`, in ticks: a follower that has not heard the leader for this
    /// long (its socket's read timeout) drops its clients and looks for a leader, and a
    /// leader drops a follower it has not heard from for as long.
    pub sync_limit: u32,
    /// An ensemble's `initLimit`, in ticks: how long a follower may take to connect to a new
    /// leader and take its state.
    pub init_limit: u32,
}

impl Default for Settings {
    /// A 200 ms tick: sessions of 0.4–4 s, so scenarios run in seconds; syncLimit 20 and
    /// initLimit 50 ticks (4 s and 10 s), so that servers starting on a loaded machine join.
    fn default() -> Settings {
        Settings {
            tick_time: Duration::from_millis(200),
            max_session_timeout: None,
            sync_limit: 20,
            init_limit: 50,
        }
    }
}

impl Settings {
    /// The settings a scenario's `server` asks for: its tick and, for an ensemble, its
    /// `sync_limit`; the rest as [`Settings::default`] (a scenario has no initLimit: the
    /// default's 50 ticks let servers starting on a loaded machine join).
    pub fn of(server: &ServerSettings) -> Settings {
        let default = Settings::default();
        Settings {
            tick_time: Duration::from_millis(server.tick_ms),
            sync_limit: match server.is_ensemble() {
                true => u32::try_from(server.sync_limit).unwrap_or(u32::MAX),
                false => default.sync_limit,
            },
            ..default
        }
    }
}

/// Sends a four-letter word to `addr` and returns the whole answer. Bounded by
/// [`FOUR_LETTER_TIMEOUT`] for the connect and for each read.
pub fn four_letter_word(addr: SocketAddr, word: &str) -> Result<String, HarnessError> {
    let what = |e| io_error(format!("four-letter word {word:?} to {addr}"), e);
    let mut stream = TcpStream::connect_timeout(&addr, FOUR_LETTER_TIMEOUT).map_err(what)?;
    stream
        .set_read_timeout(Some(FOUR_LETTER_TIMEOUT))
        .map_err(what)?;
    stream
        .set_write_timeout(Some(FOUR_LETTER_TIMEOUT))
        .map_err(what)?;
    stream.write_all(word.as_bytes()).map_err(what)?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer).map_err(what)?;
    Ok(answer)
}

/// The mode `srvr` reports for the server at `addr` (its client address), or `None` when it
/// does not answer or does not serve.
pub fn mode(addr: SocketAddr) -> Option<ServerMode> {
    four_letter_word(addr, "srvr")
        .ok()
        .and_then(|a| mode_of_srvr(&a))
}

/// The mode a `srvr` answer's `Mode:` line names, if it has one it knows.
fn mode_of_srvr(answer: &str) -> Option<ServerMode> {
    let line = answer.lines().find_map(|l| l.strip_prefix("Mode:"))?;
    match line.trim() {
        "standalone" => Some(ServerMode::Standalone),
        "leader" => Some(ServerMode::Leader),
        "follower" => Some(ServerMode::Follower),
        "observer" => Some(ServerMode::Observer),
        _ => None,
    }
}

/// True when Debian's `zookeeper` package (and a `java`) are installed.
pub fn installed() -> bool {
    Path::new(ZOOKEEPER_JAR).is_file() && java().is_some()
}

/// The `java` on `PATH`.
pub(crate) fn java() -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join("java"))
            .find(|p| p.is_file())
    })
}

fn class_path() -> String {
    if Path::new(SLF4J_BACKEND_JAR).is_file() {
        format!("{ZOOKEEPER_JAR}:{SLF4J_BACKEND_JAR}")
    } else {
        ZOOKEEPER_JAR.to_string()
    }
}

/// A free port on 127.0.0.1: a listener bound to port 0 (the caller releases it just before
/// the server binds the port, so another process may take it meanwhile: see
/// [`START_ATTEMPTS`]).
fn free_port() -> Result<(TcpListener, u16), HarnessError> {
    let listener = TcpListener::bind("127.0.0.1:0")
        .map_err(|e| io_error("binding 127.0.0.1:0 to find a free port".into(), e))?;
    let port = listener
        .local_addr()
        .map(|a| a.port())
        .map_err(|e| io_error("reading a bound port".into(), e))?;
    Ok((listener, port))
}

/// A fresh temporary directory `<tmp>/<prefix>-<pid>-<n>-<nanos>`: a local ZooKeeper's, a
/// run's fenced resource's, or the Curator contenders' classes.
pub(crate) fn temp_dir(prefix: &str) -> Result<PathBuf, HarnessError> {
    temp_dir_in(&std::env::temp_dir(), prefix)
}

/// A fresh directory `<parent>/<prefix>-<pid>-<n>-<nanos>`.
fn temp_dir_in(parent: &Path, prefix: &str) -> Result<PathBuf, HarnessError> {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let name = format!(
        "{prefix}-{}-{}-{nanos}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    );
    let dir = parent.join(name);
    fs::create_dir_all(&dir).map_err(|e| io_error(format!("creating {}", dir.display()), e))?;
    Ok(dir)
}

/// One server process of a local ZooKeeper.
#[derive(Debug)]
struct Server {
    /// The server's id (`myid`), from 1.
    id: u32,
    client_port: u16,
    dir: PathBuf,
    child: Option<Child>,
    /// The table its running process is in, for pauses to stop and continue it.
    stops: ServerStops,
}

impl Server {
    fn client_addr(&self) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], self.client_port))
    }

    fn config_path(&self) -> PathBuf {
        self.dir.join("zoo.cfg")
    }

    fn log_path(&self) -> PathBuf {
        self.dir.join("server.log")
    }

    fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    fn spawn(&mut self) -> Result<(), HarnessError> {
        let java = java().ok_or_else(|| HarnessError(NOT_INSTALLED.into()))?;
        let log_path = self.log_path();
        let log = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log_path)
            .map_err(|e| io_error(format!("opening {}", log_path.display()), e))?;
        let log2 = log
            .try_clone()
            .map_err(|e| io_error(format!("opening {}", log_path.display()), e))?;
        let mut command = Command::new(java);
        command
            .args([
                "-Xmx256m",
                "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1",
                "-Dzookeeper.admin.enableServer=false",
                "-Dzookeeper.jmx.log4j.disable=true",
                // Each log line starts with its epoch milliseconds (see `SERVER_LOG_FORMAT`).
                SERVER_LOG_FORMAT,
                "-cp",
                &class_path(),
                "org.apache.zookeeper.server.quorum.QuorumPeerMain",
            ])
            .arg(self.config_path())
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(log2)
            .process_group(0);
        let child = spawn_bound_to_this_process(command)
            .map_err(|e| io_error(format!("starting zookeeper server {}", self.id), e))?;
        self.stops.started(index(self.id), child.id());
        self.child = Some(child);
        Ok(())
    }

    /// SIGKILL to the server's process group (stopped or not), then reap it. Idempotent.
    fn kill(&mut self) {
        if let Some(child) = self.child.take() {
            self.stops.killed(index(self.id));
            kill_group(child);
        }
    }

    /// The server's mode, or `None` when it does not answer or does not serve yet.
    fn mode(&self) -> Option<ServerMode> {
        mode(self.client_addr())
    }

    /// Fails when the process has exited.
    fn check_alive(&mut self) -> Result<(), HarnessError> {
        let exited = match self.child.as_mut() {
            Some(child) => child.try_wait().ok().flatten(),
            None => {
                return Err(HarnessError(format!(
                    "zookeeper server {} is not running",
                    self.id
                )));
            }
        };
        match exited {
            Some(status) => Err(HarnessError(format!(
                "zookeeper server {} on {} exited ({status}); its log: {}",
                self.id,
                self.client_addr(),
                self.log_path().display()
            ))),
            None => Ok(()),
        }
    }

    /// Waits until `srvr` reports a mode `accept`s.
    fn wait_serving(
        &mut self,
        within: Duration,
        accept: impl Fn(ServerMode) -> bool,
    ) -> Result<ServerMode, HarnessError> {
        let probe = || self.check_alive().map(|()| self.mode());
        poll_serving(within, accept, probe)?.ok_or_else(|| self.not_serving(within))
    }

    /// The failure of a server that did not serve within `within`.
    fn not_serving(&self, within: Duration) -> HarnessError {
        HarnessError(format!(
            "zookeeper server {} did not serve on {} within {} s; its log: {}",
            self.id,
            self.client_addr(),
            within.as_secs(),
            self.log_path().display()
        ))
    }
}

/// Asks `probe` for a server's mode every 50 ms until it gives one `accept`s (`Some`), or
/// `within` has passed (`None`); a failure of `probe` (the server's process exited) ends the
/// wait.
pub(crate) fn poll_serving(
    within: Duration,
    accept: impl Fn(ServerMode) -> bool,
    mut probe: impl FnMut() -> Result<Option<ServerMode>, HarnessError>,
) -> Result<Option<ServerMode>, HarnessError> {
    let deadline = Instant::now() + within;
    loop {
        if let Some(mode) = probe()?.filter(|m| accept(*m)) {
            return Ok(Some(mode));
        }
        if Instant::now() >= deadline {
            return Ok(None);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// SIGKILL to the process group of `child` (spawned with `process_group(0)`), then reaps it.
pub(crate) fn kill_group(mut child: Child) {
    if let Ok(pid) = i32::try_from(child.id()) {
        // SAFETY: kill(2) with a negative pid signals the process group we created for this
        // child (process_group(0) makes its pgid equal to its pid); it is not reaped yet, so
        // the pid cannot have been reused.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// A request to the spawner thread: a command, and where to send the child.
type SpawnRequest = (Command, std::sync::mpsc::Sender<std::io::Result<Child>>);

/// Spawns `command` so that it is SIGKILLed when this process dies, however it dies (a
/// Ctrl-C, a test harness's timeout, a SIGKILL): no server outlives the process that started
/// it, even when no `Drop` runs. Linux's parent-death signal fires when the *thread* that
/// forked the child ends, so every child is forked by one spawner thread that lives as long
/// as the process.
pub(crate) fn spawn_bound_to_this_process(mut command: Command) -> std::io::Result<Child> {
    static SPAWNER: std::sync::OnceLock<Mutex<std::sync::mpsc::Sender<SpawnRequest>>> =
        std::sync::OnceLock::new();
    let spawner = SPAWNER.get_or_init(|| {
        let (requests, received) = std::sync::mpsc::channel::<SpawnRequest>();
        let started = std::thread::Builder::new()
            .name("zk-spawner".into())
            .spawn(move || {
                for (mut command, reply) in received {
                    let _ = reply.send(command.spawn());
                }
            });
        if let Err(error) = started {
            // Without the thread, requests fail below with this error's kind of message.
            eprintln!("splitbrain-real: cannot start the spawner thread: {error}");
        }
        Mutex::new(requests)
    });
    let parent = std::process::id();
    // SAFETY: the closure runs in the forked child before exec and calls only
    // async-signal-safe functions (prctl, getppid, _exit).
    unsafe {
        command.pre_exec(move || {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            // The parent may have died before the prctl: then nobody would kill us.
            if u32::try_from(libc::getppid()).ok() != Some(parent) {
                libc::_exit(1);
            }
            Ok(())
        });
    }
    let (reply, answer) = std::sync::mpsc::channel();
    let gone = || std::io::Error::other("the spawner thread is gone");
    spawner
        .lock()
        .map_err(|_| gone())?
        .send((command, reply))
        .map_err(|_| gone())?;
    answer.recv().map_err(|_| gone())?
}

/// The servers of one local ZooKeeper and their directory; shared by [`Standalone`] and
/// [`Ensemble`].
#[derive(Debug)]
struct Servers {
    root: PathBuf,
    servers: Vec<Server>,
    /// The proxies between an ensemble's servers (none for a standalone server).
    peers: Option<PeerProxies>,
    /// The servers' running processes, as pauses stop and continue them.
    stops: ServerStops,
    /// Keep the directory on drop: a failure message names a log in it.
    keep: bool,
}

impl Servers {
    /// Writes the configuration of `count` servers (one: standalone), with their data
    /// directories in `parent`, and starts them.
    fn launch(count: u32, settings: Settings, parent: &Path) -> Result<Servers, HarnessError> {
        if !installed() {
            return Err(HarnessError(NOT_INSTALLED.into()));
        }
        let root = temp_dir_in(parent, "splitbrain-zk")?;
        // Servers are added one by one so a failure below still stops those started.
        let mut this = Servers {
            root,
            servers: Vec::new(),
            peers: None,
            stops: ServerStops::new(usize::try_from(count).unwrap_or(usize::MAX)),
            keep: false,
        };
        // All listeners are held until every port is chosen, so no two are the same.
        let mut held = Vec::new();
        let mut port = || -> Result<u16, HarnessError> {
            let (listener, port) = free_port()?;
            held.push(listener);
            Ok(port)
        };
        let mut peers = Vec::new();
        for id in 1..=count {
            let (client, quorum, election) = (port()?, port()?, port()?);
            peers.push((id, client, quorum, election));
        }
        drop(held);
        if count > 1 {
            let ports: Vec<PeerPorts> = (peers.iter())
                .map(|&(_, _, quorum, election)| PeerPorts {
                    quorum: SocketAddr::from(([127, 0, 0, 1], quorum)),
                    election: SocketAddr::from(([127, 0, 0, 1], election)),
                })
                .collect();
            this.peers = Some(PeerProxies::start(&ports)?);
        }
        for &(id, client_port, _, _) in &peers {
            let dir = this.root.join(format!("server-{id}"));
            let data = dir.join("data");
            fs::create_dir_all(&data)
                .map_err(|e| io_error(format!("creating {}", data.display()), e))?;
            let mut config = format!(
                "tickTime={}\ninitLimit={}\nsyncLimit={}\ndataDir={}\nclientPort={client_port}\n\
                 clientPortAddress=127.0.0.1\nadmin.enableServer=false\n4lw.commands.whitelist=*\n",
                settings.tick_time.as_millis(),
                settings.init_limit,
                settings.sync_limit,
                data.display()
            );
            if let Some(max) = settings.max_session_timeout {
                config.push_str(&format!("maxSessionTimeout={}\n", max.as_millis()));
            }
            if let Some(proxies) = &this.peers {
                // Itself at its real ports, each peer at the proxies it reaches it by.
                for &(peer, _, quorum, election) in &peers {
                    let (quorum, election) = match proxies.view(index(id), index(peer)) {
                        Some(view) => (view.quorum.port(), view.election.port()),
                        None => (quorum, election),
                    };
                    config.push_str(&format!("server.{peer}=127.0.0.1:{quorum}:{election}\n"));
                }
                fs::write(data.join("myid"), format!("{id}\n"))
                    .map_err(|e| io_error(format!("writing myid of server {id}"), e))?;
            }
            let server = Server {
                id,
                client_port,
                dir,
                child: None,
                stops: this.stops.clone(),
            };
            fs::write(server.config_path(), config)
                .map_err(|e| io_error(format!("writing {}", server.config_path().display()), e))?;
            this.servers.push(server);
        }
        for server in &mut this.servers {
            server.spawn()?;
        }
        Ok(this)
    }

    /// Launches, then waits with `serving`; a start that failed because a chosen port was
    /// taken meanwhile ("Address already in use" in a log) is retried with new ports.
    fn launch_retrying(
        count: u32,
        settings: Settings,
        parent: &Path,
        serving: impl Fn(&mut Servers) -> Result<(), HarnessError>,
    ) -> Result<Servers, HarnessError> {
        let mut attempt = 1;
        loop {
            let mut servers = Servers::launch(count, settings, parent)?;
            match serving(&mut servers) {
                Ok(()) => return Ok(servers),
                Err(_) if attempt < START_ATTEMPTS && servers.port_taken() => attempt += 1,
                Err(error) => {
                    servers.keep = true;
                    return Err(error);
                }
            }
        }
    }

    /// True when a server's log says one of its ports was taken.
    fn port_taken(&self) -> bool {
        self.servers.iter().any(|s| {
            fs::read_to_string(s.log_path())
                .map(|log| log.contains("Address already in use"))
                .unwrap_or(false)
        })
    }

    fn connect_string(&self) -> String {
        let addrs: Vec<String> = self
            .servers
            .iter()
            .map(|s| s.client_addr().to_string())
            .collect();
        addrs.join(",")
    }

    fn server(&mut self, server: usize) -> Result<&mut Server, HarnessError> {
        let count = self.servers.len();
        self.servers.get_mut(server).ok_or_else(|| {
            HarnessError(format!(
                "no server {server}: this local zookeeper has {count} (0..{count})"
            ))
        })
    }

    fn pids(&self) -> Vec<u32> {
        self.servers.iter().filter_map(Server::pid).collect()
    }

    /// Keeps the directory when `result` is a failure, then returns it.
    fn keep_on_error<T>(&mut self, result: Result<T, HarnessError>) -> Result<T, HarnessError> {
        self.keep |= result.is_err();
        result
    }

    fn stop(&mut self) {
        for server in &mut self.servers {
            server.kill();
        }
    }
}

impl Drop for Servers {
    fn drop(&mut self) {
        self.stop();
        if !self.keep && !std::thread::panicking() {
            let _ = fs::remove_dir_all(&self.root);
        }
    }
}

/// A standalone ZooKeeper server on 127.0.0.1, stopped when dropped.
#[derive(Debug)]
pub struct Standalone {
    servers: Servers,
}

impl Standalone {
    /// Starts one server with [`Settings::default`] and waits until it serves.
    pub fn start() -> Result<Standalone, HarnessError> {
        Standalone::start_with(Settings::default())
    }

    /// Starts one server with `settings` and waits until it serves.
    pub fn start_with(settings: Settings) -> Result<Standalone, HarnessError> {
        Standalone::start_in(settings, &std::env::temp_dir())
    }

    /// Starts one server with `settings`, its data directory (and so its transaction log)
    /// in `parent`, and waits until it serves.
    pub fn start_in(settings: Settings, parent: &Path) -> Result<Standalone, HarnessError> {
        let servers = Servers::launch_retrying(1, settings, parent, |servers| {
            servers.servers[0].wait_serving(STANDALONE_START, |m| m == ServerMode::Standalone)?;
            Ok(())
        })?;
        Ok(Standalone { servers })
    }

    /// `127.0.0.1:PORT`, for a client.
    pub fn connect_string(&self) -> String {
        self.servers.connect_string()
    }

    /// The server's client address.
    pub fn client_addr(&self) -> SocketAddr {
        self.servers.servers[0].client_addr()
    }

    /// The server's log.
    pub fn log_path(&self) -> PathBuf {
        self.servers.servers[0].log_path()
    }

    /// The server's mode, `None` when it does not serve.
    pub fn mode(&self) -> Option<ServerMode> {
        self.servers.servers[0].mode()
    }

    /// The server's PID, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.servers.servers[0].pid()
    }

    /// The directory holding the configuration, data and log.
    pub fn dir(&self) -> &Path {
        &self.servers.root
    }

    /// Kills the server (SIGKILL): a crash. Its data stays for [`Standalone::restart`].
    pub fn kill(&mut self) {
        self.servers.servers[0].kill();
    }

    /// Kills the server (if it runs), keeps it down for `down`, then starts it again on the
    /// same data directory and waits until it serves.
    pub fn restart(&mut self, down: Duration) -> Result<(), HarnessError> {
        let server = &mut self.servers.servers[0];
        server.kill();
        std::thread::sleep(down);
        let result = server
            .spawn()
            .and_then(|()| server.wait_serving(STANDALONE_START, |m| m == ServerMode::Standalone));
        self.servers.keep_on_error(result).map(drop)
    }

    /// Stops the server. Idempotent; also done on drop.
    pub fn stop(&mut self) {
        self.servers.stop();
    }
}

/// The index of the server whose `myid` is `id`.
fn index(id: u32) -> usize {
    usize::try_from(id - 1).unwrap_or(usize::MAX)
}

/// A ZooKeeper ensemble of local servers on 127.0.0.1, stopped when dropped. Servers are
/// numbered from 0 here (their `myid` is one more). Each server reaches its peers through
/// proxies (`real::peers`), so that one can be cut off from them ([`Ensemble::peer_cuts`]).
#[derive(Debug)]
pub struct Ensemble {
    servers: Servers,
}

/// Whether a server in `mode` has rejoined its ensemble: it leads or follows.
pub(crate) fn in_quorum(mode: ServerMode) -> bool {
    matches!(mode, ServerMode::Leader | ServerMode::Follower)
}

impl Ensemble {
    /// Starts `count` servers with [`Settings::default`] and waits until each serves as
    /// leader or follower.
    pub fn start(count: u32) -> Result<Ensemble, HarnessError> {
        Ensemble::start_with(count, Settings::default())
    }

    /// Starts `count` servers with `settings` and waits until each serves.
    pub fn start_with(count: u32, settings: Settings) -> Result<Ensemble, HarnessError> {
        if count < 2 {
            return Err(HarnessError(format!(
                "an ensemble needs at least 2 servers, not {count}: use Standalone"
            )));
        }
        let servers =
            Servers::launch_retrying(count, settings, &std::env::temp_dir(), |servers| {
                let deadline = Instant::now() + ENSEMBLE_START;
                for server in &mut servers.servers {
                    let left = deadline.saturating_duration_since(Instant::now());
                    server.wait_serving(left.max(Duration::from_secs(1)), in_quorum)?;
                }
                Ok(())
            })?;
        Ok(Ensemble { servers })
    }

    /// `127.0.0.1:P1,127.0.0.1:P2,...`, for a client.
    pub fn connect_string(&self) -> String {
        self.servers.connect_string()
    }

    /// The number of servers.
    pub fn len(&self) -> usize {
        self.servers.servers.len()
    }

    /// Always false: an ensemble has at least two servers.
    pub fn is_empty(&self) -> bool {
        self.servers.servers.is_empty()
    }

    /// Server `server`'s client address.
    pub fn client_addr(&self, server: usize) -> Option<SocketAddr> {
        self.servers.servers.get(server).map(Server::client_addr)
    }

    /// Each server's log, by index.
    pub fn log_paths(&self) -> Vec<PathBuf> {
        self.servers.servers.iter().map(Server::log_path).collect()
    }

    /// Server `server`'s mode, `None` when it does not serve (or does not exist).
    pub fn mode(&self, server: usize) -> Option<ServerMode> {
        self.servers.servers.get(server).and_then(Server::mode)
    }

    /// The server that `srvr` says leads, if one does now.
    pub fn leader(&self) -> Option<usize> {
        (0..self.len()).find(|&s| self.mode(s) == Some(ServerMode::Leader))
    }

    /// Waits up to `within` for a leader (after a kill, the election takes a moment).
    pub fn wait_leader(&self, within: Duration) -> Result<usize, HarnessError> {
        let deadline = Instant::now() + within;
        loop {
            if let Some(leader) = self.leader() {
                return Ok(leader);
            }
            if Instant::now() >= deadline {
                return Err(HarnessError(format!(
                    "no leader elected within {} s; logs under {}",
                    within.as_secs(),
                    self.servers.root.display()
                )));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The PIDs of the running servers.
    pub fn pids(&self) -> Vec<u32> {
        self.servers.pids()
    }

    /// What cuts servers off from their peers and heals them.
    pub fn peer_cuts(&self) -> PeerCuts {
        self.servers
            .peers
            .as_ref()
            .expect("an ensemble has peer proxies")
            .cuts()
    }

    /// What stops and continues each server's process (`pause_server`).
    pub(crate) fn server_stops(&self) -> ServerStops {
        self.servers.stops.clone()
    }

    /// Every server's client address, by index.
    pub fn client_addrs(&self) -> Vec<SocketAddr> {
        self.servers
            .servers
            .iter()
            .map(Server::client_addr)
            .collect()
    }

    /// The directory holding every server's configuration, data and log.
    pub fn dir(&self) -> &Path {
        &self.servers.root
    }

    /// Kills server `server` (SIGKILL): a crash. Its data stays for [`Ensemble::restart`].
    pub fn kill(&mut self, server: usize) -> Result<(), HarnessError> {
        self.servers.server(server)?.kill();
        Ok(())
    }

    /// Kills server `server` (if it runs), keeps it down for `down`, then starts it again on
    /// its data directory and waits until it has rejoined (serves as leader or follower).
    pub fn restart(&mut self, server: usize, down: Duration) -> Result<(), HarnessError> {
        self.kill(server)?;
        std::thread::sleep(down);
        self.spawn(server)?;
        let probe = || self.alive(server).map(mode);
        match poll_serving(ENSEMBLE_START, in_quorum, probe)? {
            Some(_) => Ok(()),
            None => Err(self.not_rejoined(server, ENSEMBLE_START)),
        }
    }

    /// Starts server `server` again on its data directory, once [`Ensemble::kill`] killed it.
    pub fn spawn(&mut self, server: usize) -> Result<(), HarnessError> {
        let result = self.servers.server(server)?.spawn();
        self.servers.keep_on_error(result)
    }

    /// Server `server`'s client address, or a failure when its process has exited.
    pub fn alive(&mut self, server: usize) -> Result<SocketAddr, HarnessError> {
        let server = self.servers.server(server)?;
        let result = server.check_alive().map(|()| server.client_addr());
        self.servers.keep_on_error(result)
    }

    /// The failure of server `server`, started again, not rejoining its ensemble (serving as
    /// leader or follower) within `within`; its directory is kept.
    pub fn not_rejoined(&mut self, server: usize, within: Duration) -> HarnessError {
        self.servers.keep = true;
        match self.servers.server(server) {
            Ok(server) => server.not_serving(within),
            Err(no_such_server) => no_such_server,
        }
    }

    /// Stops every server. Idempotent; also done on drop.
    pub fn stop(&mut self) {
        self.servers.stop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn srvr_modes_parse() {
        let answer = "Zookeeper version: 3.8.0\nZxid: 0x0\nMode: follower\nNode count: 5\n";
        assert_eq!(mode_of_srvr(answer), Some(ServerMode::Follower));
        assert_eq!(
            mode_of_srvr("Mode: standalone\n"),
            Some(ServerMode::Standalone)
        );
        let not_serving = "This ZooKeeper instance is not currently serving requests\n";
        assert_eq!(mode_of_srvr(not_serving), None);
    }

    #[test]
    fn free_ports_are_on_loopback_and_nonzero() {
        assert_ne!(free_port().unwrap().1, 0);
    }
}
