package dev.pysandbox.mcp;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.pysandbox.Fast;
import dev.pysandbox.ManualTime;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.jackson2.JacksonMcpJsonMapper;
import io.modelcontextprotocol.server.McpServer;
import io.modelcontextprotocol.server.McpSyncServer;
import io.modelcontextprotocol.spec.McpSchema;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The transport's memory bounds with the real SDK session behind it: a client that opened its
 * listening stream and never came back, while the server keeps telling it things.
 */
@Fast
class StreamableHttpTransportTest {
  private final ManualTime time = new ManualTime();
  private final ObjectMapper json = InboundMessages.mapper(1 << 20);
  private final McpJsonMapper mapper = new JacksonMcpJsonMapper(json);
  private final StreamableHttpTransport transport = new StreamableHttpTransport(json, mapper, time);
  private final McpSyncServer server =
      McpServer.sync(transport).serverInfo("t", "1").jsonMapper(mapper).build();

  @AfterEach
  void close() {
    server.close();
  }

  private HttpMcpSession session() {
    return transport
        .start(
            McpSchema.InitializeRequest.builder(
                    "2025-11-25",
                    McpSchema.ClientCapabilities.builder().build(),
                    McpSchema.Implementation.builder("gone", "1").build())
                .build())
        .session();
  }

  @Test
  void aClientThatNeverComesBack_costsAtMostTheBounds_andNothingOnceIdle() {
    HttpMcpSession s = session();
    SseStream listening = s.listeningStream();
    s.sdk().listeningStream(listening);
    String line = "x".repeat(2_000);
    for (int i = 0; i < 5_000; i++) {
      transport
          .notifyClient(s.id(), "notifications/message", Map.of("level", "info", "data", line + i))
          .block();
    }
    assertThat(s.buffer().size()).isLessThanOrEqualTo(StreamableHttpTransport.REPLAY_MAX_EVENTS);
    assertThat(transport.replayBytes())
        .isPositive()
        .isLessThanOrEqualTo(StreamableHttpTransport.REPLAY_MAX_BYTES);
    time.advance(Duration.ofMillis(StreamableHttpTransport.REPLAY_MAX_AGE_MILLIS + 1));
    transport.tidy();
    assertThat(transport.replayBytes()).as("past the age bound").isZero();
    assertThat(transport.sessionCount()).isEqualTo(1);
    time.advance(Duration.ofMillis(StreamableHttpTransport.IDLE_MILLIS));
    transport.tidy();
    assertThat(transport.sessionCount()).as("idle: ended").isZero();
  }

  /**
   * Regression (a full run, 2026-11-28): a call cancelled before its stream carried anything but
   * the priming event was forgotten by the next sweep, so the client's resume from that event was
   * "gone" (410) or "ended" (204) depending on whether the sweep had run in between. The end is now
   * kept as the stream's last event, under the replay buffer's bounds (age, count, bytes).
   */
  @Test
  void aCancelledCallsStream_withNothingKept_isAnsweredEnded_untilTheAgeBound() {
    HttpMcpSession s = session();
    CallHandle call = new CallHandle(Runnable::run);
    SseStream stream = s.callStream(11, call);
    String primed = stream.eventId(0);
    assertThat(s.cancel(11)).isTrue();
    stream.close();
    transport.tidy();
    assertThat(s.streamOf(primed)).as("swept at once").isSameAs(stream);
    assertThat(stream.resume(0, () -> null, 1_000)).isEqualTo(SseStream.Resume.ENDED);
    time.advance(Duration.ofMillis(StreamableHttpTransport.REPLAY_MAX_AGE_MILLIS + 1));
    transport.tidy();
    assertThat(s.streamOf(primed)).as("past the age bound").isNull();
  }

  /** The ends remembered are bounded by the buffer's count, not kept for the age bound whatever. */
  @Test
  void endedStreams_areRememberedWithinTheBuffersBounds() {
    HttpMcpSession s = session();
    String first = null;
    for (int i = 0; i <= StreamableHttpTransport.REPLAY_MAX_EVENTS; i++) {
      SseStream stream = s.callStream(i, new CallHandle(Runnable::run));
      first = first == null ? stream.eventId(0) : first;
      stream.close();
    }
    transport.tidy();
    assertThat(s.streamOf(first)).as("its end pushed out by the newer ones").isNull();
  }

  @Test
  void aCallInFlight_keepsItsSessionFromBeingEndedAsIdle() {
    HttpMcpSession s = session();
    CallHandle call = new CallHandle(Runnable::run);
    SseStream stream = s.callStream(7, call);
    assertThat(s.callStream(7, new CallHandle(Runnable::run))).as("id 7 is in flight").isNull();
    time.advance(Duration.ofMillis(StreamableHttpTransport.IDLE_MILLIS + 1));
    transport.tidy();
    assertThat(transport.sessionCount()).isEqualTo(1);
    boolean[] cancelled = {false};
    call.whenCancelled(() -> cancelled[0] = true);
    assertThat(s.cancel("7")).as("the string \"7\" is another id than 7").isFalse();
    assertThat(s.cancel(7)).isTrue();
    assertThat(cancelled[0]).isTrue();
    stream.close();
    transport.tidy();
    assertThat(transport.sessionCount()).isZero();
  }
}
