package dev.pysandbox.store;

import dev.pysandbox.api.ApiKeyInfo;
import dev.pysandbox.api.ApiPrincipal;
import dev.pysandbox.api.CreatedApiKey;
import java.util.List;
import java.util.Optional;

/**
 * The SPI for API keys: made, listed and revoked by an operator (the {@code keys} command), checked
 * on every request by the HTTP face. Only a key's SHA-256 is stored; the key exists once, in what
 * {@link #create} returns. Implementations are thread-safe, and several processes may share one
 * store: a key revoked by any of them is refused by every other within {@link
 * #REVOCATION_DELAY_MILLIS}.
 */
public interface ApiKeys extends AutoCloseable {
  /**
   * The most time, in milliseconds, between a revocation (by any process sharing the store) and the
   * moment {@link #authenticate} refuses the key in every process.
   */
  long REVOCATION_DELAY_MILLIS = 2_000;

  /** The longest label accepted, in characters. */
  int LABEL_MAX_CHARS = 200;

  /**
   * Makes a key for {@code tenant}.
   *
   * @param tenant follows {@link dev.pysandbox.api.Ids#TENANT_REGEX}
   * @param label what the key is for, at most {@link #LABEL_MAX_CHARS} characters and no control
   *     characters; null or empty for none
   * @return the key's id and the key itself, which is not stored and cannot be shown again
   * @throws dev.pysandbox.api.PysandboxException {@code invalid_argument} for a bad tenant or
   *     label, {@code store_unavailable} when the store cannot write
   */
  default CreatedApiKey create(String tenant, String label) {
    return create(tenant, label, dev.pysandbox.api.ApiPrincipal.AGENT);
  }

  /**
   * Makes a key for {@code tenant} with a role.
   *
   * @param role {@code agent} or {@code approver} ({@link dev.pysandbox.api.ApiPrincipal#ROLES})
   * @see #create(String, String)
   */
  CreatedApiKey create(String tenant, String label, String role);

  /** Every key, revoked ones included, oldest first. */
  List<ApiKeyInfo> list();

  /**
   * Revokes a key; revoking a revoked key changes nothing.
   *
   * @return the key as it is now, with its (first) revocation time
   * @throws dev.pysandbox.api.PysandboxException {@code not_found} when no key has this id, {@code
   *     invalid_argument} when the id cannot be one
   */
  ApiKeyInfo revoke(String keyId);

  /**
   * Who presents {@code presented}, if it is a valid key that was not revoked. Built for every
   * request: anything not shaped like a key is refused without a look at the store, and answers
   * (yes and no) are kept in memory for at most a second, so a repeated key costs a hash and a map
   * look-up (microseconds). The key's {@code last_used_at} is written at most once a minute per
   * key, in the background.
   *
   * @param presented what the caller sent, as it sent it; null is refused
   * @return empty for a malformed, unknown or revoked key
   * @throws dev.pysandbox.api.PysandboxException {@code store_unavailable} when the answer is not
   *     in memory and the store cannot be read (retryable: not a refusal)
   */
  Optional<ApiPrincipal> authenticate(String presented);

  /** Writes what is pending in the background (briefly), then releases the store. */
  @Override
  void close();
}
