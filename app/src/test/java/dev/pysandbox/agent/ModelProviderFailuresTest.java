package dev.pysandbox.agent;

import static dev.pysandbox.agent.ModelProvidersWireTest.KEY;
import static dev.pysandbox.agent.ModelProvidersWireTest.config;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.pysandbox.Fast;
import dev.pysandbox.api.agent.ChatMessage;
import dev.pysandbox.api.agent.ModelClient;
import dev.pysandbox.api.agent.ModelException;
import dev.pysandbox.api.agent.ModelException.Kind;
import dev.pysandbox.api.agent.ModelRequest;
import dev.pysandbox.models.ModelClients;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * How the providers' failures come out of {@link ModelClient#complete}: each {@link Kind} from a
 * real exchange with {@link ScriptedModelServer}, the Retry-After, the per-call timeout, an
 * interrupt that ends the exchange, and messages that never hold the key.
 */
@Fast
@Timeout(30)
class ModelProviderFailuresTest {
  private ScriptedModelServer server;

  @BeforeEach
  void start() throws Exception {
    server = new ScriptedModelServer();
  }

  @AfterEach
  void stop() {
    server.close();
  }

  private ModelClient client(String provider) {
    return ModelClients.create(config(provider, server.baseUrl(), KEY));
  }

  private static ModelRequest ask(Duration timeout) {
    return new ModelRequest(null, List.of(ChatMessage.user("hi")), List.of(), 100, timeout);
  }

  private ModelException fail(String provider, Duration timeout) {
    ModelException e =
        catchThrowableOfType(ModelException.class, () -> client(provider).complete(ask(timeout)));
    assertThat(e).as("the call's failure").isNotNull();
    assertNoSecret(e);
    return e;
  }

  private ModelException fail(String provider) {
    return fail(provider, Duration.ofSeconds(20));
  }

  /** Neither the key nor a header the client sent, and no cause that could repeat them. */
  private void assertNoSecret(ModelException e) {
    assertThat(e.getMessage()).doesNotContain(KEY).doesNotContain("Bearer");
    assertThat(e.getCause()).isNull();
    for (ScriptedModelServer.Recorded r : server.requests()) {
      for (String h : List.of("Authorization", "x-api-key", "anthropic-version", "User-Agent")) {
        if (r.header(h) != null) {
          assertThat(e.getMessage()).as("header %s", h).doesNotContain(r.header(h));
        }
      }
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"openai", "anthropic"})
  void complete_429WithRetryAfterSeconds_isRateLimitedWithTheWait(String provider) {
    server.enqueue(ScriptedReply.status(429).retryAfter(7));

    ModelException e = fail(provider);

    assertThat(e.kind()).isEqualTo(Kind.RATE_LIMITED);
    assertThat(e.kind().retryable()).isTrue();
    assertThat(e.retryAfter()).isEqualTo(Duration.ofSeconds(7));
    assertThat(e.getMessage()).contains(provider).contains("429");
    assertThat(server.requests()).as("no retry of LangChain4j's own").hasSize(1);
  }

  @Test
  void complete_429WithRetryAfterDateInThePast_waitsNothing() {
    server.enqueue(ScriptedReply.status(429).retryAfter("Wed, 21 Oct 2015 07:28:00 GMT"));

    ModelException e = fail("openai");

    assertThat(e.kind()).isEqualTo(Kind.RATE_LIMITED);
    assertThat(e.retryAfter()).isEqualTo(Duration.ZERO);
  }

  @Test
  void complete_429WithoutRetryAfter_hasNoWait() {
    server.enqueue(ScriptedReply.status(429));

    assertThat(fail("openai").retryAfter()).isNull();
  }

  @ParameterizedTest
  @ValueSource(strings = {"openai", "anthropic"})
  void complete_500_isServer_andNotRetriedByLangChain4j(String provider) {
    server.enqueue(ScriptedReply.status(500), ScriptedReply.text("never asked"));

    ModelException e = fail(provider);

    assertThat(e.kind()).isEqualTo(Kind.SERVER);
    assertThat(e.kind().retryable()).isTrue();
    assertThat(e.getMessage()).contains("500").contains("scripted status 500");
    assertThat(server.requests()).hasSize(1);
  }

