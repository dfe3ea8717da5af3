// Java's KafkaConsumer in the KIP-320 truncation scenario of tests/client/test_log_truncation_consumer.py:
// the reference kafkawire's Consumer is compared with.
//
//   TruncationReader BOOTSTRAP TOPIC RESET(earliest|none) N
// Assigns partition 0, reads from offset 0 until N records came and prints {"event":"read","n":N,
// "position":P}; then waits for a line on stdin (the test has truncated the log meanwhile) and polls for up
// to 60 s: each record as {"o":offset,"v":"value"} until 3 came, or the exception as {"error":"Class",
// "position":P,"divergent":D} (D -1 when the broker gave none). Prints {"event":"done"} last.

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Properties;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.LogTruncationException;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

public final class TruncationReader {
    public static void main(String[] args) throws Exception {
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, args[2]);
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        TopicPartition tp = new TopicPartition(args[1], 0);
        int n = Integer.parseInt(args[3]);
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props)) {
            consumer.assign(List.of(tp));
            consumer.seek(tp, 0);
            int got = 0;
            long until = System.currentTimeMillis() + 60_000;
            while (got < n && System.currentTimeMillis() < until) {
                got += consumer.poll(Duration.ofMillis(500)).count();
            }
            out.println("{\"event\":\"read\",\"n\":" + got + ",\"position\":" + consumer.position(tp) + "}");
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            in.readLine();
            got = 0;
            until = System.currentTimeMillis() + 60_000;
            try {
                while (got < 3 && System.currentTimeMillis() < until) {
                    for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(500))) {
                        out.println("{\"o\":" + r.offset() + ",\"v\":\"" + new String(r.value(), StandardCharsets.UTF_8)
                            + "\"}");
                        got++;
                    }
                }
            } catch (LogTruncationException e) {
                OffsetAndMetadata d = e.divergentOffsets().get(tp);
                out.println("{\"error\":\"LogTruncationException\",\"position\":" + e.offsetOutOfRangePartitions().get(tp)
                    + ",\"divergent\":" + (d == null ? -1 : d.offset()) + "}");
            }
        }
        out.println("{\"event\":\"done\"}");
    }
}
