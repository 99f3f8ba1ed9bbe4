package dev.pysandbox.api;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * The wire name of a domain enum: its constant's name in lower case ({@code MEMORY_LIMIT} is {@code
 * memory_limit}), the same on the wire, in the store and in the CLI's text.
 */
final class WireNames {
  private WireNames() {}

  static String of(Enum<?> value) {
    return value.name().toLowerCase(Locale.ROOT);
  }

  /** The constant whose wire name is {@code name}; {@code invalid_argument} naming all others. */
  static <E extends Enum<E>> E parse(Class<E> type, String what, String name) {
    for (E e : type.getEnumConstants()) {
      if (of(e).equals(name)) {
        return e;
      }
    }
    throw PysandboxException.invalid(
        "unknown "
            + what
            + " '"
            + name
            + "' (expected one of "
            + Arrays.stream(type.getEnumConstants())
                .map(WireNames::of)
                .collect(Collectors.joining(", "))
            + ")");
  }
}
