package dev.pysandbox.store.jdbc;

import static dev.pysandbox.store.jdbc.ColumnValues.params;

import dev.pysandbox.api.ApiKeyInfo;
import dev.pysandbox.api.ApiPrincipal;
import dev.pysandbox.api.CreatedApiKey;
import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.Ids;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.store.ApiKeyFormat;
import dev.pysandbox.store.ApiKeys;
import dev.pysandbox.util.TimeSource;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@link ApiKeys} in the {@code api_keys} table of the data directory's database (the run store's
 * SQLite file), so that every process sharing the directory sees the same keys. Authentication
 * answers are cached for {@link #ANSWER_TTL_MILLIS} ({@link AuthenticationCache}); last-used times
 * are written in the background ({@link LastUsedWriter}).
 */
public final class JdbcApiKeys implements ApiKeys {
  /**
   * How long an authentication answer is kept: half of {@link #REVOCATION_DELAY_MILLIS}, so that a
   * read that was slow to come back still leaves the promise kept.
   */
  static final long ANSWER_TTL_MILLIS = 1_000;

  /** How often at most one process writes a key's {@code last_used_at}. */
  static final long LAST_USED_INTERVAL_MILLIS = 60_000;

  private static final int MAX_ANSWERS = 10_000;
  private static final long CLOSE_WAIT_MILLIS = 1_000;
  private static final String COLUMNS =
      "key_id, tenant, label, created_at, last_used_at, revoked_at, role";

  private final CachedConnection db;
  private final TimeSource time;
  private final AuthenticationCache answers;
  private final LastUsedWriter lastUsed;
  private final AtomicLong lookups = new AtomicLong();

  /**
   * @param files checked before every call ({@link CachedConnection})
   */
  JdbcApiKeys(CachedConnection.SqlSupplier<Connection> connector, StoreFiles files, TimeSource time)
      throws SQLException {
    this.db = new CachedConnection("key store", connector, files);
    this.time = time;
    this.answers =
        new AuthenticationCache(
            time, TimeUnit.MILLISECONDS.toNanos(ANSWER_TTL_MILLIS), MAX_ANSWERS);
    this.lastUsed =
        new LastUsedWriter(
            connector, files, time, TimeUnit.MILLISECONDS.toNanos(LAST_USED_INTERVAL_MILLIS));
  }

  /** Opens (creating and migrating) the SQLite database at {@code file}, on the system's time. */
  public static JdbcApiKeys openSqlite(Path file) {
    return openSqlite(file, TimeSource.system(), false);
  }

  /**
   * Opens the SQLite database at {@code file}: the data directory's database, shared with the run
   * store.
   *
   * @param clock the time keys are stamped with and answers expire by (a {@link TimeSource} gives
   *     both; a plain clock gives instants, with real monotonic time)
   * @param lookOnly a database whose migrations are all applied is used without Flyway (as {@link
   *     JdbcRunStore#openSqlite(Path, Clock, boolean)} does); one that is not is migrated
   * @throws PysandboxException {@code store_unavailable} when it cannot be opened
   */
  public static JdbcApiKeys openSqlite(Path file, Clock clock, boolean lookOnly) {
    return SqliteDatabase.open(
        file,
        lookOnly,
        "key store",
        db -> new JdbcApiKeys(db::connect, db.files(), TimeSource.of(clock)));
  }

  @Override
  public CreatedApiKey create(String tenant, String label, String role) {
    Ids.requireTenant(tenant);
    ApiPrincipal.requireRole(role);
    String checkedLabel = requireLabel(label);
    String key = ApiKeyFormat.newKey();
    String keyId = Ids.newKeyId();
    long now = time.millis();
    db.write(
        "INSERT INTO api_keys (key_id, tenant, label, key_sha256, created_at, role)"
            + " VALUES (?,?,?,?,?,?)",
        params(keyId, tenant, checkedLabel, ApiKeyFormat.hash(key), now, role));
    return new CreatedApiKey(
        new ApiKeyInfo(keyId, tenant, checkedLabel, instant(now), null, null, role), key);
  }

  @Override
  public List<ApiKeyInfo> list() {
    return db.read(
        "SELECT " + COLUMNS + " FROM api_keys ORDER BY created_at, key_id",
        ps -> {},
        ColumnValues.rows(JdbcApiKeys::info));
  }

  @Override
  public ApiKeyInfo revoke(String keyId) {
    Ids.requireKeyId(keyId);
    db.write(
        "UPDATE api_keys SET revoked_at=? WHERE key_id=? AND revoked_at IS NULL",
        params(time.millis(), keyId));
    // Answers this process kept say yes to the key until they expire: forget them now.
    answers.clear();
    return db.read(
            "SELECT " + COLUMNS + " FROM api_keys WHERE key_id=?",
            ps -> ps.setString(1, keyId),
            rs -> rs.next() ? Optional.of(info(rs)) : Optional.<ApiKeyInfo>empty())
        .orElseThrow(
            () ->
                new PysandboxException(
                    ErrorCode.NOT_FOUND,
                    "no API key with id '" + keyId + "' (pysandbox keys list shows them)"));
  }

  @Override
  public Optional<ApiPrincipal> authenticate(String presented) {
    if (!ApiKeyFormat.isWellFormed(presented)) {
      return Optional.empty();
    }
    String hash = ApiKeyFormat.hash(presented);
    AuthenticationCache.Answer known = answers.fresh(hash);
    Optional<ApiPrincipal> principal;
    if (known != null) {
      principal = known.principal();
    } else {
      long checkedAt = time.nanoTime();
      principal = lookUp(hash);
      answers.put(hash, principal, checkedAt);
    }
    principal.ifPresent(p -> lastUsed.used(p.keyId()));
    return principal;
  }

  private Optional<ApiPrincipal> lookUp(String hash) {
    lookups.incrementAndGet();
    return db.read(
        "SELECT key_id, tenant, key_sha256, revoked_at, role FROM api_keys WHERE key_sha256=?",
        ps -> ps.setString(1, hash),
        rs -> {
          if (!rs.next()) {
            return Optional.empty();
          }
          // The index found the row by hash; the comparison that decides takes the same time
          // wherever the two differ.
          boolean same =
              MessageDigest.isEqual(
                  rs.getString("key_sha256").getBytes(StandardCharsets.US_ASCII),
                  hash.getBytes(StandardCharsets.US_ASCII));
          rs.getLong("revoked_at");
          if (!same || !rs.wasNull()) {
            return Optional.empty();
          }
          return Optional.of(
              new ApiPrincipal(
                  rs.getString("key_id"), rs.getString("tenant"), rs.getString("role")));
        });
  }

  /**
   * @return the label to store: null for none
   * @throws PysandboxException {@code invalid_argument} for a label too long or with a control
   *     character (it is shown in a terminal table)
   */
  static String requireLabel(String label) {
    if (label == null || label.isEmpty()) {
      return null;
    }
    if (label.length() > LABEL_MAX_CHARS) {
      throw PysandboxException.invalid(
          "label is "
              + label.length()
              + " characters long; at most "
              + LABEL_MAX_CHARS
              + " are accepted");
    }
    for (int i = 0; i < label.length(); i++) {
      char c = label.charAt(i);
      if (Character.isISOControl(c)) {
        // The label itself is left out: the message is printed on a terminal.
        throw PysandboxException.invalid(
            String.format("label has a control character (U+%04X at index %d)", (int) c, i)
                + "; use printable text");
      }
    }
    return label;
  }

  private static ApiKeyInfo info(ResultSet rs) throws SQLException {
    return new ApiKeyInfo(
        rs.getString("key_id"),
        rs.getString("tenant"),
        rs.getString("label"),
        instant(rs.getLong("created_at")),
        instant(rs, "last_used_at"),
        instant(rs, "revoked_at"),
        rs.getString("role"));
  }

  private static String instant(long millis) {
    return Instant.ofEpochMilli(millis).toString();
  }

  private static String instant(ResultSet rs, String column) throws SQLException {
    long v = rs.getLong(column);
    return rs.wasNull() ? null : instant(v);
  }

  /** How many times authenticate read the store, for tests of what the cache saves. */
  long storeLookups() {
    return lookups.get();
  }

  @Override
  public void close() {
    lastUsed.close(CLOSE_WAIT_MILLIS);
    db.close();
  }
}
