// The Java client (kafka-clients) as the other side of the wire for kafkawire's interop tests.
//
// One file, several modes (first argument); every mode takes --bootstrap and --topic. Output on stdout is
// one JSON object per line; the client's own log goes to stderr. Byte strings are lowercase hex, null is
// JSON null.
//
//   produce  --codec none|gzip|snappy|lz4|zstd [--transactional-id ID]
//            Reads records from stdin, one per line, tab-separated:
//              partition  timestamp(-1: now)  key(hex or -)  value(hex or -)  headers
//            headers: "" or comma-separated keyhex=valuehex (value "-" is null), duplicates allowed.
//            Lines "#begin", "#commit", "#abort" (with --transactional-id) delimit transactions.
//            Idempotent, acks=all. Prints {"i":n,"p":..,"o":..,"ts":..} per acknowledged record.
//   consume  --isolation read_uncommitted|read_committed [--digest]
//            Assigns every partition, reads from the beginning to the end offsets (the last stable
//            offset for read_committed), prints each record, or with --digest only
//            {"records":..,"bytes":..,"xor":..,"wall_ns":..,"cpu_ns":..} after touching every key, value
//            and header (the benchmarks' Java consumer; also --passes, --fetch-max-bytes,
//            --partition-max-bytes, --max-poll-records).
//   group    --group G [--commit sync] [--assignor range|roundrobin|sticky|cooperative-sticky]
//            Subscribes with the classic protocol and the assignor (default range); prints
//            {"event":"assigned"|"revoked","partitions":[..]} ("added" too for assigned) and each record as in consume (plus
//            "event":"record"). Commits synchronously after each poll. Stops (commit, leave) when stdin
//            says "exit" or closes; prints {"event":"closed"}.
//   ready: every mode prints {"event":"started"} once its client exists.

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public final class KafkaPeer {
    private static final PrintStream OUT = new PrintStream(System.out, false, StandardCharsets.UTF_8);
    private static final char[] HEX = "0123456789abcdef".toCharArray();

    public static void main(String[] argv) throws Exception {
        if (argv.length < 1) {
            throw new IllegalArgumentException("usage: KafkaPeer produce|consume|group --bootstrap B --topic T ...");
        }
        Map<String, String> opts = new HashMap<>();
        for (int i = 1; i < argv.length; i++) {
            String a = argv[i];
            if (!a.startsWith("--")) throw new IllegalArgumentException("unexpected argument " + a);
            boolean flag = i + 1 >= argv.length || argv[i + 1].startsWith("--");
            opts.put(a.substring(2), flag ? "true" : argv[++i]);
        }
        switch (argv[0]) {
            case "produce": produce(opts); break;
            case "consume": consume(opts); break;
            case "group": group(opts); break;
            default: throw new IllegalArgumentException("unknown mode " + argv[0]);
        }
        OUT.flush();
    }

    // ------------------------------------------------------------------------------------ helpers
    static String hex(byte[] b) {
        if (b == null) return "null";
        char[] c = new char[b.length * 2 + 2];
        c[0] = '"';
        for (int i = 0; i < b.length; i++) {
            c[1 + 2 * i] = HEX[(b[i] >> 4) & 15];
            c[2 + 2 * i] = HEX[b[i] & 15];
        }
        c[c.length - 1] = '"';
        return new String(c);
    }

    static byte[] unhex(String s) {
        if (s.equals("-")) return null;
        byte[] b = new byte[s.length() / 2];
        for (int i = 0; i < b.length; i++) b[i] = (byte) Integer.parseInt(s.substring(2 * i, 2 * i + 2), 16);
        return b;
    }

    static String required(Map<String, String> opts, String name) {
        String v = opts.get(name);
        if (v == null) throw new IllegalArgumentException("--" + name + " is required");
        return v;
    }

    static String recordJson(ConsumerRecord<byte[], byte[]> r) {
        StringBuilder sb = new StringBuilder(128);
        sb.append("{\"p\":").append(r.partition())
          .append(",\"o\":").append(r.offset())
          .append(",\"ts\":").append(r.timestamp())
          .append(",\"tt\":").append(r.timestampType().id)
          .append(",\"k\":").append(hex(r.key()))
          .append(",\"v\":").append(hex(r.value()))
          .append(",\"h\":[");
        boolean first = true;
        for (Header h : r.headers()) {
            if (!first) sb.append(',');
            first = false;
            // The header key as hex of its UTF-8 bytes: no JSON escaping to get wrong.
            sb.append('[').append(hex(h.key().getBytes(StandardCharsets.UTF_8))).append(',')
              .append(hex(h.value())).append(']');
        }
        return sb.append("]}").toString();
    }

    static Properties common(Map<String, String> opts) {
        Properties p = new Properties();
        p.put("bootstrap.servers", required(opts, "bootstrap"));
        p.put("client.id", "kafkawire-java-peer");
        return p;
    }

    // ------------------------------------------------------------------------------------ produce
    static void produce(Map<String, String> opts) throws Exception {
        String topic = required(opts, "topic");
        Properties p = common(opts);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, opts.getOrDefault("codec", "none"));
        p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        String txid = opts.get("transactional-id");
        if (txid != null) p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, txid);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
            if (txid != null) producer.initTransactions();
            OUT.println("{\"event\":\"started\"}");
            List<Future<RecordMetadata>> pending = new ArrayList<>();
            List<Integer> indexes = new ArrayList<>();
            int n = 0;
            String line;
            while ((line = in.readLine()) != null) {
                if (line.isEmpty()) continue;
                if (line.startsWith("#")) {
                    // Flush before ending a transaction: every record then has its offset, aborted ones too.
                    producer.flush();
                    switch (line) {
                        case "#begin": producer.beginTransaction(); break;
                        case "#commit": producer.commitTransaction(); break;
                        case "#abort": producer.abortTransaction(); break;
                        default: throw new IllegalArgumentException("unknown control line " + line);
                    }
                    continue;
                }
                String[] f = line.split("\t", -1);
                int partition = Integer.parseInt(f[0]);
                long ts = Long.parseLong(f[1]);
                List<Header> headers = new ArrayList<>();
                if (f.length > 4 && !f[4].isEmpty()) {
                    for (String h : f[4].split(",", -1)) {
                        int eq = h.indexOf('=');
                        headers.add(new RecordHeader(
                            new String(unhex(h.substring(0, eq)), StandardCharsets.UTF_8), unhex(h.substring(eq + 1))));
                    }
                }
                ProducerRecord<byte[], byte[]> rec = new ProducerRecord<>(
                    topic, partition < 0 ? null : partition, ts < 0 ? null : ts, unhex(f[2]), unhex(f[3]), headers);
                pending.add(producer.send(rec));
                indexes.add(n++);
            }
            producer.flush();
            for (int i = 0; i < pending.size(); i++) {
                RecordMetadata md = pending.get(i).get();
                OUT.println("{\"i\":" + indexes.get(i) + ",\"p\":" + md.partition() + ",\"o\":" + md.offset()
                    + ",\"ts\":" + md.timestamp() + "}");
            }
        }
    }

    // ------------------------------------------------------------------------------------ consume
    static Properties consumerProps(Map<String, String> opts) {
        Properties p = common(opts);
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, opts.getOrDefault("isolation", "read_uncommitted"));
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        if (opts.containsKey("fetch-max-bytes")) p.put(ConsumerConfig.FETCH_MAX_BYTES_CONFIG, opts.get("fetch-max-bytes"));
        if (opts.containsKey("partition-max-bytes")) {
            p.put(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, opts.get("partition-max-bytes"));
        }
        if (opts.containsKey("max-poll-records")) p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, opts.get("max-poll-records"));
        return p;
    }

    static long processCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
            .getProcessCpuTime();
    }

    static void consume(Map<String, String> opts) {
        // --passes N (digest mode): read the topic N times in this JVM, a new consumer each time, one
        // digest line per pass; the benchmark takes the last (warm: classes loaded, JIT compiled).
        int passes = opts.containsKey("digest") ? Integer.parseInt(opts.getOrDefault("passes", "1")) : 1;
        for (int i = 0; i < passes; i++) consumePass(opts);
    }

    static void consumePass(Map<String, String> opts) {
        String topic = required(opts, "topic");
        boolean digest = opts.containsKey("digest");
        // The timed region (digest mode) starts before the consumer exists, as the Python benchmarks' do:
        // connection and metadata are part of reading a topic. CPU is the whole JVM's (JIT and GC too).
        long started = System.nanoTime();
        long cpuStarted = processCpuNanos();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(consumerProps(opts))) {
            List<TopicPartition> tps = new ArrayList<>();
            for (PartitionInfo pi : consumer.partitionsFor(topic)) tps.add(new TopicPartition(topic, pi.partition()));
            consumer.assign(tps);
            consumer.seekToBeginning(tps);
            // endOffsets follows isolation.level: the last stable offset under read_committed.
            Map<TopicPartition, Long> end = consumer.endOffsets(tps);
            if (!digest) OUT.println("{\"event\":\"started\"}");
            long records = 0, bytes = 0, xor = 0;
            while (true) {
                boolean done = true;
                for (TopicPartition tp : tps) if (consumer.position(tp) < end.get(tp)) done = false;
                if (done) break;
                ConsumerRecords<byte[], byte[]> batch = consumer.poll(Duration.ofMillis(500));
                for (ConsumerRecord<byte[], byte[]> r : batch) {
                    if (digest) {
                        records++;
                        byte[] k = r.key(), v = r.value();
                        if (k != null) { bytes += k.length; if (k.length > 0) xor ^= k[k.length - 1]; }
                        if (v != null) { bytes += v.length; if (v.length > 0) xor ^= v[v.length - 1]; }
                        for (Header h : r.headers()) { bytes += h.key().length(); if (h.value() != null) bytes += h.value().length; }
                        xor ^= r.offset() ^ r.timestamp();
                    } else {
                        OUT.println(recordJson(r));
                    }
                }
            }
            if (digest) {
                long ns = System.nanoTime() - started;
                long cpu = processCpuNanos() - cpuStarted;
                OUT.println("{\"records\":" + records + ",\"bytes\":" + bytes + ",\"xor\":" + xor
                    + ",\"wall_ns\":" + ns + ",\"cpu_ns\":" + cpu + "}");
            }
        }
    }

    // ------------------------------------------------------------------------------------ group
    static String partitionsJson(Collection<TopicPartition> tps) {
        StringBuilder sb = new StringBuilder("[");
        List<Integer> ps = new ArrayList<>();
        for (TopicPartition tp : tps) ps.add(tp.partition());
        ps.sort(null);
        for (int i = 0; i < ps.size(); i++) sb.append(i == 0 ? "" : ",").append(ps.get(i));
        return sb.append(']').toString();
    }

    static void group(Map<String, String> opts) throws Exception {
        String topic = required(opts, "topic");
        Properties p = consumerProps(opts);
        p.put(ConsumerConfig.GROUP_ID_CONFIG, required(opts, "group"));
        p.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "classic");
        // --assignor range|roundrobin|sticky|cooperative-sticky (default range)
        String assignor = opts.getOrDefault("assignor", "range");
        p.put(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, "org.apache.kafka.clients.consumer." + Map.of(
            "range", "RangeAssignor", "roundrobin", "RoundRobinAssignor", "sticky", "StickyAssignor",
            "cooperative-sticky", "CooperativeStickyAssignor").get(assignor));
        p.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, opts.getOrDefault("session-timeout-ms", "10000"));
        p.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, "1000");
        AtomicBoolean stop = new AtomicBoolean(false);
        KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p);
        Thread reader = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
                String line;
                while ((line = in.readLine()) != null && !line.trim().equals("exit")) { }
            } catch (Exception e) { /* stdin gone: stop */ }
            stop.set(true);
            consumer.wakeup();
        }, "stdin");
        reader.setDaemon(true);
        try {
            consumer.subscribe(List.of(topic), new ConsumerRebalanceListener() {
                @Override public void onPartitionsRevoked(Collection<TopicPartition> tps) {
                    consumer.commitSync();
                    OUT.println("{\"event\":\"revoked\",\"partitions\":" + partitionsJson(tps) + "}");
                    OUT.flush();
                }
                @Override public void onPartitionsAssigned(Collection<TopicPartition> tps) {
                    OUT.println("{\"event\":\"assigned\",\"partitions\":" + partitionsJson(consumer.assignment())
                        + ",\"added\":" + partitionsJson(tps) + "}");
                    OUT.flush();
                }
            });
            OUT.println("{\"event\":\"started\"}");
            OUT.flush();
            reader.start();
            while (!stop.get()) {
                try {
                    ConsumerRecords<byte[], byte[]> batch = consumer.poll(Duration.ofMillis(200));
                    for (ConsumerRecord<byte[], byte[]> r : batch) {
                        String j = recordJson(r);
                        OUT.println("{\"event\":\"record\"," + j.substring(1));
                    }
                    OUT.flush();
                    if (!batch.isEmpty()) consumer.commitSync();
                } catch (WakeupException e) {
                    break;
                }
            }
            // A wakeup that arrived outside poll() is consumed by the next blocking call: at most one.
            try {
                consumer.commitSync();
            } catch (WakeupException e) {
                consumer.commitSync();
            }
        } finally {
            consumer.close();  // leaves the group (LeaveGroup): the others rebalance at once
        }
        OUT.println("{\"event\":\"closed\"}");
        OUT.flush();
    }
}
