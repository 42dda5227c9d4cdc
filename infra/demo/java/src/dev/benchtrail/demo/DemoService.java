package dev.benchtrail.demo;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.instrumentation.annotations.WithSpan;

import java.io.IOException;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryUsage;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;

/**
 * A small pet-clinic-like service for agent-overhead benches. The span structure is made with
 * {@code @WithSpan}: without an agent the annotations are inert, with the OpenTelemetry Java agent
 * every annotated call becomes a real span, so baseline and agent run the same bytecode. Each span
 * carries what a database-backed service's spans carry ({@link #describe}): code location, the
 * database system, statement, table and user, the peer address, the entity's id and the call stack
 * ({@code code.stacktrace}, 13 attributes), and one event with the rows it returned, set through the OpenTelemetry API (a no-op without an
 * agent). The span work per request is thus proportionate to the span count: 3 vs 10. Each request
 * also spends {@code -Ddemo.work.us} of CPU outside any span ({@link #work}), in baseline and agent alike, and each
 * database call may wait {@code -Ddemo.db.us} for its answer ({@link #databaseRoundTrip}).
 *
 * <p>Usage: {@code java -cp ... dev.benchtrail.demo.DemoService [port] [bind-address]}
 */
public final class DemoService {
    private static final Repository REPOSITORY = new Repository();

    static final int FRAMES = 8;

    /** CPU time each request spends outside any span ({@code -Ddemo.work.us}, default 0): what a real
     *  service spends parsing, validating and rendering. The same in baseline and agent. */
    static final long WORK_NANOS = Long.getLong("demo.work.us", 0) * 1_000;

    /** Time each database call waits for its answer ({@code -Ddemo.db.us}, default 0), inside its {@code db.*}
     *  span: the round trip to a database on another host, which the service's thread spends blocked, not
     *  computing. The owner endpoint makes 1 database call, the vets endpoint 5; at 2,000 µs they answer in
     *  about 2 and 10 ms, latencies a load tool with millisecond resolution (JMeter) can tell apart. */
    static final long DB_NANOS = Long.getLong("demo.db.us", 0) * 1_000;

    /** Blocks the calling thread for {@link #DB_NANOS} (the database round trip). */
    static void databaseRoundTrip() {
        long until = System.nanoTime() + DB_NANOS;
        for (long left = DB_NANOS; left > 0; left = until - System.nanoTime()) {
            java.util.concurrent.locks.LockSupport.parkNanos(left);
        }
    }

    /** Spends {@link #WORK_NANOS} of CPU on real work (checksums of the body), returns the checksum. */
    static long work(byte[] body) {
        if (WORK_NANOS == 0) {
            return 0;
        }
        java.util.zip.CRC32 crc = new java.util.zip.CRC32();
        long until = System.nanoTime() + WORK_NANOS;
        do {
            crc.update(body);
        } while (System.nanoTime() < until);
        return crc.getValue();
    }

    /** Where the span's operation was called from (the innermost {@value #FRAMES} frames), as APM agents' span
     *  stack-trace features record it (OpenTelemetry's {@code code.stacktrace}): a walk of the thread's stack
     *  per span, the part of the span work that costs most. */
    private static String stackTrace() {
        StackTraceElement[] frames = Thread.currentThread().getStackTrace();
        StringBuilder out = new StringBuilder();
        for (int i = 2; i < Math.min(frames.length, 2 + FRAMES); i++) {
            out.append("at ").append(frames[i]).append('\n');
        }
        return out.toString();
    }

