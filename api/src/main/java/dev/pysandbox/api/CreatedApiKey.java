package dev.pysandbox.api;

/**
 * A key just made: the only time the key itself exists outside its holder, since the store keeps
 * its hash alone. {@link #toString()} leaves the key out, so that logging this value does not leak
 * it.
 *
 * @param info the key as {@code list} will show it
 * @param key the secret: {@code psk_} and 43 base64url characters (32 random bytes)
 */
public record CreatedApiKey(ApiKeyInfo info, String key) {
  public String keyId() {
    return info.keyId();
  }

  @Override
  public String toString() {
    return "CreatedApiKey[info=" + info + ", key=(hidden)]";
  }
}
