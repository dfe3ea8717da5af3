// A member of a share group on Kafka's own KafkaShareConsumer, the peer of kafkawire's ShareConsumer in the
// share group tests. Explicit acknowledgement: every record is accepted, then commitSync(); for each commit
// it prints one JSON line with the records whose acknowledgement the broker confirmed:
//   {"accepted": [[partition, offset, deliveryCount], ...]}
// with "failed": n and "unconfirmed": [[partition, offset, deliveryCount], ...] for records of partitions whose commit failed or went unanswered (a poll or commit that
// throws, as during a broker restart, is survived). It prints {"ready": true} once
// subscribed and stops (closing the consumer) when a line arrives on stdin or stdin closes.
//
// Usage: ShareMember <bootstrap> <topic> <group> <maxPollRecords>

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;

import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

public class ShareMember {
    static volatile boolean stop = false;

    public static void main(String[] args) throws Exception {
        Properties props = new Properties();
        props.put("bootstrap.servers", args[0]);
        props.put("group.id", args[2]);
        props.put("share.acknowledgement.mode", "explicit");
        props.put("max.poll.records", args[3]);
        props.put("key.deserializer", ByteArrayDeserializer.class.getName());
        props.put("value.deserializer", ByteArrayDeserializer.class.getName());
        Thread watcher = new Thread(() -> {
            try {
                new BufferedReader(new InputStreamReader(System.in)).readLine();
            } catch (Exception e) {
                // EOF or error: stop either way
            }
            stop = true;
        });
        watcher.setDaemon(true);
        watcher.start();
        try (KafkaShareConsumer<byte[], byte[]> consumer = new KafkaShareConsumer<>(props)) {
            consumer.subscribe(List.of(args[1]));
            System.out.println("{\"ready\": true}");
            System.out.flush();
            while (!stop) {
                ConsumerRecords<byte[], byte[]> records;
                try {
                    records = consumer.poll(Duration.ofMillis(200));
                } catch (KafkaException e) {
                    continue;  // a broker restart: the next poll carries on
                }
                if (records.isEmpty()) {
                    continue;
                }
                Map<Integer, List<long[]>> byPartition = new HashMap<>();
                for (ConsumerRecord<byte[], byte[]> r : records) {
                    consumer.acknowledge(r, AcknowledgeType.ACCEPT);
                    byPartition.computeIfAbsent(r.partition(), k -> new ArrayList<>())
                        .add(new long[] {r.partition(), r.offset(), r.deliveryCount().orElse((short) -1)});
                }
                Map<TopicIdPartition, Optional<KafkaException>> results;
                try {
                    results = consumer.commitSync(Duration.ofSeconds(30));
                } catch (KafkaException e) {
                    results = Map.of();  // no answer: nothing of this poll is confirmed
                }
                List<long[]> confirmed = new ArrayList<>();
                List<long[]> unconfirmed = new ArrayList<>();
                for (Map.Entry<TopicIdPartition, Optional<KafkaException>> e : results.entrySet()) {
                    List<long[]> recs = byPartition.remove(e.getKey().partition());
                    if (recs != null) {
                        (e.getValue().isPresent() ? unconfirmed : confirmed).addAll(recs);
                    }
                }
                for (List<long[]> recs : byPartition.values()) {
                    unconfirmed.addAll(recs);  // no result for the partition: not confirmed
                }
                StringBuilder out = new StringBuilder("{\"accepted\": ");
                append(out, confirmed);
                out.append(", \"failed\": ").append(unconfirmed.size()).append(", \"unconfirmed\": ");
                append(out, unconfirmed);
                out.append("}");
                System.out.println(out);
                System.out.flush();
            }
        }
        System.out.println("{\"closed\": true}");
        System.out.flush();
    }

    static void append(StringBuilder out, List<long[]> recs) {
        out.append("[");
        for (int i = 0; i < recs.size(); i++) {
            long[] r = recs.get(i);
            out.append(i == 0 ? "" : ",").append("[").append(r[0]).append(",").append(r[1]).append(",").append(r[2]).append("]");
        }
        out.append("]");
    }
}
