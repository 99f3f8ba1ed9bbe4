package dev.pysandbox.api;

import com.fasterxml.jackson.annotation.JsonValue;
import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * A domain enum with a wire name: its constant's name in lower case ({@code MEMORY_LIMIT} is {@code
 * memory_limit}), the same on the wire, in the store and in the CLI's text. The one place that
 * mapping is written: an enum implements this interface and overrides only {@code toString} (to
 * return {@link #wireName()}, as an interface cannot); Jackson writes and reads the wire name
 * through {@link #wireName()}, and code reads one with {@link #parse}.
 */
public interface WireEnum {
  /** The constant's name (implemented by {@link Enum#name()}). */
  String name();

  /** The wire name: {@link #name()} in lower case. */
  @JsonValue
  default String wireName() {
    return name().toLowerCase(Locale.ROOT);
  }

  /**
   * The constant of {@code type} whose wire name is {@code name}.
   *
   * @throws PysandboxException {@code invalid_argument} naming the known wire names, and what is
   *     looked for in words from the type's simple name ({@code KillReason}: "unknown kill reason")
   */
  static <E extends Enum<E> & WireEnum> E parse(Class<E> type, String name) {
    for (E e : type.getEnumConstants()) {
      if (e.wireName().equals(name)) {
        return e;
      }
    }
    throw PysandboxException.invalid(
        "unknown "
            + type.getSimpleName().replaceAll("(?<=[a-z])(?=[A-Z])", " ").toLowerCase(Locale.ROOT)
            + " '"
            + name
            + "' (expected one of "
            + Arrays.stream(type.getEnumConstants())
                .map(WireEnum::wireName)
                .collect(Collectors.joining(", "))
            + ")");
  }
}
