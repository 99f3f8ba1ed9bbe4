package dev.pysandbox.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

import dev.pysandbox.Await;
import dev.pysandbox.ManualTime;
import dev.pysandbox.api.ApiKeyInfo;
import dev.pysandbox.api.ApiPrincipal;
import dev.pysandbox.api.CreatedApiKey;
import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.Json;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.util.TimeSource;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.NullAndEmptySource;
import org.junit.jupiter.params.provider.ValueSource;

/** What every {@link ApiKeys} must do; each implementation's test extends this. */
public abstract class ApiKeysContract {
  private final List<ApiKeys> opened = new ArrayList<>();

  /**
   * Opens a store on {@code clock}. Every call in one test returns a new store over the same data,
   * as another process sharing the data directory would see it.
   */
  protected abstract ApiKeys newStore(Clock clock) throws Exception;

  /** A store closed after the test. */
  protected final ApiKeys open(Clock clock) throws Exception {
    ApiKeys s = newStore(clock);
    opened.add(s);
    return s;
  }

  protected final ApiKeys open() throws Exception {
    return open(TimeSource.system());
  }

  @AfterEach
  void closeAll() {
    opened.forEach(ApiKeys::close);
  }

  @Test
  void create_returnsAKeyOfTheDocumentedShape_andListShowsItWithoutTheKey() throws Exception {
    ManualTime time = ManualTime.frozen(Instant.parse("2026-03-01T10:00:00Z"));
    ApiKeys keys = open(time);
    CreatedApiKey created = keys.create("acme", "ci bot");
    assertThat(created.key()).matches(ApiKeyFormat.REGEX).matches("^psk_[A-Za-z0-9_-]{43}$");
    assertThat(created.keyId()).matches("key_[0-9a-f]{12}");
    assertThat(created.info())
        .isEqualTo(
            new ApiKeyInfo(created.keyId(), "acme", "ci bot", "2026-03-01T10:00:00Z", null, null));
    assertThat(created.toString()).doesNotContain(created.key());

    assertThat(keys.list()).containsExactly(created.info());
    String json = Json.write(keys.list());
    assertThat(json).doesNotContain(created.key()).doesNotContain(ApiKeyFormat.hash(created.key()));
  }

  @Test
  void create_makesADifferentKeyAndIdEachTime_listedOldestFirst() throws Exception {
    ManualTime time = ManualTime.frozen(Instant.parse("2026-03-01T10:00:00Z"));
    ApiKeys keys = open(time);
    CreatedApiKey first = keys.create("acme", null);
    time.advance(Duration.ofSeconds(1));
    CreatedApiKey second = keys.create("acme", "");
    assertThat(second.key()).isNotEqualTo(first.key());
    assertThat(second.keyId()).isNotEqualTo(first.keyId());
    assertThat(second.info().label()).isNull();
    assertThat(keys.list())
        .extracting(ApiKeyInfo::keyId)
        .containsExactly(first.keyId(), second.keyId());
  }

