// One Java consumer-group member for the group chaos tests (tests/faults/test_group_chaos.py): the Java
// twin of tests/faults/group_member.py, writing the same log format (see that file's docstring).
//
//   GroupMember --bootstrap B --topic T --group G --log PATH [--name N] [--protocol classic|consumer]
//               [--assignor cooperative-sticky|sticky|range|roundrobin] [--rate N] [--session-ms MS]
//               [--heartbeat-ms MS] [--max-poll-records N]
//
// At-least-once: enable.auto.commit=false; after each poll the records are logged (flushed), "processed"
// (len/rate seconds), then every processed offset not committed yet is committed with commitSync(offsets)
// (and in onPartitionsRevoked, for those partitions). A line "exit" on stdin, or stdin closing,
// closes the consumer (leaving the group) and exits; "fast" ends the pacing; "hold" stops it for good right
// after it next logs a poll's records, before committing them, with an H line (the test SIGKILLs it there). Values are 8-byte big-endian sequence numbers.

import java.io.BufferedReader;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

public final class GroupMember {
    private static Writer log;
    private static volatile double rate;
    private static volatile boolean hold;
    private static final TreeSet<Integer> owned = new TreeSet<>();
    // Offsets after every record processed and not committed yet.
    private static final Map<TopicPartition, OffsetAndMetadata> pending = new HashMap<>();
    private static KafkaConsumer<byte[], byte[]> consumer;

    // Commits what is pending (of ``only``, when given); logs C, or F with the exception's class.
    static void commit(Collection<TopicPartition> only) throws Exception {
        Map<TopicPartition, OffsetAndMetadata> todo = new HashMap<>();
        for (Map.Entry<TopicPartition, OffsetAndMetadata> e : pending.entrySet()) {
            if (only == null || only.contains(e.getKey())) todo.put(e.getKey(), e.getValue());
        }
        if (todo.isEmpty()) return;
        try {
            try {
                consumer.commitSync(todo);
            } catch (WakeupException e) {
                // "exit" arrived during the commit: the wakeup is spent, so the second try completes.
                consumer.commitSync(todo);
            }
        } catch (KafkaException e) {
            // Not committed: these records may come again to the next owner (at least once).
            write("F " + System.currentTimeMillis() + " " + offsets(todo) + " " + e.getClass().getSimpleName());
            return;
        }
        write("C " + System.currentTimeMillis() + " " + offsets(todo));
        for (Map.Entry<TopicPartition, OffsetAndMetadata> e : todo.entrySet()) {
            if (e.getValue().equals(pending.get(e.getKey()))) pending.remove(e.getKey());
        }
    }

    static synchronized void write(String line) throws Exception {
        log.write(line);
        log.write('\n');
        log.flush();
    }

    static String ints(Collection<Integer> xs) {
        if (xs.isEmpty()) return "-";
        StringBuilder sb = new StringBuilder();
        for (Integer x : xs) sb.append(sb.length() == 0 ? "" : ",").append(x);
        return sb.toString();
    }

    static void event(String kind, Collection<TopicPartition> tps) {
        TreeSet<Integer> ps = new TreeSet<>();
        for (TopicPartition tp : tps) ps.add(tp.partition());
        if (kind.equals("A")) owned.addAll(ps); else owned.removeAll(ps);
        try {
            write(kind + " " + System.currentTimeMillis() + " " + ints(ps) + " | " + ints(owned));
        } catch (Exception e) {
            throw new RuntimeException(e);
        }
    }

    static String offsets(Map<TopicPartition, OffsetAndMetadata> todo) {
        StringBuilder sb = new StringBuilder();
        TreeMap<Integer, Long> sorted = new TreeMap<>();
        for (Map.Entry<TopicPartition, OffsetAndMetadata> e : todo.entrySet()) {
            sorted.put(e.getKey().partition(), e.getValue().offset());
        }
        for (Map.Entry<Integer, Long> e : sorted.entrySet()) {
            sb.append(sb.length() == 0 ? "" : ",").append(e.getKey()).append(':').append(e.getValue());
        }
        return sb.toString();
    }

