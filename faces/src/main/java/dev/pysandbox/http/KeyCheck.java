package dev.pysandbox.http;

import java.util.Optional;

/**
 * The HTTP face's one question to the API key store: whose key is this? Implementations are
 * thread-safe and answer quickly (every request but the health checks asks), and compare keys in
 * constant time.
 */
public interface KeyCheck {
  /** A store that holds no key: every key is refused. */
  KeyCheck EMPTY =
      new KeyCheck() {
        @Override
        public Optional<Caller> check(String presentedKey) {
          return Optional.empty();
        }

        @Override
        public boolean anyKeys() {
          return false;
        }
      };

  /**
   * The caller a key belongs to.
   *
   * @param presentedKey the key as the request sent it (never {@code null}, maybe malformed)
   * @return the key's id and tenant; empty for a key that is unknown, revoked or malformed
   * @throws dev.pysandbox.api.PysandboxException {@code store_unavailable} when the store cannot
   *     answer (the request gets 503, not 401)
   */
  Optional<Caller> check(String presentedKey);

  /**
   * Whether any key could pass {@link #check}; with none, serving {@code http_auth=keys} would
   * refuse every caller, so the server does not start.
   */
  boolean anyKeys();
}
