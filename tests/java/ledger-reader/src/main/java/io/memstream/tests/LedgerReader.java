package io.memstream.tests;

import io.apicurio.registry.serde.SerdeConfig;
import io.apicurio.registry.serde.avro.AvroKafkaDeserializer;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.UUID;
import org.apache.avro.generic.GenericRecord;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * Reads memstream's ledger as any analytics job in Java would: Kafka's consumer and a standard
 * Avro deserializer that fetches each schema from the registry by the id in the record.
 *
 * <p>Arguments: bootstrap servers, topic, registry base URL (http://host:port), the number of
 * records to read. Prints one tab-separated line per record: event_id, the payload's record
 * name, user_id, the memory's content (or "-"), the embedding's byte length (or "-").
 */
public final class LedgerReader {
  public static void main(String[] args) {
    String bootstrap = args[0];
    String topic = args[1];
    String registry = args[2];
    int expected = Integer.parseInt(args[3]);

    Properties props = new Properties();
    props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    props.put(ConsumerConfig.GROUP_ID_CONFIG, "ledger-reader-" + UUID.randomUUID());
    props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, AvroKafkaDeserializer.class.getName());
    props.put(SerdeConfig.REGISTRY_URL, registry + "/apis/registry/v2");
    // The Confluent wire format: magic byte 0 and a 4-byte id, the id the ccompat API gave.
    props.put(SerdeConfig.ENABLE_CONFLUENT_ID_HANDLER, "true");
    props.put(SerdeConfig.USE_ID, "contentId");

    int read = 0;
    long deadline = System.currentTimeMillis() + 90_000;
    try (KafkaConsumer<String, GenericRecord> consumer = new KafkaConsumer<>(props)) {
      consumer.subscribe(List.of(topic));
      while (read < expected && System.currentTimeMillis() < deadline) {
        for (ConsumerRecord<String, GenericRecord> record : consumer.poll(Duration.ofMillis(500))) {
          System.out.println(line(record.value()));
          read++;
        }
      }
    }
    System.out.flush();
    if (read < expected) {
      System.err.println("read " + read + " of " + expected + " ledger records");
      System.exit(2);
    }
  }

  private static String line(GenericRecord event) {
    GenericRecord payload = (GenericRecord) event.get("payload");
    String content = "-";
    String embedding = "-";
    if (payload.getSchema().getField("memory") != null) {
      GenericRecord memory = (GenericRecord) payload.get("memory");
      content = String.valueOf(memory.get("content")).replace('\t', ' ').replace('\n', ' ');
      Object packed = memory.get("embedding");
      if (packed instanceof ByteBuffer) {
        embedding = String.valueOf(((ByteBuffer) packed).remaining());
      }
    }
    return String.join(
        "\t",
        String.valueOf(event.get("event_id")),
        payload.getSchema().getName(),
        String.valueOf(event.get("user_id")),
        content,
        embedding);
  }
}
