package dev.pysandbox.api.op;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * One operation of the service, declared once: its name, what it does, what it changes, its
 * arguments and its result. The MCP tool (name, annotations, input schema, argument parsing) is
 * derived from it, and so will be the REST binding and the OpenAPI document. The catalogue is
 * {@link Operations}.
 *
 * @param name the wire name, e.g. {@code run_python}
 * @param title a few words for people
 * @param description what it does, for the client (and its model)
 * @param effect what calling it changes
 * @param params its arguments, in the order clients are shown them
 * @param result the type its result is written from (JSON, by {@link dev.pysandbox.api.Json})
 */
public record Operation(
    String name,
    String title,
    String description,
    Effect effect,
    List<Param> params,
    Class<?> result) {

  /** What a call changes: hints for clients, e.g. MCP's readOnly/destructive/idempotent. */
  public enum Effect {
    /** Changes nothing. */
    READ,
    /** Creates something; calling again creates it again. */
    WRITE,
    /** Creates or sets something; calling again with the same arguments changes nothing more. */
    IDEMPOTENT_WRITE,
    /** Destroys or stops something. */
    DESTRUCTIVE;

    public boolean readOnly() {
      return this == READ;
    }

    public boolean destructive() {
      return this == DESTRUCTIVE;
    }

    /** Every effect but {@link #WRITE}: a second call with the same arguments changes nothing. */
    public boolean idempotent() {
      return this != WRITE;
    }
  }

  public Operation {
    Objects.requireNonNull(name);
    Objects.requireNonNull(title);
    Objects.requireNonNull(description);
    Objects.requireNonNull(effect);
    Objects.requireNonNull(result);
    params = List.copyOf(params);
    if (byName(params).size() != params.size()) {
      throw new IllegalArgumentException(name + ": two arguments share a name");
    }
  }

  /** The argument named {@code name}, or {@code null}. */
  public Param param(String name) {
    for (Param p : params) {
      if (p.name().equals(name)) {
        return p;
      }
    }
    return null;
  }

  /**
   * Checks a call's arguments against this declaration and returns them typed.
   *
   * @param arguments the JSON arguments as a map (numbers, strings, booleans, lists, maps); {@code
   *     null} for none
   * @throws dev.pysandbox.api.PysandboxException {@code invalid_argument} naming the argument: an
   *     unknown name, a wrong JSON type, a required one absent, a value not among those allowed
   */
  public Arguments parse(Map<String, Object> arguments) {
    return Arguments.parse(this, arguments);
  }

  private static Map<String, Param> byName(List<Param> params) {
    Map<String, Param> m = new LinkedHashMap<>();
    params.forEach(p -> m.put(p.name(), p));
    return m;
  }
}
