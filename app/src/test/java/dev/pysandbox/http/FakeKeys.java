package dev.pysandbox.http;

import java.util.Optional;

/** A key store at the seam: two keys, of two tenants, and nothing else. */
final class FakeKeys implements KeyCheck {
  static final String GOOD = "pk_good_0123456789";
  static final String OTHER_TENANT = "pk_acme_0123456789";

  @Override
  public Optional<Caller> check(String presentedKey) {
    return switch (presentedKey) {
      case GOOD -> Optional.of(new Caller("key-good", "local"));
      case OTHER_TENANT -> Optional.of(new Caller("key-acme", "acme"));
      default -> Optional.empty();
    };
  }

  @Override
  public boolean anyKeys() {
    return true;
  }
}