    /** The attributes and event of the current span; nothing without an agent (the API's span is
     *  then a no-op that does not record). */
    static void describe(String function, String operation, String table, long id, int rows) {
        Span span = Span.current();
        if (!span.isRecording()) {
            return;
        }
        String statement = operation + " * FROM " + table + " WHERE id = ?";
        span.setAttribute("code.namespace", "dev.benchtrail.demo.DemoService");
        span.setAttribute("code.function", function);
        span.setAttribute("thread.name", Thread.currentThread().getName());
        span.setAttribute("thread.id", Thread.currentThread().getId());
        span.setAttribute("db.system", "h2");
        span.setAttribute("db.name", "petclinic");
        span.setAttribute("db.user", "petclinic");
        span.setAttribute("db.operation", operation);
        span.setAttribute("db.sql.table", table);
        span.setAttribute("db.statement", statement);
        span.setAttribute("server.address", "127.0.0.1");
        span.setAttribute("petclinic.entity.id", id);
        span.setAttribute("code.stacktrace", stackTrace());
        span.addEvent("db.rows", Attributes.builder().put("db.statement", statement)
                .put("db.response.returned_rows", rows).build());
    }

    public static void main(String[] args) throws IOException {
        // The JDK HttpServer leaves Nagle's algorithm on unless told otherwise; with keep-alive
        // clients every response then waits for the client's delayed ACK (~40 ms on Linux) and a
        // benchmark measures TCP timers instead of the service. -Dsun.net.httpserver.nodelay=false
        // brings the old behaviour back (to see the validity warning it causes).
        if (System.getProperty("sun.net.httpserver.nodelay") == null) {
            System.setProperty("sun.net.httpserver.nodelay", "true");
        }
        int port = args.length > 0 ? Integer.parseInt(args[0]) : 18081;
        String bind = args.length > 1 ? args[1] : "127.0.0.1";
        int threads = Integer.getInteger("demo.threads", 32);
        HttpServer server = HttpServer.create(new InetSocketAddress(bind, port), 1024);
        server.setExecutor(Executors.newFixedThreadPool(threads));
        server.createContext("/api/gateway/owners/", DemoService::owner);
        server.createContext("/api/vet/vets", DemoService::vets);
        server.createContext("/metrics", DemoService::metrics);
        server.createContext("/health", exchange -> send(exchange, 200, "text/plain", "ok\n"));
        server.start();
        System.out.println("demo service listening on " + bind + ":" + port + " (TCP_NODELAY "
                + System.getProperty("sun.net.httpserver.nodelay") + ")");
    }

    // ~3 spans with an agent: gateway -> owner service -> repository.
    private static void owner(HttpExchange exchange) throws IOException {
        String tail = exchange.getRequestURI().getPath().substring("/api/gateway/owners/".length());
        int id;
        try {
            id = Integer.parseInt(tail);
        } catch (NumberFormatException e) {
            send(exchange, 404, "text/plain", "unknown owner\n");
            return;
        }
        send(exchange, 200, "application/json", Gateway.owner(id));
    }

    // 10 spans with an agent: the list, the count query, and per vet (4) the vet and its specialties.
    private static void vets(HttpExchange exchange) throws IOException {
        send(exchange, 200, "application/json", VetService.allVets());
    }

    private static void metrics(HttpExchange exchange) throws IOException {
        send(exchange, 200, "text/plain; version=0.0.4; charset=utf-8", Metrics.render());
    }

