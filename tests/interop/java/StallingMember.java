// A Java consumer-group member that can be told to stall between a poll and its commit, for
// tests/interop/test_java_heartbeat.py (KIP-62: the Java client's background heartbeat thread and
// max.poll.interval.ms, compared with kafkawire's).
//
//   StallingMember BOOTSTRAP TOPIC GROUP PROTOCOL(classic|consumer) SESSION_MS MAX_POLL_INTERVAL_MS
//
// Prints one JSON line per event: {"event":"poll","generation":G,"assignment":[p,...],"t":MS} after every
// poll, {"event":"record","v":"hex"} per record committed (only after commitSync succeeded),
// {"event":"stalled","ms":N}, {"event":"commit_failed","error":"..."}. Reads stdin: "stall N" makes the next
// batch stall N ms before its commit; "exit" (or stdin closing) closes the consumer.

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.TreeSet;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.kafka.clients.consumer.CommitFailedException;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

public class StallingMember {
    static String hex(byte[] b) {
        StringBuilder sb = new StringBuilder();
        for (byte x : b) sb.append(String.format("%02x", x));
        return sb.toString();
    }

    public static void main(String[] args) throws Exception {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        p.put(ConsumerConfig.GROUP_ID_CONFIG, args[2]);
        p.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, args[3]);
        if (args[3].equals("classic")) {
            p.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, args[4]);
            p.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, "2000");
        }
        p.put(ConsumerConfig.MAX_POLL_INTERVAL_MS_CONFIG, args[5]);
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, "4096");
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        LinkedBlockingQueue<Long> stalls = new LinkedBlockingQueue<>();
        AtomicBoolean stop = new AtomicBoolean(false);
        KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p);
        Thread reader = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
                String line;
                while ((line = in.readLine()) != null && !line.trim().equals("exit")) {
                    if (line.startsWith("stall ")) stalls.add(Long.parseLong(line.substring(6).trim()));
                }
            } catch (Exception e) { /* stdin gone: stop */ }
            stop.set(true);
            consumer.wakeup();
        }, "stdin");
        reader.setDaemon(true);
        reader.start();
        try {
            consumer.subscribe(List.of(args[1]));
            while (!stop.get()) {
                ConsumerRecords<byte[], byte[]> batch;
                try {
                    batch = consumer.poll(Duration.ofMillis(500));
                } catch (WakeupException e) {
                    break;
                }
                TreeSet<Integer> parts = new TreeSet<>();
                for (TopicPartition tp : consumer.assignment()) parts.add(tp.partition());
                System.out.println("{\"event\":\"poll\",\"generation\":" + consumer.groupMetadata().generationId()
                    + ",\"assignment\":" + parts + ",\"t\":" + System.currentTimeMillis() + "}");
                if (batch.isEmpty()) continue;
                Long stall = stalls.poll();
                if (stall != null) {
                    Thread.sleep(stall);
                    System.out.println("{\"event\":\"stalled\",\"ms\":" + stall + "}");
                }
                List<String> values = new ArrayList<>();
                for (ConsumerRecord<byte[], byte[]> r : batch) values.add(hex(r.value()));
                try {
                    consumer.commitSync();
                } catch (CommitFailedException | WakeupException e) {
                    System.out.println("{\"event\":\"commit_failed\",\"error\":\"" + e.getClass().getSimpleName() + "\"}");
                    continue;  // rolled back: these records count as not read
                } catch (KafkaException e) {
                    System.out.println("{\"event\":\"commit_failed\",\"error\":\"" + e.getClass().getSimpleName() + "\"}");
                    continue;
                }
                for (String v : values) System.out.println("{\"event\":\"record\",\"v\":\"" + v + "\"}");
                System.out.flush();
            }
        } finally {
            consumer.close();
        }
    }
}
