// One Apache Curator 5 contender of a splitbrain interop run (real/src/curator.rs compiles it
// with plain javac against Debian's Curator jars and runs it as its own process).
//
// Usage: CuratorContender <connect> <session-timeout-ms> <lock-path> <acquisitions>
//                         <hold-min-ms> <hold-max-ms> <think-min-ms> <think-max-ms>
//                         <seed> <resource-port> <slot>
//
// It connects, prints "ready", waits for a line "go" on stdin, then runs <acquisitions>
// cycles of InterProcessMutex on <lock-path>: acquire, read the shared fenced resource with
// the lock node's czxid as the token, hold, write the value read plus one, release, think.
// Every call and outcome is one line on stdout, "<System.nanoTime()> <word> [args]":
//   ready | acquire | acquired <czxid> <node> | release | released | done
// System.nanoTime() reads CLOCK_MONOTONIC on Linux, the clock the Rust harness stamps its
// own events with, so the harness merges both into one trace. The resource is served by
// the harness on 127.0.0.1:<resource-port>, one request a line:
//   read <slot> <token>          -> "ok <value>" | "stale"
//   write <slot> <token> <value> -> "ok" | "stale"
// Any failure: a message on stderr and exit status 1.

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.ExponentialBackoffRetry;

public final class CuratorContender {
    /** InterProcessMutex with its current lock node made visible (getLockPath is protected). */
    static final class Mutex extends InterProcessMutex {
        Mutex(CuratorFramework client, String path) {
            super(client, path);
        }

        String node() {
            return getLockPath();
        }
    }

    /** The harness's fenced resource. */
    static final class Resource implements AutoCloseable {
        private final Socket socket;
        private final BufferedReader in;
        private final PrintWriter out;
        private final int slot;

        Resource(int port, int slot) throws Exception {
            this.socket = new Socket("127.0.0.1", port);
            this.socket.setTcpNoDelay(true);
            this.in = new BufferedReader(
                new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
            this.out = new PrintWriter(socket.getOutputStream(), true, StandardCharsets.UTF_8);
            this.slot = slot;
        }

        /** The counter's value, or -1 when the token is stale. */
        long read(long token) throws Exception {
            String answer = ask("read " + slot + " " + token);
            return answer.startsWith("ok ") ? Long.parseLong(answer.substring(3)) : -1;
        }

        void write(long token, long value) throws Exception {
            ask("write " + slot + " " + token + " " + value);
        }

        private String ask(String request) throws Exception {
            out.println(request);
            String answer = in.readLine();
            if (answer == null) {
                throw new IllegalStateException("the resource closed the connection");
            }
            return answer;
        }

        @Override
        public void close() throws Exception {
            socket.close();
        }
    }

    private static final PrintStream LOG = System.out;

    private static void log(long nanos, String line) {
        LOG.println(nanos + " " + line);
        LOG.flush();
    }

    private static void log(String line) {
        log(System.nanoTime(), line);
    }

    private static long draw(SplittableRandom random, long min, long max) {
        return max > min ? random.nextLong(min, max + 1) : min;
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 11) {
            System.err.println("usage: CuratorContender <connect> <session-timeout-ms> <lock-path>"
                + " <acquisitions> <hold-min-ms> <hold-max-ms> <think-min-ms> <think-max-ms>"
                + " <seed> <resource-port> <slot>");
            System.exit(2);
        }
        String connect = args[0];
        int sessionTimeout = Integer.parseInt(args[1]);
        String path = args[2];
        int acquisitions = Integer.parseInt(args[3]);
        long holdMin = Long.parseLong(args[4]);
        long holdMax = Long.parseLong(args[5]);
        long thinkMin = Long.parseLong(args[6]);
        long thinkMax = Long.parseLong(args[7]);
        long seed = Long.parseLong(args[8]);
        int port = Integer.parseInt(args[9]);
        int slot = Integer.parseInt(args[10]);
        SplittableRandom random = new SplittableRandom(seed * 31 + slot);
        try (CuratorFramework client = CuratorFrameworkFactory.builder()
                .connectString(connect)
                .sessionTimeoutMs(sessionTimeout)
                .connectionTimeoutMs(Math.max(sessionTimeout, 1000))
                .retryPolicy(new ExponentialBackoffRetry(100, 10))
                .build();
             Resource resource = new Resource(port, slot)) {
            client.start();
            if (!client.blockUntilConnected(Math.max(sessionTimeout, 10_000), TimeUnit.MILLISECONDS)) {
                throw new IllegalStateException("no session with " + connect);
            }
            Mutex mutex = new Mutex(client, path);
            log("ready");
            BufferedReader stdin = new BufferedReader(
                new InputStreamReader(System.in, StandardCharsets.UTF_8));
            if (!"go".equals(stdin.readLine())) {
                throw new IllegalStateException("expected \"go\" on stdin");
            }
            for (int cycle = 0; cycle < acquisitions; cycle++) {
                log("acquire");
                mutex.acquire();
                long granted = System.nanoTime();
                String node = mutex.node();
                long token = client.checkExists().forPath(node).getCzxid();
                log(granted, "acquired " + token + " " + node);
                long value = resource.read(token);
                Thread.sleep(draw(random, holdMin, holdMax));
                if (value >= 0) {
                    resource.write(token, value + 1);
                }
                log("release");
                mutex.release();
                log("released");
                Thread.sleep(draw(random, thinkMin, thinkMax));
            }
            log("done");
        } catch (Exception e) {
            System.err.println("curator contender " + slot + ": " + e);
            System.exit(1);
        }
    }
}