  @ParameterizedTest
  @ValueSource(ints = {400, 401, 403, 404})
  void complete_4xx_isRejected(int status) {
    server.enqueue(ScriptedReply.status(status));

    ModelException e = fail("openai");

    assertThat(e.kind()).isEqualTo(Kind.REJECTED);
    assertThat(e.kind().retryable()).isFalse();
    assertThat(e.getMessage()).contains(Integer.toString(status));
  }

  @ParameterizedTest
  @ValueSource(strings = {"openai", "anthropic"})
  void complete_bodyNotJson_isMalformed(String provider) {
    server.enqueue(ScriptedReply.malformed());

    ModelException e = fail(provider);

    assertThat(e.kind()).isEqualTo(Kind.MALFORMED);
    assertThat(e.kind().retryable()).isFalse();
  }

  @Test
  void complete_noAnswerWithinTheRequestTimeout_isTimeout() {
    server.enqueue(ScriptedReply.text("too late").delay(Duration.ofSeconds(20)));

    ModelException e = fail("openai", Duration.ofMillis(300));

    assertThat(e.kind()).isEqualTo(Kind.TIMEOUT);
    assertThat(e.getMessage()).contains("300 ms");
  }

  @Test
  void complete_bodyNeverEnding_isTimeout_andTheExchangeIsAbandoned() throws Exception {
    server.enqueue(ScriptedReply.hang());

    ModelException e = fail("anthropic", Duration.ofSeconds(1));

    assertThat(e.kind()).isEqualTo(Kind.TIMEOUT);
    assertThat(server.awaitAborted(Duration.ofSeconds(10)))
        .as("the server saw the client go")
        .isTrue();
  }

  @ParameterizedTest
  @ValueSource(strings = {"openai", "anthropic"})
  void complete_callingThreadInterrupted_abortsTheExchangeAndKeepsTheInterrupt(String provider)
      throws Exception {
    server.enqueue(ScriptedReply.hang());
    ModelClient client = client(provider);
    CompletableFuture<Object[]> outcome = new CompletableFuture<>();
    Thread caller =
        new Thread(
            () -> {
              try {
                client.complete(ask(Duration.ofSeconds(120)));
                outcome.complete(new Object[] {null, false});
              } catch (RuntimeException e) {
                outcome.complete(new Object[] {e, Thread.currentThread().isInterrupted()});
              }
            },
            "model-caller");
    caller.start();
    assertThat(server.awaitRequests(1, Duration.ofSeconds(10))).isTrue();

    caller.interrupt();

    Object[] result = outcome.get(10, TimeUnit.SECONDS); // not the call's 120 s
    assertThat(result[0]).isInstanceOf(ModelException.class);
    assertNoSecret((ModelException) result[0]);
    assertThat(result[1]).as("the caller's interrupt flag").isEqualTo(true);
    assertThat(server.awaitAborted(Duration.ofSeconds(10)))
        .as("the server saw the client go")
        .isTrue();
    caller.join(10_000);
  }

  @ParameterizedTest
  @ValueSource(strings = {"openai", "anthropic"})
  void complete_errorBodyEchoingTheKey_keepsTheKeyOutOfTheMessage(String provider) {
    server.enqueue(
        ScriptedReply.status(401).message("Incorrect API key provided: " + KEY + ". Check it."));

    ModelException e = fail(provider);

    assertThat(e.kind()).isEqualTo(Kind.REJECTED);
    assertThat(e.getMessage()).contains("Incorrect API key provided: (key)");
    assertThat(e.toString()).doesNotContain(KEY);
    assertThat(server.request(1).header(provider.equals("openai") ? "Authorization" : "x-api-key"))
        .as("the key was sent")
        .contains(KEY);
  }

  @Test
  void complete_nothingListening_isUnavailable() throws Exception {
    String base = server.baseUrl();
    server.close();

    ModelException e =
        catchThrowableOfType(
            ModelException.class,
            () ->
                ModelClients.create(config("openai", base, KEY))
                    .complete(ask(Duration.ofSeconds(10))));

    assertThat(e.kind()).isIn(Kind.UNAVAILABLE, Kind.SERVER);
    assertThat(e.kind().retryable()).isTrue();
    assertThat(e.getMessage()).doesNotContain(KEY);
  }
}