    private static void send(HttpExchange exchange, int status, String type, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", type);
        if (status == 200 && !type.startsWith("text/plain")) {   // the endpoints' own work, not /metrics or /health
            exchange.getResponseHeaders().set("X-Checksum", Long.toHexString(work(bytes)));
        }
        exchange.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(bytes);
        }
    }

    static final class Gateway {
        @WithSpan("gateway.owner")
        static String owner(int id) {
            describe("gateway.owner", "GET", "owners", id, 1);
            return OwnerService.find(id);
        }
    }

    static final class OwnerService {
        @WithSpan("owners.find")
        static String find(int id) {
            describe("owners.find", "SELECT", "owners", id, 1);
            String[] row = REPOSITORY.ownerRow(id);
            return "{\"id\":" + id + ",\"firstName\":\"" + row[0] + "\",\"lastName\":\"" + row[1]
                    + "\",\"city\":\"" + row[2] + "\",\"pets\":[\"Leo\",\"Basil\"]}";
        }
    }

    static final class VetService {
        private static final String[] NAMES = {"Carter", "Leary", "Douglas", "Ortega"};

        @WithSpan("vets.list")
        static String allVets() {
            describe("vets.list", "SELECT", "vets", 0, NAMES.length);
            List<String> parts = new ArrayList<>();
            int count = REPOSITORY.vetCount(NAMES.length);
            for (int i = 0; i < count; i++) {
                parts.add(vet(i));
            }
            return "[" + String.join(",", parts) + "]";
        }

        @WithSpan("vets.vet")
        static String vet(int i) {
            describe("vets.vet", "SELECT", "vets", i + 1, 1);
            return "{\"id\":" + (i + 1) + ",\"lastName\":\"" + NAMES[i] + "\",\"specialties\":["
                    + REPOSITORY.specialties(i) + "]}";
        }
    }

    static final class Repository {
        private static final String[][] OWNERS = {
            {"George", "Franklin", "Madison"}, {"Betty", "Davis", "Sun Prairie"},
            {"Eduardo", "Rodriquez", "McFarland"}, {"Harold", "Davis", "Windsor"},
        };
        private static final String[] SPECIALTIES = {"\"radiology\"", "\"surgery\"", "\"dentistry\"", ""};

        @WithSpan("db.owner")
        String[] ownerRow(int id) {
            describe("db.owner", "SELECT", "owners", id, 1);
            databaseRoundTrip();
            return OWNERS[Math.floorMod(id, OWNERS.length)];
        }

        @WithSpan("db.vets.count")
        int vetCount(int known) {
            describe("db.vets.count", "SELECT", "vets", 0, 1);
            databaseRoundTrip();
            return known;
        }

        @WithSpan("db.specialties")
        String specialties(int i) {
            describe("db.specialties", "SELECT", "vet_specialties", i + 1, 1);
            databaseRoundTrip();
            return SPECIALTIES[i];
        }
    }

    /** Prometheus text exposition of the few numbers Benchtrail's resource sampling reads. */
    static final class Metrics {
        static String render() {
            StringBuilder out = new StringBuilder();
            MemoryUsage heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage();
            MemoryUsage nonHeap = ManagementFactory.getMemoryMXBean().getNonHeapMemoryUsage();
            out.append("# HELP jvm_memory_used_bytes Used bytes of a given JVM memory area.\n");
            out.append("# TYPE jvm_memory_used_bytes gauge\n");
            out.append("jvm_memory_used_bytes{area=\"heap\"} ").append(heap.getUsed()).append('\n');
            out.append("jvm_memory_used_bytes{area=\"nonheap\"} ").append(nonHeap.getUsed()).append('\n');
            java.lang.management.OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
            if (os instanceof com.sun.management.OperatingSystemMXBean sun) {
                out.append("# HELP process_cpu_seconds_total Total user and system CPU time spent in seconds.\n");
                out.append("# TYPE process_cpu_seconds_total counter\n");
                out.append("process_cpu_seconds_total ").append(sun.getProcessCpuTime() / 1e9).append('\n');
            }
            long rss = residentBytes();
            if (rss >= 0) {
                out.append("# HELP process_resident_memory_bytes Resident memory size in bytes.\n");
                out.append("# TYPE process_resident_memory_bytes gauge\n");
                out.append("process_resident_memory_bytes ").append(rss).append('\n');
            }
            return out.toString();
        }

        private static long residentBytes() {
            try {
                for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                    if (line.startsWith("VmRSS:")) {
                        String kb = line.substring(6).trim().split("\\s+")[0];
                        return Long.parseLong(kb) * 1024L;
                    }
                }
            } catch (IOException | RuntimeException e) {
                return -1;
            }
            return -1;
        }
    }
}