  @ParameterizedTest
  @NullAndEmptySource
  @ValueSource(
      strings = {
        "Acme",
        "-acme",
        "_acme",
        "ac me",
        "acme/other",
        "acme\n",
        "ácme",
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
      })
  void create_forATenantOutsideTheRule_isInvalidArgument_andStoresNothing(String tenant)
      throws Exception {
    ApiKeys keys = open();
    assertThatExceptionOfType(PysandboxException.class)
        .isThrownBy(() -> keys.create(tenant, null))
        .satisfies(e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT))
        .withMessageContaining("tenant")
        .withMessageContaining("lowercase letters");
    assertThat(keys.list()).isEmpty();
  }

  @Test
  void create_acceptsTenantsAtTheEdgesOfTheRule() throws Exception {
    ApiKeys keys = open();
    for (String tenant : List.of("a", "0", "a-b_c", "a".repeat(63))) {
      assertThat(keys.create(tenant, null).info().tenant()).isEqualTo(tenant);
    }
  }

  @Test
  void create_withALabelTooLongOrWithControlCharacters_isInvalidArgument() throws Exception {
    ApiKeys keys = open();
    assertThat(keys.create("acme", "x".repeat(200)).info().label()).hasSize(200);
    for (String label :
        List.of("x".repeat(201), "two\nlines", "\u001b]52;c;ZXZpbA==\u0007", "\u0085")) {
      assertThatExceptionOfType(PysandboxException.class)
          .isThrownBy(() -> keys.create("acme", label))
          .satisfies(e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT))
          .withMessageContaining("label")
          .withMessageNotContaining("\u001b");
    }
    assertThat(keys.list()).hasSize(1);
  }

  @Test
  void authenticate_acceptsAKey_andNamesItsKeyAndTenant() throws Exception {
    ApiKeys keys = open();
    CreatedApiKey a = keys.create("acme", null);
    CreatedApiKey b = keys.create("globex", null);
    assertThat(keys.authenticate(a.key())).contains(new ApiPrincipal(a.keyId(), "acme"));
    assertThat(keys.authenticate(b.key())).contains(new ApiPrincipal(b.keyId(), "globex"));
    assertThat(keys.authenticate(a.key())).contains(new ApiPrincipal(a.keyId(), "acme"));
  }

  @Test
  void authenticate_refusesWhatIsNotAValidKey() throws Exception {
    ApiKeys keys = open();
    String key = keys.create("acme", null).key();
    List<String> refused = new ArrayList<>();
    refused.add(null);
    refused.add("");
    refused.add(key.substring(0, key.length() - 1));
    refused.add(key + "A");
    refused.add(" " + key);
    refused.add("PSK_" + key.substring(4));
    refused.add("Bearer " + key);
    refused.add("psk_" + "=".repeat(43));
    refused.add(ApiKeyFormat.newKey()); // well formed, never made here
    refused.add(ApiKeyFormat.hash(key)); // what the store keeps is not a key
    for (String presented : refused) {
      assertThat(keys.authenticate(presented)).as(String.valueOf(presented)).isEmpty();
    }
    assertThat(keys.authenticate(key)).isPresent();
  }

  @Test
  void revoke_refusesTheKeyAtOnceInTheSameStore_andKeepsTheFirstRevocationTime() throws Exception {
    ManualTime time = ManualTime.frozen(Instant.parse("2026-03-01T10:00:00Z"));
    ApiKeys keys = open(time);
    CreatedApiKey created = keys.create("acme", null);
    CreatedApiKey other = keys.create("acme", null);
    assertThat(keys.authenticate(created.key())).isPresent();
    time.advance(Duration.ofMillis(10));

    ApiKeyInfo revoked = keys.revoke(created.keyId());
    assertThat(revoked.revokedAt()).isEqualTo("2026-03-01T10:00:00.010Z");
    assertThat(keys.authenticate(created.key())).isEmpty();
    assertThat(keys.authenticate(other.key())).isPresent();

    time.advance(Duration.ofMinutes(5));
    assertThat(keys.revoke(created.keyId()).revokedAt()).isEqualTo("2026-03-01T10:00:00.010Z");
    assertThat(keys.list())
        .filteredOn(k -> k.keyId().equals(created.keyId()))
        .singleElement()
        .extracting(ApiKeyInfo::revokedAt)
        .isEqualTo("2026-03-01T10:00:00.010Z");
  }

  @Test
  void revoke_ofAnUnknownId_isNotFound_andOfAMalformedId_isInvalidArgument() throws Exception {
    ApiKeys keys = open();
    assertThatExceptionOfType(PysandboxException.class)
        .isThrownBy(() -> keys.revoke("key_000000000000"))
        .satisfies(e -> assertThat(e.code()).isEqualTo(ErrorCode.NOT_FOUND))
        .withMessageContaining("key_000000000000");
    assertThatExceptionOfType(PysandboxException.class)
        .isThrownBy(() -> keys.revoke("key 1; DROP TABLE api_keys"))
        .satisfies(e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT));
  }

  @Test
  @Timeout(value = 30, unit = TimeUnit.SECONDS)
  void revocationByAnotherStore_isRefusedByTheFirstWithinTwoSeconds() throws Exception {
    // The server's time moves only when the test says: the promise is kept on its clock, however
    // long the machine takes in real time.
    ManualTime serverTime = ManualTime.frozen(Instant.now());
    ApiKeys server = open(serverTime);
    ApiKeys cli = open();
    CreatedApiKey created = cli.create("acme", null);
    // The server has answered yes (and keeps the answer) before the revocation.
    assertThat(server.authenticate(created.key())).isPresent();
    assertThat(server.authenticate(created.key())).isPresent();

    cli.revoke(created.keyId());
    serverTime.advance(Duration.ofMillis(ApiKeys.REVOCATION_DELAY_MILLIS));
    assertThat(server.authenticate(created.key()))
        .as("the key revoked by another store, %d ms later", ApiKeys.REVOCATION_DELAY_MILLIS)
        .isEmpty();
  }

  @Test
  @Timeout(value = 30, unit = TimeUnit.SECONDS)
  void lastUsed_isRecordedInTheBackground_andAgainAMinuteLater() throws Exception {
    ManualTime time = ManualTime.frozen(Instant.parse("2026-03-01T10:00:00Z"));
    ApiKeys keys = open(time);
    CreatedApiKey created = keys.create("acme", null);
    assertThat(keys.list().get(0).lastUsedAt()).isNull();

    assertThat(keys.authenticate(created.key())).isPresent();
    Await.until(
        "the first use is recorded",
        () -> keys.list().get(0).lastUsedAt(),
        "2026-03-01T10:00:00Z"::equals);

    time.advance(Duration.ofSeconds(61));
    assertThat(keys.authenticate(created.key())).isPresent();
    Await.until(
        "the use a minute later is recorded",
        () -> keys.list().get(0).lastUsedAt(),
        "2026-03-01T10:01:01Z"::equals);
  }

  @Test
  @Timeout(value = 60, unit = TimeUnit.SECONDS)
  void authenticate_fromManyThreadsAtOnce_answersEachKeyRight() throws Exception {
    ApiKeys keys = open();
    List<CreatedApiKey> made = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      made.add(keys.create("t" + i, null));
    }
    ExecutorService pool = Executors.newFixedThreadPool(8);
    try {
      List<Future<Boolean>> results = new ArrayList<>();
      for (int t = 0; t < 8; t++) {
        results.add(
            pool.submit(
                () -> {
                  for (int i = 0; i < 500; i++) {
                    CreatedApiKey k = made.get(i % made.size());
                    Optional<ApiPrincipal> p = keys.authenticate(k.key());
                    if (!p.equals(Optional.of(new ApiPrincipal(k.keyId(), k.info().tenant())))) {
                      return false;
                    }
                  }
                  return true;
                }));
      }
      for (Future<Boolean> r : results) {
        assertThat(r.get(30, TimeUnit.SECONDS)).isTrue();
      }
    } finally {
      pool.shutdownNow();
    }
  }
}