    public static void main(String[] argv) throws Exception {
        Map<String, String> opts = new HashMap<>();
        for (int i = 0; i < argv.length; i += 2) opts.put(argv[i].substring(2), argv[i + 1]);
        String topic = opts.get("topic");
        rate = Double.parseDouble(opts.getOrDefault("rate", "0"));
        log = new OutputStreamWriter(new FileOutputStream(opts.get("log"), true), StandardCharsets.UTF_8);

        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, opts.get("bootstrap"));
        p.put(ConsumerConfig.GROUP_ID_CONFIG, opts.get("group"));
        p.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, opts.getOrDefault("protocol", "classic"));
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        // Small polls, as the kafkawire member's small fetches: one poll's processing time stays short.
        p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, opts.getOrDefault("max-poll-records", "500"));
        if (opts.getOrDefault("protocol", "classic").equals("classic")) {
            String assignor = opts.getOrDefault("assignor", "cooperative-sticky");
            p.put(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, "org.apache.kafka.clients.consumer." + Map.of(
                "range", "RangeAssignor", "roundrobin", "RoundRobinAssignor", "sticky", "StickyAssignor",
                "cooperative-sticky", "CooperativeStickyAssignor").get(assignor));
            int session = Integer.parseInt(opts.getOrDefault("session-ms", "6000"));
            p.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, String.valueOf(session));
            p.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, opts.getOrDefault("heartbeat-ms", "500"));
            // The rebalance timeout of the classic protocol (the kafkawire member's rebalance_timeout_ms).
            p.put(ConsumerConfig.MAX_POLL_INTERVAL_MS_CONFIG, String.valueOf(Math.max(10_000, 2 * session)));
        }

        AtomicBoolean stop = new AtomicBoolean(false);
        consumer = new KafkaConsumer<>(p);
        Thread reader = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
                String line;
                while ((line = in.readLine()) != null && !line.trim().equals("exit")) {
                    if (line.trim().equals("fast")) rate = 0;
                    if (line.trim().equals("hold")) hold = true;
                }
            } catch (Exception e) { /* stdin gone: stop */ }
            stop.set(true);
            consumer.wakeup();
        }, "stdin");
        reader.setDaemon(true);
        consumer.subscribe(List.of(topic), new ConsumerRebalanceListener() {
            // As Java's documentation advises: commit what was processed of the partitions given up.
            @Override public void onPartitionsRevoked(Collection<TopicPartition> tps) {
                try {
                    commit(tps);
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
                for (TopicPartition tp : tps) pending.remove(tp);
                event("V", tps);
            }
            @Override public void onPartitionsAssigned(Collection<TopicPartition> tps) { event("A", tps); }
            @Override public void onPartitionsLost(Collection<TopicPartition> tps) {
                for (TopicPartition tp : tps) pending.remove(tp);
                event("L", tps);
            }
        });
        write("S " + System.currentTimeMillis() + " " + opts.getOrDefault("name", "java"));
        reader.start();
        try {
            while (!stop.get()) {
                ConsumerRecords<byte[], byte[]> batch;
                try {
                    batch = consumer.poll(Duration.ofMillis(200));
                } catch (WakeupException e) {
                    break;
                }
                long now = System.currentTimeMillis();
                StringBuilder out = new StringBuilder();
                for (TopicPartition tp : batch.partitions()) {
                    List<ConsumerRecord<byte[], byte[]>> rs = batch.records(tp);
                    out.append("R ").append(now).append(' ').append(tp.partition()).append(' ')
                        .append(rs.get(0).offset()).append(' ').append(rs.get(rs.size() - 1).offset()).append(' ');
                    for (int i = 0; i < rs.size(); i++) {
                        out.append(i == 0 ? "" : ",").append(ByteBuffer.wrap(rs.get(i).value()).getLong());
                    }
                    out.append('\n');
                    pending.put(tp, new OffsetAndMetadata(rs.get(rs.size() - 1).offset() + 1));
                }
                synchronized (GroupMember.class) {
                    log.write(out.toString());
                    log.flush();
                }
                if (hold && batch.count() > 0) {
                    write("H " + System.currentTimeMillis());
                    Thread.sleep(Long.MAX_VALUE);  // processed, never to be committed: the test SIGKILLs us here
                }
                if (rate > 0 && batch.count() > 0) Thread.sleep((long) (batch.count() * 1000.0 / rate));
                commit(null);
            }
        } finally {
            consumer.close();  // leaves the group: the others rebalance at once
            write("E " + System.currentTimeMillis());
            log.close();
        }
    }
}
